"""Kueue's flavor assigner (`pkg/scheduler/flavorassigner/flavorassigner.go`, v0.19.2).

For each podset and each resource group of the ClusterQueue, the flavors are tried in
order. A flavor that suits the pods (see `flavors`) is judged per resource against the
quota tree: Fit when the request fits what is unused now, Preempt when it fits the most
the queue could ever get and preemption could free it, NoFit otherwise.
flavorFungibility decides whether to stop at a flavor or look further, and which of the
seen flavors wins. Gates at their v0.19 defaults: FlavorFungibility on,
UnadmittedWorkloadsObservability off, no Topology Aware Scheduling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional

from aks_kueue.k8s.scheduling import SelectorError
from aks_kueue.admission.quota import borrowing_height
from aks_kueue.kueue.units import PODS, format_amount

if TYPE_CHECKING:
    from aks_kueue.admission.snapshot import ClusterQueueInfo, Snapshot
    from aks_kueue.admission.workloads import WorkloadInfo

# Flavor assignment modes, worst first.
NO_FIT, PREEMPT, DEFERRED_FIT, FIT = 0, 1, 2, 3
MODE_NAMES = {NO_FIT: "NoFit", PREEMPT: "Preempt", DEFERRED_FIT: "DeferredFit", FIT: "Fit"}

# The finer modes inside the assigner, worst first.
P_NO_FIT, P_NO_CANDIDATES, P_PREEMPT, P_RECLAIM, P_FIT = 0, 1, 2, 3, 4
_TO_MODE = {P_NO_FIT: NO_FIT, P_NO_CANDIDATES: PREEMPT, P_PREEMPT: PREEMPT, P_RECLAIM: PREEMPT, P_FIT: FIT}
WORST = (P_NO_FIT, 1 << 62)
BEST = (P_FIT, 0)

# A preemption oracle answers (possibility, borrowing level after the preemptions).
Oracle = Callable[["ClusterQueueInfo", "WorkloadInfo", tuple[str, str], int], tuple[int, int]]


@dataclass
class FlavorAssignment:
    name: str
    mode: int
    borrow: int = 0


@dataclass
class PodSetAssignment:
    name: str
    count: int
    requests: dict[str, int]
    flavors: dict[str, FlavorAssignment] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    error: Optional[str] = None

    @property
    def mode(self) -> int:
        if self.error is None and not self.reasons:
            return FIT
        if self.error is not None or not self.flavors:
            return NO_FIT
        return min(f.mode for f in self.flavors.values())

    def message(self) -> str:
        return self.error if self.error is not None else ", ".join(sorted(self.reasons))


@dataclass
class Assignment:
    podsets: list[PodSetAssignment] = field(default_factory=list)
    borrowing: int = 0
    usage: dict[tuple[str, str], int] = field(default_factory=dict)

    @property
    def mode(self) -> int:
        if not self.podsets:
            return NO_FIT
        return min(ps.mode for ps in self.podsets)

    def message(self) -> str:
        parts = []
        for ps in self.podsets:
            if ps.error is None and not ps.reasons:
                continue
            if ps.error is not None:
                return f"failed to assign flavors to pod set {ps.name}: {ps.error}"
            parts.append(f"couldn't assign flavors to pod set {ps.name}: {ps.message()}")
        return "; ".join(parts)

    def add(self, podset: PodSetAssignment) -> None:
        self.podsets.append(podset)
        for resource, flavor in podset.flavors.items():
            self.borrowing = max(self.borrowing, flavor.borrow)
            fr = (flavor.name, resource)
            self.usage[fr] = self.usage.get(fr, 0) + podset.requests.get(resource, 0)

    def frs_needing_preemption(self) -> set[tuple[str, str]]:
        return {(f.name, resource) for ps in self.podsets for resource, f in ps.flavors.items()
                if f.mode == PREEMPT}


def is_preferred(a: tuple[int, int], b: tuple[int, int], preference: Optional[str]) -> bool:
    """Is granular mode `a` (preemption mode, borrowing level) better than `b`?"""
    if a[0] == P_NO_FIT:
        return False
    if b[0] == P_NO_FIT:
        return True
    a_none, b_none = a[0] == P_NO_CANDIDATES, b[0] == P_NO_CANDIDATES
    if a_none != b_none:
        return not a_none
    if preference == "PreemptionOverBorrowing":
        if a[1] != b[1]:
            return a[1] < b[1]
        return a[0] > b[0]
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


def should_try_next_flavor(mode: tuple[int, int], when_can_preempt: str, when_can_borrow: str) -> bool:
    if mode[0] in (P_NO_FIT, P_NO_CANDIDATES):
        return True
    if mode[0] in (P_PREEMPT, P_RECLAIM) and when_can_preempt == "TryNextFlavor":
        return True
    return mode[1] != 0 and when_can_borrow == "TryNextFlavor"


class FlavorAssigner:
    def __init__(self, snapshot: "Snapshot", cq: "ClusterQueueInfo", workload: "WorkloadInfo",
                 oracle: Oracle, fair_sharing: bool = False):
        self.snapshot = snapshot
        self.cq = cq
        self.workload = workload
        self.oracle = oracle
        self.fair_sharing = fair_sharing

    def assign(self, counts: Optional[list[int]] = None) -> Assignment:
        cq, assignment = self.cq, Assignment()
        for members in self._groups(counts):
            requests: dict[str, int] = {}
            for _, _, member_requests in members:
                for resource, value in member_requests.items():
                    requests[resource] = requests.get(resource, 0) + value
            podsets = [podset for podset, _, _ in members]
            flavors: Optional[dict[str, FlavorAssignment]] = {}
            reasons: list[str] = []
            error = None
            for resource, quantity in requests.items():
                if resource not in cq.group_of and quantity == 0:
                    continue
                if resource in flavors:
                    continue
                found, found_reasons, error = self._find_flavor(podsets, requests, resource, assignment.usage)
                if error is not None or not found:
                    flavors, reasons = None, found_reasons
                    break
                flavors.update(found)
                reasons.extend(found_reasons)
            failed = False
            for podset, count, member_requests in members:
                psa = PodSetAssignment(podset.name, count, member_requests, error=error, reasons=list(reasons))
                if member_requests:
                    psa.flavors = {r: f for r, f in (flavors or {}).items() if r in member_requests}
                assignment.add(psa)
                failed = failed or error is not None or (bool(member_requests) and not psa.flavors)
            if failed:
                return assignment
        return assignment

    def _groups(self, counts: Optional[list[int]]):
        """Podsets sharing a podSetGroupName get one flavor together; others go alone."""
        podsets = self.workload.podsets
        if len(podsets) == 1:
            podset = podsets[0]
            count = podset.count if counts is None else counts[0]
            requests = podset.total(count)
            if self.cq.covers_pods:
                requests[PODS] = count
            return ([(podset, count, requests)],)
        groups: dict[str, list] = {}
        for index, podset in enumerate(podsets):
            count = podset.count if counts is None else counts[index]
            requests = podset.total(count)
            if self.cq.covers_pods:
                requests[PODS] = count
            key = podset.group or f"#{index}"
            groups.setdefault(key, []).append((podset, count, requests))
        return groups.values()

    def _find_flavor(self, podsets: list, requests: dict[str, int], resource: str,
                     assumed: dict[tuple[str, str], int]):
        cq = self.cq
        group = cq.group_of.get(resource)
        if group is None:
            return None, [f"resource {resource} unavailable in ClusterQueue"], None
        wanted = [(r, v) for r, v in requests.items() if r in group.covered]
        reasons: list[str] = []
        best, best_mode = None, WORST
        for flavor_name in group.flavors:
            try:
                mismatch = self.snapshot.flavors_mismatch(flavor_name, podsets)
            except SelectorError as error:
                return None, reasons, str(error)
            if mismatch is not None:
                reasons.append(mismatch)
                continue
            assigned: dict[str, FlavorAssignment] = {}
            mode = BEST
            for name, value in wanted:
                fr = (flavor_name, name)
                p_mode, borrow, reason = self._fits_quota(fr, assumed.get(fr, 0), value)
                if reason is not None:
                    reasons.append(reason)
                if is_preferred(mode, (p_mode, borrow), cq.preference):
                    mode = (p_mode, borrow)
                if mode[0] == P_NO_FIT:
                    continue  # the rest are still judged, for their reasons
                assigned[name] = FlavorAssignment(flavor_name, _TO_MODE[p_mode], borrow)
            if not should_try_next_flavor(mode, cq.when_can_preempt, cq.when_can_borrow):
                best, best_mode = assigned, mode
                break
            if is_preferred(mode, best_mode, cq.preference):
                best, best_mode = assigned, mode
        if best_mode[0] == P_FIT:
            return best, [], None
        return best, reasons, None

    def _fits_quota(self, fr: tuple[str, str], assumed: int, request: int) -> tuple[int, int, Optional[str]]:
        cq, tree = self.cq, self.snapshot.tree
        resource, flavor = fr[1], fr[0]
        value = assumed + request
        maximum = tree.potential_available(cq.name, fr)
        if value > maximum:
            return P_NO_FIT, 0, (
                f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets "
                f"requests ({format_amount(resource, assumed)}) + current podset request "
                f"({format_amount(resource, request)}) > maximum capacity ({format_amount(resource, maximum)})")
        borrow, may_reclaim = borrowing_height(cq.node, fr, value)
        available = tree.available(cq.name, fr)
        if value <= available:
            return P_FIT, borrow, None
        reason = (f"insufficient unused quota for {resource} in flavor {flavor}, "
                  f"{format_amount(resource, value - available)} more needed")
        if cq.node.nominal(fr) >= value or may_reclaim or self._can_preempt_while_borrowing():
            possibility, borrow_after = self.oracle(cq, self.workload, fr, value)
            return possibility, borrow_after, reason
        return P_NO_FIT, borrow, reason

    def _can_preempt_while_borrowing(self) -> bool:
        cq = self.cq
        return (cq.borrow_within_cohort not in (None, "Never")
                or (self.fair_sharing and cq.reclaim_within_cohort != "Never"))
