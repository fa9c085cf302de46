"""What the feasibility analysis reads: plain values, no settings and no Pulumi.

Two callers build these: `adapter.py` from the stack's settings, and (later) the policy
pack from the Pulumi resource inputs it sees (AgentPool, ManagedCluster, Extension or
Release, the Kueue CustomResources). Both must reach the same verdicts, so nothing here
knows where the values came from beyond the `source` key paths used in messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping, Optional

from aks_kueue.aks.allocatable import DEFAULT_VM_OVERHEAD

Manifest = dict[str, Any]


@dataclass(frozen=True)
class ExplicitNode:
    """Per-node capacity stated for a VM size the catalog does not know."""

    cpu: int
    memory_bytes: int
    gpus: int = 0
    gpu_resource: Optional[str] = None


@dataclass(frozen=True)
class PlacedDaemonSet:
    """A DaemonSet the program itself runs on every node of a pool: its pod's requests."""

    name: str
    requests: Mapping[str, str]


@dataclass(frozen=True)
class PoolSpec:
    name: str
    vm_size: str
    max_count: int
    max_pods: int
    labels: Mapping[str, str] = field(default_factory=dict)
    # As AKS puts them on the nodes ({key, value, effect}), the spot taint included.
    taints: tuple[Mapping[str, str], ...] = ()
    zones: tuple[str, ...] = ()
    # AKS gpuProfile.driver: "Install", "None", or None for a pool without GPUs.
    gpu_driver: Optional[str] = None
    gpu_instance_profile: Optional[str] = None
    mig_strategy: str = "mixed"
    spot: bool = False
    explicit: Optional[ExplicitNode] = None
    daemonsets: tuple[PlacedDaemonSet, ...] = ()
    source: str = ""
    # The share of the VM's memory kubelet does not report; the policy pack makes it configurable.
    vm_overhead: Fraction = DEFAULT_VM_OVERHEAD


@dataclass(frozen=True)
class InstallFacts:
    """The cluster and Kueue install facts that the managed extension's limits concern."""

    region: str
    kubernetes_version: str
    sku: str = "Base"
    node_provisioning: str = "Manual"
    # Every Kueue installer registered: "managed" (the AKS extension) and/or "helm".
    installers: tuple[str, ...] = ()
    integrations: Optional[tuple[str, ...]] = None
    sources: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FeasibilityInputs:
    pools: tuple[PoolSpec, ...]
    # Kueue v1beta2 manifests (ResourceFlavor, Cohort, ClusterQueue, LocalQueue, WorkloadPriorityClass),
    # and the Namespaces of the LocalQueues with their labels.
    manifests: tuple[Manifest, ...]
    # Kueue v1beta2 Workloads: the expected job shapes.
    workloads: tuple[Manifest, ...]
    install: InstallFacts
    # "Kind/namespace/name" (namespace empty for cluster-scoped kinds) -> key path, for messages.
    sources: Mapping[str, str] = field(default_factory=dict)


def object_key(manifest: Manifest) -> str:
    metadata = manifest.get("metadata") or {}
    return f"{manifest.get('kind', '')}/{metadata.get('namespace') or ''}/{metadata.get('name', '')}"
