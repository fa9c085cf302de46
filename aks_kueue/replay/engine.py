"""The replay: a discrete-event simulation of Kueue v0.19.2's queue manager and scheduler, in
virtual time, over the admission core.

Events (`events`: a heap ordered by time, then kind, then the order they were made): a submission,
a workload's end, a node becoming Ready, an empty node's scale-down, a requeue backoff expiring, the
requeue of inadmissible workloads, a waitForPodsReady timeout, a ProvisioningRequest's nodes being
Ready. After each instant's events, scheduling runs cycle after cycle until a cycle changes
nothing, as `pkg/scheduler/scheduler.go` does, one method per step of it:

1. `heads`: one per ClusterQueue with pending work (`pkg/cache/queue/manager.go` `heads`), the
   queue ordered by priority, then queue-order timestamp (creation; eviction time after a
   waitForPodsReady eviction, as `requeuingStrategy.timestamp: Eviction` says), then trace order
   standing for the UID (`cluster_queue.go` `baseCompareFunc`); a BestEffortFIFO preemptor waiting
   for its targets stays first ("sticky"); with admission fair sharing the least used LocalQueue's
   workloads come first (`queueOrderingFunc`), its usage advanced in virtual time by the core;
2. `nominate`: each head's decision from the admission core (`Snapshot.assign`: flavors, borrowing,
   preemption targets, partial admission), all against the state at the start of the cycle;
3. `iterator` (`makeIterator`, from the core): classical (`makeClassicalIterator`), no borrowing
   before borrowing, then higher priority, then the earlier timestamp; with fair sharing the core's
   `FairSharingIterator` (Kueue's tournament by dominant resource share, run again as each entry is
   taken, so that it sees what the entries before it added);
4. `process_entry`: NoFit is requeued; Preempt without candidates reserves quota for the rest of the
   cycle unless the queue can always reclaim (`reserveCapacityForUnreclaimablePreempt`,
   `quotaResourcesToReserve`); Preempt with targets is skipped when its targets overlap an earlier
   entry's or it no longer fits, else its usage is reserved for the cycle and its targets are evicted
   when the cycle ends; Fit is re-checked against the usage of the entries admitted before it
   (`fits`, with this cycle's preemption targets taken out) and admitted;
5. `requeue_and_update` (`RequeueIfNotPresent`): StrictFIFO puts every head back (it blocks its
   queue); BestEffortFIFO puts back only what was skipped or is waiting for its preemptions, and parks
   the rest in the inadmissible list, with every queued workload of the same shape and priority
   (scheduling-equivalence hashing, `handleInadmissibleHash`), where new submissions of that shape
   go too until the next requeue.
Inadmissible workloads are retried when capacity is freed in their cohort tree (a workload ends or
is evicted), one second later, batched per root cohort as Kueue's requeuer does
(`inadmissible_workloads.go`, `requeueBatchPeriod`); a new submission does not retry them.

With a cycle time (`pace`, `--cycle-time`) a cycle takes time: `_paced_cycle` decides its heads at its
start, reserving their quota in the core (`_assume`) so the entries after them see it, and what it
decided takes effect at its end (`CycleEnd`: `_quota_reserved`, then its preemption targets evicted),
where the next cycle starts; events in between wait for it. Without one, an instant's cycles run at
that instant until one changes nothing.

Every workload still waiting at the end carries a reason (`_explain_waiting`): its own last attempt's
(Kueue's words, from the admission core or `processEntry`), or, for one never evaluated, Kueue's
bypassed-equivalent or pending-evaluation message, after the eviction that sent it back if one did.

Usage changes only through the admission core (`Snapshot.admit`, `remove_workload`, `reserve`),
the one judge of "fits". A preempted workload goes back to its queue with its creation time and,
readmitted, runs its whole runtime again. With node pools (`nodes`), a workload starts when all
its pods are placed; one admitted but not started within waitForPodsReady's timeout is evicted and
requeued after a backoff (Kueue's: the base doubling up to the maximum, no jitter). A
ProvisioningRequest check admits once the booked nodes are Ready; quota is reserved meanwhile.

Spot pools (`spot`): Azure takes a node back at the instant the spot model draws for it. Its pods
are lost; a workload that was running stays admitted, as Kueue keeps it, and waits for its pods to
be placed again (new nodes through the autoscaler), then runs its whole runtime again (no
checkpoint), each interruption counted (`Run.interruptions`). Its PodsReady condition is False
meanwhile, so waitForPodsReady's `recoveryTimeout` (by default the timeout) evicts and requeues it
if they are not all placed again in time (`pkg/controller/core/workload_controller.go`,
`admittedNotReadyWorkload`, reason `WaitForRecovery`). The work a preemption or an interruption
cuts short is counted per workload and resource (`Run.rerun`; the report sums it per ClusterQueue).

Every loop ends by construction:
- a workload whose pods can never be placed, whatever flavors its ClusterQueue gives them and
  however many nodes the pools add (`NodeModel.never_placeable`), is admitted once, as Kueue
  admits it; at its waitForPodsReady timeout it is taken out and reported (`State.UNPLACEABLE`),
  where Kueue would evict and requeue it forever;
- a workload admitted (or interrupted on spot nodes) `MAX_ADMISSIONS` times without finishing (a
  configuration that makes it cycle through preemptions or evictions, or a runtime much longer than
  a spot node lives) is taken out and named, with its ClusterQueue and the
  cause of its last eviction (`State.ABANDONED`);
- a waitForPodsReady `backoffLimitCount` deactivates a workload as Kueue does (`State.DEACTIVATED`);
- an instant runs at most `max_cycles_per_instant` scheduling cycles, and the replay ends when
  nothing can change a workload any more (`_over`).
So a replay makes at most a bounded number of events per workload (see `event_bound`).

Ties that Kueue breaks by UID follow the trace's order, so the same input gives the same output.
"""

from __future__ import annotations

import heapq
from array import array
from dataclasses import dataclass, field, replace
from enum import Enum
from itertools import islice
from types import MappingProxyType
from typing import Any, Callable, ClassVar, Iterator, Mapping, NamedTuple, Optional

from aks_kueue.admission.fair_sharing import ShareSeries
from aks_kueue.admission.fair_sharing_iterator import Entry as CycleEntry
from aks_kueue.admission.fair_sharing_iterator import make_iterator
from aks_kueue.admission.modes import FlavorAssignmentMode
from aks_kueue.admission.snapshot import Decision, Snapshot
from aks_kueue.admission.workloads import PodSetInfo, WorkloadInfo
from aks_kueue.aks.autoscaler import SCALE_UP_CLASSES
from aks_kueue.kueue.admission_checks import PROVISIONING_CONTROLLER
from aks_kueue.kueue.views import AdmissionCheck, ClusterQueue, PodSet, ProvisioningRequestConfig, views_of
from aks_kueue.replay.cohorts import CohortUsage
from aks_kueue.replay.config import ReplayConfig
from aks_kueue.replay.events import EventKind, EventQueue
from aks_kueue.replay.nodes import BookedReady, Node, NodeEvicted, NodeModel, NodeReady, PodGroup, ScaleDown
from aks_kueue.replay.pace import Pace
from aks_kueue.replay.trace import Trace, TraceWorkload

FIT, PREEMPT, NO_FIT = FlavorAssignmentMode.FIT, FlavorAssignmentMode.PREEMPT, FlavorAssignmentMode.NO_FIT
# Kueue's inadmissible-workload requeuer batches the requests of one cohort tree for this long.
REQUEUE_BATCH = 1.0
STRICT = "StrictFIFO"
# A workload admitted this many times without finishing is taken out of the replay. Kueue itself
# sets no such bound; the replay needs one to end. A month of waitForPodsReady evictions at
# Kueue's default backoff (30 min timeout, then up to an hour) is about 480 admissions.
MAX_ADMISSIONS = 1000
# Events besides its submission one admission of a workload can cause: its end or its timeout, a
# backoff, a requeue of its cohort tree, its ProvisioningRequest; per pod, a node made Ready and
# removed again (`event_bound`).
EVENTS_PER_ADMISSION = 4
EVENTS_PER_POD = 2
# A spot interruption: the run's new end and its recovery timeout. On a spot pool a node's eviction is
# one more event per node, and a pod an eviction took makes as many events as a pod admitted.
EVENTS_PER_INTERRUPTION = 2
# A trace workload has no Workload manifest: one empty, read-only map stands for it in each (not one each).
NO_MANIFEST: Mapping[str, Any] = MappingProxyType({})
INFINITY = float("inf")
# Workloads a note names one by one before it says how many more.
NAMED_IN_NOTES = 5
# Kueue's words for a workload that is not admitted (`pkg/scheduler/scheduler.go` `processEntry`, and the
# workload controller's QuotaReserved messages), and the replay's where Kueue writes none.
OVERLAPPING = "Workload has overlapping preemption targets with another workload"
NO_LONGER_FITS = "Workload no longer fits after processing another workload"
BYPASSED = "Bypassed scheduling evaluation because an equivalent workload recently failed"
PENDING_EVALUATION = "Workload is pending evaluation in the scheduling queue"
BLOCKED_ADMISSION = "waiting for all admitted workloads to be in PodsReady condition"   # waitForPodsReadyIfNeeded


class State(Enum):
    """Where a workload is."""

    PENDING = "pending"                 # in its queue: the heap, the inadmissible list, or backing off
    PARKED = "parked"                   # Kueue never considers it here (no such LocalQueue, an inactive queue,
                                        # a WorkloadPriorityClass this configuration lacks)
    RESERVED = "quota reserved"         # waiting for its ProvisioningRequest check
    ADMITTED = "admitted"               # its pods not all placed yet
    RUNNING = "running"
    FINISHED = "finished"
    DEACTIVATED = "deactivated"         # waitForPodsReady's backoffLimitCount was reached
    UNPLACEABLE = "unplaceable"         # its pods can never be placed: left out after its first eviction
    ABANDONED = "abandoned"             # admitted MAX_ADMISSIONS times without finishing


# Still waiting at the end: a wait to admission or to start is cut there (a lower bound).
WAITING = frozenset({State.PENDING, State.RESERVED, State.PARKED, State.UNPLACEABLE, State.ABANDONED})
# Holding quota.
HOLDING = frozenset({State.RESERVED, State.ADMITTED, State.RUNNING})


class Held(Enum):
    """Where a pending workload is held."""

    NOWHERE = "nowhere"
    QUEUED = "queued"               # its class in the heap, or in the inadmissible list
    BACKING_OFF = "backing off"     # after a waitForPodsReady eviction
    INFLIGHT = "in flight"          # popped as a head, in this cycle


class Status(Enum):
    """What a cycle did with an entry (Kueue's entry status)."""

    INADMISSIBLE = "inadmissible"   # NoFit, or Preempt with nothing to preempt: to the inadmissible list
    PREEMPTING = "preempting"       # its targets are evicted at the end of the cycle; it waits at the head
    SKIPPED = "skipped"             # its targets overlap an earlier entry's, or it no longer fits
    ASSUMED = "assumed"             # quota reserved


class Eviction(Enum):
    PREEMPTED = "preempted"
    PODS_READY_TIMEOUT = "waitForPodsReady timeout"


@dataclass
class Progress:
    """How far a replay is, for a progress line."""

    now: float              # virtual time
    events: int             # events done
    queued: int             # events queued (submissions not yet reached included)
    submitted: int          # workloads submitted so far
    finished: int           # workloads finished so far
    workloads: int          # workloads in the trace


@dataclass
class ReplayOptions:
    until: Optional[float] = None
    # The report's window opens here (`--from`): everything before is replayed as warm-up.
    since: float = 0.0
    # Called every `progress_every` events, and once at the end.
    progress: Optional[Callable[[Progress], None]] = None
    progress_every: int = 1024
    # Called after each instant has settled with (virtual time, the snapshot, the node model), for
    # checks that look at the state between instants (the property tests).
    observe: Optional[Callable[[float, Snapshot, Optional[NodeModel]], None]] = None
    # Keep each ClusterQueue's usage over time (the picture draws it; a JSON report needs only its integrals).
    series: bool = True
    max_cycles_per_instant: int = 1_000_000


class Run:
    """One trace workload in one configuration. Its admission core view (`info`) exists while it is
    queued or holds quota; what the report needs stays after it ends."""

    __slots__ = ("trace", "priority", "cls", "info", "key", "ts", "cq", "queue", "state", "held", "admitted",
                 "started", "finished", "ever_admitted", "ever_started", "preemptions", "evictions", "admissions",
                 "epoch", "flavors", "counts", "reason", "groups", "decision", "last_eviction", "rerun",
                 "interruptions", "recovering")

    def __init__(self, trace: TraceWorkload, priority: int, cls: tuple):
        self.trace = trace
        self.priority = priority
        self.cls = cls                  # scheduling equivalence: shape and priority (one tuple per class)
        self.info: Optional[WorkloadInfo] = None
        self.key: tuple = ()            # queue order while queued: -priority, timestamp, trace order
        self.ts = trace.submitted       # the queue-order timestamp: submission, or the last eviction
        self.cq: Optional[str] = None
        self.queue: Optional[QueueState] = None
        self.state = State.PENDING
        self.held = Held.NOWHERE
        self.admitted: Optional[float] = None
        self.started: Optional[float] = None
        self.finished: Optional[float] = None
        self.ever_admitted = False
        self.ever_started = False
        self.preemptions = 0
        self.evictions = 0              # by waitForPodsReady, each one a requeue (Kueue's requeueState.count)
        self.admissions = 0             # quota reservations
        self.epoch = 0
        self.flavors: Optional[dict[str, dict[str, str]]] = None   # per pod set, of its last admission
        self.counts: Optional[dict[str, int]] = None   # pods per pod set of its last admission (partial)
        self.reason: Optional[str] = None
        self.groups: list[PodGroup] = []
        self.decision: Optional[Decision] = None
        self.last_eviction: Optional[str] = None   # why it was last evicted, for a workload taken out
        self.rerun: Optional[dict[str, float]] = None   # per resource, amount x seconds of runs cut short
        self.interruptions = 0          # runs cut short by a spot node's eviction
        self.recovering = False         # its pods were lost to a spot eviction and are not all placed again

    @property
    def name(self) -> str:
        return f"{self.trace.namespace}/{self.trace.name}"


# The events made for every workload (its submission, its end, a requeue after it) are not frozen: a
# frozen dataclass sets each field through object.__setattr__, which tripled the cost of making one.
# Nothing changes an event once it is made.


@dataclass(slots=True)
class Submit:
    kind: ClassVar[EventKind] = EventKind.SUBMIT
    run: Run


@dataclass(slots=True)
class _OfAnAdmission:
    """An event about one admission (`epoch`) of a run: stale once the run was admitted or released again."""
    run: Run
    epoch: int


class Finish(_OfAnAdmission):
    """The run ends."""
    __slots__ = ()
    kind: ClassVar[EventKind] = EventKind.FINISH


class Timeout(_OfAnAdmission):
    """waitForPodsReady's timeout."""
    __slots__ = ()
    kind: ClassVar[EventKind] = EventKind.TIMEOUT


class Backoff(_OfAnAdmission):
    """The requeue backoff after a waitForPodsReady eviction ends: back into its queue."""
    __slots__ = ()
    kind: ClassVar[EventKind] = EventKind.BACKOFF


@dataclass(slots=True)
class Requeue:
    """The inadmissible workloads of a cohort tree (by its root's name, or a lone ClusterQueue's) go back."""
    kind: ClassVar[EventKind] = EventKind.REQUEUE
    root: str


@dataclass(frozen=True, slots=True)
class CycleEnd:
    """A paced scheduling cycle ends: its admissions and preemptions take effect (`pace`)."""
    kind: ClassVar[EventKind] = EventKind.CYCLE_END
    cycle: "Cycle"


@dataclass(frozen=True, slots=True)
class CycleStart:
    """The scheduler, spinning on cycles that changed nothing, starts its next cycle (`pace`)."""
    kind: ClassVar[EventKind] = EventKind.CYCLE_START


@dataclass(eq=False, slots=True)
class Group:
    """The queued workloads of one ClusterQueue that share a scheduling-equivalence hash (shape and
    priority): in the heap, or all of them in the inadmissible list. Kueue moves such workloads
    together (`handleInadmissibleHash`, and `queueInadmissibleWorkloads` moves every one back), so
    here they move as one: a requeue or a bulk move costs one step per class, not per workload."""

    hash: tuple
    in_heap: bool
    items: list[tuple[tuple, Run]] = field(default_factory=list)   # a heap by queue order; keys are unique
    version: int = 0
    reason: Optional[str] = None    # why its workload found inadmissible was (those moved with it are bypassed)
    announced: bool = False         # in its queue's `announced`, to be put in the heap at the next pop


class Route(NamedTuple):
    """Where the submissions to one LocalQueue go: their ClusterQueue (None when there is none), and why
    Kueue never considers them (parked, with this reason) when it does not."""

    cq: Optional[str]
    refused: Optional[str]


class QueueState:
    """One ClusterQueue's pending workloads: classes in the heap or inadmissible, the sticky preemptor,
    and how many were pending over time (`times`, `values`: a step function)."""

    def __init__(self, name: str, strategy: str):
        self.name = name
        self.strict = strategy == STRICT
        self.groups: dict[tuple, Group] = {}
        self.spare: Optional[Group] = None   # the group dropped last, empty (`_drop`)
        self.top: list[tuple[tuple, int, Group]] = []   # (first key, version, group) of the classes in the heap
        # Classes whose first key or place changed since the last pop: put in `top` at the next pop, as
        # they are then (most are parked again or go back before it, and need no heap entry meanwhile).
        self.announced: list[Group] = []
        self.live = 0                        # workloads in the heap, sticky included
        self.bulk: set[tuple] = set()        # classes found inadmissible since the last requeue
        self.sticky: Optional[Run] = None
        self.sticky_waiting = False          # the sticky preemptor is queued at the head
        # Admission fair sharing: a head's LocalQueue usage, which orders the queue before its key.
        self.usage: Optional[Callable[[Run], float]] = None
        self.pending = 0
        self.times = array("d", [0.0])
        self.values = array("q", [0])

    @property
    def series(self) -> list[tuple[float, int]]:
        return list(zip(self.times, self.values))

    def _group(self, hash_: tuple, in_heap: bool) -> Group:
        group = self.groups.get(hash_)
        if group is None:
            spare = self.spare
            if spare is not None and spare.hash == hash_:
                # The class's own group, emptied and dropped last: used again (a queue that never fills
                # empties its class at every admission). Its version goes on, so its old heap entries stay stale.
                self.spare, group = None, spare
                group.in_heap, group.reason = in_heap, None
                self.groups[hash_] = group
            else:
                group = self.groups[hash_] = Group(hash_, in_heap)
        return group

    def _drop(self, group: Group) -> None:
        """An emptied class's group goes (it is kept as `spare` for the next workload of its class)."""
        if self.groups.get(group.hash) is group:
            del self.groups[group.hash]
            self.spare = group

    def _announce(self, group: Group) -> None:
        group.version += 1  # its entries in `top` are stale
        if self.usage is not None:
            return  # heads are found by a scan (`_pop_by_usage`)
        if not group.announced:
            group.announced = True
            self.announced.append(group)

    def _enter_announced(self) -> None:
        """The classes announced since the last pop into `top`, those still in the heap."""
        top = self.top
        for group in self.announced:
            group.announced = False
            if group.in_heap and group.items:
                heapq.heappush(top, (group.items[0][0], group.version, group))
        self.announced.clear()
        if len(top) > 2 * len(self.groups) + 64:
            self.top = [(g.items[0][0], g.version, g) for g in self.groups.values() if g.in_heap and g.items]
            heapq.heapify(self.top)

    def push(self, run: Run) -> None:
        """Into the heap (Kueue's pushOrUpdateHeap)."""
        run.held = Held.QUEUED
        self.live += 1
        if run is self.sticky:
            self.sticky_waiting = True
            return
        group = self._group(run.cls, True)
        first = not group.items or run.key < group.items[0][0]
        heapq.heappush(group.items, (run.key, run))
        if not group.in_heap:
            # Only a workload the queue must retry now comes here while its class is parked
            # (one skipped in the cycle): the class goes back with it, as Kueue would move it.
            group.in_heap = True
            self.live += len(group.items) - 1
            self._announce(group)
        elif first:
            self._announce(group)

    def park(self, run: Run) -> None:
        """Into the inadmissible list, with its class."""
        group = self._group(run.cls, False)
        heapq.heappush(group.items, (run.key, run))
        run.held = Held.QUEUED
        if group.in_heap:  # its class went back to the heap since (a skipped one took it along)
            self.live += 1
            if group.items[0][1] is run:
                self._announce(group)

    def pop(self) -> Optional[Run]:
        if self.usage is not None:
            return self._pop_by_usage()
        if self.sticky_waiting and self.sticky is not None and self.sticky.held is Held.QUEUED:
            self.sticky_waiting = False
            run = self.sticky
            run.held = Held.INFLIGHT
            self.live -= 1
            return run
        self.sticky_waiting = False
        if self.announced:
            self._enter_announced()
        top = self.top
        while top:
            key, version, group = heapq.heappop(top)
            if not group.in_heap or group.version != version or not group.items:
                continue
            _, run = heapq.heappop(group.items)
            self.live -= 1
            run.held = Held.INFLIGHT
            if group.items:
                self._announce(group)
            else:
                self._drop(group)
            return run
        return None

    def _pop_by_usage(self) -> Optional[Run]:
        """With admission fair sharing usages move with time, so the head is found by a scan: the
        least used LocalQueue's first workload (Kueue's queueOrderingFunc; the sticky preemptor
        wins only among equal usages). Classes hold one LocalQueue each here (see `_runs`)."""
        usage = self.usage
        assert usage is not None  # `pop` comes here only with admission fair sharing
        candidates: list[tuple[float, int, tuple, Optional[Group]]] = [
            (usage(g.items[0][1]), 1, g.items[0][0], g) for g in self.groups.values() if g.in_heap and g.items]
        sticky = self.sticky
        if self.sticky_waiting and sticky is not None and sticky.held is Held.QUEUED:
            candidates.append((usage(sticky), 0, sticky.key, None))
        if not candidates:
            self.sticky_waiting = False
            return None
        _, _, _, group = min(candidates, key=lambda c: c[:3])
        if group is None:
            assert sticky is not None  # its candidate was added above
            self.sticky_waiting = False
            run = sticky
        else:
            _, run = heapq.heappop(group.items)
            if not group.items:
                self._drop(group)
        self.live -= 1
        run.held = Held.INFLIGHT
        return run

    def bulk_move(self, hash_: tuple, reason: Optional[str] = None) -> None:
        """Every queued workload equivalent to one found inadmissible (for `reason`) goes to the
        inadmissible list."""
        self.bulk.add(hash_)
        group = self.groups.get(hash_)
        if group is not None:
            group.reason = reason
        if group is not None and group.in_heap:
            group.in_heap = False
            group.version += 1
            self.live -= len(group.items)

    def requeue(self) -> bool:
        """Every inadmissible class back to the heap (`queueInadmissibleWorkloads`); whether any moved."""
        self.bulk.clear()
        moved = False
        for group in self.groups.values():
            if not group.in_heap and group.items:
                group.in_heap = True
                self.live += len(group.items)
                self._announce(group)
                moved = True
        return moved

    def set_sticky(self, run: Run) -> None:
        """The preemptor waiting for its targets stays at the head (BestEffortFIFO)."""
        old = self.sticky
        if old is run:
            return
        self.sticky = run
        if old is not None and old.held is Held.QUEUED and self.sticky_waiting:
            # It was held at the head; it goes back among the others, in its own place.
            self.sticky_waiting = False
            self.live -= 1
            self.push(old)

    def count(self, now: float, delta: int) -> None:
        self.pending += delta
        if self.times[-1] == now:
            self.values[-1] = self.pending
        else:
            self.times.append(now)
            self.values.append(self.pending)


@dataclass(slots=True)
class Meter:
    """Usage of one ClusterQueue on one flavor-resource over time (a step function, `times` and
    `values`, and its integrals)."""

    nominal: int
    current: int = 0
    last: float = 0.0
    used: float = 0.0       # integral of usage
    borrowed: float = 0.0   # integral of usage above nominal
    base: tuple[float, float] = (0.0, 0.0)   # the integrals when the report's window opened
    times: Optional[array] = None            # the steps, when recorded for a picture (`ReplayOptions.series`)
    values: Optional[array] = None

    def change(self, now: float, delta: int) -> None:
        span, current = now - self.last, self.current
        if span > 0:
            self.used += current * span
            if current > self.nominal:  # else nothing is borrowed: the integral stays as it is
                self.borrowed += (current - self.nominal) * span
        self.last = now
        self.current = current + delta
        times, values = self.times, self.values
        if delta and times is not None and values is not None:
            if times[-1] == now:
                values[-1] = self.current
            else:
                times.append(now)
                values.append(self.current)

    def record(self) -> "Meter":
        """Keep the steps from here on (for the picture)."""
        self.times, self.values = array("d", [self.last]), array("q", [self.current])
        return self

    def opened(self, now: float) -> None:
        """The report's window opens: what is used from here on is the window's."""
        self.change(now, 0)
        self.base = (self.used, self.borrowed)


@dataclass(slots=True)
class Entry:
    """One head in one cycle: its decision, and what the cycle did with it."""

    run: Run
    decision: Decision
    status: Optional[Status] = None
    preemptor: bool = False         # its queue's preemptor waiting for its targets (Kueue's IsPreemptor)


@dataclass(slots=True)
class Cycle:
    """What one scheduling cycle holds until it ends: the preemption targets so far (by uid, in order)
    and the quota reserved for the rest of it."""

    preempted: dict[str, WorkloadInfo] = field(default_factory=dict)
    preemptors: dict[str, str] = field(default_factory=dict)   # per target's uid, who preempts it and why
    reserved: list[tuple[str, dict]] = field(default_factory=list)
    changed: bool = False
    assumed: list[Run] = field(default_factory=list)   # paced: admitted when the cycle ends, in order


class PoolAtSince(NamedTuple):
    """A pool's integrals when the report's window opens (`--from`): warm-up, taken off its figures."""

    node_seconds: float
    capacity_seconds: float
    allocated_seconds: float
    at_max_seconds: float
    spot_evictions: int
    held: dict[str, float]      # per ClusterQueue, the main resource its pods held (`NodePool.queue_seconds`)


@dataclass
class ReplayOutcome:
    config: ReplayConfig
    runs: list[Run]
    queues: dict[str, QueueState]
    meters: dict[str, dict[tuple[str, str], Meter]]
    nodes: Optional[NodeModel]
    end: float
    events: int
    cycles: int
    decisions: int
    snapshot: Snapshot
    notes: list[str] = field(default_factory=list)
    shares: Optional[ShareSeries] = None    # each ClusterQueue's share over time, with fair sharing on
    since: float = 0.0      # the report's window: from `since` to `end` (history before it is warm-up)
    cohorts: Optional[CohortUsage] = None           # Cohorts with quota of their own
    steps: int = 0          # admissions, preemptions begun and heads parked by the cycles (`event_bound`)
    pools_at_since: dict[str, "PoolAtSince"] = field(default_factory=dict)   # per pool, its warm-up


def replay(config: ReplayConfig, trace: Trace, options: Optional[ReplayOptions] = None) -> ReplayOutcome:
    return _Replay(config, trace, options or ReplayOptions()).run()


def event_bound(outcome: ReplayOutcome) -> int:
    """The most events a replay can make for what it did: a submission per workload, and per
    admission `EVENTS_PER_ADMISSION` plus `EVENTS_PER_POD` per pod, plus a node Ready and removed
    per node the pools start with. With spot pools, a node's eviction is one more per pod, each pod
    an eviction took as many again (its new node), and each interruption `EVENTS_PER_INTERRUPTION`.
    With at most `MAX_ADMISSIONS` admissions and interruptions a workload, this bounds every replay
    by its trace and its evictions; a workload whose pods nodes keep being taken from before it
    starts is bounded in time by its waitForPodsReady timeout, or by the replay's end when nothing
    progresses (`_Replay._over`). With a cycle time (`pace`), each of those events may start one
    paced cycle (`CycleStart`), and each cycle that changed something (an admission, a preemption
    begun, a head moved to the inadmissible list: `steps`) ends with a `CycleEnd`."""
    spot = outcome.nodes is not None and any(pool.spot for pool in outcome.nodes.pools)
    per_pod = EVENTS_PER_POD + spot
    bound = len(outcome.runs)
    for run in outcome.runs:
        pods = sum(max(0, int(ps.get("count", 1))) for ps in run.trace.shape.pod_sets)
        bound += run.admissions * (EVENTS_PER_ADMISSION + per_pod * pods) + run.interruptions * EVENTS_PER_INTERRUPTION
    if outcome.nodes is not None:
        bound += per_pod * sum(pool.min_count + pool.lost for pool in outcome.nodes.pools)
    if outcome.config.cycle.seconds:
        bound = 2 * bound + outcome.steps
    return bound


class _Replay:
    def __init__(self, config: ReplayConfig, trace: Trace, options: ReplayOptions):
        self.config = config
        self.trace = trace
        self.options = options
        self.snapshot = Snapshot.from_objects(config.objects, config.resource_rules, config.scheduler)
        self.shares = ShareSeries(self.snapshot.tree.cluster_queues) if self.snapshot.fair_sharing else None
        self.share_changes: set[str] = set()   # ClusterQueues whose usage changed in this instant
        self.pods_ready = config.pods_ready
        # waitForPodsReady's blockAdmission holds admissions while admitted pods are not all placed (with nodes).
        self.block_admission = bool(config.pods_ready.enabled and config.pods_ready.block_admission
                                    and config.pools is not None)
        self.pace = Pace(config.cycle.seconds)
        self.done = 0
        self.cycles = 0
        self.decisions = 0
        self.steps = 0           # cycle steps that change something: admissions, preemptions begun, heads parked
        self.submitted = 0
        self.finished = 0
        self.last_change = 0.0
        self.last_progress = 0.0      # the last submission, start or end
        self.requeue_at: dict[str, float] = {}
        self.unready = 0        # admitted, not yet started (blockAdmission waits on them)
        self.notes: list[str] = []
        self.unplaceable: list[Run] = []
        self.abandoned: list[Run] = []
        self._assignments: dict[tuple, tuple[dict, dict]] = {}
        self._by_decision: dict[int, tuple[Decision, tuple[dict, dict]]] = {}
        self._trees: dict[str, list[str]] = {}  # the ClusterQueues of a cohort tree, by its root
        self._roots: dict[str, str] = {}         # a ClusterQueue's root cohort (or itself)
        self._podsets: dict[int, tuple[list[PodSetInfo], tuple]] = {}   # per Shape, what the core reads
        self._never: dict[tuple, Optional[str]] = {}   # per ClusterQueue, shape and pod set: never placeable?
        self.queues: dict[str, QueueState] = {}
        self.meters: dict[str, dict[tuple[str, str], Meter]] = {}
        for name, cq in sorted(self.snapshot.cluster_queues.items()):
            self.queues[name] = QueueState(name, cq.queue.queueing_strategy)
            if self.snapshot.uses_admission_fair_sharing(name):
                self.queues[name].usage = self._local_queue_usage
            quotas = self.snapshot.tree.cluster_queues[name].quotas
            self.meters[name] = {fr: self._meter_of(q.nominal) for fr, q in quotas.items()}
        self.ready_queues: set[str] = set()
        self.cohorts = CohortUsage.of(self.snapshot.tree)
        self.since = options.since
        self.window_open = False
        self.pools_at_since: dict[str, PoolAtSince] = {}
        self.checks = _provisioning_checks(config.objects, self.snapshot)
        self._handlers = self._event_handlers()
        self._routes: dict[tuple[str, str], Route] = {}   # per LocalQueue submitted to (namespace, name)
        self.runs = self._runs()
        # In time order, and trace order within an instant (the sort is stable); a trace is most often in
        # time order already.
        times = array("d", [round(r.trace.submitted, 6) for r in self.runs])
        order = self.runs
        if any(later < earlier for earlier, later in zip(times, islice(times, 1, None))):
            ranked = sorted(range(len(times)), key=times.__getitem__)
            order, times = [self.runs[i] for i in ranked], array("d", [times[i] for i in ranked])
        self.events = EventQueue(times, order, Submit, in_order=Requeue)  # a requeue is made REQUEUE_BATCH after now
        startups = [config.startup(p)[0] for p in config.pools or []]
        self.nodes = None if config.pools is None else NodeModel(
            config.pools, startups, config.scale_down_delay, self.events.push, spot=config.spot,
            by_queue=config.prices is not None)
        ready = self.pods_ready
        # One waitForPodsReady cycle of a workload that never starts, with room to spare.
        self.horizon = (ready.timeout + ready.backoff_cap if ready.enabled else 0.0) + max(startups, default=0.0) \
            + 4 * REQUEUE_BATCH

    # Building ----------------------------------------------------------------------------------

    def _runs(self) -> list[Run]:
        """Each trace workload in this configuration: its priority (a WorkloadPriorityClass resolved
        here; one this configuration lacks is refused at submission) and its class."""
        priority_classes = self.snapshot.priority_classes
        classes: dict[tuple, tuple] = {}
        runs = []
        for workload in self.trace.workloads:
            if workload.priority_class is not None and workload.priority_class in priority_classes:
                priority = priority_classes[workload.priority_class]
            else:
                priority = workload.priority or 0
            # With admission fair sharing a class is also one LocalQueue's: their usages order them.
            hash_ = (id(workload.shape), priority) if self.snapshot.afs is None else (
                id(workload.shape), priority, workload.namespace, workload.queue)
            runs.append(Run(workload, priority, classes.setdefault(hash_, hash_)))
        return runs

    def _info(self, run: Run) -> WorkloadInfo:
        """The run as the admission core sees it. The pod sets of one shape are computed once, by the
        core's own function (`podset_info`), with the Configuration's resource exclusions and
        transformations."""
        shape = run.trace.shape
        known = self._podsets.get(id(shape))
        if known is None:
            pod_sets = [PodSet.of(ps) for ps in shape.pod_sets]
            if not self.config.partial_admission:
                pod_sets = [replace(ps, min_count=None) for ps in pod_sets]
            podsets = self.snapshot.podset_infos(pod_sets)
            known = self._podsets[id(shape)] = (podsets, WorkloadInfo("", "", "", 0, podsets).shape)
        workload = run.trace
        return WorkloadInfo(namespace=workload.namespace, name=workload.name, queue_name=workload.queue,
                            priority=run.priority, podsets=known[0], created=run.ts, uid=f"{workload.order:012d}",
                            manifest=NO_MANIFEST, _shape=known[1])

    # The event loop ------------------------------------------------------------------------------

    def _over(self, now: float) -> bool:
        """Whether the replay is over before the events at `now`: nothing is left but housekeeping no
        workload waits for (timeouts of workloads that started, empty nodes, booting nodes nobody
        needs), or only workloads that can never be placed cycle through waitForPodsReady evictions
        (nothing was submitted, started or ended for longer than one such cycle)."""
        events = self.events
        if events.queued_keeping_going() == 0 and self.unready == 0 and (
                self.nodes is None or not (self.nodes.waiting or self.nodes.booking)):
            return True
        return events.queued_progress() == 0 and now > self.last_progress + self.horizon

    def run(self) -> ReplayOutcome:
        until, options = self.options.until, self.options
        events, handlers = self.events, self._handlers
        next_time, pop_at, settle = events.next_time, events.pop_at, self._settle  # bound once: per event
        report_at, submissions = 0, len(events.times)
        while True:
            now = next_time()
            # While submissions are still to come the replay is not over (`_over` counts them): most instants.
            if now is None or (until is not None and now > until) or (
                    events.next_submission >= submissions and self._over(now)):
                break
            if not self.window_open and now >= self.since:
                self._open_window(self.since)
            while (event := pop_at(now)) is not None:
                self.done += 1
                handler = handlers.get(type(event))
                if handler is None:
                    raise AssertionError(f"an event the replay does not know: {event!r}")
                handler(event, now)
                if next_time() != now:
                    settle(now)
            if self.shares is not None:
                self._record_shares(now)
            if options.observe is not None:
                options.observe(now, self.snapshot, self.nodes)
            if options.progress is not None and self.done >= report_at:
                report_at = self.done + options.progress_every
                options.progress(self._progress(now))
        end = until if until is not None else self.last_change
        if not self.window_open:
            self._open_window(min(self.since, end))
        self._close(end)
        if options.progress is not None:
            options.progress(self._progress(end))
        return ReplayOutcome(self.config, self.runs, self.queues, self.meters, self.nodes, end, self.done,
                             self.cycles, self.decisions, self.snapshot, self.notes, shares=self.shares,
                             since=min(self.since, end), cohorts=self.cohorts, pools_at_since=self.pools_at_since,
                             steps=self.steps)

    def _open_window(self, at: float) -> None:
        """The report's window opens (`--from`): the integrals so far are warm-up, kept to be taken off."""
        self.window_open = True
        for meters in self.meters.values():
            for meter in meters.values():
                meter.opened(at)
        if self.cohorts is not None:
            self.cohorts.opened(at)
        for pool in self.nodes.pools if self.nodes is not None else []:
            pool.advance(at)
            self.pools_at_since[pool.name] = PoolAtSince(pool.node_seconds, pool.ready_capacity_seconds,
                                                         pool.allocated_seconds, pool.at_max_seconds, pool.evictions,
                                                         pool.queue_seconds(at))
            pool.peak = len(pool.nodes)  # the window's peak, from the nodes it opens with

    def _progress(self, now: float) -> Progress:
        return Progress(now, self.done, len(self.events), self.submitted, self.finished, len(self.runs))

    def _settle(self, now: float) -> None:
        """After an instant's events: schedule, then place pods, until nothing changes."""
        if self.nodes is None and not self.ready_queues and self.snapshot.afs is None and not self.pace.seconds:
            return  # no queue has a head: a cycle would find none (most instants of a quiet replay)
        for _ in range(1000):
            self.schedule(now)
            if self.nodes is None:
                return
            started = self.nodes.settle(now)
            for run in started:
                if run.state is State.ADMITTED:
                    self._start(run, now)
            if not started or not self.ready_queues:
                return

    def _event_handlers(self) -> dict[type, Callable[[Any, float], None]]:
        """Each event's handler, by its class (`run` looks it up for every event)."""
        return {Submit: self._on_submit, Finish: self._on_finish, Requeue: self._on_requeue,
                Backoff: self._on_backoff, Timeout: self._on_timeout, CycleEnd: self._on_cycle_end,
                CycleStart: self._on_cycle_start, NodeReady: self._on_node_ready, NodeEvicted: self._on_node_evicted,
                ScaleDown: self._on_scale_down, BookedReady: self._on_booked_ready}

    def _on_submit(self, event: Submit, now: float) -> None:
        self._submit(event.run, now)

    def _on_requeue(self, event: Requeue, now: float) -> None:
        self._requeue(event.root)

    def _on_finish(self, event: Finish, now: float) -> None:
        run = event.run
        if run.epoch == event.epoch and run.state is State.RUNNING:
            self._finish(run, now)

    def _on_backoff(self, event: Backoff, now: float) -> None:
        run = event.run
        if run.epoch == event.epoch and run.held is Held.BACKING_OFF:
            run.held = Held.NOWHERE
            self._enqueue(run)

    def _on_timeout(self, event: Timeout, now: float) -> None:
        run = event.run
        if run.epoch == event.epoch and run.state is State.ADMITTED:
            self._evict(run, now, Eviction.PODS_READY_TIMEOUT)

    def _on_node_ready(self, event: NodeReady, now: float) -> None:
        self._node_model().node_ready(event.node, now)

    def _on_node_evicted(self, event: NodeEvicted, now: float) -> None:
        self._spot_eviction(event.node, now)

    def _on_scale_down(self, event: ScaleDown, now: float) -> None:
        self._node_model().scale_down(event.node, event.since, now)

    def _on_cycle_end(self, event: CycleEnd, now: float) -> None:
        self._cycle_ends(event.cycle, now)

    def _on_cycle_start(self, event: CycleStart, now: float) -> None:
        self.pace.tick_at = None

    def _on_booked_ready(self, event: BookedReady, now: float) -> None:
        run, groups = event.run, event.groups
        if run.state is State.RESERVED and run.groups is groups:
            # Every booked node is Ready: the ProvisioningRequest check is Ready, the workload
            # admitted and its pods (booked) run at once, unless a spot eviction took some.
            self._set_admitted(run, now)
            if any(g.remaining for g in groups):
                self._wait_for_pods(run, now)
            else:
                self._start(run, now)

    def _node_model(self) -> NodeModel:
        assert self.nodes is not None, "a node event in a replay without pools"
        return self.nodes

    # Workload life -----------------------------------------------------------------------------

    def _submit(self, run: Run, now: float) -> None:
        self.last_change = self.last_progress = now
        self.submitted += 1
        workload = run.trace
        route = self._routes.get((workload.namespace, workload.queue))
        if route is None:
            route = self._routes[(workload.namespace, workload.queue)] = self._route(workload)
        if route.cq is None:
            return self._park(run, route.refused or "")
        run.cq = route.cq
        queue = run.queue = self.queues[route.cq]
        queue.count(now, 1)
        if workload.priority_class is not None:
            missing = _missing_priority_class(workload, self.snapshot.priority_classes)
            if missing is not None:
                return self._park(run, missing)
        if route.refused is not None:
            return self._park(run, route.refused)
        run.info = self._info(run)
        run.key = (-run.priority, run.ts, workload.order)
        self._enqueue(run)

    def _route(self, workload: TraceWorkload) -> Route:
        """Where the submissions to one LocalQueue go, and why Kueue never considers them, if it does not:
        the configuration does not change during a replay, so this is found once per LocalQueue."""
        lq = self.snapshot.local_queues.get((workload.namespace, workload.queue))
        if lq is None:
            return Route(None, f"LocalQueue {workload.namespace}/{workload.queue} doesn't exist in this "
                               "configuration; the workload is never admitted")
        if lq.stopped:
            return Route(None, f"LocalQueue {workload.namespace}/{workload.queue} is inactive (stopPolicy)")
        cq = self.snapshot.cluster_queues.get(lq.cluster_queue)
        if cq is None:
            return Route(None, f"ClusterQueue {lq.cluster_queue} doesn't exist in this configuration")
        if cq.stopped or cq.missing_flavors or cq.in_cohort_cycle:
            return Route(cq.name, f"ClusterQueue {cq.name} is inactive"
                                  + (f" (flavors {', '.join(cq.missing_flavors)} don't exist)"
                                     if cq.missing_flavors else ""))
        if not self.snapshot.namespace_matches(cq.name, workload.namespace):
            return Route(cq.name, f"namespace {workload.namespace} doesn't match ClusterQueue {cq.name}'s "
                                  "namespaceSelector")
        return Route(cq.name, None)

    def _park(self, run: Run, reason: str) -> None:
        """Kueue never considers it here: it stays pending (counted when it reached a ClusterQueue)."""
        run.state = State.PARKED
        run.reason = reason

    def _enqueue(self, run: Run) -> None:
        """Kueue's PushOrUpdate: into the heap, unless BestEffortFIFO parked its shape already."""
        queue = run.queue
        assert queue is not None
        run.state = State.PENDING
        if not queue.strict and run.cls in queue.bulk:
            queue.park(run)
            return
        queue.push(run)
        self.ready_queues.add(queue.name)

    def _requeue(self, root: str) -> None:
        """Move the inadmissible workloads of a cohort tree (or of one ClusterQueue) to their heaps."""
        self.requeue_at.pop(root, None)
        names = self._trees.get(root)
        if names is None:
            tree = self.snapshot.tree
            names = self._trees[root] = (sorted(n.name for n in tree.cohorts[root].subtree_cluster_queues())
                                         if root in tree.cohorts else [root])
        for name in names:
            if self.queues[name].requeue():
                self.ready_queues.add(name)

    def _freed(self, cq: str, now: float) -> None:
        """Capacity was freed in the ClusterQueue's cohort tree: retry its inadmissible workloads soon."""
        name = self._roots.get(cq)
        if name is None:
            name = self._roots[cq] = self.snapshot.tree.cluster_queues[cq].root().name
        at = now + REQUEUE_BATCH
        if self.requeue_at.get(name, INFINITY) > at:
            self.requeue_at[name] = at
            self.events.push(at, Requeue(name))

    # Scheduling (pkg/scheduler/scheduler.go) ------------------------------------------------------

    def schedule(self, now: float) -> None:
        """Cycle after cycle until one changes nothing (or no queue has a head); with a cycle time
        (`pace`), at most one cycle now, whose decisions take effect when it ends."""
        if self.snapshot.afs is not None:
            self.snapshot.afs.advance(now)
        if self.pace.seconds:
            return self._paced_cycle(now)
        for _ in range(self.options.max_cycles_per_instant):
            heads = self.heads()
            if not heads:
                return
            cycle = Cycle()
            entries = self._decide(heads, cycle, now)
            self._end_cycle(cycle, now)
            for entry in entries:
                if entry.status is not Status.ASSUMED:
                    self.requeue_and_update(entry, cycle)
            if not cycle.changed:
                return
        self.notes.append(f"at {now:g} s scheduling stopped after {self.options.max_cycles_per_instant:,} cycles "
                          "without settling")

    def _decide(self, heads: list[Run], cycle: Cycle, now: float) -> list[Entry]:
        """One cycle's decisions: each head nominated, then processed in the iterator's order."""
        self.cycles += 1
        self.decisions += len(heads)
        entries = self.nominate(heads)
        for entry in self.iterator(entries):
            self.process_entry(entry, cycle, now)
        return entries

    def _paced_cycle(self, now: float) -> None:
        """A cycle that takes `pace.seconds`: its heads are decided now, against the state now, and
        what it decided takes effect when it ends (`CycleEnd`), where the next one starts. While the
        scheduler spins on cycles that change nothing, an event is seen at the next cycle boundary."""
        pace = self.pace
        if now < pace.busy_until and pace.origin is None:
            return  # this cycle's end comes, and the next cycle with it
        start = pace.next_start(now)
        if start > now:
            if pace.tick_at != start:
                pace.tick_at = start
                self.events.push(start, CycleStart())
            return
        heads = self.heads()
        if not heads:
            pace.idle()
            return
        cycle = Cycle()
        entries = self._decide(heads, cycle, now)
        for hold_cq, usage in cycle.reserved:
            self.snapshot.unreserve(hold_cq, usage)
        for entry in entries:
            if entry.status is not Status.ASSUMED:
                self.requeue_and_update(entry, cycle)
        end = pace.started(now, cycle.changed)
        if cycle.changed:
            self.events.push(end, CycleEnd(cycle))

    def _cycle_ends(self, cycle: Cycle, now: float) -> None:
        """A paced cycle's admissions, in the order it made them, then its preemptions."""
        for run in cycle.assumed:
            if run.state is State.PENDING and run.held is Held.INFLIGHT:
                self._quota_reserved(run, now)
        cycle.reserved.clear()  # given back when the cycle was decided
        self._end_cycle(cycle, now)

    def heads(self) -> list[Run]:
        """One head per ClusterQueue with pending work, in the queues' name order."""
        ready = self.ready_queues
        if not ready:
            return []
        if len(ready) == 1:  # most cycles of a quiet replay
            (name,) = ready
            queue = self.queues[name]
            run = queue.pop()
            if queue.live <= 0:
                ready.clear()
            return [] if run is None else [run]
        queues = self.queues
        heads = [run for run in (queues[name].pop() for name in sorted(self.ready_queues)) if run is not None]
        self.ready_queues = {name for name in self.ready_queues if queues[name].live > 0}
        return heads

    def nominate(self, heads: list[Run]) -> list[Entry]:
        """Each head's decision, against the state at the start of the cycle."""
        assign, entries = self.snapshot.assign, []
        for run in heads:
            assert run.info is not None and run.cq is not None and run.queue is not None  # a head is queued
            entries.append(Entry(run, assign(run.info, run.cq), preemptor=run.queue.sticky is run))
        return entries

    def iterator(self, entries: list[Entry]) -> Iterator[Entry]:
        """The core's `make_iterator` (Kueue's makeIterator): classical, or with fair sharing the
        tournament, whose order depends on the usage each entry taken adds, so the entries are taken
        one at a time while `process_entry` handles them."""
        if len(entries) < 2:
            return iter(entries)
        snapshot = self.snapshot
        nominees = []
        for entry in entries:
            assert entry.run.cq is not None  # nominated: it has a ClusterQueue
            nominees.append(CycleEntry(entry.run.cq, entry.decision, entry.run.key, entry, entry.preemptor))
        return (nominee.payload for nominee in make_iterator(snapshot.tree, nominees, snapshot.scheduler))

    def process_entry(self, entry: Entry, cycle: Cycle, now: float) -> None:
        run, decision = entry.run, entry.decision
        snapshot, mode, cq = self.snapshot, decision.mode, run.cq
        assert cq is not None
        if mode is NO_FIT or (mode is PREEMPT and not decision.targets):
            entry.status = Status.INADMISSIBLE
            run.reason = decision.message  # Kueue's words, in the QuotaReserved condition
            if mode is PREEMPT and (snapshot.cluster_queues[cq].reclaim_within_cohort != "Any"
                                    or (entry.preemptor and snapshot.scheduler.prioritize_preemptor_workloads)):
                hold = _to_reserve(snapshot, cq, decision)
                snapshot.reserve(cq, hold)
                cycle.reserved.append((cq, hold))
            return
        assert decision.assignment is not None  # Fit or Preempt: flavors were assigned
        usage = decision.assignment.usage
        if mode is PREEMPT:
            targets = [t.workload for t in decision.targets]
            overlaps = any(t.uid in cycle.preempted for t in targets)
            if overlaps or not snapshot.fits(cq, usage, [*cycle.preempted.values(), *targets]):
                entry.status = Status.SKIPPED
                run.reason = OVERLAPPING if overlaps else NO_LONGER_FITS
                return
            cycle.preempted.update((target.uid, target) for target in targets)
            cycle.preemptors.update((t.workload.uid, f"preempted for {run.name} of ClusterQueue {cq} ({t.reason})")
                                    for t in decision.targets)
            snapshot.reserve(cq, usage)
            cycle.reserved.append((cq, usage))
            entry.status = Status.PREEMPTING
            run.reason = decision.message  # the core's, with Kueue's ". Pending the preemption of N workload(s)"
            cycle.changed = True
            self.steps += 1
            return
        block = self.block_admission
        if not snapshot.fits(cq, usage, cycle.preempted.values()) or (block and self.unready > 0):
            entry.status = Status.SKIPPED
            run.reason = NO_LONGER_FITS if not block or self.unready == 0 else BLOCKED_ADMISSION
            return
        entry.status = Status.ASSUMED
        cycle.changed = True
        self.steps += 1
        self._assume(run, decision)
        if self.pace.seconds:
            cycle.assumed.append(run)  # admitted when the cycle ends
        else:
            self._quota_reserved(run, now)

    def _end_cycle(self, cycle: Cycle, now: float) -> None:
        """The cycle's reservations go; its preemption targets are evicted."""
        for cq, usage in cycle.reserved:
            self.snapshot.unreserve(cq, usage)
        for target in cycle.preempted.values():
            victim = self.runs[int(target.uid)]
            if victim.state in HOLDING:
                victim.last_eviction = cycle.preemptors[target.uid]
                self._evict(victim, now, Eviction.PREEMPTED)

    def requeue_and_update(self, entry: Entry, cycle: Cycle) -> None:
        run, queue = entry.run, entry.run.queue
        assert queue is not None
        if entry.status in (Status.PREEMPTING, Status.SKIPPED) or queue.strict:
            if entry.status is Status.PREEMPTING and not queue.strict:
                queue.set_sticky(run)
            queue.push(run)
            self.ready_queues.add(queue.name)
        else:
            queue.park(run)
            queue.bulk_move(run.cls, run.reason)
            cycle.changed = True
            self.steps += 1

    # Admission -------------------------------------------------------------------------------------

    def _assume(self, run: Run, decision: Decision) -> None:
        """The cycle reserves the run's quota in the core (Kueue's cache assumes the workload), so the
        entries after it see it; its admission is `_quota_reserved`, now or when a paced cycle ends."""
        info = run.info
        assert info is not None and run.queue is not None
        self.snapshot.admit(info, decision)
        if run.queue.sticky is run:
            run.queue.sticky = None
        run.decision = decision

    def _quota_reserved(self, run: Run, now: float) -> None:
        """Quota reserved (QuotaReserved): admitted at once, or once its checks are Ready."""
        self.last_change = now
        decision, queue, info = run.decision, run.queue, run.info
        assert decision is not None and queue is not None and info is not None
        self.snapshot.reserved_by(info, now)   # admission fair sharing's entry penalty, as the quota is reserved
        queue.count(now, -1)
        run.epoch += 1
        run.admissions += 1
        run.flavors, run.counts = self._flavors(decision)
        run.reason = None
        self._meter(run, now, 1)
        if self.nodes is None:
            self._set_admitted(run, now)
            self._start(run, now)
            return
        run.groups = self._groups(run, decision)
        check = self._check_for(run, decision)
        if check is None:
            return self._admit(run, now)
        run.state = State.RESERVED
        unplaceable = _unplaceable(run)
        if unplaceable is not None:
            run.reason = "ProvisioningRequest can never be provisioned: " + unplaceable
        else:
            self.nodes.provision(run, run.groups, check)

    def _admit(self, run: Run, now: float) -> None:
        """Admitted with nodes in the loop: its pods are created and wait for room."""
        self._set_admitted(run, now)
        run.reason = _unplaceable(run)
        self._node_model().add([g for g in run.groups if g.pools])
        if not run.groups:
            self._start(run, now)
        else:
            self._wait_for_pods(run, now)

    def _wait_for_pods(self, run: Run, now: float) -> None:
        """Admitted, its pods not all placed: waitForPodsReady's timeout runs from now."""
        if self.pods_ready.enabled:
            self.events.push(now + self.pods_ready.timeout, Timeout(run, run.epoch))

    def _set_admitted(self, run: Run, now: float) -> None:
        """The Admitted condition: the report's times are those of the last admission (replay.md)."""
        assert run.info is not None
        self.snapshot.admitted_at(run.info, now)
        run.state = State.ADMITTED
        run.admitted = now
        run.started = None
        run.ever_admitted = True
        if self.nodes is not None:
            self.unready += 1  # until its pods start

    def _meter(self, run: Run, now: float, sign: int) -> None:
        """The run's usage counted (`sign` 1) or no longer (-1) in its queue's meters."""
        assert run.cq is not None and run.decision is not None and run.decision.assignment is not None
        meters = self.meters[run.cq]
        usage = run.decision.assignment.usage
        for fr, value in usage.items():
            meter = meters.get(fr)
            if meter is None:
                meter = meters[fr] = self._meter_of(0)
            meter.change(now, sign * value)
        if self.shares is not None:
            self.share_changes.add(run.cq)
        if self.cohorts is not None:
            self.cohorts.change(now, run.cq, usage, sign)

    def _meter_of(self, nominal: int) -> Meter:
        meter = Meter(nominal)
        return meter.record() if self.options.series else meter

    def _record_shares(self, now: float) -> None:
        """Each changed ClusterQueue's share as the instant leaves it (its usage moves many times within one)."""
        assert self.shares is not None
        for name in self.share_changes:
            self.shares.record(now, name)
        self.share_changes.clear()

    def _local_queue_usage(self, run: Run) -> float:
        afs = self.snapshot.afs
        assert afs is not None  # set only on the queues admission fair sharing orders
        return afs.usage((run.trace.namespace, run.trace.queue))

    def _flavors(self, decision: Decision) -> tuple[dict[str, dict[str, str]], dict[str, int]]:
        """The flavors and pod counts a decision assigns, per pod set: one copy per distinct
        assignment (a month of workloads has a few dozen). The core hands out one Decision for many
        workloads (it remembers them), so the answer is remembered per decision too."""
        known = self._by_decision.get(id(decision))
        if known is not None and known[0] is decision:
            return known[1]
        key = tuple((ps.name, ps.count, tuple(ps.flavors.items())) for ps in decision.pod_sets)
        found = self._assignments.get(key)
        if found is None:
            found = self._assignments[key] = ({ps.name: dict(ps.flavors) for ps in decision.pod_sets},
                                              {ps.name: ps.count for ps in decision.pod_sets})
        if len(self._by_decision) > 65536:
            self._by_decision.clear()
        self._by_decision[id(decision)] = (decision, found)  # the decision kept: its id stays its own
        return found

    def _start(self, run: Run, now: float) -> None:
        self.last_change = self.last_progress = now
        if run.state is State.ADMITTED and self.nodes is not None:
            self.unready -= 1
        run.state = State.RUNNING
        run.started = now
        run.ever_started = True
        run.recovering = False
        run.reason = None
        runtime = run.trace.runtime
        if runtime is not None:
            self.events.push(now + runtime, Finish(run, run.epoch))

    def _release(self, run: Run, now: float, finished: bool = False) -> None:
        info = run.info
        assert info is not None and run.cq is not None
        self.snapshot.released_at(info, now, run.state in (State.ADMITTED, State.RUNNING), finished)
        self.snapshot.remove_workload(info)
        info.admission = None
        self._meter(run, now, -1)
        if self.nodes is not None and run.groups:
            self.nodes.release(run.groups, now)
        run.groups = []
        run.decision = None  # its usage is released; what the report needs stays in `flavors`
        if run.state is State.ADMITTED and self.nodes is not None:
            self.unready -= 1
        run.epoch += 1
        self._freed(run.cq, now)

    def _finish(self, run: Run, now: float) -> None:
        self.last_change = self.last_progress = now
        self._release(run, now, finished=True)
        run.state = State.FINISHED
        run.finished = now
        run.info, run.key = None, ()  # no longer queued nor holding quota: the core's view goes
        self.finished += 1

    def _evict(self, run: Run, now: float, cause: Eviction) -> None:
        """Preemption (back to its queue at once, creation time kept) or a waitForPodsReady timeout
        (back after the backoff, timestamp as the requeuing strategy says), unless it is taken out."""
        self.last_change = now
        never = None
        if cause is Eviction.PODS_READY_TIMEOUT:
            run.last_eviction = (
                f"evicted by waitForPodsReady's recoveryTimeout: its pods lost to a spot eviction were not all "
                f"placed again within {self.pods_ready.recovery_timeout:g} s" if run.recovering else
                f"evicted by waitForPodsReady: its pods were not all placed within {self.pods_ready.timeout:g} s"
            ) + (f" ({run.reason})" if run.reason else "")
            if self.pods_ready.backoff_limit is None:  # with a limit, Kueue itself stops requeueing it
                never = self._never_placeable(run)
        elif run.state is State.RUNNING:
            self._cut_short(run, now)
        run.recovering = False
        self._release(run, now)
        queue, info = run.queue, run.info
        assert queue is not None and info is not None
        queue.count(now, 1)
        run.state = State.PENDING
        if cause is Eviction.PREEMPTED:
            run.preemptions += 1
            if run.admissions >= MAX_ADMISSIONS:
                return self._abandon(run)
            self._enqueue(run)
            return
        run.evictions += 1
        ready = self.pods_ready
        if ready.timestamp == "Eviction":
            run.ts = info.created = now
            run.key = (-run.priority, now, run.trace.order)
        if ready.backoff_limit is not None and run.evictions > ready.backoff_limit:
            run.state = State.DEACTIVATED
            run.reason = (f"deactivated after {run.evictions - 1} requeues (waitForPodsReady "
                          f"backoffLimitCount {ready.backoff_limit}); " + (run.reason or "its pods were never placed"))
            queue.count(now, -1)
            return
        if never is not None:
            run.state = State.UNPLACEABLE
            run.reason = run.reason or never
            self.unplaceable.append(run)
            return
        if run.admissions >= MAX_ADMISSIONS:
            return self._abandon(run)
        run.held = Held.BACKING_OFF
        self.events.push(now + ready.backoff(run.evictions), Backoff(run, run.epoch))

    def _abandon(self, run: Run) -> None:
        """Admitted MAX_ADMISSIONS times without finishing: taken out, with why (it stays pending)."""
        run.state = State.ABANDONED
        spot = f", {run.interruptions:,} spot interruptions" if run.interruptions else ""
        run.reason = (f"admitted {run.admissions:,} times without finishing ({run.preemptions:,} preemptions, "
                      f"{run.evictions:,} waitForPodsReady evictions{spot}); the replay stops replaying it there "
                      f"(at most {MAX_ADMISSIONS:,} admissions and spot interruptions a workload); last "
                      f"{run.last_eviction}")
        self.abandoned.append(run)

    # Spot evictions ----------------------------------------------------------------------------

    def _spot_eviction(self, node: Node, now: float) -> None:
        """Azure took a spot node back: the workloads running there lost pods and wait for them again."""
        lost = self._node_model().evict(node, now)
        for run in dict.fromkeys(group.run for group in lost):
            if run.state is State.RUNNING:
                self._interrupt(run, now)
            # An admitted workload not started yet waits for its pods as it did (its timeout runs on);
            # a reserved one finds them missing when its ProvisioningRequest is Ready.

    def _interrupt(self, run: Run, now: float) -> None:
        """A running workload lost pods: admitted still, its PodsReady False until they are all placed
        again, when it runs its whole runtime again (no checkpoint). It can start again a node's startup
        later: the replay is not stuck (`_over`) until then."""
        self.last_change = self.last_progress = now
        self._cut_short(run, now)
        run.interruptions += 1
        run.last_eviction = f"interrupted: a spot node under it was evicted at {now:g} s"
        run.epoch += 1          # its end is stale; it ends a runtime after it starts again
        run.state = State.ADMITTED
        run.started = None
        run.recovering = True
        self.unready += 1
        if run.admissions + run.interruptions >= MAX_ADMISSIONS:
            queue = run.queue
            assert queue is not None
            self._release(run, now)
            queue.count(now, 1)
            return self._abandon(run)
        ready = self.pods_ready
        if ready.enabled and ready.recovery_timeout > 0:
            self.events.push(now + ready.recovery_timeout, Timeout(run, run.epoch))

    def _cut_short(self, run: Run, now: float) -> None:
        """A running workload stops before its end (a preemption, a spot interruption): what it held
        since it started is work done again (per resource, amount x seconds, on the run: the report
        sums the runs of its window)."""
        decision, started = run.decision, run.started
        if started is None or decision is None or decision.assignment is None or now <= started:
            return
        rerun = run.rerun if run.rerun is not None else {}
        for (_, resource), value in decision.assignment.usage.items():
            rerun[resource] = rerun.get(resource, 0.0) + value * (now - started)
        run.rerun = rerun

    # Pods --------------------------------------------------------------------------------------

    def _groups(self, run: Run, decision: Decision) -> list[PodGroup]:
        """Per pod set with pods, the pools its pods can land on with the flavors assigned to it."""
        flavors, groups = self.snapshot.flavors, []
        nodes, info = self._node_model(), run.info
        assert info is not None
        for index, (podset, assigned) in enumerate(zip(info.podsets, decision.pod_sets)):
            if assigned.count <= 0:
                continue
            requests = {r: v for r, v in podset.per_pod.items() if v > 0}
            requests["pods"] = 1
            used = [flavors[name] for name in dict.fromkeys(assigned.flavors.values()) if name in flavors]
            pools, why = nodes.eligible(podset.spec, podset.placement, used, requests)
            groups.append(PodGroup(run, index, assigned.count, requests, pools, why))
        return groups

    def _never_placeable(self, run: Run) -> Optional[str]:
        """Why the run's pods can never all be placed, with any flavors its ClusterQueue can give them
        and at any pod count it can be admitted with; None when they might be (`NodeModel.never_placeable`)."""
        info, decision, nodes = run.info, run.decision, self._node_model()
        assert info is not None and decision is not None and run.cq is not None
        cq = self.snapshot.cluster_queues[run.cq]
        for group in run.groups:
            podset = info.podsets[group.index]
            key = (run.cq, id(run.trace.shape), group.index)
            if key not in self._never:
                covering = {id(cq.group_of[r]): cq.group_of[r]
                            for r in decision.pod_sets[group.index].flavors if r in cq.group_of}
                choices = [[self.snapshot.flavors[f] for f in g.flavors if f in self.snapshot.flavors]
                           for g in covering.values()]
                lowest = podset.min_count if podset.min_count is not None else podset.count
                why = nodes.never_placeable(podset.spec, podset.placement, choices, group.requests, max(1, lowest))
                self._never[key] = None if why is None else f"pod set {podset.name}: {why}"
            if self._never[key] is not None:
                return self._never[key]
        return None

    def _check_for(self, run: Run, decision: Decision) -> Optional[bool]:
        """None without a ProvisioningRequest check; else whether its class scales up."""
        checks = self.checks.get(run.cq or "")
        if not checks:
            return None
        queue, classes = checks
        assigned = {f for ps in decision.pod_sets for f in ps.flavors.values()}
        found = [classes[n] for n in queue.checks_for(assigned) if n in classes]
        return all(c in SCALE_UP_CLASSES for c in found) if found else None

    # The end ------------------------------------------------------------------------------------

    def _explain_waiting(self) -> None:
        """A reason for every workload still pending at the end that has none (never popped, bypassed
        with its equivalents, backing off), and the eviction that sent back one that was admitted."""
        waiting = [r for r in self.runs if r.state is State.PENDING and r.queue is not None
                   and (r.reason is None or r.last_eviction is not None)]
        if not waiting:
            return
        ahead: dict[int, int] = {}
        for queue in self.queues.values():
            queued = sorted((key, run) for group in queue.groups.values() if group.in_heap for key, run in group.items)
            ahead.update((id(run), position) for position, (_, run) in enumerate(queued))
        for run in waiting:
            if run.reason is None:
                run.reason = _waiting_reason(run, ahead)
            if run.last_eviction is not None and not run.reason.startswith(run.last_eviction):
                run.reason = f"{run.last_eviction}; since then: {run.reason}"

    def _close(self, end: float) -> None:
        for meters in self.meters.values():
            for meter in meters.values():
                meter.change(end, 0)
        if self.nodes is not None:
            self.nodes.finish(end)
        if self.cohorts is not None:
            self.cohorts.close(end)
        for run in self.runs:
            if run.state is State.ADMITTED and run.reason is None and self.nodes is not None:
                run.reason = "its pods were not all placed by the end of the replay"
            if run.state is State.RESERVED and run.reason is None:
                run.reason = "waiting for its ProvisioningRequest: no pool can take the whole workload yet"
        self._explain_waiting()
        if self.unplaceable:
            self.notes.append(
                f"{_count(self.unplaceable)} can never be placed on these pools ({_some(self.unplaceable)}; the "
                "reasons are in the workloads): Kueue would evict and requeue each after every waitForPodsReady "
                "timeout, forever; the replay admits each once and leaves it out after its first eviction")
        if self.abandoned:
            self.notes.append(
                f"{_count(self.abandoned)} were admitted {MAX_ADMISSIONS:,} times without finishing and left out "
                f"({_some(self.abandoned, with_queue=True)}): this configuration makes them cycle; see their reasons")


def _waiting_reason(run: Run, ahead: dict[int, int]) -> str:
    """Why a workload still waits at the end, when no attempt of its own said why: Kueue's words where it
    has some (a bypassed equivalent, pending evaluation), else what the replay knows."""
    queue = run.queue
    assert queue is not None
    if run.held is Held.BACKING_OFF:
        return "waiting for its requeue backoff to end"
    if run.held is Held.INFLIGHT:
        return "its quota was reserved in a scheduling cycle that ends after the replay"
    group = queue.groups.get(run.cls)
    if group is not None and not group.in_heap and any(r is run for _, r in group.items):
        return BYPASSED + (f": {group.reason}" if group.reason else "")
    waiting = ahead.get(id(run))
    if waiting is None:
        return PENDING_EVALUATION
    return (f"{PENDING_EVALUATION}: it never reached the head of ClusterQueue {queue.name} "
            f"({waiting:,} workload{'' if waiting == 1 else 's'} ahead of it at the end; Kueue takes one head per "
            "ClusterQueue per cycle)")


def _count(runs: list[Run]) -> str:
    return "1 workload" if len(runs) == 1 else f"{len(runs):,} workloads"


def _some(runs: list[Run], with_queue: bool = False) -> str:
    named = [f"{r.name} in ClusterQueue {r.cq}" if with_queue else r.name for r in runs[:NAMED_IN_NOTES]]
    more = len(runs) - len(named)
    return ", ".join(named) + (f" and {more:,} more" if more else "")


def _missing_priority_class(workload: TraceWorkload, known: dict[str, int]) -> Optional[str]:
    """Kueue's job reconciler creates no Workload for a job whose WorkloadPriorityClass does not exist."""
    name = workload.priority_class
    if name is None or name in known:
        return None
    from aks_kueue.k8s.spelling import suggest  # only for a missing one: this runs for every submission

    return (f"WorkloadPriorityClass {name} doesn't exist in this configuration{suggest(name, sorted(known))}: "
            "Kueue creates no Workload for it, so it is never admitted")


def _unplaceable(run: Run) -> Optional[str]:
    """Why the first of the run's pod sets that no pool can ever hold stays Pending; None when there is none."""
    info = run.info
    assert info is not None
    return next((f"pod set {info.podsets[g.index].name}: {g.why}" for g in run.groups if not g.pools), None)


def _to_reserve(snapshot: Snapshot, cq: str, decision: Decision) -> dict:
    """Kueue's quotaResourcesToReserve for a Preempt without candidates."""
    node = snapshot.tree.cluster_queues[cq]
    assert decision.assignment is not None
    borrowing = decision.assignment.borrowing > 0
    hold = {}
    for fr, value in decision.assignment.usage.items():
        quota = node.quotas.get(fr)
        if borrowing and (quota is None or quota.borrowing_limit is None):
            hold[fr] = value
        else:
            borrowable = quota.borrowing_limit if borrowing and quota is not None else None
            limit = node.nominal(fr) + (borrowable or 0)
            hold[fr] = min(value, limit - node.usage.get(fr, 0))
    return {fr: v for fr, v in hold.items() if v > 0}


def _provisioning_checks(objects: list[dict], snapshot: Snapshot) -> dict[str, tuple[ClusterQueue, dict[str, str]]]:
    """Per ClusterQueue with a ProvisioningRequest check: the queue, and each such check's class."""
    configs = {config.name: config for config in views_of(objects, ProvisioningRequestConfig)}
    classes = {}
    for check in views_of(objects, AdmissionCheck):
        if check.controller_name == PROVISIONING_CONTROLLER:
            config = configs.get(check.names("ProvisioningRequestConfig") or "")
            classes[check.name] = "" if config is None else config.provisioning_class
    found = {}
    for name, cq in snapshot.cluster_queues.items():
        mine = {check: classes[check] for check in cq.queue.checks if check in classes}
        if mine:
            found[name] = (cq.queue, mine)
    return found


__all__ = ["replay", "ReplayOptions", "ReplayOutcome", "Run", "QueueState", "Meter", "State", "Held", "Status",
           "Eviction", "Progress", "WAITING", "MAX_ADMISSIONS", "event_bound"]
