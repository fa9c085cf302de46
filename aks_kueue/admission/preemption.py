"""Could preemption make room? Kueue's classical preemption, as a judgement only.

Follows `pkg/scheduler/preemption` (v0.19.2): candidates are admitted workloads that
use a flavor-resource needing preemption and that the ClusterQueue's policies allow
(`withinClusterQueue`, `reclaimWithinCohort`, `borrowWithinCohort`); in a cohort,
only queues above their quota are reclaimed from. Candidates are removed in Kueue's
order until the preemptor fits, then put back while it still fits. Nothing is
evicted: every removal is undone before returning. With fair sharing on, the targets are
chosen by `fair_preemption` instead, as Kueue's preemptor does.

It reads and briefly changes the admitted state through `AdmittedState`, a narrow view
the snapshot provides, and is the flavor assigner's preemption oracle
(`simulate_preemption`, upstream's PreemptionOracle.SimulatePreemption).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Callable, Iterator, Optional, cast

from aks_kueue.admission.admitted import AdmittedState, Ranks, merged_ranks, rank, satisfies_policy
from aks_kueue.admission.fair_preemption import borrowing_queues, fair_preemptions
from aks_kueue.admission.models import ClusterQueueInfo
from aks_kueue.admission.modes import PreemptionMode, PreemptionReason
from aks_kueue.admission.quota import FlavorResource as FR
from aks_kueue.admission.quota import QuotaNode, available, borrowing_height
from aks_kueue.admission.workloads import WorkloadInfo

MEMO_LIMIT = 4096  # preemption answers remembered at most, as for decisions


class Variant(IntEnum):
    """How a candidate may be preempted (upstream's preemptionVariant)."""

    WITHIN_CQ = 1
    HIERARCHICAL = 2
    RECLAIM_WITHOUT_BORROWING = 3
    RECLAIM_WHILE_BORROWING = 4

    @property
    def reason(self) -> PreemptionReason:
        if self is Variant.WITHIN_CQ:
            return PreemptionReason.IN_CLUSTER_QUEUE
        if self is Variant.RECLAIM_WHILE_BORROWING:
            return PreemptionReason.IN_COHORT_RECLAIM_WHILE_BORROWING
        return PreemptionReason.IN_COHORT_RECLAMATION


WITHIN_CQ, HIERARCHICAL = Variant.WITHIN_CQ, Variant.HIERARCHICAL
RECLAIM_WITHOUT_BORROWING, RECLAIM_WHILE_BORROWING = Variant.RECLAIM_WITHOUT_BORROWING, Variant.RECLAIM_WHILE_BORROWING


@dataclass(frozen=True, eq=False)
class PreemptionTarget:
    """An admitted workload Kueue would preempt, and why (its Preempted condition's reason)."""

    workload: WorkloadInfo
    reason: PreemptionReason

    @property
    def namespace(self) -> str:
        return self.workload.namespace

    @property
    def name(self) -> str:
        return self.workload.name

    @property
    def cluster_queue(self) -> str:
        admission = self.workload.admission
        assert admission is not None  # a target is admitted
        return admission.cluster_queue


# A candidate: the workload, how it may be preempted, and the lowest common ancestor of
# its queue and the preemptor's (None in the preemptor's own queue).
Candidate = tuple[WorkloadInfo, Variant, Optional[QuotaNode]]


class CandidateGroup:
    """Candidates from some queues, read as the search needs them (it usually stops after
    a few): the ranks per queue in Kueue's order, the lowest common ancestor per queue,
    and whether the preemptor has the hierarchical advantage over them. Evicted ones are
    apart: they go first."""

    __slots__ = ("snapshot", "sources", "policy", "preemptor", "frs", "advantage", "in_cohort", "lca_of",
                 "_ranks", "ranked", "_looked_at", "_evicted")

    def __init__(self, snapshot: AdmittedState, sources: list[tuple[str, Optional[QuotaNode]]], policy: str,
                 preemptor: WorkloadInfo, frs, advantage: bool, in_cohort: bool):
        self.snapshot, self.sources, self.policy, self.preemptor, self.frs = snapshot, sources, policy, preemptor, frs
        self.advantage = advantage
        self.in_cohort = in_cohort  # candidates of other queues of the cohort tree, not of the queue itself
        self.lca_of = dict(sources)
        self._ranks: list[Ranks] = []  # of the queues looked at so far that have candidates
        self.ranked: list[str] = []  # those queues' names
        self._looked_at = 0
        self._evicted: Optional[list[WorkloadInfo]] = None

    def _look_at_next(self) -> None:
        name = self.sources[self._looked_at][0]
        self._looked_at += 1
        index = self.snapshot.admitted_index(name)
        if index:
            ranks = index.candidates(self.frs, self.preemptor, self.policy)
            if ranks:
                self._ranks.append(ranks)
                self.ranked.append(name)

    def ranks(self) -> list[Ranks]:
        while self._looked_at < len(self.sources):
            self._look_at_next()
        return self._ranks

    def evicted(self) -> list[WorkloadInfo]:
        """The evicted workloads the policy allows, in Kueue's order."""
        if self._evicted is None:
            found = [w for name, _ in self.sources for w in self.snapshot.admitted_index(name).evicted.values()
                     if w.uses(self.frs) and satisfies_policy(self.preemptor, w, self.policy)]
            self._evicted = sorted(found, key=rank) if found else found  # usually none
        return self._evicted

    def __bool__(self) -> bool:
        if not self.sources:
            return False
        while not self._ranks and self._looked_at < len(self.sources):
            self._look_at_next()
        return bool(self._ranks) or bool(self.evicted())


# A group without candidates (and without sources, so it never reads its snapshot or preemptor).
_NONE = CandidateGroup(cast(AdmittedState, None), [], "Never", cast(WorkloadInfo, None), frozenset(), False, False)


class Preemptor:
    def __init__(self, snapshot: AdmittedState):
        self.snapshot = snapshot
        self._answers: dict[tuple, tuple[int, tuple[PreemptionMode, int]]] = {}
        self._over_quota_memo: dict[tuple, tuple[int, list[QuotaNode]]] = {}
        # The targets the oracle found, by its question, for `targets` to reuse: a workload whose
        # only flavor-resource is the one the oracle was asked about asks the same search again.
        self._found: dict[tuple, tuple[int, list[PreemptionTarget]]] = {}
        self._nothing_memo: dict[str, tuple[Any, Optional[int], bool]] = {}
        # Per cohort tree's root: the queues a search from a queue just under it could reclaim from
        # (`_reclaimable`), kept until the tree changes, for every such queue to read.
        self._reclaimable_memo: dict[QuotaNode, tuple[Any, list[QuotaNode]]] = {}

    def simulate_preemption(self, cq: ClusterQueueInfo, workload: WorkloadInfo, fr: FR,
                            quantity: int) -> tuple[PreemptionMode, int]:
        """The oracle the flavor assigner asks about one flavor-resource: can preemption
        free `quantity`, and from whom? Answers hold until the cohort tree changes."""
        if self.snapshot.fair_sharing is None and self.nothing_to_preempt(cq, workload):
            return PreemptionMode.NO_CANDIDATES, borrowing_height(cq.node, fr, quantity)[0]
        key = (cq.name, fr, quantity, workload.priority, workload.created if cq.compares_age else None)
        generation = self.snapshot.generation(cq)
        known = self._answers.get(key)
        if known is not None and known[0] == generation:
            return known[1]
        targets, borrow_after = self._get_targets(cq, workload, {fr}, {fr: quantity},
                                                  lambda: borrowing_height(cq.node, fr, quantity)[0])
        if not targets:
            answer = (PreemptionMode.NO_CANDIDATES, borrowing_height(cq.node, fr, quantity)[0])
        elif any(t.cluster_queue == cq.name for t in targets):
            answer = (PreemptionMode.PREEMPT, borrow_after)
        else:
            answer = (PreemptionMode.RECLAIM, borrow_after)
        if len(self._answers) >= MEMO_LIMIT:
            self._answers.clear()
            self._found.clear()
        self._answers[key] = (generation, answer)
        self._found[key] = (generation, targets)
        return answer

    def borrowing_after(self, cq: ClusterQueueInfo, workload: WorkloadInfo, fr: FR, quantity: int,
                        height: Optional[int] = None) -> Optional[int]:
        """The borrowing level `simulate_preemption` would answer when it is the same whatever the
        search finds; else None. Taking usage out never needs a higher subtree, so the level once
        targets are out is at most the level now: 0 stays 0. A level at the queue's parent (or none
        at all with the parent the root) can only fall to 0, and only by the queue's own usage going
        under its quota: only its own workloads leave it, so when those the withinClusterQueue
        policy lets go (counted generously: evicted ones and equal priorities too) cannot take
        enough out, it stays. Fair sharing's search is asked. `height`: `quantity`'s borrowing height
        now, when the caller has just read it."""
        node = cq.node
        if height is None:
            height = borrowing_height(node, fr, quantity)[0]
        if height == 0:
            return 0
        if self.snapshot.fair_sharing is not None:
            return None
        if self.nothing_to_preempt(cq, workload):
            return height  # no candidates: the oracle answers the level now
        parent = node.parent
        if parent is None or height != parent.height():
            return None  # a cohort between could hold it once other queues' usage is out
        enough = node.usage.get(fr, 0) + quantity - node.own.get(fr, 0)  # what must leave the queue for 0
        if self.snapshot.admitted_index(cq.name).frees_at_least(fr, workload, cq.within_cluster_queue, enough):
            return None
        return height

    def get_targets(self, cq: ClusterQueueInfo, workload: WorkloadInfo, frs: set[FR],
                    requests: dict[FR, int]) -> list[PreemptionTarget]:
        """The minimal set of admitted workloads whose eviction would let `workload` fit."""
        if self.snapshot.fair_sharing is None and self.nothing_to_preempt(cq, workload):
            return []
        if len(requests) == 1:
            # The oracle's own question (one flavor-resource, the same amount): its search stands.
            (fr, quantity), = requests.items()
            if frs == {fr}:
                known = self._found.get((cq.name, fr, quantity, workload.priority,
                                         workload.created if cq.compares_age else None))
                if known is not None and known[0] == self.snapshot.generation(cq):
                    return list(known[1])
        return self._get_targets(cq, workload, frs, requests)[0]

    def no_candidates(self, cq: ClusterQueueInfo, workload: WorkloadInfo, frs: frozenset) -> bool:
        """Whether `_get_targets` for `frs` would find no candidate at all (its first step), asked
        without building its groups. A search for fewer flavor-resources has no candidates either.
        Fair sharing looks wider than the classical search (every queue of the cohort tree that
        borrows, even inside a cohort within its own quota), so it is asked its own question."""
        if self.snapshot.fair_sharing is None and self.nothing_to_preempt(cq, workload):
            return True
        within, reclaim = cq.within_cluster_queue, cq.reclaim_within_cohort
        if within != "Never" and CandidateGroup(self.snapshot, [(cq.name, None)], within, workload, frs, False,
                                                False):
            return False
        if cq.node.parent is None or reclaim == "Never":
            return True
        if self.snapshot.fair_sharing is not None:  # fair sharing's findCandidates
            return not CandidateGroup(self.snapshot, [(q.name, None) for q in borrowing_queues(cq.node, frs)],
                                      reclaim, workload, frs, False, True)
        previous, generation = None, self.snapshot.generation(cq)
        for subtree in cq.node.ancestors():
            for queue in self._over_quota(frs, subtree, previous, generation):
                if queue is not cq.node and CandidateGroup(self.snapshot, [(queue.name, subtree)], reclaim, workload,
                                                           frs, False, True):
                    return False
            previous = subtree
        return True

    def _get_targets(self, cq: ClusterQueueInfo, workload: WorkloadInfo, frs: set[FR], requests: dict[FR, int],
                     meanwhile: Optional[Callable[[], Any]] = None) -> tuple[list[PreemptionTarget], Any]:
        """Upstream's getTargets: fair sharing's preemptions when the Configuration turns it on,
        the classical ones otherwise; and what `meanwhile` says while the targets are out of the tree."""
        if cq.within_cluster_queue == "Never" and (cq.node.parent is None or cq.reclaim_within_cohort == "Never"):
            return [], None  # the queue's policies allow no candidate at all
        fair_sharing = self.snapshot.fair_sharing
        if fair_sharing is not None:
            found, seen = fair_preemptions(self.snapshot, fair_sharing, cq, workload, frs, requests, meanwhile)
            return [PreemptionTarget(target, reason) for target, reason in found], seen
        if self._cannot_make_room(cq, workload, frs, requests):
            return [], None
        return self.classical_preemptions(cq, workload, frs, requests, meanwhile)

    def _cannot_make_room(self, cq: ClusterQueueInfo, workload: WorkloadInfo, frs: set[FR],
                          requests: dict[FR, int]) -> bool:
        """Whether the classical search surely finds nothing: a flavor-resource the workload asks for
        lacks more than all the workloads the search could take out use of it together. Taking a
        workload out raises what the queue has available by at most that workload's usage (a node's
        available is what it has locally plus its parent's, and usage reaches the parent only past the
        local quota, so each level gains what the level below stops storing there), and the search
        takes out only the queue's own workloads its withinClusterQueue policy lets go (counted
        generously, `frees_at_least`) and, with reclaimWithinCohort, workloads of the other queues over
        their quota on `frs` (counted whole)."""
        node = cq.node
        others: Optional[list[QuotaNode]] = None
        index = self.snapshot.admitted_index(cq.name)
        for fr, value in requests.items():
            short = value - available(node, fr)
            if short <= 0:
                continue
            if others is None:
                others = [queue for _, queues in self._over_quota_by_ancestor(cq, frs) for queue in queues
                          if queue is not node]
            for queue in others:
                short -= queue.usage.get(fr, 0)
            if not index.frees_at_least(fr, workload, cq.within_cluster_queue, short):
                return True
        return False

    def _over_quota_by_ancestor(self, cq: ClusterQueueInfo, frs: set[FR]) -> list[tuple[QuotaNode, list[QuotaNode]]]:
        """Per ancestor of the queue, the queues under it over their quota on `frs` (the part below
        already searched left out); none when the queue does not reclaim."""
        if cq.node.parent is None or cq.reclaim_within_cohort == "Never":
            return []
        over: list[tuple[QuotaNode, list[QuotaNode]]] = []
        previous = None
        frs_key, generation = frozenset(frs), self.snapshot.generation(cq)
        for subtree in cq.node.ancestors():
            over.append((subtree, self._over_quota(frs_key, subtree, previous, generation)))
            previous = subtree
        return over

    def nothing_to_preempt(self, cq: ClusterQueueInfo, workload: WorkloadInfo) -> bool:
        """Whether the classical search's first step finds no candidate for `workload` whatever
        flavor-resources it asks about: nothing in the queue its withinClusterQueue policy allows,
        and no other queue of the cohort tree over its quota on any flavor-resource. The candidates
        for some flavor-resources are a part of those (fewer flavor-resources put fewer queues over
        quota), so then every search ends at once with nothing. Most searches of a congested cohort
        are such, and a decision asks for several (the oracle per flavor-resource, then the targets,
        then whether the decision can be kept): what it reads (the queue's lowest admitted priority,
        whether another queue is over quota) is kept per queue until the cohort tree changes."""
        generation = self.snapshot.generation(cq)
        known = self._nothing_memo.get(cq.name)
        if known is None or known[0] != generation:
            if len(self._nothing_memo) >= MEMO_LIMIT:
                self._nothing_memo.clear()
            known = self._nothing_memo[cq.name] = (generation, self._lowest_in_queue(cq),
                                                    self._nothing_in_cohort(cq, generation))
        _, lowest, nothing_in_cohort = known
        if not nothing_in_cohort:
            return False
        policy = cq.within_cluster_queue
        if lowest is None or policy == "Never":
            return True
        if policy == "LowerPriority":
            return lowest >= workload.priority
        if policy == "LowerOrNewerEqualPriority":  # an equal priority may be newer: not nothing for sure
            return lowest > workload.priority
        return False  # Any

    def _nothing_in_cohort(self, cq: ClusterQueueInfo, generation: Any) -> bool:
        """No other queue of the tree over its quota (on any flavor-resource). For a queue just under
        the root, whose search walks the whole tree from the root, the over-quota queues it could find
        are the same for every such queue but itself: found once per change of the tree (`generation`),
        whichever of them asks first (the usage a decision reads is the same for all of them)."""
        node = cq.node
        parent = node.parent
        if parent is None or cq.reclaim_within_cohort == "Never":
            return True
        if parent.parent is None:
            known = self._reclaimable_memo.get(parent)
            if known is None or known[0] != generation:
                if len(self._reclaimable_memo) >= MEMO_LIMIT:
                    self._reclaimable_memo.clear()
                known = self._reclaimable_memo[parent] = (generation, _reclaimable(parent))
            return all(queue is node for queue in known[1])
        return not any(_any_over_quota(subtree, skip, node) for subtree, skip in _subtrees(node))

    def _lowest_in_queue(self, cq: ClusterQueueInfo) -> Optional[int]:
        """The lowest priority admitted to the queue (None when nothing is, or when its policy allows none)."""
        if cq.within_cluster_queue == "Never":
            return None
        return self.snapshot.admitted_index(cq.name).lowest_priority()

    def classical_preemptions(self, cq: ClusterQueueInfo, workload: WorkloadInfo, frs: set[FR],
                              requests: dict[FR, int], meanwhile: Optional[Callable[[], Any]] = None
                              ) -> tuple[list[PreemptionTarget], Any]:
        """Upstream's classicalPreemptions. Only the candidates' usage of the requested
        flavor-resources is lifted: nothing the search reads (the fit, the queues over quota on
        `frs`) depends on the rest. Its callers ask `nothing_to_preempt` first (a search it says
        no to finds nothing, so it is not asked again here)."""
        same_queue = (_NONE if cq.within_cluster_queue == "Never"
                      else self._group([(cq.node, None)], cq, workload, frs, False, False))
        hierarchy, by_priority = self._cohort_candidates(cq, workload, frs, requests)
        from_cohort = bool(hierarchy) or bool(by_priority)  # each group's truth costs a look at its queues
        if not (from_cohort or same_queue):
            return [], None
        groups = (hierarchy, by_priority, same_queue)
        forbidden = cq.borrow_within_cohort in (None, "Never")
        attempts: tuple[bool, ...]
        if not from_cohort or (forbidden and not self._queue_under_nominal_in_resources_needing_preemption(cq, frs)):
            attempts = (True,)
        elif forbidden and not hierarchy:
            attempts = (False, True)
        else:
            attempts = (True, False)
        lift, restore = self.snapshot.lift_usage, self.snapshot.restore_usage
        for allow_borrowing in attempts:
            removed: list[tuple[WorkloadInfo, Variant, dict]] = []
            closed: set[str] = set()  # queues reclaimed down to their quota: none of theirs is valid any more
            for candidate, variant, lca in self._in_order(groups, cq, workload, allow_borrowing and forbidden, closed):
                if variant is not WITHIN_CQ:
                    if allow_borrowing and variant is RECLAIM_WITHOUT_BORROWING:
                        continue
                    if not self._still_over_quota(candidate, lca, frs):
                        closed.add(candidate.admission.cluster_queue)
                        continue
                usage = {fr: v for fr, v in candidate.admission.usage.items() if fr in requests}
                lift(candidate, usage)
                removed.append((candidate, variant, usage))
                if self._workload_fits(cq, requests, allow_borrowing):
                    kept = self._fill_back_workloads(cq, requests, removed, allow_borrowing)
                    seen = meanwhile() if meanwhile is not None else None
                    for target, _, usage in kept:
                        restore(target, usage)
                    return [PreemptionTarget(target, variant.reason) for target, variant, _ in kept], seen
            for target, _, usage in removed:
                restore(target, usage)
        return [], None

    @staticmethod
    def _variant(cq: ClusterQueueInfo, preemptor: WorkloadInfo, candidate: WorkloadInfo, candidate_queue: str,
                 advantage: bool) -> Variant:
        """How a candidate the policy allows may be preempted (Kueue's classifyPreemptionVariant);
        `candidate_queue`: the ClusterQueue it is admitted to."""
        if candidate_queue == cq.name:
            return WITHIN_CQ
        if advantage:
            return HIERARCHICAL
        if cq.borrow_within_cohort in (None, "Never"):
            return RECLAIM_WITHOUT_BORROWING
        threshold = cq.max_priority_threshold
        if candidate.priority >= preemptor.priority or (threshold is not None and candidate.priority > threshold):
            return RECLAIM_WITHOUT_BORROWING
        return RECLAIM_WHILE_BORROWING

    def _group(self, sources: list, cq, preemptor, frs, advantage: bool, in_cohort: bool) -> CandidateGroup:
        """`sources`: (queue node, lowest common ancestor) pairs."""
        policy = cq.reclaim_within_cohort if in_cohort else cq.within_cluster_queue
        return CandidateGroup(self.snapshot, [(queue.name, lca) for queue, lca in sources], policy, preemptor, frs,
                              advantage, in_cohort)

    def _in_order(self, groups, cq, preemptor, without_reclaim: bool, closed: set[str]):
        """Evicted candidates first, then the rest; built as they are needed, since the
        search usually stops after a few. With `without_reclaim` (borrowing is allowed in
        this attempt but borrowWithinCohort is not), a cohort group without the
        hierarchical advantage holds only candidates the search refuses (reclaim without
        borrowing): skipped. Candidates of the `closed` queues (the search found them back
        within their quota, where they stay) are refused too: skipped, and a cohort group
        whose queues are all closed is left."""
        groups = [g for g in groups if g.sources and not (without_reclaim and g.in_cohort and not g.advantage)]
        for group in groups:
            for w in group.evicted():
                name = w.admission.cluster_queue
                yield w, self._variant(cq, preemptor, w, name, group.advantage), group.lca_of[name]
        workloads = self.snapshot.workloads_by_uid
        for group in groups:
            ranks = group.ranks()
            if not ranks:
                continue
            if not group.in_cohort:
                for key in merged_ranks(ranks):
                    yield workloads[key[2]], WITHIN_CQ, None
                continue
            lca_of, advantage, ranked = group.lca_of, group.advantage, group.ranked
            for key in merged_ranks(ranks):
                w = workloads[key[2]]
                admission = w.admission
                assert admission is not None  # a candidate is admitted
                name = admission.cluster_queue
                if name in closed:
                    if closed.issuperset(ranked):
                        break
                    continue
                yield w, self._variant(cq, preemptor, w, name, advantage), lca_of[name]

    def _cohort_candidates(self, cq, preemptor, frs, requests) -> tuple[CandidateGroup, CandidateGroup]:
        over = self._over_quota_by_ancestor(cq, frs)
        if not any(queue is not cq.node for _, queues in over for queue in queues):
            return _NONE, _NONE  # no queue to reclaim from: whether the preemptor has the advantage decides nothing
        hierarchy: list = []
        by_priority: list = []
        advantage, remaining = _fit_in_quota(cq.node, requests)
        for subtree, queues in over:
            into = hierarchy if advantage else by_priority
            into.extend((queue, subtree) for queue in queues if queue is not cq.node)
            if subtree.parent is not None and not advantage:  # the root's fit would decide nothing more
                advantage, remaining = _fit_in_quota(subtree, remaining)
        return (self._group(hierarchy, cq, preemptor, frs, True, True) if hierarchy else _NONE,
                self._group(by_priority, cq, preemptor, frs, False, True) if by_priority else _NONE)

    def _over_quota(self, frs: frozenset, subtree: QuotaNode, skip: Optional[QuotaNode],
                    generation: int) -> list[QuotaNode]:
        """The ClusterQueues over their quota on `frs` in this subtree, skipping the part
        already searched. Remembered until something is admitted to or removed from the
        tree: every search starts from the same usage until then."""
        key = (subtree, skip, frs)
        known = self._over_quota_memo.get(key)
        if known is not None and known[0] == generation:
            return known[1]
        found: list[QuotaNode] = []
        _collect(frs, subtree, skip, found)
        if len(self._over_quota_memo) >= MEMO_LIMIT:
            self._over_quota_memo.clear()
        self._over_quota_memo[key] = (generation, found)
        return found

    def _still_over_quota(self, candidate: WorkloadInfo, lca: Optional[QuotaNode], frs) -> bool:
        """The rest of upstream's check that a candidate from another queue may still be preempted:
        its queue, and every cohort up to the common one, still over quota on `frs`. The search only
        takes usage out, so once this fails for a queue it fails for the rest of its candidates."""
        admission = candidate.admission
        assert admission is not None
        node = self.snapshot.cluster_queues[admission.cluster_queue].node
        if node.within_subtree_quota(frs):
            return False
        for ancestor in node.ancestors():
            if ancestor is lca:
                break
            if ancestor.within_subtree_quota(frs):
                return False
        return True

    @staticmethod
    def _workload_fits(cq, requests: dict[FR, int], allow_borrowing: bool) -> bool:
        node = cq.node
        for fr, value in requests.items():
            if (not allow_borrowing and node.borrowing_with(fr, value)) or value > available(node, fr):
                return False
        return True

    def _fill_back_workloads(self, cq, requests, removed: list[tuple], allow_borrowing: bool) -> list[tuple]:
        """Put candidates back, the last removed first, while the preemptor still fits."""
        targets = list(removed)
        for index in range(len(targets) - 2, -1, -1):
            candidate, _, usage = targets[index]
            self.snapshot.restore_usage(candidate, usage)
            if self._workload_fits(cq, requests, allow_borrowing):
                targets[index] = targets[-1]
                targets.pop()
            else:
                self.snapshot.lift_usage(candidate, usage)
        return targets

    @staticmethod
    def _queue_under_nominal_in_resources_needing_preemption(cq, frs) -> bool:
        return all(cq.node.nominal(fr) > cq.node.usage.get(fr, 0) for fr in frs)


def _collect(frs, cohort: QuotaNode, skip: Optional[QuotaNode], into: list[QuotaNode]) -> None:
    """The queues over their quota under `cohort`, sub-cohorts over theirs first."""
    for child in cohort.children:
        if child.is_cohort:
            if child is skip or child.within_subtree_quota(frs):
                continue
            _collect(frs, child, skip, into)
    for child in cohort.children:
        if child.is_cohort or child.within_subtree_quota(frs):
            continue
        into.append(child)


def _subtrees(cq: QuotaNode) -> Iterator[tuple[QuotaNode, Optional[QuotaNode]]]:
    """Each ancestor of a queue, and the part under it already searched (as `_cohort_candidates` walks)."""
    previous = None
    for subtree in cq.ancestors():
        yield subtree, previous
        previous = subtree


def _any_over_quota(cohort: QuotaNode, skip: Optional[QuotaNode], exclude: QuotaNode) -> bool:
    """Could `_collect` find a queue other than `exclude` under `cohort`, for some flavor-resources? Only
    if a node is over its quota on at least one (a node within it on every one is within it on any set)."""
    for child in cohort.children:
        if child is skip or child.within_all_quotas():
            continue
        if not child.is_cohort and child is not exclude:
            return True
        if child.is_cohort and _any_over_quota(child, skip, exclude):
            return True
    return False


def _reclaimable(cohort: QuotaNode) -> list[QuotaNode]:
    """The queues under `cohort` over their quota that `_any_over_quota` would find from it (through
    cohorts over their quota)."""
    found: list[QuotaNode] = []
    for child in cohort.children:
        if child.within_all_quotas():
            continue
        if child.is_cohort:
            found += _reclaimable(child)
        else:
            found.append(child)
    return found


def _fit_in_quota(node: QuotaNode, requests: dict[FR, int]) -> tuple[bool, dict[FR, int]]:
    fits = True
    remaining = {}
    for fr, value in requests.items():
        if node.subtree_quota.get(fr, 0) < node.usage.get(fr, 0) + value:
            fits = False
        remaining[fr] = max(0, value - node.local_available(fr))
    return fits, remaining
