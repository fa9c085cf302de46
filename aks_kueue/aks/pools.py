"""An AKS node pool as the capacity model and the judge see it, and the defaults AKS applies.

One place for the pool defaults both readers need (settings and resources): the taint
AKS adds to spot pools, the GPU driver AKS installs unless told not to, the device plugin
this program runs where AKS installs the NVIDIA driver, and the MIG strategy it uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from aks_kueue.aks.vm_sizes import lookup
from aks_kueue.kueue.units import amount

# The taint AKS puts on every node of a spot pool (learn.microsoft.com/azure/aks/spot-node-pool).
SPOT_TAINT = {"key": "kubernetes.azure.com/scalesetpriority", "value": "spot", "effect": "NoSchedule"}
# The taint this program puts on system pools, so that only critical add-ons run there
# (learn.microsoft.com/azure/aks/use-system-pools).
SYSTEM_POOL_TAINT = {"key": "CriticalAddonsOnly", "value": "true", "effect": "NoSchedule"}
# GPU nodes often carry this taint (NVIDIA's operator and many clusters set it); GPU DaemonSets tolerate it.
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
SYSTEM = "System"
USER = "User"


@dataclass(frozen=True)
class ExplicitNode:
    """Per-node capacity stated for a VM size the catalog does not know."""

    cpu: int
    memory_bytes: int
    gpus: int = 0
    gpu_resource: Optional[str] = None


@dataclass(frozen=True)
class DaemonSetLoad:
    """A DaemonSet that runs one pod on every node of a pool: that pod's requests, given as
    quantities or amounts and kept in Kueue's units (cpu in millicores), so one load reads the
    same whichever way it was written."""

    name: str
    requests: Mapping[str, int]

    def __post_init__(self) -> None:
        object.__setattr__(self, "requests", {r: q if isinstance(q, int) and not isinstance(q, bool) else amount(r, q)
                                              for r, q in self.requests.items()})


@dataclass(frozen=True)
class Pool:
    """One node pool, with AKS's defaults applied: the taints are those its nodes carry."""

    name: str
    vm_size: str
    max_count: int
    max_pods: int
    min_count: int = 0
    mode: str = USER
    labels: Mapping[str, str] = field(default_factory=dict)
    # {key, value, effect} as AKS puts them on the nodes, the spot taint included.
    taints: tuple[Mapping[str, str], ...] = ()
    zones: tuple[str, ...] = ()
    # AKS gpuProfile.driver: "Install", "None", or None for a pool without GPUs.
    gpu_driver: Optional[str] = None
    gpu_instance_profile: Optional[str] = None
    spot: bool = False
    explicit: Optional[ExplicitNode] = None
    daemonsets: tuple[DaemonSetLoad, ...] = ()
    # The stack key that defines the pool, e.g. aks-kueue:nodePools[1].
    key: str = ""

    @property
    def gpu_vendor(self) -> Optional[str]:
        return gpu_vendor(self.vm_size, self.explicit)

    @property
    def mig_strategy(self) -> str:
        return mig_strategy(self.gpu_instance_profile)

    @property
    def needs_device_plugin(self) -> bool:
        return needs_device_plugin(self.gpu_vendor, self.gpu_driver)


def gpu_vendor(vm_size: str, explicit: Optional[ExplicitNode] = None) -> Optional[str]:
    """"nvidia", "amd" or None, from the catalog, else from a stated capacity."""
    size = lookup(vm_size)
    if size is not None:
        return size.gpu_vendor
    if explicit is not None and explicit.gpus:
        return "amd" if (explicit.gpu_resource or "").startswith("amd.com/") else "nvidia"
    return None


def effective_gpu_driver(vendor: Optional[str], driver: Optional[str]) -> Optional[str]:
    """AKS installs the NVIDIA driver unless told not to, and never an AMD one."""
    if vendor is None:
        return None
    return driver or ("Install" if vendor == "nvidia" else "None")


def needs_device_plugin(vendor: Optional[str], driver: Optional[str]) -> bool:
    """AKS installs the NVIDIA driver but not the device plugin; this program runs it there."""
    return vendor == "nvidia" and effective_gpu_driver(vendor, driver) == "Install"


def mig_strategy(gpu_instance_profile: Optional[str]) -> str:
    """MIG pools advertise `nvidia.com/mig-<profile>` (mixed); others plain `nvidia.com/gpu`."""
    return "mixed" if gpu_instance_profile else "none"


def node_taints(taints: tuple[Mapping[str, str], ...], spot: bool) -> tuple[Mapping[str, str], ...]:
    """The taints AKS really puts on a pool's nodes: the pool's own, and spot's on a spot pool."""
    taints = tuple(dict(t) for t in taints)
    if spot and not any(same_taint(t, SPOT_TAINT) for t in taints):
        taints += (dict(SPOT_TAINT),)
    return taints


def taint_text(taint: Mapping[str, str]) -> str:
    return f"{taint['key']}={taint.get('value') or ''}:{taint['effect']}"


def same_taint(a: Mapping[str, str], b: Mapping[str, str]) -> bool:
    return (a.get("key"), a.get("value") or "", a.get("effect")) == (b.get("key"), b.get("value") or "",
                                                                    b.get("effect"))
