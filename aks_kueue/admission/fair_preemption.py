"""Fair sharing's preemption, as Kueue v0.19.2 chooses its targets (`preemption.go`
`fairPreemptions`, `runFirstFsStrategy`, `runSecondFsStrategy`, and `preemption/fairsharing/`:
the target ClusterQueue ordering, the almost-lowest-common-ancestors and the strategies).

1. Candidates (`findCandidates`): admitted workloads that use a flavor-resource needing preemption,
   from the preemptor's queue under `withinClusterQueue`, and from every other queue of the cohort
   tree that borrows on one of those flavor-resources under `reclaimWithinCohort`; per queue in the
   order `CandidatesOrdering` gives them (evicted first, with AFS the LocalQueue that used more first,
   lower priority, most recently reserved, UID). Kueue sorts them all at once and then groups them per
   queue, which gives each queue the same order; they are read per queue as the search needs them.
2. The preemptor's usage is added to its queue, so every share is its share once admitted.
3. First strategy: the target queues come from `TargetClusterQueueOrdering`: from the root down,
   the child with the highest share among those that borrow and still hold candidates (the
   preemptor's own queue and the cohorts on its path are kept while they hold candidates). A
   candidate of the preemptor's own queue is taken outright (InClusterQueue). With
   FairSharingPreemptWithinNominal (beta, on), a preemptor within its nominal quota on the contested
   flavor-resources takes the candidates of other queues outright too (InCohortReclamation).
   Otherwise the shares of the two almost-lowest-common-ancestors decide, per candidate: the
   strategy must hold between the preemptor's share and the target's (before removal for
   LessThanInitialShare, after for LessThanOrEqualToFinalShare). A candidate that passes is taken
   (InCohortFairSharing) and the ordering starts again; one that fails is kept for the second
   strategy. A queue whose candidates cannot pass at all (the preemptor borrows with weight 0, the
   target does not) is skipped whole.
4. Second strategy (when the first did not make room and another is configured): over the kept
   candidates, LessThanInitialShare once per queue.
5. When no strategy makes room, nothing is preempted. Otherwise the targets are put back, the last
   taken first, while the preemptor still fits (borrowing allowed).

Usage moves only through the snapshot's `lift_usage` and `restore_usage`, each target's whole
usage (shares read every flavor-resource), and all of it is put back before returning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

from aks_kueue.admission.fair_sharing import (DRS, NEGATIVE_DRS, FairSharing, PreemptionStrategy, compare_drs,
                                              dominant_resource_share)
from aks_kueue.admission.models import ClusterQueueInfo
from aks_kueue.admission.modes import PreemptionReason
from aks_kueue.admission.quota import FlavorResource, QuotaNode, available
from aks_kueue.admission.workloads import WorkloadInfo

if TYPE_CHECKING:
    from aks_kueue.admission.admitted import AdmittedState

Strategy = Callable[[DRS, DRS, DRS], bool]


def less_than_or_equal_to_final_share(preemptor_new: DRS, _target_old: DRS, target_new: DRS) -> bool:
    """Rule S2-a: the preemptor's new share at most the target's share after the removal."""
    return compare_drs(preemptor_new, target_new) <= 0


def less_than_initial_share(preemptor_new: DRS, target_old: DRS, _target_new: DRS) -> bool:
    """Rule S2-b: the preemptor's new share below the target's share before the removal."""
    return compare_drs(preemptor_new, target_old) < 0


STRATEGIES: dict[PreemptionStrategy, Strategy] = {
    PreemptionStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE: less_than_or_equal_to_final_share,
    PreemptionStrategy.LESS_THAN_INITIAL_SHARE: less_than_initial_share,
}


class FairPreemptionCtx:
    """Upstream's preemptionCtx, for one search."""

    def __init__(self, snapshot: "AdmittedState", cq: ClusterQueueInfo, preemptor: WorkloadInfo,
                 frs: set[FlavorResource], requests: dict[FlavorResource, int]):
        self.snapshot = snapshot
        self.cq = cq
        self.preemptor = preemptor
        self.frs = frs
        self.requests = requests

    def remove(self, workload: WorkloadInfo) -> None:
        self.snapshot.lift_usage(workload)

    def add(self, workload: WorkloadInfo) -> None:
        self.snapshot.restore_usage(workload)

    def simulate_addition(self) -> None:
        self.snapshot.tree.add_usage(self.cq.name, self.requests)

    def simulate_removal(self) -> None:
        self.snapshot.tree.remove_usage(self.cq.name, self.requests)

    def workload_fits(self) -> bool:
        """workloadFits with borrowing allowed: every flavor-resource within what is available."""
        node = self.cq.node
        return all(value <= available(node, fr) for fr, value in self.requests.items())

    def workload_fits_for_fair_sharing(self) -> bool:
        """The fit without the preemptor's own usage, which the search keeps added for the shares."""
        self.simulate_removal()
        try:
            return self.workload_fits()
        finally:
            self.simulate_addition()

    def within_nominal(self) -> bool:
        """queueWithinNominalInResourcesNeedingPreemption: not borrowing on any contested fr."""
        node = self.cq.node
        return all(node.usage.get(fr, 0) <= node.nominal(fr) for fr in self.frs)


def fair_preemptions(snapshot: "AdmittedState", fair_sharing: FairSharing, cq: ClusterQueueInfo,
                     preemptor: WorkloadInfo, frs: set[FlavorResource], requests: dict[FlavorResource, int],
                     meanwhile: Optional[Callable[[], Any]] = None) -> tuple[list[tuple[WorkloadInfo, PreemptionReason]], Any]:
    """The targets (workload and reason) that let `preemptor` fit, none when no strategy makes room;
    and what `meanwhile` says while the targets are out of the tree."""
    candidates = find_candidates(snapshot, cq, preemptor, frs)
    if not candidates:
        return [], None
    ctx = FairPreemptionCtx(snapshot, cq, preemptor, frs, requests)
    strategies = [STRATEGIES[s] for s in fair_sharing.strategies]
    ctx.simulate_addition()
    try:
        fits, targets, retry = run_first_fs_strategy(ctx, candidates, strategies[0], fair_sharing.preempt_within_nominal)
        if not fits and len(strategies) > 1:
            fits, targets = run_second_fs_strategy(retry, ctx, targets)
    finally:
        ctx.simulate_removal()
    if not fits:
        for workload, _ in targets:
            ctx.add(workload)
        return [], None
    targets = fill_back_workloads(ctx, targets)
    seen = meanwhile() if meanwhile is not None else None
    for workload, _ in targets:
        ctx.add(workload)
    return targets, seen


class Candidates:
    """One ClusterQueue's candidates in Kueue's order, read as the search takes them (it usually
    stops after a few): the evicted ones first, then the rest from the queue's sorted index."""

    __slots__ = ("_taken", "_rest")

    def __init__(self, first: list[WorkloadInfo], rest: Iterator[WorkloadInfo]):
        self._taken = first
        self._rest = rest

    def _fill(self) -> bool:
        if not self._taken:
            found = next(self._rest, None)
            if found is None:
                return False
            self._taken.append(found)
        return True

    def __bool__(self) -> bool:
        return self._fill()

    def first(self) -> WorkloadInfo:
        self._fill()
        return self._taken[0]

    def keep(self, workload: WorkloadInfo) -> None:
        """Add a candidate at the end (the second strategy's lists, built from the first's refusals)."""
        self._taken.append(workload)

    def pop(self) -> WorkloadInfo:
        self._fill()
        return self._taken.pop(0)


def find_candidates(snapshot: "AdmittedState", cq: ClusterQueueInfo, preemptor: WorkloadInfo,
                    frs: set[FlavorResource]) -> dict[str, Candidates]:
    """Per ClusterQueue, the admitted workloads the preemptor's policies allow it to preempt that use a
    flavor-resource needing preemption (findCandidates): its own under `withinClusterQueue`, those of
    every other queue of the cohort tree that borrows on one of them under `reclaimWithinCohort`."""
    found: dict[str, Candidates] = {}
    if cq.within_cluster_queue != "Never":
        _add(found, snapshot, cq.name, frs, preemptor, cq.within_cluster_queue)
    if cq.node.parent is not None and cq.reclaim_within_cohort != "Never":
        for other in borrowing_queues(cq.node, frs):
            _add(found, snapshot, other.name, frs, preemptor, cq.reclaim_within_cohort)
    return found


def borrowing_queues(node: QuotaNode, frs) -> Iterator[QuotaNode]:
    """The other ClusterQueues of the node's cohort tree that borrow on one of `frs`: where fair
    sharing looks for candidates beyond the preemptor's own queue (none from itself)."""
    for other in node.root().cluster_queues_below():
        if other is not node and any(other.usage.get(fr, 0) > other.nominal(fr) for fr in frs):
            yield other


def _add(found: dict[str, Candidates], snapshot: "AdmittedState", name: str, frs: set[FlavorResource],
         preemptor: WorkloadInfo, policy: str) -> None:
    """A queue's candidates, in CandidatesOrdering's order within one queue: evicted first, then (with
    admission fair sharing) the LocalQueue that used more, lower priority, most recent reservation, UID."""
    from aks_kueue.admission.admitted import rank, satisfies_policy

    index = snapshot.admitted_index(name)
    evicted = sorted((w for w in index.evicted.values() if w.uses(frs) and satisfies_policy(preemptor, w, policy)),
                     key=rank)
    ranks = index.candidates(frs, preemptor, policy)
    if not evicted and not ranks:
        return
    workloads = snapshot.workloads_by_uid
    rest: Iterator[WorkloadInfo] = (workloads[key[2]] for key in ranks)
    usage = snapshot.local_queue_usage
    if index.by_uid and usage(next(iter(index.by_uid.values()))) is not None:
        # Admission fair sharing orders a queue's candidates by their LocalQueue's usage first.
        def key(w: WorkloadInfo) -> tuple:
            return (-(usage(w) or 0.0), *rank(w))
        evicted.sort(key=key)
        rest = iter(sorted(rest, key=key))
    found[name] = Candidates(evicted, rest)


def candidates_ordering(a: WorkloadInfo, b: WorkloadInfo, cq: str,
                        afs_usage: Optional[Callable[[WorkloadInfo], Optional[float]]] = None) -> int:
    """Kueue's CandidatesOrdering, as a comparison (negative: `a` is preempted first)."""
    if a.evicted != b.evicted:
        return -1 if a.evicted else 1
    a_queue, b_queue = a.held.cluster_queue, b.held.cluster_queue
    if (a_queue == cq) != (b_queue == cq):
        return 1 if a_queue == cq else -1
    if afs_usage is not None and a_queue == b_queue and a.queue_name != b.queue_name:
        a_usage, b_usage = afs_usage(a), afs_usage(b)
        if a_usage is not None and b_usage is not None and a_usage != b_usage:
            return -1 if a_usage > b_usage else 1
    if a.priority != b.priority:
        return -1 if a.priority < b.priority else 1
    if a.reserved != b.reserved:
        return -1 if a.reserved > b.reserved else 1
    return (a.uid > b.uid) - (a.uid < b.uid)


def run_first_fs_strategy(ctx: FairPreemptionCtx, candidates: dict[str, Candidates], strategy: Strategy,
                          preempt_within_nominal: bool):
    ordering = TargetClusterQueueOrdering(ctx, candidates)
    targets: list[tuple[WorkloadInfo, PreemptionReason]] = []
    retry: list[WorkloadInfo] = []
    preemptor_within_nominal = preempt_within_nominal and ctx.within_nominal()
    for target in ordering:
        # Taken outright: the preemptor's own queue's candidates, and with the preemptor within its
        # nominal quota every other queue's.
        outright = (PreemptionReason.IN_CLUSTER_QUEUE if target.in_cluster_queue_preemption()
                    else PreemptionReason.IN_COHORT_RECLAMATION if preemptor_within_nominal else None)
        if outright is not None:
            workload = target.pop_workload()
            ctx.remove(workload)
            targets.append((workload, outright))
            if ctx.workload_fits_for_fair_sharing():
                return True, targets, []
            continue
        preemptor_new, target_old = target.compute_shares()
        if fs_strategy_unsatisfiable(preemptor_new, target_old):
            while target.has_workload():
                retry.append(target.pop_workload())
            continue
        while target.has_workload():
            workload = target.pop_workload()
            target_new = target.compute_target_share_after_removal(workload)
            if strategy(preemptor_new, target_old, target_new):
                ctx.remove(workload)
                targets.append((workload, PreemptionReason.IN_COHORT_FAIR_SHARING))
                if ctx.workload_fits_for_fair_sharing():
                    return True, targets, []
                break  # the shares changed: the ordering may pick another queue
            retry.append(workload)
    return False, targets, retry


def fs_strategy_unsatisfiable(preemptor_new: DRS, target_old: DRS) -> bool:
    """The preemptor borrows with weight 0 (an infinite share) and the target does not: no
    candidate of the target can pass either strategy (removals never raise the target's share)."""
    return preemptor_new.zero_weight_borrows and not target_old.zero_weight_borrows


def run_second_fs_strategy(retry: list[WorkloadInfo], ctx: FairPreemptionCtx,
                           targets: list[tuple[WorkloadInfo, PreemptionReason]]):
    """Rule S2-b over the candidates the first strategy kept (in the order it kept them): at most
    one per queue."""
    per_queue: dict[str, Candidates] = {}
    for workload in retry:
        per_queue.setdefault(workload.held.cluster_queue, Candidates([], iter(()))).keep(workload)
    ordering = TargetClusterQueueOrdering(ctx, per_queue)
    for target in ordering:
        preemptor_new, target_old = target.compute_shares()
        passed = less_than_initial_share(preemptor_new, target_old, target_old)
        workload = target.pop_workload()
        if passed:
            ctx.remove(workload)
            targets.append((workload, PreemptionReason.IN_COHORT_FAIR_SHARING))
            if ctx.workload_fits_for_fair_sharing():
                return True, targets
        ordering.drop_queue(target)
    return False, targets


def fill_back_workloads(ctx: FairPreemptionCtx, targets: list[tuple[WorkloadInfo, PreemptionReason]]):
    """Put targets back, the last removed first, while the preemptor still fits (borrowing allowed);
    the ones kept stay out of the tree."""
    targets = list(targets)
    for index in range(len(targets) - 2, -1, -1):
        ctx.add(targets[index][0])
        if ctx.workload_fits():
            targets[index] = targets[-1]
            targets.pop()
        else:
            ctx.remove(targets[index][0])
    return targets


class TargetClusterQueue:
    """A ClusterQueue that yields candidates (upstream's TargetClusterQueue)."""

    __slots__ = ("ordering", "node")

    def __init__(self, ordering: "TargetClusterQueueOrdering", node: QuotaNode):
        self.ordering = ordering
        self.node = node

    def in_cluster_queue_preemption(self) -> bool:
        return self.node is self.ordering.preemptor_cq

    def pop_workload(self) -> WorkloadInfo:
        return self.ordering.cluster_queue_to_target[self.node.name].pop()

    def has_workload(self) -> bool:
        return self.ordering.has_workload(self.node)

    def compute_shares(self) -> tuple[DRS, DRS]:
        """The shares of the preemptor's and the target's almost-lowest-common-ancestors."""
        preemptor_alca, target_alca = self.almost_lcas()
        return dominant_resource_share(preemptor_alca), dominant_resource_share(target_alca)

    def compute_target_share_after_removal(self, workload: WorkloadInfo) -> DRS:
        ctx = self.ordering.ctx
        ctx.remove(workload)
        try:
            return dominant_resource_share(self.almost_lcas()[1])
        finally:
            ctx.add(workload)

    def almost_lcas(self) -> tuple[QuotaNode, QuotaNode]:
        """The two nodes just below the lowest cohort holding both the preemptor's queue and this one."""
        preemptor = self.ordering.preemptor_cq
        lca = next(a for a in self.node.ancestors() if a in self.ordering.preemptor_ancestors)
        return almost_lca(preemptor, lca), almost_lca(self.node, lca)


def almost_lca(cq: QuotaNode, lca: QuotaNode) -> QuotaNode:
    node = cq
    for ancestor in cq.ancestors():
        if ancestor is lca:
            return node
        node = ancestor
    raise ValueError(f"{lca.name} is not an ancestor of {cq.name}")


class TargetClusterQueueOrdering:
    """The queues to take candidates from, most unfair first (upstream's TargetClusterQueueOrdering).
    The same queue may come several times in a row while it stays the most unfair; the caller pops
    a workload or drops the queue between two."""

    def __init__(self, ctx: FairPreemptionCtx, candidates: dict[str, Candidates]):
        self.ctx = ctx
        self.preemptor_cq = ctx.cq.node
        self.preemptor_ancestors = set(self.preemptor_cq.ancestors())
        self.cluster_queue_to_target = candidates
        self.pruned_cluster_queues: set[QuotaNode] = set()
        self.pruned_cohorts: set[QuotaNode] = set()

    def __iter__(self) -> Iterator[TargetClusterQueue]:
        if self.preemptor_cq.parent is None:
            target = TargetClusterQueue(self, self.preemptor_cq)
            while self.preemptor_cq not in self.pruned_cluster_queues and target.has_workload():
                yield target
            return
        root = self.preemptor_cq.root()
        while root not in self.pruned_cohorts:
            found = self.next_target(root)
            if found is not None:
                yield found

    def drop_queue(self, target: TargetClusterQueue) -> None:
        self.pruned_cluster_queues.add(target.node)

    def has_workload(self, node: QuotaNode) -> bool:
        found = self.cluster_queue_to_target.get(node.name)
        return found is not None and bool(found)

    def next_target(self, cohort: QuotaNode) -> Optional[TargetClusterQueue]:
        """The child of `cohort` with the highest share among those that may still yield candidates,
        entered when it is a cohort; None when this call only pruned nodes."""
        highest_cq: Optional[QuotaNode] = None
        highest_cq_drs = NEGATIVE_DRS
        for cq in cohort.children:
            if cq.is_cohort or cq in self.pruned_cluster_queues:
                continue
            drs = dominant_resource_share(cq)
            if (not drs.borrowing and cq is not self.preemptor_cq) or not self.has_workload(cq):
                self.pruned_cluster_queues.add(cq)
                continue
            order = compare_drs(drs, highest_cq_drs)
            if order == 0 and highest_cq is not None:
                new = self.cluster_queue_to_target[cq.name].first()
                current = self.cluster_queue_to_target[highest_cq.name].first()
                if candidates_ordering(new, current, self.preemptor_cq.name) < 0:
                    highest_cq = cq
            elif order == 1:
                highest_cq, highest_cq_drs = cq, drs
        highest_cohort: Optional[QuotaNode] = None
        highest_cohort_drs = NEGATIVE_DRS
        for child in cohort.children:
            if not child.is_cohort or child in self.pruned_cohorts:
                continue
            drs = dominant_resource_share(child)
            # A cohort that does not borrow is done with, unless the preemptor's queue is below it:
            # then only once all its children are.
            if not drs.borrowing and child not in self.preemptor_ancestors:
                self.pruned_cohorts.add(child)
            elif compare_drs(drs, highest_cohort_drs) >= 0:
                highest_cohort, highest_cohort_drs = child, drs
        if highest_cohort is None and highest_cq is None:
            self.pruned_cohorts.add(cohort)
            return None
        # On a tie the cohort is entered: the most unfair node within it can be chosen.
        if highest_cohort is not None and compare_drs(highest_cohort_drs, highest_cq_drs) >= 0:
            return self.next_target(highest_cohort)
        assert highest_cq is not None
        return TargetClusterQueue(self, highest_cq)
