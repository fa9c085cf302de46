"""Which pools each ResourceFlavor lands on, and what they add up to.

A flavor lands on a pool when every one of its `nodeLabels` is a label AKS (or the
user) puts on the pool's nodes. Kueue copies those labels into the pods it admits as
a nodeSelector, so a label no pool carries leaves the pods Pending.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from aks_kueue.feasibility.inputs import Manifest
from aks_kueue.feasibility.pools import PoolCapacity

BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Kubernetes' rule: an empty key with Exists tolerates everything; an empty effect any effect."""
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    operator = toleration.get("operator") or "Equal"
    if not toleration.get("key"):
        return operator == "Exists"
    if toleration["key"] != taint.get("key"):
        return False
    return operator == "Exists" or (toleration.get("value") or "") == (taint.get("value") or "")


def tolerated(tolerations: Iterable[Mapping[str, Any]], taint: Mapping[str, Any]) -> bool:
    return any(tolerates(t, taint) for t in tolerations)


def same_taint(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return (a.get("key"), a.get("value") or "", a.get("effect")) == (b.get("key"), b.get("value") or "",
                                                                    b.get("effect"))


@dataclass
class FlavorPlacement:
    name: str
    node_labels: dict[str, str]
    node_taints: list[dict[str, Any]]
    tolerations: list[dict[str, Any]]
    # (pool, nodes of it the flavor reaches)
    pools: list[tuple[PoolCapacity, int]] = field(default_factory=list)

    _totals: dict[str, int] = field(default_factory=dict, repr=False)
    _has: dict[str, bool] = field(default_factory=dict, repr=False)

    def total(self, resource: str) -> int:
        """Asked once per quota entry, so kept once computed (pools are final once placed), as `has` is."""
        if resource not in self._totals:
            self._totals[resource] = sum(pool.node.amounts.get(resource, 0) * nodes for pool, nodes in self.pools)
        return self._totals[resource]

    def has(self, resource: str) -> bool:
        if resource not in self._has:
            self._has[resource] = any(resource in pool.node.amounts for pool, _ in self.pools)
        return self._has[resource]

    def handles(self, taint: Mapping[str, Any]) -> bool:
        """The flavor declares the taint (Kueue then checks workloads tolerate it) or tolerates it."""
        return any(same_taint(t, taint) for t in self.node_taints) or tolerated(self.tolerations, taint)


def place_flavors(manifests: Iterable[Manifest], pools: list[PoolCapacity]) -> dict[str, FlavorPlacement]:
    placements = {}
    for manifest in manifests:
        if manifest.get("kind") != "ResourceFlavor":
            continue
        spec = manifest.get("spec") or {}
        placement = FlavorPlacement(
            name=manifest["metadata"]["name"], node_labels=dict(spec.get("nodeLabels") or {}),
            node_taints=list(spec.get("nodeTaints") or []), tolerations=list(spec.get("tolerations") or []))
        for pool in pools:
            nodes = pool.nodes_matching(placement.node_labels)
            if nodes or (pool.spec.max_count == 0 and _labels_match(pool, placement.node_labels)):
                placement.pools.append((pool, nodes))
        placements[placement.name] = placement
    return placements


def _labels_match(pool: PoolCapacity, selector: Mapping[str, str]) -> bool:
    return all(value in pool.labels.get(key, ()) for key, value in selector.items())
