"""The event queue: events of one instant in apply order, whichever way they wait."""

from __future__ import annotations

import random

from aks_kueue.replay.engine import Backoff, Finish, Requeue, Submit, Timeout
from aks_kueue.replay.events import EventQueue


def _popped(queue: EventQueue) -> list:
    """(time, the event) in the order they come out; a submission (made as it comes out) by its run."""
    found = []
    while (now := queue.next_time()) is not None:
        while (event := queue.pop_at(now)) is not None:
            found.append((now, ("submit", id(event.run)) if isinstance(event, Submit) else id(event)))
    return found


def test_events_made_in_time_order_wait_in_a_fifo_and_come_out_as_from_the_heap():
    # Requeues are made a fixed time after the instant being replayed, so in time order: the queue keeps
    # them first in, first out. What comes out, and when, is what the heap alone gives: by time, then
    # apply order (a workload's end, a timeout, a backoff, a requeue, submissions last), then as made.
    rng = random.Random(7)
    times = sorted(round(rng.uniform(0, 20)) / 2 for _ in range(40))
    runs = [object() for _ in times]
    queues = [EventQueue(times, runs, Submit), EventQueue(times, runs, Submit, in_order=Requeue)]
    now = 0.0
    for step in range(400):
        now += rng.choice((0.0, 0.0, 0.5))
        kind = rng.choice((Finish, Timeout, Backoff, Requeue))
        at = now + 1.0 if kind is Requeue else now + rng.choice((0.0, 0.5, 1.0, 1.5))
        event = Requeue(f"root-{step}") if kind is Requeue else kind(runs[step % len(runs)], step)
        for queue in queues:
            queue.push(at, event)
    assert len(queues[1].fifo) > 50 and len(queues[1].heap) < len(queues[0].heap)
    assert len(queues[0]) == len(queues[1])
    heap_only, with_fifo = _popped(queues[0]), _popped(queues[1])
    assert len(heap_only) == 400 + len(times)
    assert with_fifo == heap_only
    assert queues[1].queued_keeping_going() == 0


def test_an_event_made_out_of_time_order_is_refused_not_misplaced():
    queue = EventQueue([], [], Submit, in_order=Requeue)
    queue.push(5.0, Requeue("a"))
    try:
        queue.push(4.0, Requeue("b"))
    except AssertionError as error:
        assert "out of time order" in str(error)
    else:
        raise AssertionError("a requeue made before the last one was taken")
