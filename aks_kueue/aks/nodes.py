"""What one node of a pool offers to pods, the labels AKS gives it, and what the pool offers
at its autoscaler maximum.

Amounts are in Kueue's integer units (`kueue/units.py`): cpu in millicores, memory in
bytes, GPUs and pods as counts, so they compare directly with quotas. Every figure keeps
the sentence that explains it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

from aks_kueue.aks.allocatable import DEFAULT_VM_OVERHEAD, MIB, node_allocatable
from aks_kueue.aks.pools import Pool
from aks_kueue.aks.vm_sizes import lookup, mig_resource
from aks_kueue.kueue.units import format_amount

AGENTPOOL = "kubernetes.azure.com/agentpool"
ZONE = "topology.kubernetes.io/zone"
# The resources this model knows a node's amount of; any other (ephemeral-storage,
# hugepages, a custom device) has no modelled capacity and is never judged.
GPU_PREFIXES = ("nvidia.com/", "amd.com/")
BASE_RESOURCES = ("cpu", "memory", "pods")


def is_modelled(resource: str) -> bool:
    return resource in BASE_RESOURCES or resource.startswith(GPU_PREFIXES)


class CatalogError(ValueError):
    """A pool whose node size is unknown: the catalog lacks it and no capacity is stated."""


@dataclass(frozen=True)
class NodeResources:
    amounts: Mapping[str, int]
    explanation: tuple[str, ...]
    fractional_gpu: bool = False


@dataclass(frozen=True)
class PoolCapacity:
    spec: Pool
    node: NodeResources
    # Label key -> the values its nodes carry (the zone label differs from node to node).
    labels: Mapping[str, frozenset[str]]

    @property
    def name(self) -> str:
        return self.spec.name

    def nodes_matching(self, selector: Mapping[str, str]) -> int:
        """How many of the pool's maxCount nodes carry every label of `selector`.

        Zones add no capacity: the autoscaler spreads a zonal pool's nodes evenly, so a
        selector naming some zones gets that share of maxCount, rounded down.
        """
        for key, value in selector.items():
            if value not in self.labels.get(key, ()):
                return 0
        zones = self.labels.get(ZONE, frozenset())
        if ZONE in selector and len(zones) > 1:
            return self.spec.max_count // len(zones)
        return self.spec.max_count

    def total(self, resource: str) -> int:
        return self.node.amounts.get(resource, 0) * self.spec.max_count


def node_labels(pool: Pool, region: str) -> dict[str, frozenset[str]]:
    """The labels AKS puts on the pool's nodes (learn.microsoft.com/azure/aks/use-labels), plus the user's."""
    size = lookup(pool.vm_size)
    labels = {
        AGENTPOOL: pool.name, "agentpool": pool.name,  # the second is the deprecated spelling, still set
        "kubernetes.azure.com/mode": "user", "kubernetes.azure.com/role": "agent",
        "kubernetes.azure.com/managedby": "aks",
        "kubernetes.azure.com/nodepool-type": "VirtualMachineScaleSets",
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "arm64" if size is not None and size.cpu_architecture == "Arm64" else "amd64",
        "node.kubernetes.io/instance-type": size.name if size else pool.vm_size,
        "topology.kubernetes.io/region": region,
    }
    if size is not None:
        labels["kubernetes.azure.com/sku-cpu"] = str(size.vcpus)
    if pool.gpu_vendor == "nvidia":
        labels["kubernetes.azure.com/accelerator"] = labels["accelerator"] = "nvidia"
    if pool.spot:
        labels["kubernetes.azure.com/scalesetpriority"] = "spot"
    out = {key: frozenset([value]) for key, value in labels.items()}
    out[ZONE] = frozenset(f"{region}-{z}" for z in pool.zones) if pool.zones else frozenset(["0"])
    out.update({key: frozenset([value]) for key, value in pool.labels.items()})
    return out


def node_resources(pool: Pool, vm_overhead: Fraction = DEFAULT_VM_OVERHEAD) -> NodeResources:
    """Allocatable per node as AKS computes it, less the requests of the program's DaemonSets."""
    size = lookup(pool.vm_size)
    if size is None and pool.explicit is None:
        raise CatalogError(f"{pool.key or pool.name}.vmSize: {pool.vm_size!r} is not in the VM size "
                           "catalog; fix the name, or state the node's capacity: {cpu, memory, gpus, gpuResource}")
    if pool.explicit is not None:
        vcpus, memory_gib = pool.explicit.cpu, Fraction(pool.explicit.memory_bytes, 2**30)
        stated = f"{pool.vm_size} is not in the catalog; capacity as stated in the pool"
    else:
        vcpus, memory_gib = size.vcpus, size.memory_gib
        stated = f"{size.name}: {size.vcpus} vCPU, {size.memory_gib:g} GiB (catalog)"
    base = node_allocatable(vcpus, memory_gib, pool.max_pods, vm_overhead)
    amounts = {"cpu": base.cpu_millicores, "memory": base.memory_bytes, "pods": base.pods}
    lines = [stated, *base.explanation, f"pods: maxPods {pool.max_pods}"]
    gpu_resource, gpus, gpu_lines, fractional = _gpus(pool)
    lines += gpu_lines
    if gpu_resource:
        amounts[gpu_resource] = gpus
    for daemonset in pool.daemonsets:
        taken = dict(daemonset.requests)
        for resource, value in taken.items():
            amounts[resource] = amounts.get(resource, 0) - value
        amounts["pods"] -= 1
        lines.append(f"less DaemonSet {daemonset.name} on every node: " + ", ".join(
            f"{r} {format_amount(r, q)}" for r, q in daemonset.requests.items()) + ", 1 pod")
    lines.append("not subtracted: AKS's own kube-system DaemonSets, whose requests AKS does not publish")
    lines.append(f"per node: cpu {amounts['cpu']}m, memory {amounts['memory'] / MIB:.0f} MiB, pods {amounts['pods']}"
                 + (f", {gpu_resource} {gpus}" if gpu_resource else ""))
    return NodeResources({k: max(0, v) for k, v in amounts.items()}, tuple(lines), fractional)


def _gpus(pool: Pool) -> tuple[str | None, int, list[str], bool]:
    """(resource, count per node, explanation, fractional?) for the pool's accelerators."""
    size = lookup(pool.vm_size)
    if pool.explicit is not None:
        if not pool.explicit.gpus:
            return None, 0, [], False
        return pool.explicit.gpu_resource, pool.explicit.gpus, [
            f"{pool.explicit.gpu_resource}: {pool.explicit.gpus} per node, as stated"], False
    if size is None or not size.has_gpu:
        return None, 0, [], False
    if not size.gpu_resource:
        return None, 0, [f"{size.name}: {size.gpus} GPUs, but the size page names no GPU model, so the resource "
                         "its nodes advertise is unknown and none is counted; state the pool's capacity to count "
                         "them"], False
    lines = []
    if pool.gpu_driver == "None":
        lines.append(f"GPUs counted on the assumption that the GPU operator you install advertises "
                     f"them: the program places no device plugin on pool {pool.name}")
    if size.fractional_gpu:
        return size.gpu_resource, 0, lines + [
            f"{size.gpu_resource}: 0 counted; {size.name} has {size.gpus} of a GPU (a GRID vGPU "
            "partition), which is not a whole GPU"], True
    if pool.gpu_instance_profile:
        resource, count = mig_resource(size, pool.gpu_instance_profile, pool.mig_strategy)
        return resource, count, lines + [
            f"{resource}: {count} per node ({pool.gpu_instance_profile} on {int(size.gpus)} x "
            f"{size.gpu_model}, device plugin MIG strategy {pool.mig_strategy})"], False
    return size.gpu_resource, int(size.gpus), lines + [
        f"{size.gpu_resource}: {int(size.gpus)} x {size.gpu_model} per node"], False


def pool_capacity(pool: Pool, region: str, vm_overhead: Fraction = DEFAULT_VM_OVERHEAD) -> PoolCapacity:
    return PoolCapacity(pool, node_resources(pool, vm_overhead), node_labels(pool, region))
