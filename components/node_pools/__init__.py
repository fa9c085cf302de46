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
from components.secret import NO_SECRET_KEYS, SecretKeys, secret_inputs
from components.node_pools.inputs import create_only, pool_inputs


@dataclass(frozen=True)
class NodePoolsArgs:
    resource_group_name: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    pools: Sequence[Pool]             # the model's user pools
    tags: dict[str, str]
    protection: Protection
    guard: Gated
    secret: SecretKeys = NO_SECRET_KEYS   # what comes of aks-kueue:nodePools is sent as a secret


class NodePools(Component, kind="NodePools"):
    agent_pools: dict[str, cs.AgentPool]

    def __init__(self, name: str, args: NodePoolsArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        # The cluster autoscaler owns the node count once the pool exists.
        self.agent_pools = {pool.name: agent_pool(
            self, f"{name}-{pool.name}", pool, args.resource_group_name, args.cluster_name, args.tags, args.guard,
            args.protection, args.secret.any("nodePools"), ignore_changes=["count"]) for pool in args.pools}
        self.register_outputs({"names": list(self.agent_pools)})


def agent_pool(parent: Component, name: str, pool: Pool, resource_group_name: pulumi.Input[str],
               cluster_name: pulumi.Input[str], tags: dict[str, str], guard: Gated, protection: Protection,
               secret: bool, **options) -> cs.AgentPool:
    """A pool's AgentPool (a user pool, or the system pool once the cluster has been created): created
    with what it keeps for life (`create_only`), after the guard's verdict, replaced where that changes."""
    inputs = secret_inputs({"agent_pool_name": pool.name, **pool_inputs(pool, tags, create_only(pool, guard))}, secret)
    return cs.AgentPool(name, resource_group_name=resource_group_name, resource_name_=cluster_name, **inputs,
                        opts=parent.child(protect=protection.protects(pool_entry(pool)), depends_on=[guard.gate],
                                          replace_on_changes=replace_on_changes(AGENT_POOL), **options))
