"""The desired cluster: what the program registers, as the judge reads it.

One model with two readers: `from_settings` builds it from the stack's settings for the
program, `from_resources` rebuilds it from the resources the Pulumi engine hands the
policy pack. For any stack the two agree (a property test checks it), so every rule of
the judge (`aks_kueue/judge/`) gives the same findings on either.

Everything here is plain, immutable data: Kueue objects are kept as the v1beta2
manifests the program registers, pools as `aks_kueue.aks.pools.Pool`. Each part carries
the stack key that defines it (`aks-kueue:queues.clusterQueues[0]`), so a finding can
name the key to edit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from aks_kueue.aks.allocatable import default_max_pods
from aks_kueue.aks.pools import Pool
from aks_kueue.kueue.transformations import NO_RULES, ResourceRules
from aks_kueue.model.conventions import DEPLOY_ORDER
from aks_kueue.model.fleet import Fleet

PRODUCTION = "production"
DEVELOPMENT = "development"


@dataclass(frozen=True)
class Network:
    plugin: str = "azure"
    plugin_mode: Optional[str] = None
    policy: Optional[str] = None
    dataplane: Optional[str] = None
    # None: AKS's default range or address.
    pod_cidr: Optional[str] = None
    service_cidr: Optional[str] = None
    dns_service_ip: Optional[str] = None
    outbound_type: Optional[str] = None


@dataclass(frozen=True)
class SecretsProvider:
    """The Azure Key Vault provider for the Secrets Store CSI driver (add-on azureKeyvaultSecretsProvider)."""

    enabled: bool
    rotation: bool = False
    rotation_poll_interval: Optional[str] = None


@dataclass(frozen=True)
class Monitoring:
    """The cluster's own monitoring switches: managed Prometheus (azureMonitorProfile.metrics) and
    Container Insights (the omsagent add-on). None: the stack leaves it alone (sends nothing)."""

    managed_prometheus: Optional[bool] = None
    container_insights: Optional[bool] = None


@dataclass(frozen=True)
class MaintenanceWindow:
    """One of AKS's planned-maintenance configurations (aksManagedAutoUpgradeSchedule,
    aksManagedNodeOSUpgradeSchedule), its maintenanceWindow in the API's names."""

    config_name: str
    window: Mapping[str, Any]


@dataclass(frozen=True)
class Security:
    """What the AKS security baseline judges about the cluster."""

    local_accounts_disabled: bool = False
    rbac: bool = True
    entra_managed: bool = False
    azure_rbac: bool = False
    admin_groups: tuple[str, ...] = ()
    authorized_ip_ranges: tuple[str, ...] = ()
    private_cluster: bool = False
    upgrade_channel: Optional[str] = None
    node_os_upgrade_channel: Optional[str] = None
    workload_identity: bool = False
    azure_policy: bool = False
    # Defender for Containers' sensor; None when the stack leaves it alone. The workspace it sends to
    # is not part of the model: the id of the one the program creates is unknown until it exists.
    defender: Optional[bool] = None
    image_cleaner: bool = False
    image_cleaner_interval_hours: Optional[int] = None
    # None: the add-on is left alone.
    key_vault_secrets_provider: Optional[SecretsProvider] = None
    # The kubeconfig stays secret: its provider keeps it in additionalSecretOutputs and no
    # other resource carries one in its inputs.
    kubeconfig_secret: bool = True


@dataclass(frozen=True)
class Cluster:
    name: str
    region: str
    # As given; "unset" when the cluster leaves it to AKS.
    kubernetes_version: str
    sku: str = "Base"
    tier: str = "Standard"
    node_provisioning: str = "Manual"
    network: Network = Network()
    security: Security = Security()
    system_pools: tuple[Pool, ...] = ()
    key: str = "aks-kueue:cluster"
    resource_group: str = ""
    # The cluster autoscaler's profile as sent, in the AKS API's names and value types.
    autoscaler_profile: Mapping[str, Any] = field(default_factory=dict)
    monitoring: Monitoring = Monitoring()
    maintenance: tuple[MaintenanceWindow, ...] = ()

    def __post_init__(self) -> None:
        _sort(self, system_pools=lambda p: p.name, maintenance=lambda w: w.config_name)

    # What a finding about the cluster names it as; also the key of its URN (`from_resources`).
    subject = "AKS cluster"

    @property
    def default_max_pods(self) -> int:
        return default_max_pods(self.network.plugin, self.network.plugin_mode)

    @property
    def system_pool(self) -> Pool:
        """The system pool the program creates (a cluster read from resources may have more)."""
        return self.system_pools[0]


@dataclass(frozen=True)
class Install:
    """One Kueue installer: the AKS managed extension or the upstream Helm chart."""

    mode: str                                  # "managed" or "helm"
    version: Optional[str] = None
    release_train: Optional[str] = None
    auto_upgrade: bool = False
    # The integrations Kueue's Configuration enables; None for the managed extension,
    # which exposes no setting for them.
    frameworks: Optional[tuple[str, ...]] = None
    key: str = "aks-kueue:kueue"
    # What the Configuration's `resources` section excludes and transforms (Helm only: the
    # managed extension's Configuration cannot carry it).
    resources: ResourceRules = NO_RULES
    # What a finding about the install names it as; also the key of its URN (`from_resources`).
    subject = "Kueue install"


@dataclass(frozen=True)
class KueueItem:
    """One Kueue object, as the program registers it (v1beta2)."""

    manifest: Mapping[str, Any]
    key: str
    # Created after the Kueue installer (its CRDs and webhooks) and deleted before it.
    after_installer: bool = True
    # The object as written, when that was v1beta1: the API server validates that version.
    original: Optional[Mapping[str, Any]] = field(default=None, compare=False, repr=False)
    # The other top-level stack keys (`nodePools`) its content is built from: secret when one of them is.
    derived_from: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    @property
    def kind(self) -> str:
        return _text(self.manifest.get("kind")) or ""

    @property
    def name(self) -> str:
        return _text(_metadata(self.manifest).get("name")) or ""

    @property
    def namespace(self) -> Optional[str]:
        return _text(_metadata(self.manifest).get("namespace"))

    @property
    def label(self) -> str:
        """`ClusterQueue team-a`, `LocalQueue team-a/default`: how messages name the object."""
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


@dataclass(frozen=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    # A namespace that exists already: the program only labels it, never creates or deletes it.
    existing: bool = False


@dataclass(frozen=True)
class ExpectedWorkload:
    """A job shape the pack must prove admittable and schedulable, as the v1beta2 Workload
    Kueue would create for it."""

    manifest: Mapping[str, Any]
    key: str

    @property
    def label(self) -> str:
        metadata = _metadata(self.manifest)
        return f"workload {metadata.get('namespace')}/{metadata.get('name')}"


@dataclass(frozen=True)
class SubmitterGroup:
    """An Entra group a team submits jobs with: it may get the cluster's credentials (the
    "Azure Kubernetes Service Cluster User Role" on the cluster) and submit and watch jobs in the
    namespaces whose LocalQueues list it."""

    object_id: str          # lower case
    key: str                # the first `queues.localQueues[i].submitterGroups[j]` that names it

    @property
    def label(self) -> str:
        return f"submitter group {self.object_id}"


@dataclass(frozen=True)
class Unreadable:
    """A resource the reader could not read; it is left out of the model and reported."""

    subject: str
    message: str


@dataclass(frozen=True)
class Model:
    stack: str = ""
    environment: str = PRODUCTION
    cluster: Optional[Cluster] = None
    # The user pools, which hold Kueue quota; system pools are the cluster's.
    pools: tuple[Pool, ...] = ()
    installs: tuple[Install, ...] = ()
    objects: tuple[KueueItem, ...] = ()
    namespaces: tuple[Namespace, ...] = ()
    workloads: tuple[ExpectedWorkload, ...] = ()
    submitter_groups: tuple[SubmitterGroup, ...] = ()
    unreadable: tuple[Unreadable, ...] = ()
    # This stack's place in a MultiKueue fleet (aks-kueue:fleet), and what it read of the others.
    fleet: Optional[Fleet] = None

    def __post_init__(self) -> None:
        """One order whichever reader built it: objects in creation order (what a kind refers to first),
        everything else by name, so that two models of one cluster compare equal."""
        def kind_rank(item: KueueItem) -> tuple:
            rank = DEPLOY_ORDER.index(item.kind) if item.kind in DEPLOY_ORDER else len(DEPLOY_ORDER)
            return rank, item.namespace or "", item.name

        _sort(self, pools=lambda p: p.name, installs=lambda i: i.mode, objects=kind_rank,
              namespaces=lambda n: n.name, workloads=lambda w: w.label, submitter_groups=lambda g: g.object_id)

    @property
    def managed(self) -> bool:
        return any(i.mode == "managed" for i in self.installs)

    @property
    def resource_rules(self) -> ResourceRules:
        """The resource exclusions and transformations Kueue charges workloads with (none unless one
        Helm install gives them)."""
        return self.installs[0].resources if len(self.installs) == 1 else NO_RULES

    @property
    def production(self) -> bool:
        return self.environment == PRODUCTION

    def of_kind(self, kind: str) -> list[KueueItem]:
        return [o for o in self.objects if o.kind == kind]


def _text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _metadata(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = manifest.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def _sort(data: Any, **keys: Callable[[Any], Any]) -> None:
    """Sort each named tuple field of a frozen dataclass by its key."""
    for name, key in keys.items():
        object.__setattr__(data, name, tuple(sorted(getattr(data, name), key=key)))
