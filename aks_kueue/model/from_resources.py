"""The model read back from the resources a stack registers, as the policy pack sees them.

Nothing here reads the stack config: the cluster comes from the ManagedCluster, pools from
AgentPools (and the cluster's inline system pool), the install from the Extension or Helm
release, Kueue objects from their CustomResources, namespaces from Namespace resources,
the teams' submitter groups from the role assignments that let them get credentials,
and what no resource says (the expected workloads, the stack key of each part, the
environment) from the program's ConfigMap (`carrier.py`). A change made by hand in code,
past the settings, is judged the same way.

A resource of a shape the reader cannot use becomes an `Unreadable` entry of the model and
is left out; a value unknown during a preview raises the policy runtime's
UnknownValueError as the engine expects (the runtime then says the policy cannot run yet).
Resources are anything with `resource_type`, `props`, `urn`, `name` and `dependencies`
(pulumi_policy's PolicyResource, or the offline preview's equivalent).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Sequence, cast

from aks_kueue.k8s.objects import map_at
from aks_kueue.aks import dcgm_exporter
from aks_kueue.aks.access import CLUSTER_USER_ROLE, is_role
from aks_kueue.aks.capacity_tag import CAPACITY_TAG, GPU_PLUGIN_TAG, explicit_node
from aks_kueue.aks.nodes import pool_capacity
from aks_kueue.aks.placement import pod_lands
from aks_kueue.aks.pools import (EXTERNAL_PLUGIN, SYSTEM, USER, DaemonSetLoad, Pool, effective_gpu_driver, gpu_vendor,
                                 node_taints)
from aks_kueue.aks.vm_sizes import lookup
from aks_kueue.k8s.loader import LoadError, parse_single
from aks_kueue.kueue import catalog as cat
from aks_kueue.kueue.convert import to_v1beta2
from aks_kueue.kueue.transformations import ResourceRules
from aks_kueue.kueue.units import pod_units
from aks_kueue.kueue import multikueue
from aks_kueue.kueue.multikueue import Role
from aks_kueue.model import carrier, fleet_outputs
from aks_kueue.model.fleet import Fleet, Worker
from aks_kueue.model.fleet_outputs import normalise
from aks_kueue.model.conventions import AZURE_POLICY_ADDON, CONTAINER_INSIGHTS_ADDON, SECRETS_PROVIDER_ADDON
from aks_kueue.model.desired import (DEVELOPMENT, PRODUCTION, Cluster, ExpectedWorkload, Install, KueueItem,
                                     MaintenanceWindow, Model, Monitoring, Namespace, Network, SecretsProvider,
                                     Security, SubmitterGroup, Unreadable)
from aks_kueue.model.props import (UnreadableValue, get, integer, mapping, plain, sequence, stack_of,
                                   string_list, string_map, text)
from aks_kueue.model.record import pool_entry
from aks_kueue.secrets import WordDigests
from aks_kueue.versions import KUEUE_NAMESPACE, MANAGED_KUEUE_EXTENSION_TYPE

# Type tokens, with or without an explicit API version module (azure-native:containerservice/v20250801:...).
MANAGED_CLUSTER = re.compile(r"^azure-native:containerservice(/[^:]+)?:ManagedCluster$")
AGENT_POOL = re.compile(r"^azure-native:containerservice(/[^:]+)?:AgentPool$")
EXTENSION = re.compile(r"^azure-native:kubernetesconfiguration(/[^:]+)?:Extension$")
ROLE_ASSIGNMENT = re.compile(r"^azure-native:authorization(/[^:]+)?:RoleAssignment$")
RESOURCE_GROUP = re.compile(r"^azure-native:resources(/[^:]+)?:ResourceGroup$")
MAINTENANCE = re.compile(r"^azure-native:containerservice(/[^:]+)?:MaintenanceConfiguration$")
HELM = re.compile(r"^kubernetes:helm\.sh/v[34]:(Release|Chart)$")
KUEUE_OBJECT = re.compile(r"^kubernetes:kueue\.x-k8s\.io/[^:]+:(?P<kind>\w+)$")
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
NAMESPACE = "kubernetes:core/v1:Namespace"
NAMESPACE_PATCH = "kubernetes:core/v1:NamespacePatch"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
SECRET = "kubernetes:core/v1:Secret"
CONFIG_FILE = "kubernetes:yaml/v2:ConfigFile"
PROVIDER_PREFIX = "pulumi:providers:"
_TAINT = re.compile(r"^(?P<key>[^=:\s]+)(=(?P<value>[^=:\s]*))?:(?P<effect>NoSchedule|PreferNoSchedule|NoExecute)$")
_KUBECONFIG = re.compile(r"kind[\"']?\s*:\s*[\"']?Config\b")
CLUSTER_SUBJECT = Cluster.subject
INSTALL_SUBJECT = Install.subject


@dataclass
class Reading:
    """The model, and the URN of each subject a finding can name ("ClusterQueue team-a",
    "node pool t4", "AKS cluster", "Kueue install", "workload ml/train", ...)."""

    model: Model
    urns: dict[str, str] = field(default_factory=dict)
    # What the pack's messages must not show: digests of the secret config values' words (carrier.py).
    hidden: WordDigests = field(default_factory=WordDigests)


def from_resources(resources: Sequence[Any]) -> Reading:
    urns: dict[str, str] = {}
    unreadable: list[Unreadable] = []
    keys, environment, workloads, existing, fleet_json, hidden = _carrier(resources, urns, unreadable)

    def key(subject: str) -> str:
        return keys.get(subject, subject)

    cluster: Optional[Cluster] = None
    installs: list[Install] = []
    items: list[tuple[KueueItem, Any]] = []
    namespaces: list[Namespace] = []
    daemonsets: list[tuple[str, dict[str, int], dict]] = []
    submitters: dict[str, SubmitterGroup] = {}
    pool_resources = []
    groups: list[str] = []
    windows: list[MaintenanceWindow] = []
    fleet_resources = []
    installers: set[str] = set()
    for resource in resources:
        kind, props, urn = resource.resource_type, resource.props, resource.urn
        label = f"{kind.rsplit(':', 1)[-1]} {resource.name}"
        try:
            if MANAGED_CLUSTER.match(kind):
                if cluster is not None:
                    raise UnreadableValue(f"{label}: a second ManagedCluster, and the pack models one cluster per stack")
                cluster = _cluster(props, label, key)
                urns[CLUSTER_SUBJECT] = urn
                # A system pool inline in the cluster is the cluster's resource.
                urns.update({p.subject: urn for p in cluster.system_pools})
            elif AGENT_POOL.match(kind):
                pool_resources.append(resource)
            elif RESOURCE_GROUP.match(kind):
                groups.append(text(get(props, "resourceGroupName"), f"{label}.resourceGroupName"))
            elif MAINTENANCE.match(kind):
                windows.append(MaintenanceWindow(text(get(props, "configName"), f"{label}.configName"),
                                                 plain(mapping(get(props, "maintenanceWindow", default={}),
                                                               f"{label}.maintenanceWindow"))))
            elif HELM.match(kind) and _chart(props) == dcgm_exporter.RELEASE:
                daemonsets.append(_dcgm(props, label))
            elif (install := _install(kind, props, label, key)) is not None:
                installs.append(install)
                installers.add(urn)
                urns.setdefault(INSTALL_SUBJECT, urn)
            elif KUEUE_OBJECT.match(kind):
                item = _kueue_item(kind, props, label, key)
                items.append((item, resource))
                urns[item.label] = urn
            elif kind in (NAMESPACE, NAMESPACE_PATCH):
                name = text(get(props, "metadata", "name"), f"{label}.metadata.name")
                labels = string_map(get(props, "metadata", "labels", default={}), f"{label}.metadata.labels")
                namespaces.append(Namespace(name, labels, existing=kind == NAMESPACE_PATCH))
                urns[f"Namespace {name}"] = urn
            elif kind == DAEMONSET:
                daemonsets.append(_daemonset(props, label))
            elif fleet_json is not None and kind in (SECRET, CONFIG_FILE):
                fleet_resources.append(resource)
            elif ROLE_ASSIGNMENT.match(kind) and (group := _submitter(props, label)) is not None:
                submitters.setdefault(group, SubmitterGroup(group, key(SubmitterGroup(group, "").label)))
                urns.setdefault(submitters[group].label, urn)
        except UnreadableValue as error:
            unreadable.append(Unreadable(label, str(error)))
            urns.setdefault(label, urn)
    pools: list[Pool] = []
    system_pools = list(cluster.system_pools) if cluster else []
    if cluster is not None:
        for resource in pool_resources:
            label = f"AgentPool {resource.name}"
            try:
                pool = _pool(resource.props, label, cluster.default_max_pods, key, existing=existing)
            except UnreadableValue as error:
                unreadable.append(Unreadable(label, str(error)))
                urns.setdefault(label, resource.urn)
                continue
            (system_pools if pool.mode == SYSTEM else pools).append(pool)
            urns[pool.subject] = resource.urn
        # An AgentPool replaces the inline profile of the same name; whether the kubeconfig stays secret
        # (`_kubeconfig_secret`), the resource group and the maintenance windows are resources of their own.
        cluster = replace(cluster, system_pools=tuple({p.name: p for p in system_pools}.values()),
                          security=replace(cluster.security, kubeconfig_secret=_kubeconfig_secret(resources)),
                          resource_group=groups[0] if len(groups) == 1 else "", maintenance=tuple(windows))
        pools = [_placed(pool, daemonsets, cluster.region) for pool in pools]
    by_urn = {r.urn: r for r in resources}
    objects = tuple(_after(item, resource, installers, by_urn) for item, resource in items)
    # Read before `unreadable` is frozen into the model: an unreadable fleet.json is reported with the rest.
    fleet = _fleet(fleet_json, fleet_resources, unreadable) if fleet_json is not None else None
    model = Model(
        stack=next((stack_of(r.urn) for r in resources), ""), environment=environment, cluster=cluster,
        pools=tuple(pools), installs=tuple(installs), objects=objects, namespaces=tuple(namespaces),
        workloads=tuple(ExpectedWorkload(w, key(ExpectedWorkload(w, "").label)) for w in workloads),
        submitter_groups=tuple(submitters.values()), unreadable=tuple(unreadable), fleet=fleet)
    for workload in model.workloads:
        urns.setdefault(workload.label, urns.get("carrier", ""))
    urns.pop("carrier", None)
    return Reading(model, urns, hidden)


def _carrier(resources, urns, unreadable
             ) -> tuple[dict[str, str], str, list[dict], frozenset[str], Optional[dict], WordDigests]:
    for resource in resources:
        if resource.resource_type != CONFIG_MAP or not carrier.is_carrier(plain(get(resource.props, "metadata"))):
            continue
        label = f"ConfigMap {resource.name}"
        urns["carrier"] = resource.urn
        data = get(resource.props, "data", default={})
        try:
            hidden = carrier.read_secret_words(data.get(carrier.SECRET_WORDS_KEY) if hasattr(data, "get") else None)
        except ValueError:
            hidden = WordDigests()  # hand-edited: the pack's messages are then as the offline preview leaves them
        try:
            data = mapping(data, f"{label}.data")
            keys = carrier.read_keys(data.get(carrier.KEYS_KEY))
            environment = text(data.get(carrier.ENVIRONMENT_KEY) or PRODUCTION,
                               f"{label}.data.{carrier.ENVIRONMENT_KEY}")
            documents = carrier.read_workloads(data.get(carrier.WORKLOADS_KEY))
            existing = carrier.read_existing_pools(data.get(carrier.EXISTING_POOLS_KEY))
            fleet = carrier.read_fleet(data.get(carrier.FLEET_KEY))
        except ValueError as error:  # an UnreadableValue says what it is; a carrier reader, where in the data
            message = str(error) if isinstance(error, UnreadableValue) else f"{label}: {error}"
            unreadable.append(Unreadable(label, message))
            urns.setdefault(label, resource.urn)
            return {}, PRODUCTION, [], frozenset(), None, hidden
        # Anything but development is judged as production, the contract's default.
        return keys, DEVELOPMENT if environment == DEVELOPMENT else PRODUCTION, documents, existing, fleet, hidden
    return {}, PRODUCTION, [], frozenset(), None, WordDigests()


def _fleet(data: dict, resources, unreadable) -> Optional[Fleet]:
    """The fleet of the carrier's `fleet.json`, each worker's kubeconfig read from the manager's Secret
    for it (what Kueue will read), the CRDs from the ConfigFiles that install them."""
    try:
        kubeconfigs, files = {}, set()
        for resource in resources:
            label = f"{resource.resource_type.rsplit(':', 1)[-1]} {resource.name}"
            if resource.resource_type == CONFIG_FILE:
                files.add(text(get(resource.props, "file"), f"{label}.file"))
                continue
            metadata = mapping(get(resource.props, "metadata", default={}), f"{label}.metadata")
            if get(metadata, "namespace") != KUEUE_NAMESPACE:
                continue
            kubeconfigs[get(metadata, "name")] = _secret_kubeconfig(resource.props, label)
        workers = tuple(Worker(text(w["name"], "name"), text(w["stack"], "stack"), text(w["key"], "key"),
                               normalise(w.get("outputs")),
                               fleet_outputs.kubeconfig_check(kubeconfigs.get(multikueue.kubeconfig_secret_name(
                                   w["name"])))) for w in data["workers"])
        crds = tuple(f for f in multikueue.JOB_CRDS if all(url in files for url in multikueue.crd_urls(f)))
        egress, exported = data.get("egressIpRanges"), data.get("exportedTeams")
        return Fleet(Role(data["role"]), text(data["stack"], "stack"), text(data["key"], "key"), workers,
                     data.get("quotaManagement"), tuple(egress) if egress is not None else None, crds,
                     tuple(exported) if exported is not None else None, data.get("manager"),
                     normalise(data.get("managerOutputs")), tuple(data.get("tokenGenerations") or ()))
    except (UnreadableValue, KeyError, TypeError, ValueError) as error:
        unreadable.append(Unreadable(f"ConfigMap {carrier.CARRIER_NAME}", f"data.{carrier.FLEET_KEY}: {error}"))
        return None


def _secret_kubeconfig(props: Any, label: str) -> Any:
    """A Secret's `kubeconfig`: stringData as sent, else data as the API returns it (base64)."""
    value = get(props, "stringData", multikueue.SECRET_KEY)
    if value is not None:
        return value
    encoded = get(props, "data", multikueue.SECRET_KEY)
    if encoded is None:
        return None
    try:
        return base64.b64decode(text(encoded, f"{label}.data.{multikueue.SECRET_KEY}")).decode()
    except (ValueError, UnicodeDecodeError):
        return "[not base64]"


def _cluster(props: Any, label: str, key) -> Cluster:
    network = get(props, "networkProfile", default={})
    plugin = get(network, "networkPlugin", default="kubenet")
    plugin_mode = get(network, "networkPluginMode")
    if plugin not in ("azure", "kubenet", "none") or plugin_mode not in (None, "overlay"):
        raise UnreadableValue(f"{label}.networkProfile: plugin {plugin!r} mode {plugin_mode!r} is not one AKS "
                              "offers")
    version = get(props, "kubernetesVersion")
    access = get(props, "apiServerAccessProfile", default={})
    ranges = string_list(get(access, "authorizedIPRanges", default=[]),
                         f"{label}.apiServerAccessProfile.authorizedIPRanges")
    addons = mapping(get(props, "addonProfiles", default={}), f"{label}.addonProfiles")
    security = get(props, "securityProfile", default={})
    built = Cluster(
        name=text(get(props, "resourceName", default=""), f"{label}.resourceName"),
        region=text(get(props, "location"), f"{label}.location").replace(" ", "").lower(),
        # Without a version AKS picks its default, which nothing here can prove new enough.
        kubernetes_version=text(version, f"{label}.kubernetesVersion") if version is not None else "unset",
        sku=text(get(props, "sku", "name", default="Base"), f"{label}.sku.name"),
        tier=text(get(props, "sku", "tier", default="Free"), f"{label}.sku.tier"),
        node_provisioning=text(get(props, "nodeProvisioningProfile", "mode", default="Manual"),
                               f"{label}.nodeProvisioningProfile.mode"),
        network=Network(plugin=plugin, plugin_mode=plugin_mode, policy=get(network, "networkPolicy"),
                        dataplane=get(network, "networkDataplane"),
                        **{field: _optional(get(network, name), f"{label}.networkProfile.{name}") for field, name in (
                            ("pod_cidr", "podCidr"), ("service_cidr", "serviceCidr"),
                            ("dns_service_ip", "dnsServiceIP"), ("outbound_type", "outboundType"))}),
        security=Security(
            local_accounts_disabled=get(props, "disableLocalAccounts") is True,
            rbac=get(props, "enableRBAC", default=True) is not False,
            entra_managed=get(props, "aadProfile", "managed") is True,
            azure_rbac=get(props, "aadProfile", "enableAzureRBAC") is True,
            admin_groups=tuple(string_list(get(props, "aadProfile", "adminGroupObjectIDs", default=[]),
                                           f"{label}.aadProfile.adminGroupObjectIDs")),
            authorized_ip_ranges=tuple(ranges),
            private_cluster=get(access, "enablePrivateCluster") is True,
            upgrade_channel=get(props, "autoUpgradeProfile", "upgradeChannel"),
            node_os_upgrade_channel=get(props, "autoUpgradeProfile", "nodeOSUpgradeChannel", default="NodeImage"),
            workload_identity=get(security, "workloadIdentity", "enabled") is True,
            azure_policy=get(addons, AZURE_POLICY_ADDON, "enabled") is True,
            defender=_optional_bool(get(security, "defender", "securityMonitoring", "enabled")),
            image_cleaner=get(security, "imageCleaner", "enabled") is True,
            image_cleaner_interval_hours=_optional(get(security, "imageCleaner", "intervalHours"),
                                                   f"{label}.securityProfile.imageCleaner.intervalHours", integer),
            key_vault_secrets_provider=_secrets_provider(addons, label)),
        key=key(CLUSTER_SUBJECT) if key(CLUSTER_SUBJECT) != CLUSTER_SUBJECT else "aks-kueue:cluster",
        autoscaler_profile=plain(mapping(get(props, "autoScalerProfile", default={}), f"{label}.autoScalerProfile")),
        monitoring=Monitoring(_optional_bool(get(props, "azureMonitorProfile", "metrics", "enabled")),
                              _optional_bool(get(addons, CONTAINER_INSIGHTS_ADDON, "enabled"))))
    profiles = sequence(get(props, "agentPoolProfiles", default=[]), f"{label}.agentPoolProfiles")
    inline = [_pool(profile, f"{label}.agentPoolProfiles[{index}]", built.default_max_pods, key, name_key="name")
              for index, profile in enumerate(profiles)]
    return replace(built, system_pools=tuple(p for p in inline if p.mode == SYSTEM))


def _secrets_provider(addons: Any, label: str) -> Optional[SecretsProvider]:
    profile = get(addons, SECRETS_PROVIDER_ADDON)
    if profile is None:
        return None
    enabled = get(profile, "enabled") is True
    config = mapping(get(profile, "config", default={}), f"{label}.addonProfiles.{SECRETS_PROVIDER_ADDON}.config")
    interval = get(config, "rotationPollInterval")
    return SecretsProvider(enabled, enabled and get(config, "enableSecretRotation") == "true",
                           text(interval, f"{label}.addonProfiles.{SECRETS_PROVIDER_ADDON}.config.rotationPollInterval")
                           if enabled and interval is not None else None)


def _optional(value: Any, what: str, read=text) -> Any:
    return None if value is None else read(value, what)


def _optional_bool(value: Any) -> Optional[bool]:
    return value if isinstance(value, bool) else None


def _pool(props: Any, label: str, fallback_max_pods: int, key, name_key: str = "agentPoolName",
          existing: frozenset[str] = frozenset()) -> Pool:
    """One pool; raises Unreadable when a property the model needs has the wrong shape."""
    # Inputs name the pool agentPoolName; a pool's outputs from Azure (an unchanged pool in the
    # preview of a deployed stack) carry `name` instead.
    name = text(get(props, name_key, default=get(props, "name")), f"{label}.{name_key}")
    vm_size = text(get(props, "vmSize"), f"{label}.vmSize")
    mode = text(get(props, "mode", default=USER), f"{label}.mode")
    autoscaled = get(props, "enableAutoScaling", default=False) is True
    count = get(props, "count")
    min_key, max_key = ("minCount", "maxCount") if autoscaled else ("count", "count")
    max_count = integer(get(props, max_key, default=0 if not autoscaled else None), f"{label}.{max_key}")
    min_count = integer(get(props, min_key, default=count if count is not None else 0), f"{label}.{min_key}")
    max_pods = get(props, "maxPods")
    max_pods = fallback_max_pods if max_pods is None else integer(max_pods, f"{label}.maxPods")
    if max_count < 0 or max_pods < 1:
        raise UnreadableValue(f"{label}: {max_key} {max_count} and maxPods {max_pods} are not counts AKS accepts")
    spot = get(props, "scaleSetPriority") == "Spot"
    taints = node_taints(tuple(_taint(t, f"{label}.nodeTaints[{i}]") for i, t in enumerate(
        string_list(get(props, "nodeTaints", default=[]), f"{label}.nodeTaints"))), spot)
    explicit = None
    tag = get(props, "tags", CAPACITY_TAG)
    if tag is not None:
        try:
            explicit = explicit_node(tag)
        except ValueError as error:
            raise UnreadableValue(f"{label}.tags: {error}") from None
    if lookup(vm_size) is None and explicit is None and mode != SYSTEM:
        raise UnreadableValue(f"{label}.vmSize {vm_size!r} is not in the VM size catalog and the pool carries no "
                              f"{CAPACITY_TAG} tag, so its nodes cannot be sized")
    vendor = gpu_vendor(vm_size, explicit)
    driver = get(props, "gpuProfile", "driver")
    plugin = get(props, "tags", GPU_PLUGIN_TAG)
    if plugin is not None and plugin != EXTERNAL_PLUGIN:
        raise UnreadableValue(f"{label}.tags: tag {GPU_PLUGIN_TAG}={plugin!r} is not {EXTERNAL_PLUGIN!r}, the one "
                              "value the pack reads (a device plugin the stack does not install runs on the pool)")
    profile = get(props, "gpuInstanceProfile")
    pool = Pool(
        name=name, vm_size=vm_size, mode=mode, min_count=min_count, max_count=max_count, max_pods=max_pods,
        labels=string_map(get(props, "nodeLabels", default={}), f"{label}.nodeLabels"), taints=taints,
        zones=tuple(string_list(get(props, "availabilityZones", default=[]), f"{label}.availabilityZones")),
        gpu_driver=effective_gpu_driver(vendor, text(driver, f"{label}.gpuProfile.driver") if driver else None),
        gpu_device_plugin=EXTERNAL_PLUGIN if plugin is not None and vendor is not None else None,
        gpu_instance_profile=text(profile, f"{label}.gpuInstanceProfile") if profile is not None else None,
        spot=spot, explicit=explicit, os_sku=_optional(get(props, "osSKU"), f"{label}.osSKU"),
        os_disk_type=_optional(get(props, "osDiskType"), f"{label}.osDiskType"),
        os_disk_size_gb=_optional(get(props, "osDiskSizeGB"), f"{label}.osDiskSizeGB", integer),
        encryption_at_host=get(props, "enableEncryptionAtHost") is True,
        upgrade_settings=plain(mapping(get(props, "upgradeSettings", default={}), f"{label}.upgradeSettings")))
    subject = pool.subject
    return replace(pool, key=key(subject) if key(subject) != subject else label,
                   existing=str(pool_entry(pool)) in existing)


def _taint(value: str, what: str) -> dict[str, str]:
    match = _TAINT.fullmatch(value)
    if not match:
        raise UnreadableValue(f"{what} {value!r} is not a taint key=value:Effect")
    return {"key": match["key"], "value": match["value"] or "", "effect": match["effect"]}


def _daemonset(props: Any, label: str) -> tuple[str, dict[str, int], dict]:
    """(name, pod requests, pod spec for placement) of one DaemonSet resource."""
    name = text(get(props, "metadata", "name"), f"{label}.metadata.name")
    pod = plain(mapping(get(props, "spec", "template", "spec", default={}), f"{label}.spec.template.spec"))
    try:
        requests = pod_units(pod)
    except (ValueError, AttributeError, TypeError) as error:  # a QuantityError is a ValueError
        raise UnreadableValue(f"{label}: the pod's resource requests cannot be read ({error})") from None
    for field_name, shape in (("nodeSelector", dict), ("tolerations", list)):
        if not isinstance(pod.get(field_name, shape()), shape):
            raise UnreadableValue(f"{label}: spec.template.spec.{field_name} has the wrong shape")
    if not all(isinstance(t, dict) for t in pod.get("tolerations") or []):
        raise UnreadableValue(f"{label}: tolerations must be a list of maps")
    node = pod
    for field_name in ("affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution"):
        node = node.get(field_name) if isinstance(node, dict) else None
        if node is not None and not isinstance(node, dict):
            raise UnreadableValue(f"{label}: spec.template.spec...{field_name} is not a map")
    return name, requests, pod


def _submitter(props: Any, label: str) -> Optional[str]:
    """The group a role assignment lets get the cluster's credentials ("Azure Kubernetes Service
    Cluster User Role"), which is how the program lets a team in; None for any other assignment."""
    definition = get(props, "roleDefinitionId")
    if not isinstance(definition, str) or not is_role(definition, CLUSTER_USER_ROLE):
        return None
    return text(get(props, "principalId"), f"{label}.principalId").lower()


def _chart(props: Any) -> Optional[str]:
    chart = get(props, "chart")
    return chart.rstrip("/").rsplit("/", 1)[-1] if isinstance(chart, str) else None


def _dcgm(props: Any, label: str) -> tuple[str, dict[str, int], dict]:
    """NVIDIA's DCGM exporter chart runs a DaemonSet no resource shows: its pod, from the release's
    values (placement, tolerations, requests, with the chart's default requests)."""
    values = plain(mapping(get(props, "values", default={}), f"{label}.values"))
    pod = {key: values[key] for key in ("affinity", "nodeSelector", "tolerations") if key in values}
    resources = map_at(values, "resources")
    requests = given if isinstance(given := resources.get("requests"), dict) else dcgm_exporter.REQUESTS
    pod["containers"] = [{"name": "exporter", "resources": {"requests": dict(requests)}}]
    return _daemonset({"metadata": {"name": dcgm_exporter.RELEASE}, "spec": {"template": {"spec": pod}}}, label)


def _placed(pool: Pool, daemonsets: list[tuple[str, dict[str, int], dict]], region: str) -> Pool:
    """The pool with the DaemonSets whose pods land on its nodes."""
    capacity = pool_capacity(pool, region)
    loads = tuple(DaemonSetLoad(name, requests) for name, requests, pod in daemonsets if pod_lands(pod, capacity))
    return replace(pool, daemonsets=loads)


def _install(kind: str, props: Any, label: str, key) -> Optional[Install]:
    """The Kueue installer a resource is, or None when it installs something else."""
    where = key(INSTALL_SUBJECT) if key(INSTALL_SUBJECT) != INSTALL_SUBJECT else label
    if EXTENSION.match(kind):
        extension_type = get(props, "extensionType")
        if not isinstance(extension_type, str) or extension_type.lower() != MANAGED_KUEUE_EXTENSION_TYPE:
            return None
        auto_upgrade = get(props, "autoUpgradeMinorVersion", default=True) is not False
        # Azure applies a release train only with auto-upgrade (the SDK sends its default train regardless).
        return Install("managed", version=_optional_text(get(props, "version")),
                       release_train=_optional_text(get(props, "releaseTrain")) if auto_upgrade else None,
                       auto_upgrade=auto_upgrade, key=where)
    if HELM.match(kind):
        if _chart(props) != "kueue":
            return None
        configuration = _helm_configuration(props, label)
        return Install("helm", version=_optional_text(get(props, "version")),
                       frameworks=_helm_frameworks(configuration, label), key=where,
                       resources=ResourceRules.from_configuration(configuration))
    return None


def _optional_text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _helm_configuration(props: Any, label: str) -> Optional[Any]:
    """The Configuration the chart is given (its managerConfig.controllerManagerConfigYaml), or None."""
    rendered = get(props, "values", "managerConfig", "controllerManagerConfigYaml")
    if rendered is None:
        return None
    where = f"{label}.values.managerConfig.controllerManagerConfigYaml"
    try:
        return parse_single(text(rendered, where), where)
    except LoadError as error:
        raise UnreadableValue(str(error)) from None


def _helm_frameworks(configuration: Optional[Any], label: str) -> tuple[str, ...]:
    """integrations.frameworks of the Configuration the chart is given, else the chart's defaults."""
    frameworks = get(configuration, "integrations", "frameworks")  # None without a Configuration
    if frameworks is None:
        return cat.CHART_DEFAULT_FRAMEWORKS
    if not isinstance(frameworks, list) or not all(isinstance(f, str) for f in frameworks):
        raise UnreadableValue(f"{label}: integrations.frameworks is not a list of names")
    return tuple(frameworks)


def _kueue_item(kind: str, props: Any, label: str, key) -> KueueItem:
    """The object a Kueue CustomResource creates, converted to v1beta2 as the API server stores it."""
    manifest = {k: v for k, v in plain(mapping(props, label)).items() if k != "status"}
    check_identity(manifest, label)
    if (match := KUEUE_OBJECT.match(kind)) is not None:  # the caller's test: it is a Kueue kind
        manifest.setdefault("kind", match["kind"])
    converted = to_v1beta2(manifest)
    item = KueueItem(converted, "", original=manifest if converted is not manifest else None)
    return replace(item, key=key(item.label))


def check_identity(manifest: dict, label: str) -> None:
    """Kueue's validator reports a bad name; one that is not even text (or no metadata map at
    all) cannot key an object, so the reader reports it as unreadable instead."""
    metadata = cast(dict, mapping(manifest.get("metadata"), f"{label}.metadata"))  # `plain`: its maps are dicts
    for name in ("name", "namespace"):
        if name in metadata and metadata[name] is None:
            del metadata[name]  # null is absent, as the API server reads it
        elif name in metadata:
            text(metadata[name], f"{label}.metadata.{name}")
    if "kind" in manifest:
        text(manifest["kind"], f"{label}.kind")


def _after(item: KueueItem, resource: Any, installers: set, by_urn: dict) -> KueueItem:
    """Whether the object depends on the installer, directly or through what it depends on."""
    seen: set[str] = set()
    stack = list(resource.dependencies or [])
    while stack:
        dependency = stack.pop()
        urn = getattr(dependency, "urn", dependency)
        if urn in seen:
            continue
        seen.add(urn)
        found = by_urn.get(urn)
        stack += list(found.dependencies or []) if found is not None else []
    return replace(item, after_installer=bool(seen & installers))


def _kubeconfig_secret(resources) -> bool:
    """What a policy can see of the kubeconfig's secrecy: the Kubernetes provider that holds it
    names it in additionalSecretOutputs, and no other resource carries a kubeconfig in its inputs."""
    for resource in resources:
        if resource.resource_type.startswith(PROVIDER_PREFIX):
            secret_outputs = getattr(getattr(resource, "opts", None), "additional_secret_outputs", None) or []
            if "kubeconfig" in list(resource.props) and "kubeconfig" not in list(secret_outputs):
                return False
        elif resource.resource_type != SECRET and _carries_kubeconfig(resource.props):
            return False
    return True


def _carries_kubeconfig(props: Any) -> bool:
    """Unknown values are never read as a kubeconfig."""
    from pulumi_policy.deserialize import serialize_properties

    stack = [serialize_properties(props) if not isinstance(props, dict) else props]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += list(value.values())
        elif isinstance(value, list):
            stack += value
        elif isinstance(value, str) and _KUBECONFIG.search(value) and "clusters" in value and "users" in value:
            return True
    return False

