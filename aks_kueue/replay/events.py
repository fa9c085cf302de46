"""The replay's events: one kind per thing that happens, and the queue that hands them out in
virtual time. Each kind has one typed payload class (`Event`): the workload events (`Submit`,
`Finish`, `Timeout`, `Backoff`, `Requeue`) and the scheduler's (`CycleEnd`, `CycleStart`) are the
engine's, the node events (`NodeReady`, `NodeEvicted`, `ScaleDown`, `BookedReady`) the node model's.

Within one instant, events apply in `APPLY_ORDER` (the queue breaks a tie of times by it, then by
the order the events were made): a workload's end first, so that what it frees is there for
everything else at that instant (a preemption target that ends then is not evicted); then the end
of a scheduling cycle that takes time (`pace`: what it decided takes effect); then waitForPodsReady
timeouts, then node changes (a node Ready, a spot node evicted, an empty node removed), then
ProvisioningRequests whose nodes are Ready, then backoffs expiring and the requeue of inadmissible
workloads, then a paced cycle's start, and submissions last, so that a workload submitted at an
instant sees the state everything else left.

Submissions are not kept in the heap: the engine hands the queue the workloads in submission order
(`EventQueue.times` and `runs`), and they are read as the clock reaches them, which keeps the heap to
the events in flight (a month of history is millions of submissions). Nor are the events of one class
the engine makes in time order (`in_order`: a requeue is always made a fixed time after the instant
being replayed): they wait in a first-in first-out queue, which gives them in the order the heap would
(their kind's rank, then the order they were made) without its cost.
"""

from __future__ import annotations

import heapq
from collections import deque
from enum import Enum
from typing import Any, Callable, ClassVar, Optional, Protocol, Sequence


class EventKind(Enum):
    FINISH = "a workload ends"
    CYCLE_END = "a scheduling cycle ends: what it decided takes effect"
    TIMEOUT = "waitForPodsReady's timeout"
    NODE_READY = "a node becomes Ready"
    NODE_EVICTED = "Azure takes a spot node back"
    SCALE_DOWN = "an empty node's scale-down delay ends"
    BOOKED_READY = "a ProvisioningRequest's nodes are all Ready"
    BACKOFF = "a requeue backoff ends"
    REQUEUE = "inadmissible workloads are requeued"
    CYCLE_START = "the next scheduling cycle starts"
    SUBMIT = "a workload is submitted"


# The order events of one instant apply in (see the module's docstring): the heap's tie-break.
APPLY_ORDER: tuple[EventKind, ...] = (EventKind.FINISH, EventKind.CYCLE_END, EventKind.TIMEOUT,
                                      EventKind.NODE_READY, EventKind.NODE_EVICTED, EventKind.SCALE_DOWN,
                                      EventKind.BOOKED_READY, EventKind.BACKOFF, EventKind.REQUEUE,
                                      EventKind.CYCLE_START, EventKind.SUBMIT)
RANK: dict[EventKind, int] = {kind: rank for rank, kind in enumerate(APPLY_ORDER)}
# Events that keep a replay going (a timeout only matters while its workload waits to start, and node
# events only while pods wait for nodes); of those, the ones that are progress.
KEEPS_GOING = frozenset({EventKind.FINISH, EventKind.BOOKED_READY, EventKind.BACKOFF, EventKind.REQUEUE,
                         EventKind.CYCLE_END, EventKind.CYCLE_START, EventKind.SUBMIT})
PROGRESS = frozenset({EventKind.FINISH, EventKind.BOOKED_READY, EventKind.SUBMIT})


class Event(Protocol):
    """An event's payload: one class per kind (the engine's in `engine`, the node model's in `nodes`)."""

    kind: ClassVar[EventKind]


_SUBMIT_RANK = RANK[EventKind.SUBMIT]


class EventQueue:
    """Events in virtual time: a heap of (time, rank, sequence, event), and the submissions read from the
    trace in order. `keeps_going` and `progress` count the queued events of those kinds (submissions
    not yet reached included)."""

    def __init__(self, times: Sequence[float], runs: Sequence[Any], submit: Callable[[Any], Event],
                 in_order: Optional[type[Event]] = None):
        self.heap: list[tuple[float, int, int, Any]] = []
        # The events of `in_order`, made in time order: (time, event), oldest first.
        self.in_order = in_order
        self.fifo: deque[tuple[float, Any]] = deque()
        self.fifo_rank = _facts(in_order)[0] if in_order is not None else -1
        self.sequence = len(runs)   # submissions were "made" first, in trace order
        self.times = times          # the submissions' times, in order (`runs`: by time, then trace order)
        self.runs = runs
        self.submit = submit        # the submission event of a run
        self.next_submission = 0
        self.keeps_going = 0
        self.progress = 0

    def push(self, time: float, event: Event) -> None:
        time = round(time, 6)  # instants to the microsecond: 0.1 + 0.2 is the same instant as 0.3
        self.sequence += 1
        kind_of = type(event)
        rank, keeps_going, progress = _FACTS.get(kind_of) or _facts(kind_of)
        if keeps_going:
            self.keeps_going += 1
            self.progress += progress
        if kind_of is self.in_order:
            fifo = self.fifo
            if fifo and fifo[-1][0] > time:
                raise AssertionError(f"{event!r} at {time} is made out of time order (after one at {fifo[-1][0]})")
            fifo.append((time, event))
            return
        heapq.heappush(self.heap, (time, rank, self.sequence, event))

    def __len__(self) -> int:
        return len(self.heap) + len(self.fifo) + len(self.times) - self.next_submission

    def queued_keeping_going(self) -> int:
        return self.keeps_going + len(self.times) - self.next_submission

    def queued_progress(self) -> int:
        return self.progress + len(self.times) - self.next_submission

    def next_time(self) -> Optional[float]:
        heap, index, fifo = self.heap, self.next_submission, self.fifo
        found: Optional[float] = None
        if index < len(self.times):
            submitted = self.times[index]
            found = heap[0][0] if heap and heap[0][0] < submitted else submitted
        elif heap:
            found = heap[0][0]
        if fifo and (found is None or fifo[0][0] < found):
            return fifo[0][0]
        return found

    def pop_at(self, now: float) -> Optional[Event]:
        """The next event at `now` in apply order, or None when the instant has no more."""
        heap, fifo = self.heap, self.fifo
        if fifo and fifo[0][0] == now and not (heap and heap[0][0] == now and heap[0][1] < self.fifo_rank):
            return self._pop_fifo()
        if heap and heap[0][0] == now and heap[0][1] < _SUBMIT_RANK:
            return self._pop()
        index = self.next_submission
        if index < len(self.times) and self.times[index] == now:
            self.next_submission = index + 1
            return self.submit(self.runs[index])
        if heap and heap[0][0] == now:
            return self._pop()
        return None

    def _pop_fifo(self) -> Event:
        event = self.fifo.popleft()[1]
        _, keeps_going, progress = _FACTS.get(type(event)) or _facts(type(event))
        if keeps_going:
            self.keeps_going -= 1
            self.progress -= progress
        return event

    def _pop(self) -> Event:
        event = heapq.heappop(self.heap)[3]
        _, keeps_going, progress = _FACTS.get(type(event)) or _facts(type(event))
        if keeps_going:
            self.keeps_going -= 1
            self.progress -= progress
        return event


_FACTS: dict[type, tuple[int, bool, bool]] = {}


def _facts(kind_of: type[Event]) -> tuple[int, bool, bool]:
    """An event class's rank, and whether it keeps a replay going and is progress: looked up by class
    (hashing an Enum member runs Python code; a class hashes in C, and this runs for every event)."""
    found = _FACTS.get(kind_of)
    if found is None:
        kind = kind_of.kind
        found = _FACTS[kind_of] = (RANK[kind], kind in KEEPS_GOING, kind in PROGRESS)
    return found


__all__ = ["EventKind", "APPLY_ORDER", "RANK", "Event", "EventQueue"]
