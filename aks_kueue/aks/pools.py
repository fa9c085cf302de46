"""An AKS node pool as the capacity model and the judge see it, and the defaults AKS applies.

One place for the pool defaults both readers need (settings and resources): the taint
AKS adds to spot pools, the GPU driver AKS installs unless told not to, the device plugin
this program runs where AKS installs the NVIDIA driver (unless the pool declares that another
one runs there), and the MIG strategy it uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from aks_kueue.aks.vm_sizes import VmSize, lookup
from aks_kueue.k8s.scheduling import tolerating
from aks_kueue.kueue.units import amount

# The label AKS gives every node with the name of its pool (learn.microsoft.com/azure/aks/use-labels).
AGENTPOOL = "kubernetes.azure.com/agentpool"
# The taint AKS puts on every node of a spot pool (learn.microsoft.com/azure/aks/spot-node-pool).
SPOT_TAINT = {"key": "kubernetes.azure.com/scalesetpriority", "value": "spot", "effect": "NoSchedule"}
# The taint this program puts on system pools, so that only critical add-ons run there
# (learn.microsoft.com/azure/aks/use-system-pools).
SYSTEM_POOL_TAINT = {"key": "CriticalAddonsOnly", "value": "true", "effect": "NoSchedule"}
# GPU nodes often carry this taint (NVIDIA's operator and many clusters set it); GPU DaemonSets tolerate it.
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
# `nodePools[].gpuDevicePlugin`: who runs the device plugin that advertises a GPU pool's GPUs.
# PROGRAM_PLUGIN is this program (NVIDIA's device plugin, `aks/device_plugin.py`, where AKS installs
# the NVIDIA driver); EXTERNAL_PLUGIN is something the stack does not install (the NVIDIA or AMD
# GPU Operator, a plugin of one's own), declared by the user and taken at their word.
PROGRAM_PLUGIN = "program"
EXTERNAL_PLUGIN = "external"
SYSTEM = "System"
USER = "User"
EPHEMERAL = "Ephemeral"
MANAGED = "Managed"
# The OS disk a pool asks for when it names no size. AKS sizes an unsized OS disk to the VM
# ("Default OS disk sizing", concepts-storage: 128 GiB below 8 vCPUs, 256 to 1024 above) unless
# ephemeral, where the disk must fit the VM's cache or temp disk; with no size written this
# program asks for 128 GiB, the smallest default, so that an ephemeral disk's size is its choice,
# never AKS's (`shared/reference/aks.md` e: AKS scales an unsized ephemeral disk to the temp disk).
DEFAULT_OS_DISK_GIB = 128


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

    @classmethod
    def of_quantities(cls, name: str, requests: Mapping[str, str]) -> "DaemonSetLoad":
        """A load whose requests are written as Kubernetes quantities (`50m`, `64Mi`)."""
        return cls(name, {r: amount(r, q) for r, q in requests.items()})


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
    # EXTERNAL_PLUGIN when the pool declares that a device plugin the stack does not install runs
    # there; None otherwise (the program's own runs where `needs_device_plugin`).
    gpu_device_plugin: Optional[str] = None
    gpu_instance_profile: Optional[str] = None
    spot: bool = False
    explicit: Optional[ExplicitNode] = None
    daemonsets: tuple[DaemonSetLoad, ...] = ()
    # The stack key that defines the pool, e.g. aks-kueue:nodePools[1].
    key: str = ""
    os_sku: Optional[str] = None
    # What the pool is created with, and keeps (AKS cannot change them in place): osDiskType
    # "Ephemeral" or "Managed" (None: left to AKS, which picks ephemeral where it fits),
    # osDiskSizeGB (None: AKS's default) and host encryption.
    os_disk_type: Optional[str] = None
    os_disk_size_gb: Optional[int] = None
    encryption_at_host: bool = False
    # upgradeSettings as sent, in the AKS API's names (maxSurge, maxUnavailable, ...).
    upgrade_settings: Mapping[str, Any] = field(default_factory=dict)
    # The last deployment has this pool, and this update keeps it: what it was created with stays.
    existing: bool = False
    # The create-only inputs the program chose because the stack wrote none (osDiskType,
    # osDiskSizeGB, enableEncryptionAtHost): a kept pool keeps its own instead. Known to the
    # program only, so not compared.
    chosen: frozenset[str] = field(default=frozenset(), compare=False, repr=False)

    @property
    def subject(self) -> str:
        """What a finding about the pool names it as ("node pool t4", "system pool system")."""
        return f"{'system' if self.mode == SYSTEM else 'node'} pool {self.name}"

    @property
    def gpu_vendor(self) -> Optional[str]:
        return gpu_vendor(self.vm_size, self.explicit)

    @property
    def mig_strategy(self) -> str:
        return mig_strategy(self.gpu_instance_profile)

    @property
    def needs_device_plugin(self) -> bool:
        return needs_device_plugin(self.gpu_vendor, self.gpu_driver, self.gpu_device_plugin)

    @property
    def ephemeral_os_fits(self) -> Optional[bool]:
        return ephemeral_os_fits(self.vm_size, self.os_disk_size_gb)

    @property
    def effective_os_disk_type(self) -> Optional[str]:
        """The OS disk the nodes get: as sent, else what AKS picks (ephemeral where it fits);
        None when nothing here can tell."""
        if self.os_disk_type is not None:
            return self.os_disk_type
        fits = self.ephemeral_os_fits
        return None if fits is None else EPHEMERAL if fits else MANAGED


def gpu_daemonset_placement(pools: Iterable[Any]) -> dict[str, Any]:
    """The affinity and tolerations of a GPU DaemonSet's pods (the device plugin, the DCGM exporter): on
    these pools' nodes only, tolerating each pool's own taints exactly and the `nvidia.com/gpu` taint."""
    pools = list(pools)
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": AGENTPOOL, "operator": "In", "values": [p.name for p in pools]}]}]}}},
            "tolerations": tolerating([t for pool in pools for t in pool.taints], always=[GPU_TOLERATION])}


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


def needs_device_plugin(vendor: Optional[str], driver: Optional[str], declared: Optional[str] = None) -> bool:
    """AKS installs the NVIDIA driver but not the device plugin; this program runs it there, unless
    the pool declares that another device plugin runs there (two would both claim the GPUs)."""
    return vendor == "nvidia" and effective_gpu_driver(vendor, driver) == "Install" and declared != EXTERNAL_PLUGIN


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


def local_disk_gib(size: VmSize) -> Optional[float]:
    """Where an ephemeral OS disk can live: the larger of the VM's cache and its temp storage (the
    latest series have no cache, only temp storage: concepts-storage); None when the page gives neither."""
    found = [g for g in (size.cache_disk_gib, size.temp_storage_gib) if g is not None]
    return max(found) if found else None


def ephemeral_os_fits(vm_size: str, os_disk_size_gb: Optional[int] = None) -> Optional[bool]:
    """Whether an ephemeral OS disk of this size (DEFAULT_OS_DISK_GIB when none is written) fits the
    VM: its size page must support ephemeral OS disks, and its cache or temp disk must hold the OS
    disk (concepts-storage, "Ephemeral OS disk"). None when the catalog does not know the size or
    its page does not say."""
    size = lookup(vm_size)
    if size is None or size.ephemeral_os_disk is None:
        return None
    if not size.ephemeral_os_disk:
        return False
    local = local_disk_gib(size)
    if local is None:
        return None
    return local >= (os_disk_size_gb or DEFAULT_OS_DISK_GIB)


def default_os_disk(vm_size: str, os_disk_size_gb: Optional[int]) -> tuple[Optional[str], Optional[int]]:
    """(osDiskType, osDiskSizeGB) the program sends when the stack names no disk type: ephemeral
    with a stated size where it fits, managed where the size cannot hold it, and nothing for a
    size the catalog does not know (AKS then picks ephemeral where it fits)."""
    fits = ephemeral_os_fits(vm_size, os_disk_size_gb)
    if fits is None:
        return None, os_disk_size_gb
    if fits:
        return EPHEMERAL, os_disk_size_gb or DEFAULT_OS_DISK_GIB
    return MANAGED, os_disk_size_gb


def host_encryption_default(vm_size: str) -> bool:
    """Host encryption is turned on by default for the sizes the catalog knows; another size may
    not support it, and the program does not guess (`encryptionAtHost: true` turns it on)."""
    return lookup(vm_size) is not None
