"""What one node of a pool offers to pods, the labels AKS gives it, and what the pool offers
at its autoscaler maximum.

Amounts are in Kueue's integer units (`kueue/units.py`): cpu in millicores, memory in
bytes, GPUs and pods as counts, so they compare directly with quotas. Every figure keeps
the sentence that explains it.

A node's GPUs count only where something advertises them: Kubernetes sees `nvidia.com/gpu`
(or `amd.com/gpu`) only once a driver and a device plugin run on the node (aks-managed-gpu-nodes,
nvidia-gpu-operator, use-amd-gpus). That is AKS's NVIDIA driver with the program's device plugin
DaemonSet on the pool, or a device plugin the pool declares (`gpuDevicePlugin: external`, the
tag `aks-kueue-gpu-device-plugin` on its AgentPool), taken at its word. Anywhere else the pool's
GPUs count 0, and `unadvertised` says why and what to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping, Optional

from aks_kueue.aks.allocatable import DEFAULT_VM_OVERHEAD, MIB, node_allocatable
from aks_kueue.aks.device_plugin import DEVICE_PLUGIN_NAMES, is_device_plugin
from aks_kueue.aks.pools import AGENTPOOL, EXTERNAL_PLUGIN, PROGRAM_PLUGIN, Pool, effective_gpu_driver
from aks_kueue.aks.vm_sizes import lookup, mig_resource
from aks_kueue.kueue.units import format_amount

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
class Unadvertised:
    """GPUs a pool's nodes have and do not advertise, so the model counts none: no driver and
    device plugin run there. Pods that ask for them are never scheduled on the pool."""

    resource: str
    gpus: int       # per node
    why: str
    fix: str


@dataclass(frozen=True)
class NodeResources:
    amounts: Mapping[str, int]
    explanation: tuple[str, ...]
    fractional_gpu: bool = False
    unadvertised: Optional[Unadvertised] = None


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

    def not_advertised(self, resource: str) -> str:
        """" (not advertised: why)" where the pool's nodes have `resource` and advertise none, else ""."""
        missing = self.node.unadvertised
        return f" (not advertised: {missing.why})" if missing is not None and missing.resource == resource else ""


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
        assert size is not None  # refused above when neither the catalog nor the pool states it
        vcpus, memory_gib = size.vcpus, Fraction(size.memory_gib)
        stated = f"{size.name}: {size.vcpus} vCPU, {size.memory_gib:g} GiB (catalog)"
    base = node_allocatable(vcpus, memory_gib, pool.max_pods, vm_overhead)
    amounts = {"cpu": base.cpu_millicores, "memory": base.memory_bytes, "pods": base.pods}
    lines = [stated, *base.explanation, f"pods: maxPods {pool.max_pods}"]
    gpu_resource, gpus, gpu_lines, fractional, unadvertised = _gpus(pool)
    lines += gpu_lines
    if gpu_resource:
        amounts[gpu_resource] = gpus
    for daemonset in pool.daemonsets:
        for resource, value in daemonset.requests.items():
            amounts[resource] = amounts.get(resource, 0) - value
        amounts["pods"] -= 1
        lines.append(f"less DaemonSet {daemonset.name} on every node: " + ", ".join(
            f"{r} {format_amount(r, q)}" for r, q in daemonset.requests.items()) + ", 1 pod")
    lines.append("not subtracted: AKS's own kube-system DaemonSets, whose requests AKS does not publish")
    lines.append(f"per node: cpu {amounts['cpu']}m, memory {amounts['memory'] / MIB:.0f} MiB, pods {amounts['pods']}"
                 + (f", {gpu_resource} {gpus}" if gpu_resource else ""))
    return NodeResources({k: max(0, v) for k, v in amounts.items()}, tuple(lines), fractional, unadvertised)


def _gpus(pool: Pool) -> tuple[str | None, int, list[str], bool, Optional[Unadvertised]]:
    """(resource, count per node, explanation, fractional?, what is not advertised) for the pool's
    accelerators: what its nodes advertise, which is nothing without a driver and a device plugin."""
    size = lookup(pool.vm_size)
    if pool.explicit is not None:
        if not pool.explicit.gpus or pool.explicit.gpu_resource is None:  # GPUs are stated with their resource
            return None, 0, [], False, None
        resource, count = pool.explicit.gpu_resource, pool.explicit.gpus
        line = f"{resource}: {count} per node, as stated"
    elif size is None or not size.has_gpu:
        return None, 0, [], False, None
    elif not size.gpu_resource:
        return None, 0, [f"{size.name}: {size.gpus} GPUs, but the size page names no GPU model, so the resource "
                         "its nodes advertise is unknown and none is counted; state the pool's capacity to count "
                         "them"], False, None
    elif size.fractional_gpu:
        return size.gpu_resource, 0, [
            f"{size.gpu_resource}: 0 counted; {size.name} has {size.gpus} of a GPU (a GRID vGPU "
            "partition), which is not a whole GPU"], True, None
    elif pool.gpu_instance_profile:
        resource, count = mig_resource(size, pool.gpu_instance_profile, pool.mig_strategy)
        line = (f"{resource}: {count} per node ({pool.gpu_instance_profile} on {int(size.gpus)} x "
                f"{size.gpu_model}, device plugin MIG strategy {pool.mig_strategy})")
    else:
        resource, count = size.gpu_resource, int(size.gpus)
        line = f"{resource}: {int(size.gpus)} x {size.gpu_model} per node"
    advertiser = gpu_advertiser(pool)
    if advertiser is None:
        missing = _unadvertised(pool, resource, count)
        return resource, 0, [f"{resource}: 0 counted; the nodes have {count} but do not advertise them: "
                             f"{missing.why}"], False, missing
    if advertiser == EXTERNAL_PLUGIN:
        line += " (advertised by the device plugin the pool declares, gpuDevicePlugin: external)"
    return resource, count, [line], False, None


def gpu_advertiser(pool: Pool) -> Optional[str]:
    """What advertises the pool's GPUs to Kubernetes: EXTERNAL_PLUGIN when the pool declares a device
    plugin the stack does not install; PROGRAM_PLUGIN where AKS installs the NVIDIA driver and the
    program's device plugin DaemonSet runs on the pool's nodes; None otherwise (nothing does)."""
    vendor = pool.gpu_vendor
    if vendor is None:
        return None
    if pool.gpu_device_plugin == EXTERNAL_PLUGIN:
        return EXTERNAL_PLUGIN
    if (vendor == "nvidia" and effective_gpu_driver(vendor, pool.gpu_driver) == "Install"
            and any(is_device_plugin(d.name) for d in pool.daemonsets)):
        return PROGRAM_PLUGIN
    return None


def _unadvertised(pool: Pool, resource: str, count: int) -> Unadvertised:
    declare = "declare it with gpuDevicePlugin: external"
    if pool.gpu_vendor == "amd":
        return Unadvertised(resource, count, "AKS installs no AMD driver or device plugin (use-amd-gpus), and the "
                            "pool declares none", f"install the AMD GPU Operator on the pool (driver and ROCm device "
                            f"plugin) and {declare}")
    if effective_gpu_driver(pool.gpu_vendor, pool.gpu_driver) != "Install":
        return Unadvertised(resource, count, "with gpuDriver None AKS installs no NVIDIA driver, the program runs "
                            "NVIDIA's device plugin only where AKS does, and the pool declares no other",
                            f"install the NVIDIA GPU Operator on the pool (it brings the driver and the device "
                            f"plugin) and {declare}, or set gpuDriver: Install so that AKS installs the driver and "
                            "the program runs NVIDIA's device plugin there")
    return Unadvertised(resource, count, "AKS installs the NVIDIA driver, but no device plugin runs on the nodes: "
                        f"no DaemonSet of the program's ({', '.join(DEVICE_PLUGIN_NAMES)}) lands there, and the pool "
                        "declares none", "run NVIDIA's device plugin on the pool (the program's DaemonSet selects "
                        "its pools by kubernetes.azure.com/agentpool and tolerates their taints), or, where one you "
                        f"install runs there, {declare}")


def pool_capacity(pool: Pool, region: str, vm_overhead: Fraction = DEFAULT_VM_OVERHEAD) -> PoolCapacity:
    return PoolCapacity(pool, node_resources(pool, vm_overhead), node_labels(pool, region))
