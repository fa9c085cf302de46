"""The order in which a scheduling cycle considers its entries (Kueue v0.19.2, `scheduler.go`
`makeIterator`, `fair_sharing_iterator.go`).

Classical (`makeClassicalIterator`): entries that need no borrowing first, then higher priority,
then the earlier queue-order timestamp. With PrioritizePreemptorWorkloads (alpha, off by default),
in both orders a head waiting for its preemptions to complete comes before all others.

Fair sharing (`fairSharingIterator`): an entry of a ClusterQueue without a cohort comes as it is;
otherwise a tournament runs through its cohort tree each time an entry is taken, so that it sees
the usage the entries taken before it added. Each cohort nominates one entry of its children (a
child cohort's winner, or a child ClusterQueue's head), comparing per child its share with the
entry's usage added (`computeDRS`): first, with FairSharingPrioritizeNonBorrowing (beta, on), a
child not borrowing on the flavor-resources its entry asks for; then the lower share
(`CompareDRS`); then the higher priority; then the earlier timestamp. Kueue leaves a full tie to
map order; here the entry's queue order (for replay, the trace order) breaks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Optional

from aks_kueue.admission.configuration import SchedulerConfig
from aks_kueue.admission.fair_sharing import DRS, FairSharing, dominant_resource_share
from aks_kueue.admission.quota import FlavorResource, QuotaNode, QuotaTree
from aks_kueue.admission.snapshot import Decision


@dataclass(eq=False, slots=True)
class Entry:
    """A head workload's decision in a cycle (upstream's `entry`): its ClusterQueue, the usage
    its assignment asks for, its queue order (priority, timestamp and a unique tiebreak, smaller
    first) and whatever the caller carries along."""

    cluster_queue: str
    decision: Decision
    key: tuple
    payload: Any = None
    # The head is its queue's preemptor waiting for its targets to go (upstream's IsPreemptor).
    preemptor: bool = False

    @property
    def usage(self) -> dict[FlavorResource, int]:
        assignment = self.decision.assignment
        return assignment.usage if assignment is not None else {}

    @property
    def borrowing(self) -> int:
        assignment = self.decision.assignment
        return assignment.borrowing if assignment is not None else 0


def make_iterator(tree: QuotaTree, entries: list[Entry], scheduler: SchedulerConfig) -> Iterator[Entry]:
    """The entries in the order the cycle takes them. With fair sharing the order depends on the
    usage the caller adds while it processes each entry, so take them one at a time."""
    preemptors_first = scheduler.prioritize_preemptor_workloads
    if scheduler.fair_sharing is None:
        if preemptors_first:
            return iter(sorted(entries, key=lambda e: (not e.preemptor, e.borrowing, e.key)))
        return iter(sorted(entries, key=lambda e: (e.borrowing, e.key)))
    return FairSharingIterator(tree, entries, scheduler.fair_sharing, preemptors_first)


class FairSharingIterator:
    def __init__(self, tree: QuotaTree, entries: list[Entry], fair_sharing: FairSharing,
                 preemptors_first: bool = False):
        self.tree = tree
        tree.count_usage_changes()  # the ranks are kept per usage version
        self.prioritize_non_borrowing = fair_sharing.prioritize_non_borrowing
        self.preemptors_first = preemptors_first
        # One head per ClusterQueue, kept in the order given (the caller's queue order).
        self.cq_to_entry: dict[str, Entry] = {e.cluster_queue: e for e in entries}
        # Per entry: the versions of the usages on its path below the root, and its rank among the
        # children of each cohort on the path (upstream's drsValues, as `less` orders them).
        self._kept: dict[int, tuple[Any, dict[str, tuple]]] = {}
        # Per root, its ClusterQueues that have an entry, with their nodes below the root.
        self._trees: dict[str, list[tuple[QuotaNode, tuple[QuotaNode, ...]]]] = {}
        # Per root, how many of its entries are left: the last one needs no tournament.
        self._left: dict[str, int] = {}
        for name in self.cq_to_entry:
            root = tree.cluster_queues[name].root().name
            self._left[root] = self._left.get(root, 0) + 1

    def __iter__(self) -> "FairSharingIterator":
        return self

    def __next__(self) -> Entry:
        if not self.cq_to_entry:
            raise StopIteration
        return self.pop()

    def pop(self) -> Entry:
        name = next(iter(self.cq_to_entry))
        node = self.tree.cluster_queues[name]
        if node.parent is None:
            return self.cq_to_entry.pop(name)
        root = node.root()
        left = self._left[root.name] = self._left[root.name] - 1
        if left == 0:
            return self.cq_to_entry.pop(name)  # the tree's last entry: nothing to compare it with
        self.compute_drs(root)
        winner = self.run_tournament(root)
        assert winner is not None  # the tree holds `name`'s entry
        del self.cq_to_entry[winner.cluster_queue]
        return winner

    def compute_drs(self, root: QuotaNode) -> None:
        """Per entry of the tree and per cohort on its path, the share of the cohort's child on that
        path with the entry's usage added (upstream's drsValues), as the rank `less` compares.
        Kueue adds the usage to the snapshot and takes it back; here each node's share is computed
        with the part of the usage that would reach it (what lending limits below do not hold),
        which is the same. A child's share depends on its own usage and that of the nodes below it,
        never on its parent's, so the ranks are kept while no node on the path below the root moved
        (the root moves with every admission in the tree)."""
        queues = self._trees.get(root.name)
        if queues is None:
            queues = self._trees[root.name] = [(q, q.path_from_root()[1:]) for q in root.subtree_cluster_queues()
                                               if q.name in self.cq_to_entry]
        entries, kept_all = self.cq_to_entry, self._kept
        for cq, below_root in queues:
            entry = entries.get(cq.name)
            if entry is None:
                continue
            # (The usual flat cohort has just the ClusterQueue below its root.)
            versions = below_root[0].usage_version if len(below_root) == 1 else \
                tuple(node.usage_version for node in below_root)
            kept = kept_all.get(id(entry))
            if kept is None or kept[0] != versions:
                kept_all[id(entry)] = (versions, dict(self._ranks(cq, entry)))

    def _ranks(self, cq: QuotaNode, entry: Entry) -> list[tuple[str, tuple]]:
        """(parent, rank of the entry among that parent's children) from the ClusterQueue up."""
        usage = entry.usage
        parent = cq.parent
        if parent is not None and parent.parent is None:
            # A flat cohort: the ClusterQueue takes the whole usage, and only its share is compared.
            return [(parent.name, self.rank(entry, dominant_resource_share(cq, usage)))]
        height = len(cq.path_from_root())
        reaching: list[dict[FlavorResource, int]] = [{} for _ in range(height)]
        for fr, value in usage.items():
            # As QuotaTree.add_usage moves it up: a node keeps what fits its local quota.
            for level, (node_usage, local, _, _, _) in enumerate(cq.chain(fr)):
                if value <= 0:
                    break
                reaching[level][fr] = value
                used = node_usage.get(fr, 0)
                if local > used:
                    value -= local - used
        found = []
        node, level = cq, 0
        for ancestor in cq.ancestors():
            found.append((ancestor.name, self.rank(entry, dominant_resource_share(node, reaching[level]))))
            node, level = ancestor, level + 1
        return found

    def rank(self, entry: Entry, drs: DRS) -> tuple:
        """The entryComparer's order as a sort key (smaller first): a waiting preemptor first (with
        PrioritizePreemptorWorkloads), a child not borrowing on what the entry asks for (with
        FairSharingPrioritizeNonBorrowing), the lower share as CompareDRS ranks it (a borrowing
        weight-0 child above every other, among them by unweighted ratio), then the entry's queue
        order (priority, timestamp, and for a full tie the caller's order)."""
        borrows = self.prioritize_non_borrowing and drs.is_borrowing_on(entry.usage)
        share = (True, drs.unweighted_ratio) if drs.zero_weight_borrows else (False, drs.precise_weighted_share())
        return (self.preemptors_first and not entry.preemptor, borrows, share, entry.key)

    def run_tournament(self, cohort: QuotaNode) -> Optional[Entry]:
        """The entry each cohort nominates: the best of its child cohorts' winners and its child
        ClusterQueues' entries (upstream's runTournament)."""
        candidates = []
        for child in cohort.children:
            if child.is_cohort:
                found = self.run_tournament(child)
                if found is not None:
                    candidates.append(found)
        for child in cohort.children:
            if not child.is_cohort:
                entry = self.cq_to_entry.get(child.name)
                if entry is not None:
                    candidates.append(entry)
        if len(candidates) <= 1:
            return candidates[0] if candidates else None
        kept, name = self._kept, cohort.name
        return min(candidates, key=lambda e: kept[id(e)][1][name])

    def less(self, a: Entry, b: Entry, parent: str) -> bool:
        """Upstream's entryComparer.less, for the last tournament's values."""
        return self._kept[id(a)][1][parent] < self._kept[id(b)][1][parent]
