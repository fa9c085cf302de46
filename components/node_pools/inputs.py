"""An AKS pool's inputs from the model's `Pool`: the user pools' AgentPools, the system pool's
AgentPool and its inline profile at cluster creation all send these (the model reads them back)."""

from __future__ import annotations

from typing import Any, Mapping

import pulumi

from aks_kueue.aks.capacity_tag import GPU_PLUGIN_TAG, capacity_tag
from aks_kueue.aks.pools import EXTERNAL_PLUGIN, SYSTEM, Pool, taint_text
from aks_kueue.day2.state import DERIVED_CREATE_ONLY
from aks_kueue.model.record import SPOT_INPUTS, pool_create_only, pool_entry
from aks_kueue.settings.base import snake
from components.day2_guard import Gated

# The create-only inputs a pool keeps for life, by the SDK's argument names.
_CREATE_ONLY_ARGS = {"enableEncryptionAtHost": "enable_encryption_at_host", "osDiskType": "os_disk_type",
                     "osDiskSizeGB": "os_disk_size_gb"}


def create_only(pool: Pool, guard: Gated) -> dict[str, pulumi.Input[Any]]:
    """What the pool is created with, and keeps: the guard's settled record has the values a pool of
    the last deployment was created with (or none, where it was created without them)."""
    entry = pool_entry(pool)
    return {_CREATE_ONLY_ARGS[path]: guard.fact(entry, path, None) for path in DERIVED_CREATE_ONLY}


def created_with(pool: Pool) -> dict[str, Any]:
    """The create-only inputs of a pool the update creates (no last deployment to keep)."""
    values = pool_create_only(pool)
    return {arg: values[path] for path, arg in _CREATE_ONLY_ARGS.items()}


def pool_inputs(pool: Pool, tags: Mapping[str, str], create: Mapping[str, pulumi.Input[Any]]) -> dict[str, Any]:
    """The AgentPool keyword arguments (snake_case, as the SDK takes them); `create` from `create_only`."""
    inputs: dict[str, Any] = dict(
        mode=pool.mode, type="VirtualMachineScaleSets", os_type="Linux", os_sku=pool.os_sku, vm_size=pool.vm_size,
        max_pods=pool.max_pods, node_labels=dict(pool.labels) or None,
        node_taints=[taint_text(t) for t in pool.taints] or None, availability_zones=list(pool.zones) or None,
        upgrade_settings=snake_keys(dict(pool.upgrade_settings)) or None, tags=dict(tags), **create)
    if pool.mode == SYSTEM:
        inputs["count"] = pool.max_count
    else:
        # The cluster autoscaler owns the node count once the pool exists (the AgentPool ignores changes).
        inputs.update(enable_auto_scaling=True, count=pool.min_count, min_count=pool.min_count,
                      max_count=pool.max_count)
    if pool.explicit is not None:
        node = pool.explicit
        inputs["tags"] = {**tags, **capacity_tag(node.cpu, _memory(node.memory_bytes), node.gpus, node.gpu_resource)}
    if pool.gpu_vendor is not None:
        inputs["gpu_profile"] = {"driver": pool.gpu_driver}
    if pool.gpu_device_plugin == EXTERNAL_PLUGIN:
        inputs["tags"] = {**inputs["tags"], GPU_PLUGIN_TAG: EXTERNAL_PLUGIN}
    if pool.gpu_instance_profile is not None:
        inputs["gpu_instance_profile"] = pool.gpu_instance_profile
    if pool.spot:
        inputs.update(snake_keys(SPOT_INPUTS))
    return inputs


def _memory(memory_bytes: int) -> str:
    """A stated memory as a quantity again: the largest binary unit that divides it."""
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if memory_bytes % size == 0:
            return f"{memory_bytes // size}{unit}"
    return str(memory_bytes)


def snake_keys(value: Any) -> Any:
    """The SDK takes nested inputs as dicts with its snake_case names."""
    if isinstance(value, dict):
        return {snake(k): snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    return value
