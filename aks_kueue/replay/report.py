"""What a replay says, in the contract's JSON (`../shared/contract/replay.md`, "Output").

Per ClusterQueue: submitted, admitted, started, finished, preemptions, other evictions, pending at
the end, never started, the waits to admission and to start (p50, p95, max), and per flavor and
resource the mean usage against nominal quota and the borrowed resource-hours. Per pool: node-hours,
peak nodes, the mean allocated share of its main resource (its GPUs, else cpu), hours at maxCount.

Conventions a reviewer can check by hand:
- percentiles are nearest-rank (p95 of 20 waits is the 19th smallest);
- a workload still waiting at the end counts with the time it had waited by then (a lower bound), so
  that a queue where nothing starts cannot look good;
- for a workload admitted more than once, `admitted` and `started` are those of its last admission,
  and its waits run from its submission to them;
- amounts are shown in cores (cpu), GiB (memory and other byte resources) or counts (`unit` "");
- with fair sharing on, each ClusterQueue's `fairSharing` gives its weightedShare as Kueue's status
  does (per mille of what its cohort could lend, over its weight, rounded up) at the end and at its
  highest, its time-weighted mean, and the hours it borrowed; `admission` says which algorithm decided.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional

from aks_kueue.replay.engine import DEACTIVATED, FINISHED, PARKED, PENDING, RESERVED, ReplayOutcome, Run
from aks_kueue.replay.trace import Trace

WAIT_KEYS = ("p50", "p95", "max")
BYTE_RESOURCES = ("memory", "ephemeral-storage")
WAITING = (PENDING, RESERVED, PARKED)   # a workload still waiting to be admitted


@dataclass(frozen=True)
class Gate:
    """`--fail-on-wait P95=DURATION`: every ClusterQueue's wait to start at that percentile."""

    statistic: str      # "p50", "p95" or "max"
    limit: float

    def check(self, queues: list[dict[str, Any]]) -> list[dict[str, Any]]:
        found = []
        for queue in queues:
            value = queue["waitToStart"][self.statistic]
            found.append({self.statistic: self.limit, "clusterQueue": queue["name"], "value": value,
                          "passed": value is None or value <= self.limit})
        return found


def percentile(values: list[float], share: float) -> Optional[float]:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def waits(values: list[float]) -> dict[str, Optional[float]]:
    return {"p50": _round(percentile(values, 0.5)), "p95": _round(percentile(values, 0.95)),
            "max": _round(max(values) if values else None)}


def display(resource: str, value: float) -> tuple[float, str]:
    """An amount in Kueue's units in the report's: cores, GiB, or a count."""
    if resource == "cpu":
        return value / 1000, "cores"
    if resource in BYTE_RESOURCES or resource.startswith("hugepages-"):
        return value / 2**30, "GiB"
    return float(value), ""


def configuration(outcome: ReplayOutcome) -> dict[str, Any]:
    """One configuration's part of the document."""
    end = outcome.end
    seen = [r for r in outcome.runs if r.trace.submitted <= end and (r.queue is not None or r.state == PARKED)]
    by_queue: dict[str, list[Run]] = {name: [] for name in outcome.queues}
    for run in seen:
        if run.cq is not None:
            by_queue[run.cq].append(run)
    queues = [_queue(name, runs, outcome, end) for name, runs in by_queue.items()]
    if outcome.shares is not None:
        for queue in queues:
            queue["fairSharing"] = outcome.shares.summary(queue["name"], end)
    return {"name": outcome.config.name, "events": outcome.events, "admission": outcome.config.scheduler.as_json(),
            "clusterQueues": queues,
            "pools": _pools(outcome), "assumptions": outcome.config.assumptions() + outcome.notes,
            "unrouted": sum(r.cq is None for r in seen), "workloads": [_workload(r) for r in seen]}


def document(outcomes: list[ReplayOutcome], trace: Trace, gate: Optional[Gate] = None) -> dict[str, Any]:
    configurations = [configuration(o) for o in outcomes]
    found: dict[str, Any] = {
        "start": _instant(trace.start),
        "end": _round(max(o.end for o in outcomes)),
        "configurations": configurations,
    }
    if len(configurations) == 2:
        found["differences"] = differences(configurations[0], configurations[1])
    gates = gate.check(configurations[0]["clusterQueues"]) if gate is not None else []
    found["summary"] = {"workloads": len(trace.workloads), "events": outcomes[0].events, "gates": gates}
    return found


def differences(first: dict[str, Any], second: dict[str, Any]) -> list[dict[str, Any]]:
    """What the change does per ClusterQueue: the first configuration minus the second."""
    theirs = {q["name"]: q for q in second["clusterQueues"]}
    found = []
    for queue in first["clusterQueues"]:
        other = theirs.get(queue["name"])
        if other is None:
            found.append({"clusterQueue": queue["name"], "only": "first"})
            continue
        entry: dict[str, Any] = {"clusterQueue": queue["name"]}
        for part in ("waitToAdmit", "waitToStart"):
            for key in WAIT_KEYS:
                entry[f"{part}.{key}"] = _minus(queue[part][key], other[part][key])
        for key in ("admitted", "started", "finished", "preemptions", "evictions", "pendingAtEnd", "neverStarted"):
            entry[key] = queue[key] - other[key]
        usage = _utilisation(other)
        entry["utilisation"] = {fr: _minus(value, usage.get(fr)) for fr, value in _utilisation(queue).items()}
        found.append(entry)
    mine = {q["name"] for q in first["clusterQueues"]}
    found += [{"clusterQueue": q["name"], "only": "second"} for q in second["clusterQueues"] if q["name"] not in mine]
    return found


def _utilisation(queue: dict[str, Any]) -> dict[str, Optional[float]]:
    return {f"{u['flavor']}/{u['resource']}": u["utilisation"] for u in queue["usage"]}


def _queue(name: str, runs: list[Run], outcome: ReplayOutcome, end: float) -> dict[str, Any]:
    def waited(run: Run, until: Optional[float]) -> float:
        """To its last admission or start; to the end while it still waits (a lower bound)."""
        return (until if until is not None and run.state not in WAITING else end) - run.trace.submitted

    to_admit = [waited(r, r.admitted) for r in runs]
    to_start = [waited(r, r.started) for r in runs]
    usage = []
    for (flavor, resource), meter in sorted(outcome.meters.get(name, {}).items()):
        nominal, unit = display(resource, meter.nominal)
        mean, _ = display(resource, meter.used / end) if end > 0 else (0.0, unit)
        borrowed, _ = display(resource, meter.borrowed / 3600)
        usage.append({"flavor": flavor, "resource": resource, "nominal": _round(nominal), "meanUsed": _round(mean),
                      "utilisation": _round(mean / nominal, 4) if nominal else None,
                      "borrowedHours": _round(borrowed), "unit": unit})
    return {
        "name": name, "submitted": len(runs),
        "admitted": sum(r.ever_admitted for r in runs), "started": sum(r.ever_started for r in runs),
        "finished": sum(r.state == FINISHED for r in runs), "preemptions": sum(r.preemptions for r in runs),
        "evictions": sum(r.evictions for r in runs),
        "pendingAtEnd": sum(r.state in WAITING for r in runs),
        "neverStarted": sum(r.ever_admitted and not r.ever_started for r in runs),
        "waitToAdmit": waits(to_admit), "waitToStart": waits(to_start), "usage": usage,
    }


def _pools(outcome: ReplayOutcome) -> list[dict[str, Any]]:
    if outcome.nodes is None:
        return []
    found = []
    for pool in outcome.nodes.pools:
        share = pool.allocated_seconds / pool.ready_capacity_seconds if pool.ready_capacity_seconds else None
        found.append({"name": pool.name, "nodeHours": _round(pool.node_seconds / 3600), "peakNodes": pool.peak,
                      "meanAllocated": _round(share, 4), "hoursAtMax": _round(pool.at_max_seconds / 3600),
                      "resource": pool.primary, "minCount": pool.min_count, "maxCount": pool.max_count,
                      "nodeStartup": pool.startup})
    return found


def _workload(run: Run) -> dict[str, Any]:
    return {
        "namespace": run.trace.namespace, "name": run.trace.name, "clusterQueue": run.cq,
        "submitted": _round(run.trace.submitted),
        "admitted": _round(run.admitted),
        "started": _round(run.started), "finished": _round(run.finished),
        "preemptions": run.preemptions, "evictions": run.evictions, "flavors": run.flavors, "counts": run.counts,
        "neverStarted": run.ever_admitted and not run.ever_started,
        "deactivated": run.state == DEACTIVATED,
        "reason": run.reason,
    }


def _minus(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None or b is None:
        return None
    return _round(a - b, 4)


def _round(value: Optional[float], digits: int = 3) -> Optional[float]:
    if value is None:
        return None
    rounded = round(float(value), digits)
    return 0.0 if rounded == 0 else rounded


def _instant(seconds: Optional[float]) -> Optional[str]:
    if seconds is None:
        return None
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    text = moment.isoformat(timespec="milliseconds" if seconds % 1 else "seconds")
    return text.replace("+00:00", "Z")
