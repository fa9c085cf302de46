"""Could preemption make room? Kueue's classical preemption, as a judgement only.

Follows `pkg/scheduler/preemption` (v0.19.2): candidates are admitted workloads that
use a flavor-resource needing preemption and that the ClusterQueue's policies allow
(`withinClusterQueue`, `reclaimWithinCohort`, `borrowWithinCohort`); in a cohort,
only queues above their quota are reclaimed from. Candidates are removed in Kueue's
order until the preemptor fits, then put back while it still fits. Nothing is
evicted: every removal is undone before returning. Fair sharing is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from aks_kueue.admission.assigner import P_NO_CANDIDATES, P_PREEMPT, P_RECLAIM
from aks_kueue.admission.quota import Node, borrowing_height

if TYPE_CHECKING:
    from aks_kueue.admission.snapshot import ClusterQueueInfo, Snapshot
    from aks_kueue.admission.workloads import WorkloadInfo

FR = tuple[str, str]
# How a candidate may be preempted.
WITHIN_CQ, HIERARCHICAL, RECLAIM_WITHOUT_BORROWING, RECLAIM_WHILE_BORROWING = range(1, 5)


@dataclass(eq=False)
class Candidate:
    workload: "WorkloadInfo"
    variant: int
    lca: Optional[Node] = None


def satisfies_policy(preemptor: "WorkloadInfo", candidate: "WorkloadInfo", policy: str) -> bool:
    if policy == "LowerPriority":
        return preemptor.priority > candidate.priority
    if policy == "LowerOrNewerEqualPriority":
        return (preemptor.priority > candidate.priority
                or (preemptor.priority == candidate.priority and preemptor.created < candidate.created))
    return policy == "Any"


class Preemptor:
    def __init__(self, snapshot: "Snapshot"):
        self.snapshot = snapshot

    # The oracle the flavor assigner asks about one flavor-resource.
    def simulate(self, cq: "ClusterQueueInfo", workload: "WorkloadInfo", fr: FR, quantity: int) -> tuple[int, int]:
        targets = self.targets(cq, workload, {fr}, {fr: quantity})
        if not targets:
            return P_NO_CANDIDATES, borrowing_height(cq.node, fr, quantity)[0]
        for target in targets:
            self.snapshot.remove_usage(target)
        borrow_after = borrowing_height(cq.node, fr, quantity)[0]
        for target in targets:
            self.snapshot.add_usage(target)
        same_queue = any(t.admission.cluster_queue == cq.name for t in targets)
        return (P_PREEMPT if same_queue else P_RECLAIM), borrow_after

    def targets(self, cq: "ClusterQueueInfo", workload: "WorkloadInfo", frs: set[FR],
                requests: dict[FR, int]) -> list["WorkloadInfo"]:
        """The minimal set of admitted workloads whose eviction would let `workload` fit."""
        same_queue = self._same_queue_candidates(cq, workload, frs)
        hierarchy, by_priority = self._cohort_candidates(cq, workload, frs, requests)
        ordered = []
        for group in (hierarchy, by_priority, same_queue):
            group.sort(key=lambda c: self._order(c.workload, cq.name))
        for evicted in (True, False):
            for group in (hierarchy, by_priority, same_queue):
                ordered.extend(c for c in group if c.workload.evicted == evicted)
        forbidden = cq.borrow_within_cohort in (None, "Never")
        if (not hierarchy and not by_priority) or (forbidden and not self._under_nominal(cq, frs)):
            attempts = (True,)
        elif forbidden and not hierarchy:
            attempts = (False, True)
        else:
            attempts = (True, False)
        for allow_borrowing in attempts:
            removed: list["WorkloadInfo"] = []
            for candidate in ordered:
                if not self._still_valid(candidate, cq, frs, allow_borrowing):
                    continue
                self.snapshot.remove_usage(candidate.workload)
                removed.append(candidate.workload)
                if self._fits(cq, requests, allow_borrowing):
                    targets = self._fill_back(cq, requests, removed, allow_borrowing)
                    for target in targets:
                        self.snapshot.add_usage(target)
                    return targets
            for target in removed:
                self.snapshot.add_usage(target)
        return []

    def _order(self, candidate: "WorkloadInfo", cq_name: str):
        in_same_queue = candidate.admission.cluster_queue == cq_name
        return (in_same_queue, candidate.priority, -candidate.reserved, candidate.uid)

    def _classify(self, cq: "ClusterQueueInfo", preemptor: "WorkloadInfo", candidate: "WorkloadInfo",
                  frs: set[FR], advantage: bool) -> int:
        if not candidate.uses(frs):
            return 0
        same_queue = candidate.admission.cluster_queue == cq.name
        policy = cq.within_cluster_queue if same_queue else cq.reclaim_within_cohort
        if not satisfies_policy(preemptor, candidate, policy):
            return 0
        if same_queue:
            return WITHIN_CQ
        if advantage:
            return HIERARCHICAL
        if cq.borrow_within_cohort in (None, "Never"):
            return RECLAIM_WITHOUT_BORROWING
        threshold = cq.max_priority_threshold
        if candidate.priority >= preemptor.priority or (threshold is not None and candidate.priority > threshold):
            return RECLAIM_WITHOUT_BORROWING
        return RECLAIM_WHILE_BORROWING

    def _from_queue(self, queue: "ClusterQueueInfo", cq, preemptor, frs, advantage, lca) -> list[Candidate]:
        found = []
        for candidate in self.snapshot.admitted(queue.name):
            variant = self._classify(cq, preemptor, candidate, frs, advantage)
            if variant:
                found.append(Candidate(candidate, variant, lca))
        return found

    def _same_queue_candidates(self, cq, preemptor, frs) -> list[Candidate]:
        if cq.within_cluster_queue == "Never":
            return []
        return self._from_queue(cq, cq, preemptor, frs, False, None)

    def _cohort_candidates(self, cq, preemptor, frs, requests) -> tuple[list[Candidate], list[Candidate]]:
        hierarchy: list[Candidate] = []
        by_priority: list[Candidate] = []
        if cq.node.parent is None or cq.reclaim_within_cohort == "Never":
            return hierarchy, by_priority
        advantage, remaining = _fit_in_quota(cq.node, requests)
        previous = None
        for subtree in cq.node.ancestors():
            into = hierarchy if advantage else by_priority
            self._collect(cq, preemptor, frs, subtree, subtree, previous, advantage, into)
            fits, remaining = _fit_in_quota(subtree, remaining)
            advantage = advantage or fits
            previous = subtree
        return hierarchy, by_priority

    def _collect(self, cq, preemptor, frs, cohort: Node, subtree: Node, skip: Optional[Node],
                 advantage: bool, into: list[Candidate]) -> None:
        for child in cohort.children:
            if child.is_cohort:
                if child is skip or child.within_subtree_quota(frs):
                    continue
                self._collect(cq, preemptor, frs, child, subtree, skip, advantage, into)
        for child in cohort.children:
            if child.is_cohort or child is cq.node or child.within_subtree_quota(frs):
                continue
            queue = self.snapshot.cluster_queues[child.name]
            into.extend(self._from_queue(queue, cq, preemptor, frs, advantage, subtree))

    def _still_valid(self, candidate: Candidate, cq, frs, allow_borrowing: bool) -> bool:
        owner = candidate.workload.admission.cluster_queue
        if owner == cq.name:
            return True
        if allow_borrowing and candidate.variant == RECLAIM_WITHOUT_BORROWING:
            return False
        node = self.snapshot.cluster_queues[owner].node
        if node.within_subtree_quota(frs):
            return False
        for ancestor in node.ancestors():
            if ancestor is candidate.lca:
                break
            if ancestor.within_subtree_quota(frs):
                return False
        return True

    def _fits(self, cq, requests: dict[FR, int], allow_borrowing: bool) -> bool:
        tree = self.snapshot.tree
        for fr, value in requests.items():
            if not allow_borrowing and cq.node.borrowing_with(fr, value):
                return False
            if value > tree.available(cq.name, fr):
                return False
        return True

    def _fill_back(self, cq, requests, removed: list, allow_borrowing: bool) -> list:
        targets = list(removed)
        for index in range(len(targets) - 2, -1, -1):
            self.snapshot.add_usage(targets[index])
            if self._fits(cq, requests, allow_borrowing):
                targets[index] = targets[-1]
                targets.pop()
            else:
                self.snapshot.remove_usage(targets[index])
        return targets

    @staticmethod
    def _under_nominal(cq, frs) -> bool:
        return all(cq.node.nominal(fr) > cq.node.usage.get(fr, 0) for fr in frs)


def _fit_in_quota(node: Node, requests: dict[FR, int]) -> tuple[bool, dict[FR, int]]:
    fits = True
    remaining = {}
    for fr, value in requests.items():
        if node.subtree_quota.get(fr, 0) < node.usage.get(fr, 0) + value:
            fits = False
        remaining[fr] = max(0, value - node.local_available(fr))
    return fits, remaining
