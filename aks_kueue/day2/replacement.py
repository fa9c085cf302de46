"""The inputs whose change replaces a resource, as data (`data/replace-forcing.yaml`).

The facts are those of the pulumi-azure-native version pyproject.toml pins; the data file
names the version and where each fact comes from, and a test holds the installed SDK to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from aks_kueue.k8s.loader import data_file

DATA = Path(__file__).resolve().parent / "data" / "replace-forcing.yaml"

RESOURCE_GROUP = "azure-native:resources:ResourceGroup"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
AGENT_POOL = "azure-native:containerservice:AgentPool"
MAINTENANCE_CONFIGURATION = "azure-native:containerservice:MaintenanceConfiguration"
# The Kueue installers and team namespaces the record tracks (no replace-forcing inputs of their own).
KUBERNETES_EXTENSION = "azure-native:kubernetesconfiguration:Extension"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
NAMESPACE = "kubernetes:core/v1:Namespace"
# A fleet's links: a manager's worker (its MultiKueueCluster), a worker's manager (its service account).
MULTIKUEUE_CLUSTER = "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"


@dataclass(frozen=True)
class ReplaceForcing:
    """One resource type: the paths azure-native replaces on, and the AKS create-only paths the
    program itself declares `replaceOnChanges` (with the source that says AKS cannot update them)."""

    type_token: str
    azure_native: tuple[str, ...]
    aks_create_only: Mapping[str, str]
    # What the SDK sends for an input left unset: an unset path and its default compare equal.
    sdk_defaults: Mapping[str, Any] = field(default_factory=dict)

    @property
    def paths(self) -> tuple[str, ...]:
        return self.azure_native + tuple(self.aks_create_only)


@dataclass(frozen=True)
class Facts:
    azure_native_version: str
    azure_native_requires: str
    api_version: str
    resources: Mapping[str, ReplaceForcing]


@lru_cache(maxsize=1)
def facts() -> Facts:
    doc = data_file(DATA)
    native = doc["azureNative"]
    resources = {
        token: ReplaceForcing(token, tuple(entry.get("azureNative") or ()), dict(entry.get("aksCreateOnly") or {}),
                              dict(entry.get("sdkDefaults") or {}))
        for token, entry in doc["resources"].items()
    }
    return Facts(str(native["version"]), str(native["requires"]), str(native["containerserviceApiVersion"]),
                 resources)


def replace_on_changes(type_token: str) -> list[str]:
    """What the program adds as `replaceOnChanges`: AKS create-only paths azure-native updates."""
    entry = facts().resources.get(type_token)
    return list(entry.aks_create_only) if entry else []


def lookup(value: Mapping[str, Any], path: str) -> Any:
    current: Any = value
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current


def extract(type_token: str, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The replace-forcing inputs of one resource, flat by path; unset ones are left out."""
    entry = facts().resources.get(type_token)
    paths = entry.paths if entry is not None else ()
    return {path: value for path in paths if (value := lookup(inputs, path)) is not None}


@dataclass(frozen=True)
class Change:
    path: str
    old: Any
    new: Any


def changes(type_token: str, old: Mapping[str, Any], new: Mapping[str, Any],
            skip: Iterable[str] = ()) -> list[Change]:
    """The replace-forcing paths whose values differ between two `extract` results.

    A path set on one side only counts: azure-native replaces when a forcing input appears or goes,
    unless what goes is the value the SDK sends in its place (`sdkDefaults`). `skip` holds paths
    the old side never recorded (unknown, so not a change).
    """
    entry = facts().resources.get(type_token)
    if entry is None:
        return []
    defaults = entry.sdk_defaults
    skipped = set(skip)
    return [Change(path, old.get(path), new.get(path)) for path in entry.paths
            if path not in skipped and old.get(path, defaults.get(path)) != new.get(path, defaults.get(path))]
