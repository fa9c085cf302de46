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
from aks_kueue.admission.fair_sharing import DRS, FairSharing, compare_drs, dominant_resource_share
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
        self.prioritize_non_borrowing = fair_sharing.prioritize_non_borrowing
        self.preemptors_first = preemptors_first
        # One head per ClusterQueue, kept in the order given (the caller's queue order).
        self.cq_to_entry: dict[str, Entry] = {e.cluster_queue: e for e in entries}
        self.drs_values: dict[tuple[str, int], DRS] = {}

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
        self.compute_drs(root)
        winner = self.run_tournament(root)
        assert winner is not None  # the tree holds `name`'s entry
        del self.cq_to_entry[winner.cluster_queue]
        return winner

    def compute_drs(self, root: QuotaNode) -> None:
        """Per entry of the tree and per cohort on its path, the share of the cohort's child on that
        path with the entry's usage added (upstream's drsValues)."""
        tree = self.tree
        values: dict[tuple[str, int], DRS] = {}
        for cq in root.subtree_cluster_queues():
            entry = self.cq_to_entry.get(cq.name)
            if entry is None:
                continue
            usage = entry.usage
            tree.add_usage(cq.name, usage)
            try:
                share = dominant_resource_share(cq)
                for ancestor in cq.ancestors():
                    values[(ancestor.name, id(entry))] = share
                    if ancestor.parent is not None:
                        share = dominant_resource_share(ancestor)
            finally:
                tree.remove_usage(cq.name, usage)
        self.drs_values = values

    def run_tournament(self, cohort: QuotaNode) -> Optional[Entry]:
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
        if not candidates:
            return None
        best = candidates[0]
        for current in candidates[1:]:
            if self.less(current, best, cohort.name):
                best = current
        return best

    def less(self, a: Entry, b: Entry, parent: str) -> bool:
        if self.preemptors_first and a.preemptor != b.preemptor:
            return a.preemptor
        a_drs, b_drs = self.drs_values[(parent, id(a))], self.drs_values[(parent, id(b))]
        if self.prioritize_non_borrowing:
            a_borrows, b_borrows = a_drs.is_borrowing_on(a.usage), b_drs.is_borrowing_on(b.usage)
            if a_borrows != b_borrows:
                return not a_borrows
        order = compare_drs(a_drs, b_drs)
        if order:
            return order < 0
        return a.key < b.key
