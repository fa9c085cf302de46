"""The user node pools: one autoscaled AKS AgentPool per `nodePools[]` entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
from pulumi_azure_native import containerservice as cs

from aks_kueue.aks.capacity_tag import capacity_tag
from aks_kueue.day2.allow import Entry, Protection, Target
from aks_kueue.day2.replacement import AGENT_POOL, extract, replace_on_changes
from aks_kueue.day2.state import Tracked
from aks_kueue.settings.pools import NodePool
from components import token
from components.cluster import supports_host_encryption
from components.day2_guard import Gated, secret_inputs


@dataclass(frozen=True)
class NodePoolsArgs:
    resource_group_name: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    pools: list[NodePool]
    tags: dict[str, str]
    protection: Protection
    guard: Gated
    secret: bool = False              # aks-kueue:nodePools is a secret key


def pool_entry(pool: NodePool) -> Entry:
    return Entry(Target.NODE_POOL, pool.name)


class NodePools(pulumi.ComponentResource):
    agent_pools: dict[str, cs.AgentPool]

    def __init__(self, name: str, args: NodePoolsArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(token("NodePools"), name, None, opts)
        self.agent_pools = {}
        for pool in args.pools:
            entry = pool_entry(pool)
            # The cluster autoscaler owns the node count once the pool exists.
            pool_opts = pulumi.ResourceOptions(
                parent=self, ignore_changes=["count"], protect=args.protection.protects(entry),
                depends_on=[args.guard.gate], replace_on_changes=replace_on_changes(AGENT_POOL))
            encryption = args.guard.fact(entry, "enableEncryptionAtHost", supports_host_encryption(pool.vm_size))
            inputs = secret_inputs(agent_pool_inputs(pool, args, encryption), args.secret)
            self.agent_pools[pool.name] = cs.AgentPool(
                f"{name}-{pool.name}", resource_group_name=args.resource_group_name,
                resource_name_=args.cluster_name, opts=pool_opts, **inputs)
        self.register_outputs({"names": list(self.agent_pools)})


def agent_pool_inputs(pool: NodePool, args: NodePoolsArgs, encryption: pulumi.Input[bool]) -> dict:
    inputs = dict(
        agent_pool_name=pool.name,
        mode="User",
        type="VirtualMachineScaleSets",
        os_type="Linux",
        os_sku=pool.os_sku,
        vm_size=pool.vm_size,
        enable_auto_scaling=True,
        count=pool.min_count,
        min_count=pool.min_count,
        max_count=pool.max_count,
        max_pods=pool.max_pods,
        node_labels=pool.labels or None,
        node_taints=pool.node_taints or None,
        availability_zones=pool.zones or None,
        # A pool keeps the host encryption it was created with (AKS cannot change it in place).
        enable_encryption_at_host=encryption,
        upgrade_settings=_snake_keys(pool.effective_upgrade_settings),
        tags=args.tags,
    )
    if pool.capacity is not None:
        stated = pool.capacity
        inputs["tags"] = {**args.tags, **capacity_tag(stated.cpu, stated.memory, stated.gpus, stated.gpu_resource)}
    if pool.gpu_vendor is not None:
        inputs["gpu_profile"] = cs.GPUProfileArgs(driver=pool.effective_gpu_driver)
    if pool.gpu_instance_profile is not None:
        inputs["gpu_instance_profile"] = pool.gpu_instance_profile
    if pool.spot:
        inputs.update(scale_set_priority="Spot", scale_set_eviction_policy="Delete", spot_max_price=-1)
    return inputs


def tracked(pools: list[NodePool], resource_group_name: str, cluster_name: str,
            protection: Protection) -> list[Tracked]:
    """Each pool as the guard compares it (with the stack key each fact comes from)."""
    found = []
    for index, pool in enumerate(pools):
        entry, key = pool_entry(pool), f"aks-kueue:nodePools[{index}]"
        facts = extract(AGENT_POOL, {
            "resourceGroupName": resource_group_name, "resourceName": cluster_name, "agentPoolName": pool.name,
            "vmSize": pool.vm_size, "gpuInstanceProfile": pool.gpu_instance_profile,
            "availabilityZones": pool.zones or None, "enableEncryptionAtHost": supports_host_encryption(pool.vm_size)})
        keys = {"resourceGroupName": "aks-kueue:resourceGroupName", "resourceName": "aks-kueue:cluster.name",
                "agentPoolName": f"{key}.name", "vmSize": f"{key}.vmSize", "enableEncryptionAtHost": f"{key}.vmSize",
                "gpuInstanceProfile": f"{key}.gpuInstanceProfile", "availabilityZones": f"{key}.zones"}
        found.append(Tracked(entry, AGENT_POOL, f"AgentPool {pool.name}", facts, protection.protects(entry),
                             keys=keys, key=key))
    return found


def _snake_keys(settings: Optional[dict]) -> Optional[dict]:
    from components.cluster import _snake_keys as snake

    return snake(settings) if settings else None
