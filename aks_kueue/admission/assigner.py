"""Kueue's flavor assigner (`pkg/scheduler/flavorassigner/flavorassigner.go`, v0.19.2).

For each podset and each resource group of the ClusterQueue, the flavors are tried in
order. A flavor that suits the pods (see `flavors`) is judged per resource against the
quota tree: Fit when the request fits what is unused now, Preempt when it fits the most
the queue could ever get and preemption could free it, NoFit otherwise.
flavorFungibility decides whether to stop at a flavor or look further, and which of the
seen flavors wins. Gates at their v0.19 defaults: FlavorFungibility on,
UnadmittedWorkloadsObservability off, no Topology Aware Scheduling.

As upstream's FlavorAssigner, it reads the ClusterQueue and the workload, and asks two
narrow things of the rest: which flavors suit the pods (`FlavorMatcher`, upstream's map of
ResourceFlavors) and whether preemption could help (`PreemptionOracle`, upstream's
preemptionOracle). It never sees the whole snapshot.

It keeps the questions an assignment asked of the quota tree and the oracle, in order (`Trail`), so
that the same workload asked about again can be given an earlier assignment with today's words
when every question gets the same answer (`reword`): the path through flavors turns on nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Protocol, Sequence, Union

from aks_kueue.admission.models import ClusterQueueInfo
from aks_kueue.admission.modes import (BEST, PREEMPTION_OVER_BORROWING, TRY_NEXT_FLAVOR, WORST, FlavorAssignmentMode,
                                       GranularMode, PreemptionMode, is_preferred, should_try_next_flavor)
from aks_kueue.admission.quota import FlavorResource, available, borrowing_height, potential_available
from aks_kueue.admission.workloads import PodSetInfo, WorkloadInfo
from aks_kueue.k8s.scheduling import SelectorError
from aks_kueue.kueue.units import PODS, format_amount

FIT, PREEMPT, NO_FIT = FlavorAssignmentMode.FIT, FlavorAssignmentMode.PREEMPT, FlavorAssignmentMode.NO_FIT
P_FIT, P_NO_FIT, P_PREEMPT = PreemptionMode.FIT, PreemptionMode.NO_FIT, PreemptionMode.PREEMPT


# The words of a flavor-resource short of unused quota, by how much (a congested queue's heads are
# told the same few amounts again and again); bounded, started over when full.
_SHORT: dict[tuple[FlavorResource, int], str] = {}
_SHORT_LIMIT = 4096


class FlavorMatcher(Protocol):
    def mismatch(self, flavor: str, podsets: Sequence[PodSetInfo]) -> Optional[str]:
        """Kueue's reason the flavor does not suit these podsets, or None when it does.
        Raises SelectorError for a selector Kubernetes would refuse."""


class PreemptionOracle(Protocol):
    def simulate_preemption(self, cq: ClusterQueueInfo, workload: WorkloadInfo, fr: FlavorResource,
                            quantity: int) -> tuple[PreemptionMode, int]:
        """Could preemption free `quantity` of `fr` for the workload (NO_CANDIDATES, PREEMPT
        or RECLAIM), and the borrowing level once it did."""

    def borrowing_after(self, cq: ClusterQueueInfo, workload: WorkloadInfo, fr: FlavorResource,
                        quantity: int, height: Optional[int] = None) -> Optional[int]:
        """The borrowing level `simulate_preemption` would answer, when it is the same whatever
        preemption finds (None when it may depend on the targets): all that is read of the oracle
        for a flavor with no rival, whose mode is a preemption mode whatever it is. `height`: the
        borrowing height of `quantity` now, when the caller has just read it (else it is read)."""


@dataclass(slots=True)
class FlavorAssignment:
    name: str
    mode: FlavorAssignmentMode
    borrow: int = 0


@dataclass(frozen=True, slots=True)
class Status:
    """Why a podset is not simply Fit (upstream's flavorassigner Status): the reasons each flavor
    fell short, or an error that stops the assignment (a selector Kubernetes would refuse).
    A value: the Fit one (`FIT_STATUS`) is shared, as the assigner builds one per podset."""

    reasons: tuple[str, ...] = ()
    err: Optional[str] = None

    def is_fit(self) -> bool:
        return self.err is None and not self.reasons

    def is_error(self) -> bool:
        return self.err is not None

    def message(self) -> str:
        return self.err if self.err is not None else ", ".join(sorted(self.reasons))


FIT_STATUS = Status()


@dataclass(slots=True)
class FlavorSearch:
    """What `find_flavor_for_podsets` found for one resource (and the resources of its group):
    the flavor per resource, None when no flavor can take them; and the Status."""

    assignment: Optional[dict[str, FlavorAssignment]]
    status: Status


@dataclass(slots=True)
class PodSetAssignment:
    name: str
    count: int
    requests: dict[str, int]
    flavors: dict[str, FlavorAssignment] = field(default_factory=dict)
    status: Status = FIT_STATUS

    @property
    def reasons(self) -> tuple[str, ...]:
        return self.status.reasons

    @property
    def error(self) -> Optional[str]:
        return self.status.err

    @property
    def mode(self) -> FlavorAssignmentMode:
        """The podset's representative mode: Fit without reasons, NoFit on an error or without
        flavors, else the worst of its flavors'."""
        status = self.status  # (read once: this runs for every podset of every decision)
        if status.err is None and not status.reasons:
            return FIT
        if status.err is not None or not self.flavors:
            return NO_FIT
        return min(f.mode for f in self.flavors.values())

    def message(self) -> str:
        return self.status.message()


@dataclass
class Assignment:
    podsets: list[PodSetAssignment] = field(default_factory=list)
    borrowing: int = 0
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    _mode: Optional[FlavorAssignmentMode] = field(default=None, repr=False, compare=False)

    @property
    def mode(self) -> FlavorAssignmentMode:
        """The representative mode: the worst of its podsets'."""
        if self._mode is None:
            self._mode = min(ps.mode for ps in self.podsets) if self.podsets else NO_FIT
        return self._mode

    def message(self) -> str:
        parts = []
        for ps in self.podsets:
            status = ps.status
            if status.err is not None:
                return f"failed to assign flavors to pod set {ps.name}: {status.err}"
            if status.reasons:
                parts.append(f"couldn't assign flavors to pod set {ps.name}: {status.message()}")
        return "; ".join(parts)

    def add(self, podset: PodSetAssignment) -> None:
        self.podsets.append(podset)
        self._mode = None
        for resource, flavor in podset.flavors.items():
            self.borrowing = max(self.borrowing, flavor.borrow)
            fr = (flavor.name, resource)
            self.usage[fr] = self.usage.get(fr, 0) + podset.requests.get(resource, 0)

    def frs_needing_preemption(self) -> set[FlavorResource]:
        return {(f.name, resource) for ps in self.podsets for resource, f in ps.flavors.items()
                if f.mode == PREEMPT}


class Judged(NamedTuple):
    """One `fits_resource_quota` question the assigner asked, and its answer (the mode, None when
    left to the oracle, and the borrowing level; and the reason's words)."""

    fr: FlavorResource
    assumed: int
    request: int
    defer: bool
    mode: Optional[PreemptionMode]
    borrow: int
    reason: Optional[str]


class Asked(NamedTuple):
    """One question the assigner put to the preemption oracle for a pending resource (`alone`:
    the flavor had no rival, so `borrowing_after` was asked first), and the answer it combined."""

    fr: FlavorResource
    quantity: int
    alone: bool
    mode: PreemptionMode
    borrow: int


# What one assignment asked of the quota tree and the oracle, in order: all it read that can change
# while the workload, its ClusterQueue and the flavors stay the same.
Trail = list[Union[Judged, Asked]]


class _Tried:
    """A flavor that suits the pods: what it would assign, its representative mode so far
    (the worst of its resources, as upstream's `isPreferred` ranks them), and the
    resources whose mode awaits the preemption oracle."""

    __slots__ = ("name", "assigned", "mode", "pending", "no_fit")

    def __init__(self, name: str):
        self.name = name
        self.assigned: dict[str, FlavorAssignment] = {}
        self.mode = BEST
        self.pending: list[tuple[str, FlavorResource, int]] = []
        self.no_fit = False

    def combine(self, preemption_mode: PreemptionMode, borrowing_level: int, preference: Optional[str]) -> None:
        """Take one more resource's mode in: the flavor's is the worst. A fit without borrowing
        (BEST) is never worse, so it changes nothing (the usual case, built into no mode)."""
        if borrowing_level == 0 and preemption_mode == P_FIT:
            return
        # tuple.__new__ builds the named tuple without its Python-level __new__ (the hot path).
        mode = tuple.__new__(GranularMode, (preemption_mode, borrowing_level))
        if is_preferred(self.mode, mode, preference):
            self.mode = mode
            self.no_fit = preemption_mode == P_NO_FIT


class FlavorAssigner:
    def __init__(self, cq: ClusterQueueInfo, workload: WorkloadInfo, flavors: FlavorMatcher,
                 oracle: PreemptionOracle, fair_sharing: bool = False):
        self.cq = cq
        self.workload = workload
        self.flavors = flavors
        self.oracle = oracle
        self.fair_sharing = fair_sharing
        self.trail: Trail = []  # the last `assign`'s questions and answers
        # The borrowing height of each (flavor-resource, amount) a fit left to the oracle, for the
        # oracle's `borrowing_after` (the usage does not move while one decision is made).
        self._heights: dict[tuple[FlavorResource, int], int] = {}

    def assign(self, counts: Optional[list[int]] = None) -> Assignment:
        cq, assignment = self.cq, Assignment()
        self.trail = []
        for members in self._groups(counts):
            requests: dict[str, int] = {}
            for _, _, member_requests in members:
                for resource, value in member_requests.items():
                    requests[resource] = requests.get(resource, 0) + value
            podsets = [podset for podset, _, _ in members]
            flavors: dict[str, FlavorAssignment] = {}
            status = FIT_STATUS
            for resource, quantity in requests.items():
                if (resource not in cq.group_of and quantity == 0) or resource in flavors:
                    continue
                found = self.find_flavor_for_podsets(podsets, requests, resource, assignment.usage)
                if found.status.err is not None or not found.assignment:
                    flavors, status = {}, found.status
                    break
                flavors.update(found.assignment)
                if found.status.reasons:
                    status = found.status if status is FIT_STATUS else Status(status.reasons + found.status.reasons)
            failed = False
            for podset, count, member_requests in members:
                psa = PodSetAssignment(podset.name, count, member_requests, status=status)
                if member_requests:
                    psa.flavors = {r: f for r, f in flavors.items() if r in member_requests}
                assignment.add(psa)
                failed = failed or status.err is not None or (bool(member_requests) and not psa.flavors)
            if failed:
                return assignment
        return assignment

    def reword(self, templates: Sequence[tuple[Assignment, Trail]]) -> Optional[tuple[int, Assignment]]:
        """One of `templates` (earlier assignments of this workload's full counts to this ClusterQueue,
        each with the questions `assign` asked to find it) again, its reasons in the words the usage now
        gives them: the first whose every question gets the same mode and borrowing level now; and
        its index. None when none does (then `assign` is needed).
        Which flavors suit the pods is fixed with the workload's shape, so the assigner's path through
        flavors and resources turns only on those answers: with the same answers it finds the same
        flavors, modes and borrowing, and only the amounts its reasons quote can differ. Each question
        is asked once, in the order `assign` asks it."""
        answers: dict[tuple, tuple] = {}
        for index, (previous, trail) in enumerate(templates):
            found = self._reword(previous, trail, answers)
            if found is not None:
                return index, found
        return None

    def _reword(self, previous: Assignment, trail: Trail, answers: dict[tuple, tuple]) -> Optional[Assignment]:
        told = []
        for step in trail:  # the same answers? (keys: a Judged's first four fields, an Asked's three)
            key = step[:4] if type(step) is Judged else step[:3]
            answer = answers.get(key)
            if answer is None:
                answer = answers[key] = self._answer(step)
            if answer[0] is not step.mode or answer[1] != step.borrow:
                return None
            told.append(answer)
        renamed: dict[str, str] = {}  # the reasons' words then and now
        now: Trail = []
        for step, answer in zip(trail, told):
            if type(step) is Judged and step.reason is not None:
                reason = answer[2]
                if renamed.setdefault(step.reason, reason) != reason:
                    return None  # one text then would need two now
                if reason != step.reason:
                    step = tuple.__new__(Judged, (*step[:6], reason))  # (`_replace`, without its Python layers)
            now.append(step)
        self.trail = now
        assignment = Assignment(borrowing=previous.borrowing, usage=dict(previous.usage))
        for ps in previous.podsets:
            status = ps.status
            if status.reasons:
                status = Status(tuple([renamed.get(r, r) for r in status.reasons]), status.err)
            assignment.podsets.append(PodSetAssignment(ps.name, ps.count, ps.requests, ps.flavors, status))
        return assignment

    def _answer(self, step: Judged | Asked) -> tuple:
        """A question of a trail asked again, as `assign` asks it: (mode, borrowing level, reason)."""
        if isinstance(step, Judged):
            return self.fits_resource_quota(step.fr, step.assumed, step.request, step.defer)
        oracle, cq, workload = self.oracle, self.cq, self.workload
        told = oracle.borrowing_after(cq, workload, step.fr, step.quantity,
                                      self._heights.get((step.fr, step.quantity))) if step.alone else None
        if told is not None:
            return P_PREEMPT, told
        return oracle.simulate_preemption(cq, workload, step.fr, step.quantity)

    def _groups(self, counts: Optional[list[int]]):
        """Podsets sharing a podSetGroupName get one flavor together; others go alone."""
        groups: dict[str, list] = {}
        for index, podset in enumerate(self.workload.podsets):
            count = podset.count if counts is None else counts[index]
            requests = podset.total(count)
            if self.cq.covers_pods:
                requests[PODS] = count
            key = podset.group or f"#{index}"
            groups.setdefault(key, []).append((podset, count, requests))
        return groups.values()

    def find_flavor_for_podsets(self, podsets: list[PodSetInfo], requests: dict[str, int], resource: str,
                                assumed: dict[FlavorResource, int]) -> FlavorSearch:
        """Upstream's findFlavorForPodSets: the flavor of `resource`'s group for these podsets
        (and so for every resource of the group they ask for), as flavorFungibility chooses it."""
        cq = self.cq
        group = cq.group_of.get(resource)
        if group is None:
            return FlavorSearch(None, Status((f"resource {resource} unavailable in ClusterQueue",)))
        wanted = [(r, v) for r, v in requests.items() if r in group.covered]
        reasons: list[str] = []
        # Whether preemption could help decides nothing while the search looks on past
        # flavors that need it (whenCanPreempt: TryNextFlavor), and a flavor that fits
        # outranks every one that needs preemption (BorrowingOverPreemption): so the
        # oracle is asked only when its answer can change the outcome (see `_Tried`).
        defer = cq.when_can_preempt == TRY_NEXT_FLAVOR and (
            cq.preference != PREEMPTION_OVER_BORROWING or cq.when_can_borrow == TRY_NEXT_FLAVOR)
        tried: list[_Tried] = []
        chosen: Optional[_Tried] = None
        trail = self.trail
        for flavor_name in group.flavors:
            try:
                mismatch = self.flavors.mismatch(flavor_name, podsets)
            except SelectorError as error:
                return FlavorSearch(None, Status(tuple(reasons), str(error)))
            if mismatch is not None:
                reasons.append(mismatch)
                continue
            flavor = _Tried(flavor_name)
            for name, value in wanted:
                fr = (flavor_name, name)
                before = assumed.get(fr, 0)
                p_mode, borrow, reason = self.fits_resource_quota(fr, before, value, defer)
                trail.append(Judged(fr, before, value, defer, p_mode, borrow, reason))
                if reason is not None:
                    reasons.append(reason)
                if flavor.no_fit:
                    continue  # the rest are still judged, for their reasons
                if p_mode is None:
                    flavor.pending.append((name, fr, assumed.get(fr, 0) + value))
                    flavor.assigned[name] = FlavorAssignment(flavor_name, PREEMPT, 0)
                    continue
                flavor.combine(p_mode, borrow, cq.preference)
                if not flavor.no_fit:
                    flavor.assigned[name] = FlavorAssignment(flavor_name, p_mode.assignment_mode, borrow)
            if flavor.no_fit:
                continue  # never preferred, and the search always looks on
            if flavor.pending:
                # With `defer`, the search looks on whatever the oracle says (a flavor that
                # needs preemption is never a reason to stop here).
                tried.append(flavor)
                continue
            if not should_try_next_flavor(flavor.mode, cq.when_can_preempt, cq.when_can_borrow):
                chosen = flavor
                break
            tried.append(flavor)
        if chosen is None:
            chosen = self._preferred(tried)
        if chosen is None:
            return FlavorSearch(None, Status(tuple(reasons)))
        self._resolve(chosen)
        if chosen.mode.preemption_mode == P_FIT:
            return FlavorSearch(chosen.assigned, FIT_STATUS)
        return FlavorSearch(chosen.assigned, Status(tuple(reasons)))

    def _preferred(self, tried: list["_Tried"]) -> Optional["_Tried"]:
        """The first of the best flavors, as upstream's running `isPreferred` finds it."""
        preference = self.cq.preference
        if preference != PREEMPTION_OVER_BORROWING:
            fitting = [t for t in tried if not t.pending and t.mode.preemption_mode == P_FIT]
            if fitting:  # a fit outranks any flavor that needs preemption, whatever the oracle says
                return min(fitting, key=lambda t: t.mode.borrowing_level)  # the first of the least borrowing
        best, best_mode = None, WORST
        alone = len(tried) == 1  # no rival: whatever its mode (never NoFit here), it is chosen
        for flavor in tried:
            self._resolve(flavor, alone)
            if is_preferred(flavor.mode, best_mode, preference):
                best, best_mode = flavor, flavor.mode
        return best

    def _resolve(self, flavor: "_Tried", alone: bool = False) -> None:
        """Ask the oracle what was left pending, in the order upstream would have asked. Of a flavor
        chosen `alone` (no other flavor to rank it against), all that is read of the oracle's answer
        is the borrowing level it records (the mode is a preemption mode whatever it is, and PREEMPT
        stands for it): when the oracle can tell that level without its search, it is not searched."""
        oracle = self.oracle
        for name, fr, value in flavor.pending:
            borrow = oracle.borrowing_after(self.cq, self.workload, fr, value,
                                            self._heights.get((fr, value))) if alone else None
            if borrow is not None:
                possibility, borrow_after = P_PREEMPT, borrow
            else:
                possibility, borrow_after = oracle.simulate_preemption(self.cq, self.workload, fr, value)
            self.trail.append(Asked(fr, value, alone, possibility, borrow_after))
            flavor.combine(possibility, borrow_after, self.cq.preference)
            flavor.assigned[name].borrow = borrow_after
        flavor.pending = []

    def fits_resource_quota(self, fr: FlavorResource, assumed: int, request: int,
                            defer: bool = False) -> tuple[Optional[PreemptionMode], int, Optional[str]]:
        """Upstream's fitsResourceQuota; with `defer`, a mode of None stands for the
        preemption oracle's answer, to be asked only if it matters."""
        cq = self.cq
        node = cq.node
        flavor, resource = fr
        value = assumed + request
        maximum = node.potential.get(fr)
        if maximum is None:
            maximum = potential_available(node, fr)
        if value > maximum:
            return P_NO_FIT, 0, (
                f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets "
                f"requests ({format_amount(resource, assumed)}) + current podset request "
                f"({format_amount(resource, request)}) > maximum capacity ({format_amount(resource, maximum)})")
        borrow, may_reclaim = borrowing_height(node, fr, value)
        free = available(node, fr)
        if value <= free:
            return P_FIT, borrow, None
        reason = _SHORT.get((fr, value - free))
        if reason is None:
            if len(_SHORT) >= _SHORT_LIMIT:
                _SHORT.clear()
            reason = _SHORT[fr, value - free] = (f"insufficient unused quota for {resource} in flavor {flavor}, "
                                                 f"{format_amount(resource, value - free)} more needed")
        if node.nominal(fr) >= value or may_reclaim or self.can_preempt_while_borrowing():
            if defer:
                self._heights[fr, value] = borrow
                return None, 0, reason
            possibility, borrow_after = self.oracle.simulate_preemption(cq, self.workload, fr, value)
            return possibility, borrow_after, reason
        return P_NO_FIT, borrow, reason

    def can_preempt_while_borrowing(self) -> bool:
        cq = self.cq
        return (cq.borrow_within_cohort not in (None, "Never")
                or (self.fair_sharing and cq.reclaim_within_cohort != "Never"))
