"""The admitted workloads of one ClusterQueue, kept in Kueue's preemption-candidate order.

Kueue ranks candidates from one queue by priority (lowest first), then the most recent
quota reservation, then UID (`preemption/common/ordering.go`). Keeping one sorted list
per flavor-resource lets the preemption judgement slice out the candidates a policy
allows, already in order, instead of sorting every admitted workload each time.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from itertools import chain
from typing import Iterable, Iterator

from aks_kueue.admission.workloads import FlavorResource, WorkloadInfo


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
        for fr in workload.admission.usage:
            insort(self._by_fr.setdefault(fr, []), rank(workload))

    def remove(self, workload: WorkloadInfo) -> None:
        del self.by_uid[workload.uid]
        self.evicted.pop(workload.uid, None)
        key = rank(workload)
        for fr in workload.admission.usage:
            entries = self._by_fr[fr]
            del entries[bisect_left(entries, key)]

    def candidates(self, frs: Iterable[FlavorResource], preemptor: WorkloadInfo, policy: str) -> list[tuple]:
        """The ranks of every non-evicted workload that uses one of `frs` and that `policy`
        lets `preemptor` preempt, in Kueue's order (slices of sorted lists, so cheap)."""
        if policy == "Never":
            return []
        runs = []
        for fr in frs:
            entries = self._by_fr.get(fr)
            if not entries:
                continue
            if policy == "LowerPriority":
                entries = entries[:bisect_left(entries, (preemptor.priority,))]
            elif policy == "LowerOrNewerEqualPriority":
                entries = entries[:bisect_left(entries, (preemptor.priority + 1,))]
            elif policy != "Any":
                continue
            runs.append(entries)
        ranks = runs[0] if len(runs) == 1 else sorted(set(chain.from_iterable(runs)))
        if self.evicted or policy == "LowerOrNewerEqualPriority":
            ranks = [key for key in ranks if self._allowed(self.by_uid[key[2]], preemptor, policy)]
        return ranks

    @staticmethod
    def _allowed(workload: WorkloadInfo, preemptor: WorkloadInfo, policy: str) -> bool:
        if workload.evicted:
            return False
        return not (policy == "LowerOrNewerEqualPriority" and workload.priority == preemptor.priority
                    and not preemptor.created < workload.created)
