"""The scheduler's pace: how long one scheduling cycle takes in virtual time (`--cycle-time`).

Kueue v0.19.2's scheduler (`pkg/scheduler/scheduler.go` `schedule`, run back to back by
`wait.UntilWithBackoff`) takes **one head per ClusterQueue per cycle** (`pkg/cache/queue/manager.go`
`heads`: `cq.Pop()` once per ClusterQueue). So however much quota is free, a ClusterQueue admits at
most one workload a cycle, and a deep queue drains one workload per cycle: its waits grow with its
depth. While some ClusterQueue has a head the cycles run back to back (the next starts at once after
an admission, after a 1-10 ms backoff otherwise, `pkg/util/wait/backoff.go`); with every queue empty
or parked, `Heads` blocks and no cycle runs.

How the replay paces it (`Pace`, driven by the engine's `schedule`):
- a cycle starting at `s` pops the heads, decides them against the state at `s` and reserves their
  quota; what it decided (admissions, evictions of preemption targets) takes effect at `s + T`, when
  Kueue writes the QuotaReserved condition;
- a cycle that changed something is followed by the next one at `s + T`; events between `s` and
  `s + T` (a submission, an end) wait for that next cycle;
- a cycle that changed nothing (a StrictFIFO head that does not fit, a preemptor still waiting) keeps
  the scheduler spinning: the next event is seen at the next cycle boundary `s + k·T`;
- with nothing to schedule the scheduler is idle, and the next event starts a cycle at once.
With `T = 0` every cycle takes no time, as before this module existed: the cycles of an instant run
until one changes nothing.

The default (`KUEUE_14477`). Kueue publishes no per-cycle time and no admission rate
(`../shared/reference/kueue-perf.md`: its performance harness reports wall time, mean time to
admission and ClusterQueue usage only). The one production figure is kubernetes-sigs/kueue#14477:
"Scheduling cycles ~25/min" on "a production GPU cluster (~1,300 nodes, v0.18.x, Fair Sharing +
TAS)", that is 60 / 25 = **2.4 s** a cycle. It is a large cluster's figure (its cost is API round
trips, Topology Aware Scheduling and the preemption search); smaller clusters run faster cycles. The
published figures support no scaling law: #14477 gives one point without a ClusterQueue or pending
count, Kueue's harness only bounds a cycle (its baseline, 30 ClusterQueues of 500 workloads each in
351 s of wall time, runs cycles of at most 0.70 s: at most one admission per ClusterQueue per cycle),
and the code says a cycle's cost grows with the heads it evaluates, the nodes under TAS and the
admitted workloads a preemption search scans, not with the depth of the queues. So the default is
one constant, printed with its source, and a user measures theirs: 60 / (cycles a minute), from
`rate(kueue_admission_attempts_total[5m])` while queues are busy.

A trace in Kueue's generator format replays that harness (envtest, no nodes, 100-ms creation
intervals): there the default is `HARNESS`, 0 s, because 2.4 s would throttle its 30 ClusterQueues to
a fifth of what Kueue's own runs admit, and the harness's waits come from quota, not cycles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

# kubernetes-sigs/kueue#14477: ~25 scheduling cycles a minute.
CYCLES_A_MINUTE_14477 = 25.0
SOURCE_14477 = ("~25 scheduling cycles a minute measured on a ~1,300-node GPU cluster with Fair Sharing and TAS, "
                "Kueue v0.18 (kubernetes-sigs/kueue#14477); Kueue publishes no scaling with ClusterQueues or pending "
                "workloads, and smaller clusters cycle faster: measure yours as 60 / cycles a minute, from "
                "rate(kueue_admission_attempts_total[5m]) while queues are busy")


@dataclass(frozen=True)
class CycleTime:
    """How long one scheduling cycle takes, and where the figure comes from."""

    seconds: float
    source: str     # "given", or why this figure is assumed

    def assumption(self) -> str:
        """The report's sentence for it."""
        head = (f"scheduling cycle {self.seconds:g} s, one head per ClusterQueue per cycle" if self.seconds
                else "scheduling cycles take no time (the scheduler's pace is not modelled)")
        return f"{head} ({self.source})"


KUEUE_14477 = CycleTime(60.0 / CYCLES_A_MINUTE_14477, "assumed: " + SOURCE_14477)
HARNESS = CycleTime(0.0, "assumed for a trace of Kueue's performance harness, whose envtest runs bound a cycle at "
                         "0.70 s at most and whose waits come from quota; give --cycle-time to pace it")
UNPACED = CycleTime(0.0, "no --cycle-time: cycles take no virtual time")


def given(seconds: float) -> CycleTime:
    return CycleTime(seconds, "given")


class Pace:
    """Where the scheduler is in time: busy until its cycle ends, spinning on cycles that change
    nothing (their boundaries kept), or idle."""

    __slots__ = ("seconds", "busy_until", "origin", "tick_at")

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.busy_until = -math.inf
        self.origin: Optional[float] = None     # the start of the last cycle, while spinning
        self.tick_at: Optional[float] = None    # a cycle start already asked for

    def next_start(self, now: float) -> float:
        """When the next cycle can start, for an event at `now` with the scheduler not busy."""
        if self.origin is None:
            return now
        cycles = math.ceil(round((now - self.origin) / self.seconds, 9))
        return round(self.origin + max(1, cycles) * self.seconds, 6)

    def started(self, now: float, changed: bool) -> float:
        """A cycle began at `now`: busy until it ends (the returned instant); spinning after it when it
        changed nothing."""
        end = round(now + self.seconds, 6)
        self.busy_until = end
        self.origin = None if changed else now
        self.tick_at = None
        return end

    def idle(self) -> None:
        self.origin = None
        self.tick_at = None


__all__ = ["CycleTime", "Pace", "KUEUE_14477", "HARNESS", "UNPACED", "given", "CYCLES_A_MINUTE_14477", "SOURCE_14477"]
