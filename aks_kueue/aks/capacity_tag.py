"""A pool's stated node capacity, as Azure tags on its AgentPool.

For a VM size the catalog lacks, `nodePools[].capacity` states what one node has. The
policy pack sizes pools from AgentPool resources alone, so the program also writes that
statement on the pool as a tag (Azure keeps it as metadata; nothing acts on it):
`aks-kueue-node-capacity: cpu=64;memory=512Gi;gpus=8;gpuResource=nvidia.com/gpu`.
"""

from __future__ import annotations

from typing import Any, Optional

from aks_kueue.aks.pools import ExplicitNode
from aks_kueue.k8s.quantity import QuantityError, parse_quantity

CAPACITY_TAG = "aks-kueue-node-capacity"
# A GPU pool whose device plugin the stack does not install (`nodePools[].gpuDevicePlugin:
# external`) says so the same way, so that the pack counts its GPUs as the program does:
# `aks-kueue-gpu-device-plugin: external`.
GPU_PLUGIN_TAG = "aks-kueue-gpu-device-plugin"


def capacity_tag(cpu: int, memory: str, gpus: int = 0, gpu_resource: Optional[str] = None) -> dict[str, str]:
    parts = [f"cpu={cpu}", f"memory={memory}"]
    if gpus:
        parts += [f"gpus={gpus}", f"gpuResource={gpu_resource}"]
    return {CAPACITY_TAG: ";".join(parts)}


def explicit_node(value: Any) -> ExplicitNode:
    """The ExplicitNode a tag value states; ValueError with the reason when it cannot be read."""
    if not isinstance(value, str):
        raise ValueError(f"tag {CAPACITY_TAG} is not text")
    fields = dict(part.split("=", 1) for part in value.split(";") if "=" in part)
    try:
        cpu, gpus = int(fields["cpu"]), int(fields.get("gpus", "0"))
        memory = int(parse_quantity(fields["memory"]))
    except (KeyError, ValueError, QuantityError) as error:
        raise ValueError(f"tag {CAPACITY_TAG}={value!r} is not cpu=<n>;memory=<quantity>[;gpus=<n>;"
                         f"gpuResource=<name>] ({error})") from None
    if cpu < 1 or memory <= 0 or gpus < 0 or (gpus and not fields.get("gpuResource")):
        raise ValueError(f"tag {CAPACITY_TAG}={value!r} states no usable node")
    return ExplicitNode(cpu=cpu, memory_bytes=memory, gpus=gpus, gpu_resource=fields.get("gpuResource"))
