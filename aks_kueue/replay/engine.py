"""The replay: a discrete-event simulation of Kueue v0.19.2's queue manager and scheduler, in
virtual time, over the admission core.

Events (a heap ordered by time, then kind, then the order they were made): a submission, a
workload's end, a node becoming Ready, an empty node's scale-down, a requeue backoff expiring, the
requeue of inadmissible workloads, a waitForPodsReady timeout, a ProvisioningRequest's nodes being
Ready. After each instant's events, scheduling runs cycle after cycle until a cycle changes
nothing, as `pkg/scheduler/scheduler.go` `schedule` does:

1. heads: one per ClusterQueue with pending work (`pkg/cache/queue/manager.go` `heads`), the
   queue ordered by priority, then queue-order timestamp (creation; eviction time after a
   waitForPodsReady eviction, as `requeuingStrategy.timestamp: Eviction` says), then trace order
   standing for the UID (`cluster_queue.go` `baseCompareFunc`); a BestEffortFIFO preemptor waiting
   for its targets stays first ("sticky"); with admission fair sharing the least used LocalQueue's
   workloads come first (`queueOrderingFunc`), its usage advanced in virtual time by the core;
2. nominate: each head's decision from the admission core (`Snapshot.assign`: flavors, borrowing,
   preemption targets, partial admission), all against the state at the start of the cycle;
3. entry order (`makeClassicalIterator`): no borrowing before borrowing, then higher priority, then
   the earlier timestamp; with fair sharing, the core's `FairSharingIterator` (Kueue's tournament by
   dominant resource share, recomputed as each entry is taken);
4. each entry (`processEntry`): NoFit is requeued; Preempt without candidates reserves quota for the
   rest of the cycle unless the queue can always reclaim (`reserveCapacityForUnreclaimablePreempt`,
   `quotaResourcesToReserve`); Preempt with targets is skipped when its targets overlap an earlier
   entry's or it no longer fits, else its usage is reserved for the cycle and its targets are evicted
   when the cycle ends; Fit is re-checked against the usage of the entries admitted before it
   (`fits`, with this cycle's preemption targets taken out) and admitted;
5. requeue (`RequeueIfNotPresent`): StrictFIFO puts every head back (it blocks its queue);
   BestEffortFIFO puts back only what was skipped or is waiting for its preemptions, and parks the
   rest in the inadmissible list, with every queued workload of the same shape and priority
   (scheduling-equivalence hashing, `handleInadmissibleHash`), where new submissions of that shape
   go too until the next requeue.
Inadmissible workloads are retried when capacity is freed in their cohort tree (a workload ends or
is evicted), one second later, batched per root cohort as Kueue's requeuer does
(`inadmissible_workloads.go`, `requeueBatchPeriod`); a new submission does not retry them.

Usage changes only through the admission core (`Snapshot.admit`, `remove_workload`, `reserve`),
the one judge of "fits". A preempted workload goes back to its queue with its creation time and,
readmitted, runs its whole runtime again. With node pools (`nodes`), a workload starts when all
its pods are placed; one admitted but not started within waitForPodsReady's timeout is evicted and
requeued after a backoff (no jitter). A ProvisioningRequest check admits once the booked nodes are
Ready; quota is reserved meanwhile.

Ties that Kueue breaks by UID follow the trace's order, so the same input gives the same output.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from aks_kueue.admission.fair_sharing import ShareSeries
from aks_kueue.admission.fair_sharing_iterator import Entry, make_iterator
from aks_kueue.admission.modes import FlavorAssignmentMode
from aks_kueue.admission.snapshot import Decision, Snapshot
from aks_kueue.admission.workloads import WorkloadInfo
from aks_kueue.kueue.admission_checks import checks_for, checks_of, is_provisioning, provisioning_config_name
from aks_kueue.aks.autoscaler import SCALE_UP_CLASSES
from aks_kueue.replay.config import ReplayConfig
from aks_kueue.replay.nodes import (BACKOFF, BOOKED_READY, FINISH, NODE_READY, REQUEUE, SCALE_DOWN, SUBMIT, TIMEOUT,
                                    NodeModel, PodGroup)
from aks_kueue.replay.trace import Trace, TraceWorkload

FIT, PREEMPT, NO_FIT = FlavorAssignmentMode.FIT, FlavorAssignmentMode.PREEMPT, FlavorAssignmentMode.NO_FIT
# Kueue's inadmissible-workload requeuer batches the requests of one cohort tree for this long.
REQUEUE_BATCH = 1.0
STRICT = "StrictFIFO"

# Events that keep a replay going (a timeout only matters while its workload waits to start, and
# node events only while pods wait for nodes); those that are progress.
_COUNTED = frozenset({FINISH, BOOKED_READY, BACKOFF, REQUEUE, SUBMIT})
_PROGRESS = frozenset({FINISH, BOOKED_READY, SUBMIT})

# Where a workload is.
PENDING, PARKED, RESERVED, ADMITTED, RUNNING, FINISHED, DEACTIVATED = range(7)
# Where a pending workload is held: queued (its class in the heap or inadmissible), backing off, popped.
NOWHERE, QUEUED, BACKING_OFF, INFLIGHT = range(4)
# What a cycle did with an entry it did not admit.
INADMISSIBLE, PREEMPTING, SKIPPED = range(3)


@dataclass
class ReplayOptions:
    until: Optional[float] = None
    # Called now and then with (virtual time, events done, events queued).
    progress: Optional[Callable[[float, int, int], None]] = None
    # Called after each instant has settled with (virtual time, the snapshot, the node model), for
    # checks that look at the state between instants (the property tests).
    observe: Optional[Callable[[float, Snapshot, Optional[NodeModel]], None]] = None
    max_cycles_per_instant: int = 1_000_000


@dataclass(eq=False, slots=True)
class Run:
    """One trace workload in one configuration."""

    trace: TraceWorkload
    info: WorkloadInfo
    key: tuple                      # queue order: priority, timestamp, trace order
    hash: tuple                     # scheduling equivalence: shape and priority
    ts: float                       # the queue-order timestamp: submission, or the last eviction
    cq: Optional[str] = None
    queue: Optional["QueueState"] = None
    state: int = PENDING
    where: int = NOWHERE
    admitted: Optional[float] = None
    started: Optional[float] = None
    finished: Optional[float] = None
    ever_admitted: bool = False
    ever_started: bool = False
    preemptions: int = 0
    evictions: int = 0              # by waitForPodsReady, each one a requeue (Kueue's requeueState.count)
    epoch: int = 0
    flavors: dict[str, dict[str, str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)  # pods per pod set of its last admission (partial)
    reason: Optional[str] = None
    groups: list[PodGroup] = field(default_factory=list)
    decision: Optional[Decision] = None


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


class QueueState:
    """One ClusterQueue's pending workloads: classes in the heap or inadmissible, the sticky preemptor."""

    def __init__(self, name: str, strategy: str):
        self.name = name
        self.strict = strategy == STRICT
        self.groups: dict[tuple, Group] = {}
        self.top: list[tuple] = []           # (first key, version, group) of the classes in the heap
        self.live = 0                        # workloads in the heap, sticky included
        self.bulk: set[tuple] = set()        # classes found inadmissible since the last requeue
        self.sticky: Optional[Run] = None
        self.sticky_waiting = False          # the sticky preemptor is queued at the head
        # Admission fair sharing: a head's LocalQueue usage, which orders the queue before its key.
        self.usage: Optional[Callable[[Run], float]] = None
        self.pending = 0
        self.series: list[tuple[float, int]] = [(0.0, 0)]

    def _group(self, hash_: tuple, in_heap: bool) -> Group:
        group = self.groups.get(hash_)
        if group is None:
            group = self.groups[hash_] = Group(hash_, in_heap)
        return group

    def _announce(self, group: Group) -> None:
        group.version += 1
        if self.usage is not None:
            return  # heads are found by a scan (`_pop_by_usage`)
        heapq.heappush(self.top, (group.items[0][0], group.version, group))
        if len(self.top) > 2 * len(self.groups) + 64:
            self.top = [(g.items[0][0], g.version, g) for g in self.groups.values() if g.in_heap and g.items]
            heapq.heapify(self.top)

    def push(self, run: Run) -> None:
        """Into the heap (Kueue's pushOrUpdateHeap)."""
        run.where = QUEUED
        self.live += 1
        if run is self.sticky:
            self.sticky_waiting = True
            return
        group = self._group(run.hash, True)
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
        group = self._group(run.hash, False)
        heapq.heappush(group.items, (run.key, run))
        run.where = QUEUED
        if group.in_heap:  # its class went back to the heap since (a skipped one took it along)
            self.live += 1
            if group.items[0][1] is run:
                self._announce(group)

    def pop(self) -> Optional[Run]:
        if self.usage is not None:
            return self._pop_by_usage()
        if self.sticky_waiting and self.sticky is not None and self.sticky.where == QUEUED:
            self.sticky_waiting = False
            run = self.sticky
            run.where = INFLIGHT
            self.live -= 1
            return run
        self.sticky_waiting = False
        top = self.top
        while top:
            key, version, group = heapq.heappop(top)
            if not group.in_heap or group.version != version or not group.items:
                continue
            _, run = heapq.heappop(group.items)
            self.live -= 1
            run.where = INFLIGHT
            if group.items:
                self._announce(group)
            elif self.groups.get(group.hash) is group:
                del self.groups[group.hash]
            return run
        return None

    def _pop_by_usage(self) -> Optional[Run]:
        """With admission fair sharing usages move with time, so the head is found by a scan: the
        least used LocalQueue's first workload (Kueue's queueOrderingFunc; the sticky preemptor
        wins only among equal usages). Classes hold one LocalQueue each here (see `_runs`)."""
        usage = self.usage
        candidates = [(usage(g.items[0][1]), 1, g.items[0][0], g) for g in self.groups.values() if g.in_heap and g.items]
        sticky = self.sticky
        if self.sticky_waiting and sticky is not None and sticky.where == QUEUED:
            candidates.append((usage(sticky), 0, sticky.key, None))
        if not candidates:
            self.sticky_waiting = False
            return None
        _, _, _, group = min(candidates, key=lambda c: c[:3])
        if group is None:
            self.sticky_waiting = False
            run = sticky
        else:
            _, run = heapq.heappop(group.items)
            if not group.items and self.groups.get(group.hash) is group:
                del self.groups[group.hash]
        self.live -= 1
        run.where = INFLIGHT
        return run

    def bulk_move(self, hash_: tuple) -> None:
        """Every queued workload equivalent to one found inadmissible goes to the inadmissible list."""
        self.bulk.add(hash_)
        group = self.groups.get(hash_)
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
        if old is not None and old.where == QUEUED and self.sticky_waiting:
            # It was held at the head; it goes back among the others, in its own place.
            self.sticky_waiting = False
            self.live -= 1
            self.push(old)

    def count(self, now: float, delta: int) -> None:
        self.pending += delta
        if self.series[-1][0] == now:
            self.series[-1] = (now, self.pending)
        else:
            self.series.append((now, self.pending))


@dataclass
class Meter:
    """Usage of one ClusterQueue on one flavor-resource over time (a step function)."""

    nominal: int
    current: int = 0
    last: float = 0.0
    used: float = 0.0       # integral of usage
    borrowed: float = 0.0   # integral of usage above nominal

    def change(self, now: float, delta: int) -> None:
        span = now - self.last
        if span > 0:
            self.used += self.current * span
            self.borrowed += max(0, self.current - self.nominal) * span
        self.last = now
        self.current += delta


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


def replay(config: ReplayConfig, trace: Trace, options: Optional[ReplayOptions] = None) -> ReplayOutcome:
    return _Replay(config, trace, options or ReplayOptions()).run()


class _Replay:
    def __init__(self, config: ReplayConfig, trace: Trace, options: ReplayOptions):
        self.config = config
        self.trace = trace
        self.options = options
        self.snapshot = Snapshot.from_objects(config.objects, config.resource_rules, config.scheduler)
        self.shares = ShareSeries(self.snapshot.tree.cluster_queues) if self.snapshot.fair_sharing else None
        self.pods_ready = config.pods_ready
        self.events: list[tuple] = []
        self.sequence = 0
        self.done = 0
        self.cycles = 0
        self.decisions = 0
        self.last_change = 0.0
        self.last_progress = 0.0      # the last submission, start or end
        self.workload_events = 0      # queued events that can change a workload
        self.pending_progress = 0     # queued submissions, ends and ProvisioningRequest answers
        self.requeue_at: dict[str, float] = {}
        self.unready = 0        # admitted, not yet started (blockAdmission waits on them)
        self.notes: list[str] = []
        self._assignments: dict[tuple, tuple[dict, dict]] = {}
        self._trees: dict[str, list[str]] = {}  # the ClusterQueues of a cohort tree, by its root
        self.queues: dict[str, QueueState] = {}
        self.meters: dict[str, dict[tuple[str, str], Meter]] = {}
        manifests = _named(config.objects, "ClusterQueue")
        for name in sorted(self.snapshot.cluster_queues):
            spec = manifests.get(name, {}).get("spec") or {}
            self.queues[name] = QueueState(name, spec.get("queueingStrategy") or "BestEffortFIFO")
            if self.snapshot.uses_admission_fair_sharing(name):
                self.queues[name].usage = self._local_queue_usage
            quotas = self.snapshot.tree.cluster_queues[name].quotas
            self.meters[name] = {fr: Meter(q.nominal) for fr, q in quotas.items()}
        self.ready_queues: set[str] = set()
        self.checks = _provisioning_checks(config.objects, manifests)
        startups = [config.startup(p)[0] for p in config.pools or []]
        self.nodes = None if config.pools is None else NodeModel(config.pools, startups, config.scale_down_delay,
                                                                 self._push)
        ready = self.pods_ready
        # One waitForPodsReady cycle of a workload that never starts, with room to spare.
        self.horizon = (ready.timeout + ready.backoff_max if ready.enabled else 0.0) + max(startups, default=0.0) \
            + 4 * REQUEUE_BATCH
        self.runs = self._runs()

    # Building ----------------------------------------------------------------------------------

    def _runs(self) -> list[Run]:
        """Each trace workload as the admission core sees it in this configuration. The pod sets of
        one shape are computed once, by the core's own function (`workload_info`), with the
        Configuration's resource exclusions and transformations."""
        priority_classes = self.snapshot.priority_classes
        partial = self.config.partial_admission
        podsets: dict[int, tuple[list, tuple]] = {}
        runs = []
        for workload in self.trace.workloads:
            shape = workload.shape
            known = podsets.get(id(shape))
            if known is None:
                pod_sets = shape.pod_sets if partial else [{k: v for k, v in ps.items() if k != "minCount"}
                                                           for ps in shape.pod_sets]
                first = self.snapshot.workload_info({"spec": {"podSets": pod_sets}})
                known = podsets[id(shape)] = (first.podsets, first.shape)
            priority = priority_classes.get(workload.priority_class, workload.priority or 0)
            info = WorkloadInfo(namespace=workload.namespace, name=workload.name, queue_name=workload.queue,
                                priority=priority, podsets=known[0], created=workload.submitted,
                                uid=f"{workload.order:012d}", _shape=known[1])
            # With admission fair sharing a class is also one LocalQueue's: usages order them.
            hash_ = (id(shape), priority) if self.snapshot.afs is None else (id(shape), priority, workload.queue)
            run = Run(workload, info, key=(-priority, workload.submitted, workload.order), hash=hash_,
                      ts=workload.submitted)
            runs.append(run)
            self._push(workload.submitted, SUBMIT, run)
        return runs

    # The event loop ------------------------------------------------------------------------------

    def _push(self, time: float, kind: int, payload: Any) -> None:
        time = round(time, 6)  # instants to the microsecond: 0.1 + 0.2 is the same instant as 0.3
        self.sequence += 1
        if kind in _COUNTED:
            self.workload_events += 1
            if kind in _PROGRESS:
                self.pending_progress += 1
        heapq.heappush(self.events, (time, kind, self.sequence, payload))

    def _over(self, now: float) -> bool:
        """Whether the replay is over before the events at `now`: nothing is left but housekeeping no
        workload waits for (timeouts of workloads that started, empty nodes, booting nodes nobody
        needs), or only workloads that can never be placed cycle through waitForPodsReady evictions
        (nothing was submitted, started or ended for longer than one such cycle)."""
        if self.workload_events == 0 and self.unready == 0 and (
                self.nodes is None or not (self.nodes.waiting or self.nodes.booking)):
            return True
        return self.pending_progress == 0 and now > self.last_progress + self.horizon

    def run(self) -> ReplayOutcome:
        until, progress = self.options.until, self.options.progress
        events = self.events
        report_at = 0
        while events:
            now = events[0][0]
            if (until is not None and now > until) or self._over(now):
                break
            while events and events[0][0] == now:
                _, kind, _, payload = heapq.heappop(events)
                self.done += 1
                if kind in _COUNTED:
                    self.workload_events -= 1
                    if kind in _PROGRESS:
                        self.pending_progress -= 1
                self._apply(kind, payload, now)
                if not events or events[0][0] != now:
                    self._settle(now)
            if self.options.observe is not None:
                self.options.observe(now, self.snapshot, self.nodes)
            if progress is not None and self.done >= report_at:
                report_at = self.done + 4096
                progress(now, self.done, len(events))
        end = until if until is not None else self.last_change
        self._close(end)
        if progress is not None:
            progress(end, self.done, 0)
        return ReplayOutcome(self.config, self.runs, self.queues, self.meters, self.nodes, end, self.done,
                             self.cycles, self.decisions, self.snapshot, self.notes, self.shares)

    def _settle(self, now: float) -> None:
        """After an instant's events: schedule, then place pods, until nothing changes."""
        for _ in range(1000):
            self._schedule(now)
            if self.nodes is None:
                return
            started = self.nodes.settle(now)
            for run in started:
                if run.state == ADMITTED:
                    self._start(run, now)
            if not started or not self.ready_queues:
                return

    def _apply(self, kind: int, payload: Any, now: float) -> None:
        if kind == SUBMIT:
            self._submit(payload, now)
        elif kind == REQUEUE:
            self._requeue(payload, now)
        elif kind in (FINISH, BACKOFF, TIMEOUT):
            run, epoch = payload
            if run.epoch != epoch:
                return  # the run was admitted or released since: the event is stale
            if kind == FINISH and run.state == RUNNING:
                self._finish(run, now)
            elif kind == BACKOFF and run.where == BACKING_OFF:
                run.where = NOWHERE
                self._enqueue(run, now)
            elif kind == TIMEOUT and run.state == ADMITTED:
                self._evict(run, now, preempted=False)
        elif kind == NODE_READY:
            self.nodes.node_ready(payload, now)
        elif kind == SCALE_DOWN:
            self.nodes.scale_down(*payload, now)
        else:
            run, groups = payload
            if run.state == RESERVED and run.groups is groups:
                # Every booked node is Ready: the ProvisioningRequest check is Ready, the workload
                # admitted and its pods (booked) run at once.
                self._mark_admitted(run, now)
                self._start(run, now)

    # Workload life -----------------------------------------------------------------------------

    def _submit(self, run: Run, now: float) -> None:
        self.last_change = self.last_progress = now
        info = run.info
        lq = self.snapshot.local_queues.get((info.namespace, info.queue_name))
        if lq is None:
            return self._park(run, f"LocalQueue {info.namespace}/{info.queue_name} doesn't exist in this "
                                   "configuration; the workload is never admitted")
        if lq.stopped:
            return self._park(run, f"LocalQueue {info.namespace}/{info.queue_name} is inactive (stopPolicy)")
        cq = self.snapshot.cluster_queues.get(lq.cluster_queue)
        if cq is None:
            return self._park(run, f"ClusterQueue {lq.cluster_queue} doesn't exist in this configuration")
        run.cq = cq.name
        run.queue = self.queues[cq.name]
        run.queue.count(now, 1)
        if cq.stopped or cq.missing_flavors or cq.in_cohort_cycle:
            return self._park(run, f"ClusterQueue {cq.name} is inactive"
                                   + (f" (flavors {', '.join(cq.missing_flavors)} don't exist)"
                                      if cq.missing_flavors else ""))
        if not self.snapshot.namespace_matches(cq.name, info.namespace):
            return self._park(run, f"namespace {info.namespace} doesn't match ClusterQueue {cq.name}'s "
                                   "namespaceSelector")
        self._enqueue(run, now)

    def _park(self, run: Run, reason: str) -> None:
        """Kueue never considers it here: it stays pending (counted when it reached a ClusterQueue)."""
        run.state = PARKED
        run.reason = reason

    def _enqueue(self, run: Run, now: float) -> None:
        """Kueue's PushOrUpdate: into the heap, unless BestEffortFIFO parked its shape already."""
        queue = run.queue
        run.state = PENDING
        if not queue.strict and run.hash in queue.bulk:
            queue.park(run)
            return
        queue.push(run)
        self.ready_queues.add(queue.name)

    def _requeue(self, root: str, now: float) -> None:
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
        name = self.snapshot.tree.cluster_queues[cq].root().name
        at = now + REQUEUE_BATCH
        if self.requeue_at.get(name, float("inf")) > at:
            self.requeue_at[name] = at
            self._push(at, REQUEUE, name)

    # Scheduling ----------------------------------------------------------------------------------

    def _schedule(self, now: float) -> None:
        snapshot = self.snapshot
        if snapshot.afs is not None:
            snapshot.afs.advance(now)
        for _ in range(self.options.max_cycles_per_instant):
            if not self.ready_queues:
                return
            heads = [run for run in (self.queues[name].pop() for name in sorted(self.ready_queues)) if run is not None]
            self.ready_queues = {name for name in self.ready_queues if self.queues[name].live > 0}
            if not heads:
                return
            self.cycles += 1
            self.decisions += len(heads)
            # Entry order and (with fair sharing) each pop's tournament come from the core.
            entries = make_iterator(snapshot.tree, [Entry(run.cq, snapshot.assign(run.info, run.cq), run.key, run,
                                                          run.queue.sticky is run) for run in heads],
                                    snapshot.scheduler)
            if not self._process(entries, now):
                return
        self.notes.append(f"at {now:g} s scheduling stopped after {self.options.max_cycles_per_instant:,} cycles "
                          "without settling")

    def _process(self, entries, now: float) -> bool:
        """One cycle's entries in order (taken one at a time: a fair-sharing order depends on what
        the ones before did); whether anything changed."""
        snapshot = self.snapshot
        preempted: dict[str, WorkloadInfo] = {}   # this cycle's targets, by uid, in order
        reserved: list[tuple[str, dict]] = []
        outcomes = []
        changed = False
        block = self.pods_ready.enabled and self.pods_ready.block_admission and self.nodes is not None
        for entry in entries:
            run, decision = entry.payload, entry.decision
            mode = decision.mode
            cq = run.cq
            if mode is NO_FIT or (mode is PREEMPT and not decision.targets):
                outcomes.append((run, INADMISSIBLE))
                run.reason = decision.message  # Kueue's words, in the QuotaReserved condition
                if mode is PREEMPT and (snapshot.cluster_queues[cq].reclaim_within_cohort != "Any"
                                        or (entry.preemptor and snapshot.scheduler.prioritize_preemptor_workloads)):
                    hold = _to_reserve(snapshot, cq, decision)
                    snapshot.reserve(cq, hold)
                    reserved.append((cq, hold))
                continue
            usage = decision.assignment.usage
            if mode is PREEMPT:
                targets = [t.workload for t in decision.targets]
                overlaps = any(t.uid in preempted for t in targets)
                if overlaps or not snapshot.fits(cq, usage, [*preempted.values(), *targets]):
                    outcomes.append((run, SKIPPED))
                    continue
                preempted.update((target.uid, target) for target in targets)
                snapshot.reserve(cq, usage)
                reserved.append((cq, usage))
                outcomes.append((run, PREEMPTING))
                changed = True
                continue
            if not snapshot.fits(cq, usage, list(preempted.values())) or (block and self.unready > 0):
                outcomes.append((run, SKIPPED))
                continue
            self._admit(run, decision, now)
            changed = True
        for cq, usage in reserved:
            snapshot.unreserve(cq, usage)
        for target in preempted.values():
            victim = self.runs[int(target.uid)]
            if victim.state in (RESERVED, ADMITTED, RUNNING):
                self._evict(victim, now, preempted=True)
        for run, outcome in outcomes:
            queue = run.queue
            if outcome in (PREEMPTING, SKIPPED) or queue.strict:
                if outcome == PREEMPTING and not queue.strict:
                    queue.set_sticky(run)
                queue.push(run)
                self.ready_queues.add(queue.name)
            else:
                queue.park(run)
                queue.bulk_move(run.hash)
                changed = True
        return changed

    def _admit(self, run: Run, decision: Decision, now: float) -> None:
        """Quota reserved: usage counted by the core; admitted at once, or once its checks are Ready."""
        self.last_change = now
        self.snapshot.admit(run.info, decision)
        self.snapshot.reserved_by(run.info, now)
        queue = run.queue
        if queue.sticky is run:
            queue.sticky = None
        queue.count(now, -1)
        run.decision = decision
        run.epoch += 1
        run.flavors, run.counts = self._flavors(decision)
        run.reason = None
        self._meter(run, now, 1)
        if self.nodes is None:
            self._mark_admitted(run, now)
            self._start(run, now)
            return
        run.groups = self._groups(run, decision)
        check = self._check_for(run, decision)
        if check is None:
            return self._admitted(run, now)
        run.state = RESERVED
        unplaceable = _unplaceable(run)
        if unplaceable is not None:
            run.reason = "ProvisioningRequest can never be provisioned: " + unplaceable
        else:
            self.nodes.provision(run, run.groups, check)

    def _meter(self, run: Run, now: float, sign: int) -> None:
        """The run's usage counted (`sign` 1) or no longer (-1) in its queue's meters."""
        meters = self.meters[run.cq]
        for fr, value in run.decision.assignment.usage.items():
            meter = meters.get(fr)
            if meter is None:
                meter = meters[fr] = Meter(0)
            meter.change(now, sign * value)
        if self.shares is not None:
            self.shares.record(now, run.cq)

    def _local_queue_usage(self, run: Run) -> float:
        return self.snapshot.afs.usage((run.info.namespace, run.info.queue_name))

    def _flavors(self, decision: Decision) -> tuple[dict[str, dict[str, str]], dict[str, int]]:
        """The flavors and pod counts a decision assigns, per pod set: one copy per distinct
        assignment (a month of workloads has a few dozen)."""
        key = tuple((ps.name, ps.count, tuple(ps.flavors.items())) for ps in decision.pod_sets)
        found = self._assignments.get(key)
        if found is None:
            found = self._assignments[key] = ({ps.name: dict(ps.flavors) for ps in decision.pod_sets},
                                              {ps.name: ps.count for ps in decision.pod_sets})
        return found

    def _mark_admitted(self, run: Run, now: float) -> None:
        self.snapshot.admitted_at(run.info, now)
        run.state = ADMITTED
        run.admitted = now
        run.started = None  # the report's times are those of the last admission (replay.md)
        run.ever_admitted = True
        if self.nodes is not None:
            self.unready += 1  # until its pods start

    def _admitted(self, run: Run, now: float) -> None:
        self._mark_admitted(run, now)
        run.reason = _unplaceable(run)
        self.nodes.add([g for g in run.groups if g.pools])
        if not run.groups:
            self._start(run, now)
        elif self.pods_ready.enabled:
            self._push(now + self.pods_ready.timeout, TIMEOUT, (run, run.epoch))

    def _start(self, run: Run, now: float) -> None:
        self.last_change = self.last_progress = now
        if run.state == ADMITTED and self.nodes is not None:
            self.unready -= 1
        run.state = RUNNING
        run.started = now
        run.ever_started = True
        run.reason = None
        runtime = run.trace.runtime
        if runtime is not None:
            self._push(now + runtime, FINISH, (run, run.epoch))

    def _release(self, run: Run, now: float, finished: bool = False) -> None:
        self.snapshot.released_at(run.info, now, run.state in (ADMITTED, RUNNING), finished)
        self.snapshot.remove_workload(run.info)
        run.info.admission = None
        self._meter(run, now, -1)
        if self.nodes is not None and run.groups:
            self.nodes.release(run.groups, now)
        run.groups = []
        run.decision = None  # its usage is released; what the report needs stays in `flavors`
        if run.state == ADMITTED and self.nodes is not None:
            self.unready -= 1
        run.epoch += 1
        self._freed(run.cq, now)

    def _finish(self, run: Run, now: float) -> None:
        self.last_change = self.last_progress = now
        self._release(run, now, finished=True)
        run.state = FINISHED
        run.finished = now

    def _evict(self, run: Run, now: float, preempted: bool) -> None:
        """Preemption (back to its queue at once, creation time kept) or a waitForPodsReady timeout
        (back after the backoff, timestamp as the requeuing strategy says)."""
        self.last_change = now
        self._release(run, now)
        queue = run.queue
        queue.count(now, 1)
        run.state = PENDING
        if preempted:
            run.preemptions += 1
            self._enqueue(run, now)
            return
        run.evictions += 1
        ready = self.pods_ready
        if ready.timestamp == "Eviction":
            run.ts = now
            run.info.created = now
            run.key = (run.key[0], now, run.trace.order)
        if ready.backoff_limit is not None and run.evictions > ready.backoff_limit:
            run.state = DEACTIVATED
            run.reason = (f"deactivated after {run.evictions - 1} requeues (waitForPodsReady "
                          f"backoffLimitCount {ready.backoff_limit}); " + (run.reason or "its pods were never placed"))
            queue.count(now, -1)
            return
        run.where = BACKING_OFF
        self._push(now + ready.backoff(run.evictions), BACKOFF, (run, run.epoch))

    # Pods --------------------------------------------------------------------------------------

    def _groups(self, run: Run, decision: Decision) -> list[PodGroup]:
        """Per pod set with pods, the pools its pods can land on with the flavors assigned to it."""
        flavors, groups = self.snapshot.flavors, []
        for index, (podset, assigned) in enumerate(zip(run.info.podsets, decision.pod_sets)):
            if assigned.count <= 0:
                continue
            requests = {r: v for r, v in podset.per_pod.items() if v > 0}
            requests["pods"] = 1
            used = [flavors[name] for name in dict.fromkeys(assigned.flavors.values()) if name in flavors]
            pools, why = self.nodes.eligible(podset.spec, podset.placement, used, requests)
            groups.append(PodGroup(run, index, assigned.count, requests, pools, why))
        return groups

    def _check_for(self, run: Run, decision: Decision) -> Optional[bool]:
        """None without a ProvisioningRequest check; else whether its class scales up."""
        checks = self.checks.get(run.cq)
        if not checks:
            return None
        spec, classes = checks
        assigned = {f for ps in decision.pod_sets for f in ps.flavors.values()}
        found = [classes[n] for n in checks_for(spec, assigned) if n in classes]
        return all(c in SCALE_UP_CLASSES for c in found) if found else None

    # The end ------------------------------------------------------------------------------------

    def _close(self, end: float) -> None:
        for meters in self.meters.values():
            for meter in meters.values():
                meter.change(end, 0)
        if self.nodes is not None:
            self.nodes.finish(end)
        for run in self.runs:
            if run.state == ADMITTED and run.reason is None and self.nodes is not None:
                run.reason = "its pods were not all placed by the end of the replay"
            if run.state == RESERVED and run.reason is None:
                run.reason = "waiting for its ProvisioningRequest: no pool can take the whole workload yet"


def _unplaceable(run: Run) -> Optional[str]:
    """Why the first of the run's pod sets that no pool can ever hold stays Pending; None when there is none."""
    return next((f"pod set {run.info.podsets[g.index].name}: {g.why}" for g in run.groups if not g.pools), None)


def _to_reserve(snapshot: Snapshot, cq: str, decision: Decision) -> dict:
    """Kueue's quotaResourcesToReserve for a Preempt without candidates."""
    node = snapshot.tree.cluster_queues[cq]
    borrowing = decision.assignment.borrowing > 0
    hold = {}
    for fr, value in decision.assignment.usage.items():
        quota = node.quotas.get(fr)
        if borrowing and (quota is None or quota.borrowing_limit is None):
            hold[fr] = value
        else:
            limit = node.nominal(fr) + (quota.borrowing_limit if borrowing else 0)
            hold[fr] = min(value, limit - node.usage.get(fr, 0))
    return {fr: v for fr, v in hold.items() if v > 0}


def _named(objects: list[dict], kind: str) -> dict[str, dict]:
    return {(o.get("metadata") or {}).get("name"): o for o in objects if o.get("kind") == kind}


def _provisioning_checks(objects: list[dict], queues: dict[str, dict]) -> dict[str, tuple[dict, dict[str, str]]]:
    """Per ClusterQueue with a ProvisioningRequest check: its spec, and each such check's class."""
    configs = _named(objects, "ProvisioningRequestConfig")
    classes = {name: ((configs.get(provisioning_config_name(check)) or {}).get("spec") or {})
               .get("provisioningClassName", "")
               for name, check in _named(objects, "AdmissionCheck").items() if is_provisioning(check)}
    found = {}
    for name, manifest in queues.items():
        spec = manifest.get("spec") or {}
        mine = {check: classes[check] for check in checks_of(spec) if check in classes}
        if mine:
            found[name] = (spec, mine)
    return found


__all__ = ["replay", "ReplayOptions", "ReplayOutcome", "Run", "QueueState", "Meter"]
