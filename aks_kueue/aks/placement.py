"""Which pools each ResourceFlavor (and each DaemonSet) lands on, and what they add up to.

A flavor lands on a pool when every one of its `nodeLabels` is a label AKS (or the
user) puts on the pool's nodes. Kueue copies those labels into the pods it admits as
a nodeSelector, so a label no pool carries leaves the pods Pending.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from aks_kueue.aks.nodes import ZONE, PoolCapacity
from aks_kueue.aks.pools import same_taint
from aks_kueue.k8s.scheduling import SCHEDULING_EFFECTS, SelectorError, requirement_matches, tolerates
from aks_kueue.kueue.views import ResourceFlavor


@dataclass
class FlavorPlacement:
    name: str
    node_labels: dict[str, str]
    node_taints: list[dict[str, Any]]
    tolerations: list[dict[str, Any]]
    # (pool, nodes of it the flavor reaches)
    pools: list[tuple[PoolCapacity, int]] = field(default_factory=list)
    # For a flavor placed by assumption rather than by its labels (one the managed extension
    # generates): what the placement assumes.
    assumption: str = ""

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
        return any(same_taint(t, taint) for t in self.node_taints) or any(tolerates(t, taint) for t in self.tolerations)


def place_flavors(flavors: Iterable[ResourceFlavor], pools: list[PoolCapacity]) -> dict[str, FlavorPlacement]:
    placements = {}
    for flavor in flavors:
        placement = FlavorPlacement(name=flavor.name, node_labels=dict(flavor.node_labels),
                                    node_taints=[dict(t) for t in flavor.node_taints],
                                    tolerations=[dict(t) for t in flavor.tolerations])
        for pool in pools:
            nodes = pool.nodes_matching(placement.node_labels)
            # A pool of no nodes still counts where its labels match: the flavor is placed, on nothing.
            if nodes or (pool.spec.max_count == 0 and all(
                    value in pool.labels.get(key, ()) for key, value in placement.node_labels.items())):
                placement.pools.append((pool, nodes))
        placements[placement.name] = placement
    return placements


def node_variants(pool: PoolCapacity) -> list[dict[str, str]]:
    """The label sets of the pool's nodes: one per zone value, every other label single-valued."""
    single = {key: next(iter(values)) for key, values in pool.labels.items() if len(values) == 1}
    zones = sorted(pool.labels.get(ZONE, frozenset()))
    return [{**single, ZONE: zone} for zone in zones] if len(zones) > 1 else [single]


def pod_lands(pod_spec: Mapping[str, Any], pool: PoolCapacity) -> bool:
    """Can a pod with this nodeSelector, required node affinity and tolerations run on some node
    of the pool? Kubernetes' rules (`k8s/scheduling.py`) against the labels AKS gives the nodes."""
    blocked = [t for t in pool.spec.taints if t.get("effect") in SCHEDULING_EFFECTS
               and not any(tolerates(tol, t) for tol in pod_spec.get("tolerations") or [])]
    if blocked:
        return False
    selector = pod_spec.get("nodeSelector") or {}
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    if not isinstance(terms, list) or not all(
            isinstance(term, dict) and isinstance(term.get("matchExpressions") or [], list)
            and all(isinstance(e, dict) for e in term.get("matchExpressions") or []) for term in terms):
        return False  # a malformed term selects no node
    for labels in node_variants(pool):
        if any(labels.get(k) != v for k, v in selector.items()):
            continue
        try:
            if not terms or any(all(requirement_matches(e, labels) for e in term.get("matchExpressions") or [])
                                for term in terms):
                return True
        except SelectorError:
            return False  # a malformed requirement selects no node
    return False
