"""Kueue's quota tree: ClusterQueues under (hierarchical) Cohorts.

Per flavor-resource (fr), as `pkg/cache/scheduler/resource_node.go` at v0.19.2 defines it:
- a node's local quota is what it never lends: subtree quota less its lendingLimit, or 0
  without a lendingLimit;
- a Cohort's subtree quota is its own nominal quota plus what each child may lend
  (the child's subtree quota less its local quota);
- usage a node cannot hold in its local quota moves up to its parent;
- available and potentially-available walk up the tree, capped by borrowingLimits.
Amounts are Kueue's integers (see `units`). Kueue saturates at int64; Python ints do
not need to, and no real quota comes near that bound.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from aks_kueue.kueue.cohorts import cohort_cycles
from aks_kueue.kueue.views import ClusterQueue, Cohort, QuotaHolder

FlavorResource = tuple[str, str]


class CohortCycleError(ValueError):
    """Kueue disables every member of a cohort cycle; no quota can be computed for it."""


@dataclass(frozen=True)
class Quota:
    nominal: int
    borrowing_limit: Optional[int] = None
    lending_limit: Optional[int] = None


@dataclass(eq=False)
class QuotaNode:
    name: str
    is_cohort: bool
    quotas: dict[FlavorResource, Quota] = field(default_factory=dict)
    parent: Optional["QuotaNode"] = None
    children: list["QuotaNode"] = field(default_factory=list)
    subtree_quota: dict[FlavorResource, int] = field(default_factory=dict)
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    # How many times `usage` may have changed, once its tree counts changes (`count_usage_changes`;
    # -1 until then): shares are kept per version, as most nodes' usage does not move while a search
    # looks at their shares. Usage stays a plain dict, the fastest to read.
    usage_version: int = -1
    # `spec.fairSharing.weight` (1 when unset; 0 makes any borrowing an infinite share).
    fair_weight: float = 1.0
    # Fixed once the tree is built (quotas never change within a tree), per fr: the local
    # quota (what is never lent), the quota `borrowing_with` compares with, PotentialAvailable,
    # and the steps `_available` walks.
    local: dict[FlavorResource, int] = field(default_factory=dict, repr=False)
    own: dict[FlavorResource, int] = field(default_factory=dict, repr=False)
    potential: dict[FlavorResource, int] = field(default_factory=dict, repr=False)
    plans: dict[FlavorResource, tuple] = field(default_factory=dict, repr=False)
    chains: dict[FlavorResource, tuple] = field(default_factory=dict, repr=False)

    def local_available(self, fr: FlavorResource) -> int:
        return max(0, self.local.get(fr, 0) - self.usage.get(fr, 0))

    def nominal(self, fr: FlavorResource) -> int:
        quota = self.quotas.get(fr)
        return 0 if quota is None else quota.nominal

    def borrowing_with(self, fr: FlavorResource, value: int) -> bool:
        """Would `value` more take this node past its own quota (a Cohort: its subtree's)?"""
        return self.own.get(fr, 0) < self.usage.get(fr, 0) + value

    def within_subtree_quota(self, frs) -> bool:
        subtree, usage = self.subtree_quota, self.usage
        for fr in frs:
            if subtree.get(fr, 0) < usage.get(fr, 0):
                return False
        return True

    def within_all_quotas(self) -> bool:
        """`within_subtree_quota` for every flavor-resource (one it does not use is within)."""
        subtree = self.subtree_quota
        for fr, used in self.usage.items():
            if subtree.get(fr, 0) < used:
                return False
        return True

    def freeze(self) -> None:
        """Derive the fixed per-fr figures, once the subtree quotas are known."""
        self.local = {fr: _local_quota(self, fr) for fr, q in self.quotas.items() if q.lending_limit is not None}
        self.own = dict(self.subtree_quota) if self.is_cohort else {fr: q.nominal for fr, q in self.quotas.items()}

    def chain(self, fr: FlavorResource) -> tuple[tuple, ...]:
        """This node and its ancestors, up: per node its usage (the dict itself), local
        quota, own quota (as `borrowing_with` measures) and height, and whether it has a
        parent; all but the usage are fixed, so usage walks read nothing else."""
        chain = self.chains.get(fr)
        if chain is None:
            chain = self.chains[fr] = tuple((node.usage, node.local.get(fr, 0), node.own.get(fr, 0), node.height(),
                                             node.parent is not None) for node in reversed(self.path_from_root()))
        return chain

    def path_from_root(self) -> tuple["QuotaNode", ...]:
        """This node and its ancestors, root first; the tree's shape never changes."""
        path = self.__dict__.get("_path")
        if path is None:
            path = self.__dict__["_path"] = (*reversed(list(self.ancestors())), self)
        return path

    def ancestors(self):
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def root(self) -> "QuotaNode":
        path = self.__dict__.get("_path") or self.path_from_root()  # asked for every decision and search
        return path[0]

    def height(self) -> int:
        """Distance to the furthest leaf, as Kueue's getNodeHeight counts it."""
        height = self.__dict__.get("_height")
        if height is None:
            height = min(len(self.children), 1)
            for child in self.children:
                if child.is_cohort:
                    height = max(height, child.height() + 1)
            self.__dict__["_height"] = height
        return height

    def subtree_cluster_queues(self):
        for child in self.children:
            if child.is_cohort:
                yield from child.subtree_cluster_queues()
            else:
                yield child

    def cluster_queues_below(self) -> tuple["QuotaNode", ...]:
        """`subtree_cluster_queues`, kept: the tree's shape never changes once it is built."""
        found = self.__dict__.get("_below")
        if found is None:
            found = self.__dict__["_below"] = tuple(self.subtree_cluster_queues())
        return found


def _local_quota(node: QuotaNode, fr: FlavorResource) -> int:
    quota = node.quotas.get(fr)
    if quota is None or quota.lending_limit is None:
        return 0
    return max(0, node.subtree_quota.get(fr, 0) - quota.lending_limit)


def quotas_of(holder: QuotaHolder) -> dict[FlavorResource, Quota]:
    """The quotas of a ClusterQueue's or Cohort's resource groups, per flavor-resource."""
    return {(flavor.name, resource.name): Quota(resource.nominal_quota, resource.borrowing_limit, resource.lending_limit)
            for group in holder.resource_groups for flavor in group.flavors for resource in flavor.resources}


def cohorts_in_cycles(cohorts: Iterable[Cohort]) -> set[str]:
    """The Cohorts whose parentName chain loops (Kueue makes their queues inactive)."""
    parent = {cohort.name: cohort.parent for cohort in cohorts if cohort.parent}
    return {name for loop in cohort_cycles(parent) for name in loop}


class QuotaTree:
    def __init__(self):
        self.cohorts: dict[str, QuotaNode] = {}
        self.cluster_queues: dict[str, QuotaNode] = {}
        self._holders: list[QuotaHolder] = []
        self.counts_usage_changes = False

    @classmethod
    def from_objects(cls, objects: Iterable[Mapping[str, Any]]) -> "QuotaTree":
        """Build from Kueue v1beta2 ClusterQueue and Cohort manifests (validated, defaulted); other
        kinds are ignored."""
        return cls.from_views([Cohort.of(obj) if obj.get("kind") == "Cohort" else ClusterQueue.of(obj)
                               for obj in objects if obj.get("kind") in ("ClusterQueue", "Cohort")])

    @classmethod
    def from_views(cls, holders: Iterable[QuotaHolder]) -> "QuotaTree":
        """Build from ClusterQueues and Cohorts.

        A `cohortName` or `parentName` without a Cohort object makes an implicit cohort
        with no quota of its own, as in Kueue.
        """
        tree = cls()
        tree._holders = holders = list(holders)
        links: list[tuple[QuotaNode, str]] = []
        for holder in holders:
            if isinstance(holder, Cohort):
                node = tree._cohort(holder.name)
                node.quotas = quotas_of(holder)
            else:
                node = QuotaNode(holder.name, is_cohort=False, quotas=quotas_of(holder))
                tree.cluster_queues[holder.name] = node
            node.fair_weight = holder.fair_weight
            if holder.parent:
                links.append((node, holder.parent))
        for node, parent in links:
            node.parent = tree._cohort(parent)
            node.parent.children.append(node)
        tree._check_cycles()
        for cq in tree.cluster_queues.values():
            cq.subtree_quota = {fr: q.nominal for fr, q in cq.quotas.items()}
        for root in [c for c in tree.cohorts.values() if c.parent is None]:
            tree._accumulate(root)
        for node in [*tree.cohorts.values(), *tree.cluster_queues.values()]:
            node.freeze()
        return tree

    def without_usage(self) -> "QuotaTree":
        return QuotaTree.from_views(self._holders)

    def count_usage_changes(self) -> None:
        """From now on, count each node's usage changes (`QuotaNode.usage_version`), for fair
        sharing's kept shares; the classical algorithm reads none and pays nothing for them."""
        if not self.counts_usage_changes:
            self.counts_usage_changes = True
            for node in [*self.cohorts.values(), *self.cluster_queues.values()]:
                node.usage_version = 0

    def _cohort(self, name: str) -> QuotaNode:
        return self.cohorts.setdefault(name, QuotaNode(name, is_cohort=True))

    def _check_cycles(self) -> None:
        loops = cohort_cycles({name: node.parent.name for name, node in self.cohorts.items() if node.parent})
        if loops:
            raise CohortCycleError(f"cohorts {' -> '.join([*loops[0], loops[0][0]])} form a cycle")

    def _accumulate(self, node: QuotaNode) -> None:
        node.subtree_quota = {fr: q.nominal for fr, q in node.quotas.items()}
        for child in node.children:
            if child.is_cohort:
                self._accumulate(child)
            for fr, quota in child.subtree_quota.items():
                node.subtree_quota[fr] = node.subtree_quota.get(fr, 0) + quota - _local_quota(child, fr)

    # Usage -----------------------------------------------------------------------------

    def add_usage(self, cluster_queue: str, usage: dict[FlavorResource, int]) -> None:
        start = self.cluster_queues[cluster_queue]
        for fr, value in usage.items():
            for node_usage, local, _, _, _ in start.chain(fr):
                if value <= 0:
                    break
                used = node_usage.get(fr, 0)
                node_usage[fr] = used + value
                if local > used:
                    value -= local - used
        if self.counts_usage_changes:
            _changed(start)

    def remove_usage(self, cluster_queue: str, usage: dict[FlavorResource, int]) -> None:
        start = self.cluster_queues[cluster_queue]
        for fr, value in usage.items():
            for node_usage, local, _, _, _ in start.chain(fr):
                used = node_usage.get(fr, 0)
                node_usage[fr] = used - value
                stored_in_parent = used - local
                if stored_in_parent <= 0:
                    break
                if stored_in_parent < value:
                    value = stored_in_parent
        if self.counts_usage_changes:
            _changed(start)

    # Capacity --------------------------------------------------------------------------

    def available(self, cluster_queue: str, fr: FlavorResource) -> int:
        """What the ClusterQueue could take for `fr` right now (never below 0)."""
        return available(self.cluster_queues[cluster_queue], fr)

    def potential_available(self, cluster_queue: str, fr: FlavorResource) -> int:
        """The most the ClusterQueue could ever take for `fr`, with nothing else running."""
        return potential_available(self.cluster_queues[cluster_queue], fr)


def _changed(start: QuotaNode) -> None:
    """Usage moved from `start` up (as far as lending limits let it: a node above may be counted
    as changed when its usage did not move, which only costs a share computed again)."""
    for node in start.path_from_root():
        node.usage_version += 1


def available(node: QuotaNode, fr: FlavorResource) -> int:
    """What a ClusterQueue's node could take for `fr` right now (never below 0)."""
    return max(0, _available(node, fr))


def potential_available(node: QuotaNode, fr: FlavorResource) -> int:
    """The most a ClusterQueue's node could ever take for `fr`, with nothing else running."""
    value = node.potential.get(fr)
    if value is None:
        value = node.potential[fr] = _potential(node, fr)
    return value


def borrowing_height(cq: QuotaNode, fr: FlavorResource, value: int) -> tuple[int, bool]:
    """The height of the lowest subtree that can hold `value` more of `fr`, and whether
    that subtree is smaller than the whole tree (so quota may be reclaimed in it).

    Kueue's FindHeightOfLowestSubtreeThatFits: 0 when the ClusterQueue needs no borrowing.
    """
    chain = cq.chain(fr)
    if len(chain) == 1:
        return 0, False
    node_usage, local, own, _, _ = chain[0]
    used = node_usage.get(fr, 0)
    if own >= used + value:  # not borrowing
        return 0, True
    remaining = value - max(0, local - used)
    for node_usage, local, own, height, has_parent in chain[1:]:
        used = node_usage.get(fr, 0)
        if own >= used + remaining:
            return height, has_parent
        remaining -= max(0, local - used)
    return chain[-1][3], False


def _available(node: QuotaNode, fr: FlavorResource) -> int:
    """Upstream's recursion, walked from the root down (the hot path of every decision):
    the quotas on the way are fixed, so only the usages are read each time."""
    plan = node.plans.get(fr)
    if plan is None:
        plan = node.plans[fr] = _plan(node, fr)
    root_usage, root_subtree, steps = plan
    value = root_subtree - root_usage.get(fr, 0)
    for usage_of, has_quota, subtree, local, borrowing in steps:
        usage = usage_of.get(fr, 0)
        if not has_quota:
            if usage < 0:
                value -= usage
            continue
        if borrowing is not None:
            value = min(subtree - local - max(0, usage - local) + borrowing, value)
        if local > usage:
            value += local - usage
    return value


def _plan(node: QuotaNode, fr: FlavorResource) -> tuple:
    path = node.path_from_root()
    steps: list[tuple[dict[FlavorResource, int], bool, int, int, Optional[int]]] = []
    for step in path[1:]:
        quota = step.quotas.get(fr)
        if quota is None:
            steps.append((step.usage, False, 0, 0, None))
            continue
        steps.append((step.usage, True, step.subtree_quota.get(fr, 0), _local_quota(step, fr), quota.borrowing_limit))
    return path[0].usage, path[0].subtree_quota.get(fr, 0), tuple(steps)


def _potential(node: QuotaNode, fr: FlavorResource) -> int:
    if node.parent is None:
        return node.subtree_quota.get(fr, 0)
    potential = _local_quota(node, fr) + _potential(node.parent, fr)
    quota = node.quotas.get(fr)
    if quota is not None and quota.borrowing_limit is not None:
        potential = min(node.subtree_quota.get(fr, 0) + quota.borrowing_limit, potential)
    return potential
