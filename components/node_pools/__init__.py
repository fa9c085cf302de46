"""The user node pools: one autoscaled AKS AgentPool per `nodePools[]` entry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
from pulumi_azure_native import containerservice as cs

from aks_kueue.aks.capacity_tag import capacity_tag
from aks_kueue.settings.pools import NodePool
from components import token
from components.cluster import supports_host_encryption


@dataclass(frozen=True)
class NodePoolsArgs:
    resource_group_name: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    pools: list[NodePool]
    tags: dict[str, str]


class NodePools(pulumi.ComponentResource):
    agent_pools: dict[str, cs.AgentPool]

    def __init__(self, name: str, args: NodePoolsArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(token("NodePools"), name, None, opts)
        # The cluster autoscaler owns the node count once the pool exists.
        pool_opts = pulumi.ResourceOptions(parent=self, ignore_changes=["count"])
        self.agent_pools = {
            pool.name: cs.AgentPool(f"{name}-{pool.name}", opts=pool_opts, **agent_pool_inputs(pool, args))
            for pool in args.pools
        }
        self.register_outputs({"names": list(self.agent_pools)})


def agent_pool_inputs(pool: NodePool, args: NodePoolsArgs) -> dict:
    inputs = dict(
        resource_group_name=args.resource_group_name,
        resource_name_=args.cluster_name,
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
        enable_encryption_at_host=supports_host_encryption(pool.vm_size),
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
