"""What one AKS node can really allocate to pods (Linux, Kubernetes 1.29 and later).

Source: learn.microsoft.com/azure/aks/node-resource-reservations, as summarised in
`shared/reference/aks.md` section a:

    cpu    = vCPUs - kube-reserved CPU (6% of core 1, 4% of core 2, 2% of cores 3-4, 1% above)
    memory = capacity - min(20 MiB x maxPods + 50 MiB, 25% of capacity) - 100 MiB eviction

`capacity` is the VM's memory less a stated VM-overhead margin (default 7.5%, what
AKS node auto-provisioning assumes), because kubelet reports less than the size's
nominal memory. Every figure carries the sentence that explains it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

MIB = 2**20
EVICTION_MIB = 100
DEFAULT_VM_OVERHEAD = Fraction(75, 1000)
# Default pods per node by network setup (learn.microsoft.com/azure/aks/concepts-network-ip-address-planning).
DEFAULT_MAX_PODS = {"overlay": 250, "azure": 110, "kubenet": 110, "none": 110}


def reserved_cpu_millicores(vcpus: int) -> int:
    """kube-reserved CPU by the core brackets; equals the AKS table for 1-64 cores."""
    brackets = ((1, 60), (1, 40), (2, 20))  # (cores in the bracket, millicores per core)
    left, reserved = vcpus, 0
    for cores, per_core in brackets:
        taken = min(left, cores)
        reserved += taken * per_core
        left -= taken
    return reserved + max(left, 0) * 10


def default_max_pods(plugin: str, plugin_mode: str | None) -> int:
    return DEFAULT_MAX_PODS["overlay" if plugin == "azure" and plugin_mode == "overlay" else plugin]


@dataclass(frozen=True)
class Allocatable:
    cpu_millicores: int
    memory_bytes: int
    pods: int
    explanation: list[str] = field(default_factory=list)


def node_allocatable(vcpus: int, memory_gib: float | Fraction, max_pods: int,
                     vm_overhead: Fraction = DEFAULT_VM_OVERHEAD) -> Allocatable:
    """`memory_gib` as the catalog prints it (a float, read back to its decimal) or exact."""
    reserved_cpu = reserved_cpu_millicores(vcpus)
    exact_gib = memory_gib if isinstance(memory_gib, Fraction) else Fraction(memory_gib).limit_denominator(1000)
    capacity_mib = exact_gib * 1024 * (1 - vm_overhead)
    pods_term = 20 * max_pods + 50
    quarter = capacity_mib / 4
    reserved_mib = min(Fraction(pods_term), quarter)
    memory_mib = capacity_mib - reserved_mib - EVICTION_MIB
    why_reserved = (f"20 MiB x {max_pods} pods + 50 MiB = {pods_term} MiB" if pods_term <= quarter
                    else f"25% of capacity = {float(quarter):.0f} MiB (less than 20 MiB x {max_pods} + 50 MiB)")
    return Allocatable(
        cpu_millicores=vcpus * 1000 - reserved_cpu,
        memory_bytes=int(memory_mib * MIB),
        pods=max_pods,
        explanation=[
            f"cpu: {vcpus} vCPU = {vcpus * 1000}m, less {reserved_cpu}m kube-reserved",
            f"memory capacity: {float(memory_gib):g} GiB less {float(vm_overhead):.1%} VM overhead = "
            f"{float(capacity_mib):.0f} MiB",
            f"memory reserved: {why_reserved}; eviction threshold {EVICTION_MIB} MiB",
            f"memory allocatable: {float(memory_mib):.0f} MiB",
        ],
    )
