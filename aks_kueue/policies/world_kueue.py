"""The cluster, the Kueue installers and Kueue's objects, read from their resources."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

import yaml

from aks_kueue.kueue import catalog as cat
from aks_kueue.aks.allocatable import default_max_pods
from aks_kueue.kueue.validate import KueueObject, load_object
from aks_kueue.policies.props import Unreadable, get, mapping, plain, string_map, text
from aks_kueue.versions import MANAGED_KUEUE_EXTENSION_TYPE

# Type tokens, with or without an explicit API version module (azure-native:containerservice/v20250801:...).
MANAGED_CLUSTER = re.compile(r"^azure-native:containerservice(/[^:]+)?:ManagedCluster$")
AGENT_POOL = re.compile(r"^azure-native:containerservice(/[^:]+)?:AgentPool$")
EXTENSION = re.compile(r"^azure-native:kubernetesconfiguration(/[^:]+)?:Extension$")
HELM = re.compile(r"^kubernetes:helm\.sh/v[34]:(Release|Chart)$")
KUEUE_OBJECT = re.compile(r"^kubernetes:kueue\.x-k8s\.io/[^:]+:(?P<kind>\w+)$")
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
NAMESPACE = "kubernetes:core/v1:Namespace"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"


@dataclass(frozen=True)
class Cluster:
    urn: str
    label: str
    region: str
    kubernetes_version: str
    sku: str
    node_provisioning: str
    default_max_pods: int


@dataclass(frozen=True)
class Installer:
    mode: str            # "managed" (the AKS extension) or "helm"
    urn: str
    label: str
    integrations: Optional[tuple[str, ...]] = None
    version: Optional[str] = None
    release_train: Optional[str] = None
    auto_upgrade: bool = False


@dataclass
class KueueResource:
    obj: KueueObject
    urn: str
    # Every URN it depends on, directly or through the resources it depends on.
    depends_on: set[str] = field(default_factory=set)


def read_cluster(props: Any, urn: str, label: str) -> Cluster:
    network = get(props, "networkProfile", default={})
    plugin = get(network, "networkPlugin", default="kubenet")
    plugin_mode = get(network, "networkPluginMode")
    if plugin not in ("azure", "kubenet", "none") or plugin_mode not in (None, "overlay"):
        raise Unreadable(f"{label}.networkProfile: plugin {plugin!r} mode {plugin_mode!r} is not one AKS offers")
    version = get(props, "kubernetesVersion")
    return Cluster(
        urn=urn, label=label, region=text(get(props, "location"), f"{label}.location"),
        # Without a version AKS picks its default, which nothing here can prove new enough.
        kubernetes_version=text(version, f"{label}.kubernetesVersion") if version is not None else "unset",
        sku=text(get(props, "sku", "name", default="Base"), f"{label}.sku.name"),
        node_provisioning=text(get(props, "nodeProvisioningProfile", "mode", default="Manual"),
                               f"{label}.nodeProvisioningProfile.mode"),
        default_max_pods=default_max_pods(plugin, plugin_mode))


def read_installer(resource_type: str, props: Any, urn: str, label: str) -> Optional[Installer]:
    """The Kueue installer a resource is, or None when it installs something else."""
    if EXTENSION.match(resource_type):
        kind = get(props, "extensionType")
        if not isinstance(kind, str) or kind.lower() != MANAGED_KUEUE_EXTENSION_TYPE:
            return None
        return Installer("managed", urn, label, version=_optional_text(get(props, "version")),
                         release_train=_optional_text(get(props, "releaseTrain")),
                         auto_upgrade=get(props, "autoUpgradeMinorVersion", default=True) is not False)
    if HELM.match(resource_type):
        chart = get(props, "chart")
        if not isinstance(chart, str) or chart.rstrip("/").rsplit("/", 1)[-1] != "kueue":
            return None
        return Installer("helm", urn, label, integrations=_helm_frameworks(props, label),
                         version=_optional_text(get(props, "version")))
    return None


def _optional_text(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


def _helm_frameworks(props: Any, label: str) -> tuple[str, ...]:
    """integrations.frameworks of the Configuration the chart is given, else the chart's defaults."""
    rendered = get(props, "values", "managerConfig", "controllerManagerConfigYaml")
    if rendered is None:
        return cat.CHART_DEFAULT_FRAMEWORKS
    try:
        configuration = yaml.safe_load(text(rendered, f"{label}.values.managerConfig.controllerManagerConfigYaml"))
    except yaml.YAMLError as error:
        raise Unreadable(f"{label}.values.managerConfig.controllerManagerConfigYaml is not YAML: {error}") from None
    frameworks = get(configuration, "integrations", "frameworks")
    if frameworks is None:
        return cat.CHART_DEFAULT_FRAMEWORKS
    if not isinstance(frameworks, list) or not all(isinstance(f, str) for f in frameworks):
        raise Unreadable(f"{label}: integrations.frameworks is not a list of names")
    return tuple(frameworks)


def read_kueue_object(resource_type: str, props: Any, label: str) -> KueueObject:
    """The object a Kueue CustomResource creates, converted to v1beta2 as the API server stores it."""
    kind = KUEUE_OBJECT.match(resource_type)["kind"]
    manifest = {k: v for k, v in plain(mapping(props, label)).items() if k != "status"}
    check_identity(manifest, label)
    manifest.setdefault("kind", kind)
    return load_object(manifest, source=label)


def check_identity(manifest: dict, label: str) -> None:
    """Kueue's validator reports a bad name; one that is not even text (or no metadata map at
    all) cannot key an object, so the pack reports it as unreadable instead."""
    metadata = mapping(manifest.get("metadata"), f"{label}.metadata")
    for key in ("name", "namespace"):
        if key in metadata and metadata[key] is None:
            del metadata[key]  # null is absent, as the API server reads it
        elif key in metadata:
            text(metadata[key], f"{label}.metadata.{key}")
    if "kind" in manifest:
        text(manifest["kind"], f"{label}.kind")


def read_namespace(props: Any, label: str) -> tuple[str, dict[str, str]]:
    name = text(get(props, "metadata", "name"), f"{label}.metadata.name")
    return name, string_map(get(props, "metadata", "labels", default={}), f"{label}.metadata.labels")
