"""The admitted workloads of one ClusterQueue, kept in Kueue's preemption-candidate order.

Kueue ranks candidates from one queue by priority (lowest first), then the most recent
quota reservation, then UID (`preemption/common/ordering.go`). Keeping one sorted list
per flavor-resource lets the preemption judgement slice out the candidates a policy
allows, already in order, instead of sorting every admitted workload each time.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from heapq import merge
from itertools import islice
from typing import TYPE_CHECKING, Iterable, Iterator, Mapping, Optional, Protocol

from aks_kueue.admission.workloads import FlavorResource, WorkloadInfo

if TYPE_CHECKING:
    from aks_kueue.admission.fair_sharing import FairSharing
    from aks_kueue.admission.models import ClusterQueueInfo
    from aks_kueue.admission.quota import QuotaTree


def rank(workload: WorkloadInfo) -> tuple:
    return (workload.priority, -workload.reserved, workload.uid)


class AdmittedWorkloads:
    def __init__(self):
        self.by_uid: dict[str, WorkloadInfo] = {}
        self._by_fr: dict[FlavorResource, list[tuple]] = {}
        self.evicted: dict[str, WorkloadInfo] = {}

    def __iter__(self) -> Iterator[WorkloadInfo]:
        return iter(self.by_uid.values())

    def __len__(self) -> int:
        return len(self.by_uid)

    def add(self, workload: WorkloadInfo) -> None:
        self.by_uid[workload.uid] = workload
        if workload.evicted:
            self.evicted[workload.uid] = workload
        admission = workload.admission
        assert admission is not None  # (asserts narrow for the type checker at no call's cost)
        key, by_fr = rank(workload), self._by_fr  # one rank for every fr: this runs for every admission
        for fr in admission.usage:
            entries = by_fr.get(fr)
            if entries is None:
                by_fr[fr] = [key]
            else:
                insort(entries, key)

    def remove(self, workload: WorkloadInfo) -> None:
        del self.by_uid[workload.uid]
        self.evicted.pop(workload.uid, None)
        key = rank(workload)
        admission = workload.admission
        assert admission is not None
        for fr in admission.usage:
            entries = self._by_fr[fr]
            del entries[bisect_left(entries, key)]

    def lowest_priority(self) -> Optional[int]:
        """The lowest priority admitted here (evicted ones included); None when nothing is."""
        heads = [entries[0][0] for entries in self._by_fr.values() if entries]
        return min(heads) if heads else None

    def candidates(self, frs: Iterable[FlavorResource], preemptor: WorkloadInfo, policy: str) -> "Ranks":
        """The ranks of every non-evicted workload that uses one of `frs` and that `policy`
        lets `preemptor` preempt, in Kueue's order. Lazy: the search usually stops after a
        few, so the sorted per-fr lists are merged only as far as it reads."""
        if policy == "Never":
            return Ranks(())
        runs = []
        for fr in frs:
            entries = self._by_fr.get(fr)
            if not entries:
                continue
            if policy == "LowerPriority":
                stop = bisect_left(entries, (preemptor.priority,))
            elif policy == "LowerOrNewerEqualPriority":
                stop = bisect_left(entries, (preemptor.priority + 1,))
            elif policy == "Any":
                stop = len(entries)
            else:
                continue
            if stop:
                runs.append((entries, stop))
        keep = None
        if self.evicted or policy == "LowerOrNewerEqualPriority":
            by_uid, allowed = self.by_uid, self._allowed

            def keep(key: tuple) -> bool:
                return allowed(by_uid[key[2]], preemptor, policy)
        return Ranks(tuple(runs), keep)

    def frees_at_least(self, fr: FlavorResource, preemptor: WorkloadInfo, policy: str, enough: int) -> bool:
        """Whether the workloads here that `policy` may let `preemptor` preempt use at least `enough`
        of `fr` together. Generous (a bound): evicted ones count, and so do equal priorities under
        LowerOrNewerEqualPriority; it stops adding as soon as it reaches `enough`."""
        if enough <= 0:
            return True
        entries = self._by_fr.get(fr)
        if policy == "Never" or not entries:
            return False
        if policy == "LowerPriority":
            stop = bisect_left(entries, (preemptor.priority,))
        elif policy == "LowerOrNewerEqualPriority":
            stop = bisect_left(entries, (preemptor.priority + 1,))
        else:
            stop = len(entries)
        by_uid, total = self.by_uid, 0
        for key in islice(entries, stop):
            admission = by_uid[key[2]].admission
            assert admission is not None  # admitted here
            total += admission.usage[fr]
            if total >= enough:
                return True
        return False

    @staticmethod
    def _allowed(workload: WorkloadInfo, preemptor: WorkloadInfo, policy: str) -> bool:
        if workload.evicted:
            return False
        return not (policy == "LowerOrNewerEqualPriority" and workload.priority == preemptor.priority
                    and not preemptor.created < workload.created)


class Ranks:
    """Candidate ranks from sorted runs (slices of per-fr lists), merged in order without
    repeats, filtered by `keep`; iterable more than once; true when there is any."""

    __slots__ = ("runs", "keep")

    def __init__(self, runs: tuple, keep=None):
        self.runs = runs
        self.keep = keep

    def __iter__(self) -> Iterator[tuple]:
        runs, keep = self.runs, self.keep
        merged: Iterator[tuple]
        if len(runs) == 1:
            entries, stop = runs[0]
            merged = islice(entries, stop)
        else:
            merged = _unique(merge(*(islice(entries, stop) for entries, stop in runs)))
        return merged if keep is None else filter(keep, merged)

    def __bool__(self) -> bool:
        if not self.runs:
            return False
        return self.keep is None or next(iter(self), None) is not None


def merged_ranks(groups: list[Ranks]) -> Iterator[tuple]:
    """The ranks of several queues' candidates, in one order."""
    if len(groups) == 1:
        return iter(groups[0])
    return merge(*groups)


def _unique(ranks: Iterator[tuple]) -> Iterator[tuple]:
    previous = None
    for key in ranks:
        if key != previous:
            yield key
            previous = key


def satisfies_policy(preemptor: WorkloadInfo, candidate: WorkloadInfo, policy: str) -> bool:
    if policy == "LowerPriority":
        return preemptor.priority > candidate.priority
    if policy == "LowerOrNewerEqualPriority":
        return (preemptor.priority > candidate.priority
                or (preemptor.priority == candidate.priority and preemptor.created < candidate.created))
    return policy == "Any"


class AdmittedState(Protocol):
    """What the preemption search reads of the snapshot, and the one change it makes
    (for a moment: every `lift_usage` is undone by `restore_usage` before it returns)."""

    cluster_queues: Mapping[str, ClusterQueueInfo]
    workloads_by_uid: Mapping[str, WorkloadInfo]

    tree: QuotaTree
    fair_sharing: Optional[FairSharing]

    def admitted_index(self, cluster_queue: str) -> AdmittedWorkloads: ...

    def local_queue_usage(self, workload: WorkloadInfo) -> Optional[float]: ...

    def generation(self, cq: ClusterQueueInfo) -> int: ...

    def lift_usage(self, workload: WorkloadInfo, usage: Optional[dict] = None) -> None: ...

    def restore_usage(self, workload: WorkloadInfo, usage: Optional[dict] = None) -> None: ...
