"""The user node pools: one autoscaled AKS AgentPool per pool of the model (`nodePools[]`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import pulumi
from pulumi_azure_native import containerservice as cs

from aks_kueue.aks.pools import Pool
from aks_kueue.day2.allow import Protection
from aks_kueue.day2.replacement import AGENT_POOL, replace_on_changes
from aks_kueue.model.record import pool_entry
from components import Component
from components.day2_guard import Gated
from components.secret import secret_inputs
from components.node_pools.inputs import create_only, pool_inputs


@dataclass(frozen=True)
class NodePoolsArgs:
    resource_group_name: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    pools: Sequence[Pool]             # the model's user pools
    tags: dict[str, str]
    protection: Protection
    guard: Gated
    secret: bool = False              # aks-kueue:nodePools is a secret key


class NodePools(Component):
    agent_pools: dict[str, cs.AgentPool]

    def __init__(self, name: str, args: NodePoolsArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        self.agent_pools = {}
        for pool in args.pools:
            inputs = secret_inputs({"agent_pool_name": pool.name,
                                    **pool_inputs(pool, args.tags, create_only(pool, args.guard))}, args.secret)
            self.agent_pools[pool.name] = cs.AgentPool(
                f"{name}-{pool.name}", resource_group_name=args.resource_group_name, resource_name_=args.cluster_name,
                # The cluster autoscaler owns the node count once the pool exists.
                opts=self.child(ignore_changes=["count"], protect=args.protection.protects(pool_entry(pool)),
                                depends_on=[args.guard.gate], replace_on_changes=replace_on_changes(AGENT_POOL)),
                **inputs)
        self.register_outputs({"names": list(self.agent_pools)})
