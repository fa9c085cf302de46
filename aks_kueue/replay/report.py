"""What a replay says, in the contract's JSON (`../shared/contract/replay.md`, "Output").

The report covers a window (`--from`, `--until`): the workloads submitted in it, and usage and nodes
over it; what came before is warm-up. Per ClusterQueue: submitted, admitted, started, finished, each
workload's state at the end (`finished + running + admittedAtEnd + pendingAtEnd = submitted`), never
admitted and never started, preemptions (events) and the workloads preempted, other evictions, the
resource-hours of runs a preemption or a spot interruption cut short (`rerunHours`, per resource),
the waits to admission and to start (p50, p95, max, and how many were cut at the end), and per flavor
and resource the mean usage against nominal quota and the borrowed resource-hours. Per Cohort that
holds quota: the same usage rows (`cohorts`). Per pool: node-hours, peak nodes, the mean allocated
share of its main resource (its GPUs, else cpu), hours at maxCount. With an export that records what
happened: `observed` per workload and the `backtest`. With spot pools, `spotEvictions` per pool and
`spotInterruptions` per ClusterQueue and workload. With `--prices`, `cost` per pool (its node-hours
at its hourly price), per ClusterQueue (its share of each pool's cost, by what its pods were
allocated of the pool's main resource there; a pool where nothing was allocated is charged to no
one) and for the configuration.

Conventions a reviewer can check by hand:
- percentiles are nearest-rank (p95 of 20 waits is the 19th smallest);
- a workload still waiting at the end counts with the time it had waited by then, a censored wait:
  the statistics it can raise are listed in `lowerBounds` (printed `≥`), so that a queue where
  nothing starts cannot look good;
- for a workload admitted more than once, `admitted` and `started` are those of its last admission,
  and its waits run from its submission to them; one waiting again at the end has them null;
- amounts are shown in cores (cpu), GiB (memory and other byte resources) or counts (`unit` "");
- with fair sharing on, each ClusterQueue's `fairSharing` gives its weightedShare as Kueue's status
  does (per mille of what its cohort could lend, over its weight, rounded up) at the end and at its
  highest, its time-weighted mean over the window, and the hours it borrowed; `admission` says which
  algorithm decided.
"""

from __future__ import annotations

import io
import json
from array import array
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterator, Optional, Sequence, TextIO

from aks_kueue.aks.prices import shares
from aks_kueue.replay.backtest import backtest, node_startup_suggestions, observed_row
from aks_kueue.replay.engine import PoolAtSince, ReplayOutcome, Run, State
from aks_kueue.replay.stats import percentile
from aks_kueue.replay.stats import rounded as _round
from aks_kueue.replay.trace import Trace

WAIT_KEYS = ("p50", "p95", "max")
BYTE_RESOURCES = ("memory", "ephemeral-storage")
# A workload's state at the end of the window (the contract's `state`).
FINISHED, RUNNING, ADMITTED, PENDING = "finished", "running", "admitted", "pending"
# A workload's row, in the order `_workload` makes it (`_RunText` writes the same keys without it).
ROW_KEYS = ("namespace", "name", "clusterQueue", "submitted", "admitted", "started", "finished", "state", "admissions",
            "preemptions", "evictions", "flavors", "counts", "neverAdmitted", "neverStarted", "deactivated", "reason")
ROWS_PER_WRITE = 512
WARMED_UP_NOTHING = PoolAtSince(0.0, 0.0, 0.0, 0.0, 0, {})   # a pool without a window's warm-up
END_STATES = {State.FINISHED: FINISHED, State.RUNNING: RUNNING, State.ADMITTED: ADMITTED, State.RESERVED: ADMITTED}


def end_state(run: Run) -> str:
    """finished, running, admitted (quota reserved, pods not all placed) or pending (waiting, queued again
    after an eviction, or never considered: parked, deactivated, left out)."""
    return END_STATES.get(run.state, PENDING)


@dataclass(frozen=True)
class Gate:
    """`--fail-on-wait P95=DURATION`: every ClusterQueue's wait to start at that percentile."""

    statistic: str      # "p50", "p95" or "max"
    limit: float

    def check(self, queues: list[dict[str, Any]], unrouted: int = 0) -> list[dict[str, Any]]:
        """Per ClusterQueue, its wait at the statistic against the limit (a censored wait counts with what
        it had waited by the end, so the value may be a lower bound: `lowerBound`); the gate fails closed,
        so workloads that reach no ClusterQueue fail it too."""
        found = []
        for queue in queues:
            waits = queue["waitToStart"]
            value = waits[self.statistic]
            found.append({self.statistic: self.limit, "clusterQueue": queue["name"], "value": value,
                          "lowerBound": self.statistic in waits["lowerBounds"],
                          "passed": value is None or value <= self.limit})
        if unrouted:
            found.append({self.statistic: self.limit, "clusterQueue": None, "value": None, "lowerBound": False,
                          "unrouted": unrouted, "passed": False})
        return found


def waits(values: Sequence[float], censored: Sequence[float] = ()) -> dict[str, Any]:
    """p50, p95 and max of `values` (every wait, `censored` among them: the waits cut at the end),
    how many were cut, and which statistics are then lower bounds: a nearest-rank statistic is exact
    when every censored wait lies above it (raising one cannot move it), else at least what it says."""
    ordered = sorted(values)  # once for the three
    found: dict[str, Any] = {"p50": percentile(ordered, 0.5), "p95": percentile(ordered, 0.95),
                             "max": ordered[-1] if ordered else None}
    lowest = min(censored, default=None)
    bounds = [k for k in WAIT_KEYS if lowest is not None and found[k] is not None and lowest <= found[k]]
    found = {k: _round(v) for k, v in found.items()}
    found["censored"] = len(censored)
    found["lowerBounds"] = bounds
    return found


def display(resource: str, value: float) -> tuple[float, str]:
    """An amount in Kueue's units in the report's: cores, GiB, or a count."""
    if resource == "cpu":
        return value / 1000, "cores"
    if resource in BYTE_RESOURCES or resource.startswith("hugepages-"):
        return value / 2**30, "GiB"
    return float(value), ""


class Rows:
    """The workloads of one configuration, one dict at a time: iterable again and again, and never
    all in memory (a month of history is millions; the document is written as it is read, `write`)."""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        raise NotImplementedError

    def texts(self, level: int) -> Iterator[str]:
        """Each row's text as `write` puts it at `level` (`json.dumps(row, indent=2)`, indented)."""
        row_text = _RowText(level)
        return (row_text(row) for row in self)

    def to_file(self, path: str) -> "FileRows":
        with open(path, "w", encoding="utf-8") as handle:
            for row in self:
                handle.write(json.dumps(row, separators=(",", ":")) + "\n")
        return FileRows(path)


class RunRows(Rows):
    """Read from a replay's runs."""

    def __init__(self, outcome: ReplayOutcome):
        self.outcome = outcome

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if _has_spot(self.outcome):
            return ({**_workload(r), "spotInterruptions": r.interruptions} for r in _seen(self.outcome))
        return (_workload(r) for r in _seen(self.outcome))

    def texts(self, level: int) -> Iterator[str]:
        """The rows' text read from the runs directly (`_RunText`): a million rows are written without
        a dict built for each."""
        if _has_spot(self.outcome):
            return super().texts(level)
        run_text = _RunText(level)
        return (run_text(r) for r in _seen(self.outcome))


class FileRows(Rows):
    """Read from a file a replay wrote (`to_file`), in this process or another."""

    def __init__(self, path: str):
        self.path = path

    def __iter__(self) -> Iterator[dict[str, Any]]:
        with open(self.path, encoding="utf-8") as handle:
            for line in handle:
                yield json.loads(line)


@dataclass
class Steps:
    """A step function of virtual time (pending workloads of a ClusterQueue, nodes of a pool)."""

    times: array
    values: array

    @property
    def series(self) -> list[tuple[float, int]]:
        return list(zip(self.times, self.values))


@dataclass
class Usage:
    """A usage step function for the chart: a ClusterQueue's busiest flavor-resource against its
    nominal quota, or a Cohort's usage of its own quota (the subtree's usage less what its children
    lend, `lent`, up to its nominal quota)."""

    label: str              # "flavor/resource"
    nominal: int
    steps: Steps
    lent: Optional[int] = None   # a Cohort's: its subtree quota less its own nominal

    def shares(self) -> list[tuple[float, float]]:
        """(time, share of nominal quota) for each step."""
        if not self.nominal:
            return [(t, 0.0) for t in self.steps.times]
        if self.lent is None:
            return [(t, v / self.nominal) for t, v in self.steps.series]
        return [(t, min(self.nominal, max(0, v - self.lent)) / self.nominal) for t, v in self.steps.series]


@dataclass
class Result:
    """One configuration's replay as the report needs it, and nothing more (it crosses processes):
    its part of the contract's document (`part`, whose workloads are `Rows`), its window, and the
    time series the chart draws."""

    part: dict[str, Any]
    end: float
    events: int
    queues: dict[str, Steps]
    pools: Optional[dict[str, Steps]]      # None: no node pools
    since: float = 0.0
    usage: dict[str, Usage] = field(default_factory=dict)     # per ClusterQueue with quota
    cohorts: dict[str, Usage] = field(default_factory=dict)   # per Cohort with quota of its own
    # With fair sharing, each ClusterQueue's precise weighted share over time (inf: a weight-0 queue
    # that borrows); None without fair sharing.
    fair_shares: Optional[dict[str, Steps]] = None


def result(outcome: ReplayOutcome) -> Result:
    queues = {name: Steps(queue.times, queue.values) for name, queue in outcome.queues.items()}
    pools = None if outcome.nodes is None else {
        pool.name: Steps(array("d", (t for t, _ in pool.series)), array("q", (v for _, v in pool.series)))
        for pool in outcome.nodes.pools}
    fair_shares = None if outcome.shares is None else {
        name: Steps(array("d", (t for t, _ in series)), array("d", (d.precise_weighted_share() for _, d in series)))
        for name, series in outcome.shares.series.items()}
    part = configuration(outcome)
    usage = {}
    for queue in part["clusterQueues"]:
        busiest = _busiest(queue["usage"])
        if busiest is None:
            continue
        meter = outcome.meters[queue["name"]][(busiest["flavor"], busiest["resource"])]
        if meter.times is not None and meter.values is not None:  # recorded for a picture
            usage[queue["name"]] = Usage(f"{busiest['flavor']}/{busiest['resource']}", meter.nominal,
                                         Steps(meter.times, meter.values))
    cohorts = {}
    for cohort in part["cohorts"]:
        busiest = _busiest(cohort["usage"])
        if busiest is not None and outcome.cohorts is not None:
            found = outcome.cohorts.meters[cohort["name"]][(busiest["flavor"], busiest["resource"])]
            cohorts[cohort["name"]] = Usage(f"{busiest['flavor']}/{busiest['resource']}", found.nominal,
                                            Steps(found.times, found.values), found.subtree_quota - found.nominal)
    return Result(part, outcome.end, outcome.events, queues, pools, outcome.since, usage, cohorts, fair_shares)


def _busiest(rows: list[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """The usage row with the highest utilisation (the first by name on a tie), None without quota."""
    rated = [row for row in rows if row["utilisation"] is not None]
    return max(rated, key=lambda row: row["utilisation"]) if rated else None


def configuration(outcome: ReplayOutcome) -> dict[str, Any]:
    """One configuration's part of the document; its workloads are read from the runs when written."""
    by_queue: dict[str, list[Run]] = {name: [] for name in outcome.queues}
    unrouted = 0
    observed = []   # an export's record of what happened, for the backtest
    for run in _seen(outcome):
        if run.cq is not None:
            by_queue[run.cq].append(run)
        else:
            unrouted += 1
        if run.trace.observed is not None:
            observed.append((run, run.trace.observed))
    queues = [_queue(name, runs, outcome) for name, runs in by_queue.items()]
    if outcome.shares is not None:
        for queue in queues:
            queue["fairSharing"] = outcome.shares.summary(queue["name"], outcome.end, outcome.since)
    pools = _pools(outcome)
    if _has_spot(outcome):
        _add_spot(queues, pools, by_queue, outcome)
    found = {"name": outcome.config.name, "events": outcome.events, "admission": outcome.config.scheduler.as_json(),
             "clusterQueues": queues, "cohorts": _cohorts(outcome), "pools": pools,
             "assumptions": outcome.config.assumptions() + outcome.notes, "unrouted": unrouted,
             "workloads": RunRows(outcome)}
    if outcome.config.prices is not None and outcome.nodes is not None:
        found["cost"] = _add_costs(queues, pools, outcome)
    if any(o.admitted is not None for _, o in observed):
        found["backtest"] = backtest(observed, outcome.end)
        found["nodeStartup"] = node_startup_suggestions(observed, outcome.config)
    return found


def _seen(outcome: ReplayOutcome) -> Iterator[Run]:
    """The workloads the report counts: submitted in the window, and reaching a queue (or refused
    before one)."""
    since, end = outcome.since, outcome.end
    return (r for r in outcome.runs if since <= r.trace.submitted <= end
            and (r.queue is not None or r.state is State.PARKED))


def document(outcomes: Sequence[ReplayOutcome | Result], trace: Trace, gate: Optional[Gate] = None) -> dict[str, Any]:
    results = [o if isinstance(o, Result) else result(o) for o in outcomes]
    configurations = [r.part for r in results]
    found: dict[str, Any] = {
        "start": _instant(trace.start),
        "from": _round(min(r.since for r in results)),
        "end": _round(max(r.end for r in results)),
        "configurations": configurations,
    }
    if len(configurations) == 2:
        found["differences"] = differences(configurations[0], configurations[1])
    gates = gate.check(configurations[0]["clusterQueues"], configurations[0]["unrouted"]) if gate is not None else []
    found["summary"] = {"workloads": len(trace.workloads), "events": results[0].events, "gates": gates}
    return found


def write(value: Any, out: TextIO, level: int = 0) -> None:
    """`value` as `json.dumps(value, indent=2)` writes it, byte for byte, with every `Rows` in it written
    one workload at a time (the whole text of a month of workloads would be gigabytes)."""
    pad = "  " * level
    if isinstance(value, Rows):
        first, between, chunk = True, ",\n" + pad + "  ", []
        for text in value.texts(level + 1):
            chunk.append(text)
            if len(chunk) == ROWS_PER_WRITE:  # a few large writes, not one per row (stdout may be unbuffered)
                out.write(("[\n" + pad + "  " if first else between) + between.join(chunk))
                first, chunk = False, []
        if chunk:
            out.write(("[\n" + pad + "  " if first else between) + between.join(chunk))
            first = False
        out.write("[]" if first else "\n" + pad + "]")
    elif isinstance(value, dict) and _streams(value):
        if not value:
            out.write("{}")
            return
        out.write("{")
        for index, (key, item) in enumerate(value.items()):
            out.write(("\n" if index == 0 else ",\n") + pad + "  " + json.dumps(key) + ": ")
            write(item, out, level + 1)
        out.write("\n" + pad + "}")
    elif isinstance(value, list) and _streams(value):
        out.write("[")
        for index, item in enumerate(value):
            out.write(("\n" if index == 0 else ",\n") + pad + "  ")
            write(item, out, level + 1)
        out.write("\n" + pad + "]" if value else "]")
    else:
        out.write(_dumps(value, level))


def dumps(value: Any) -> str:
    """`write` into a string (for tests and small documents)."""
    buffer = io.StringIO()
    write(value, buffer)
    return buffer.getvalue()


_string = json.encoder.encode_basestring_ascii
_INFINITE = (float("inf"), float("-inf"))
_INF = float("inf")


class _RowText:
    """`_dumps(row, level)` for a workload's row (a map of scalars and small maps), made faster: its
    scalars are written directly and each small map (a few dozen distinct ones: the flavors and
    counts of an assignment) once, so writing a million rows costs seconds, not tens of them."""

    def __init__(self, level: int):
        self.inner = "\n" + "  " * (level + 1)
        self.end = "\n" + "  " * level + "}"
        self.maps: dict[int, tuple[Any, str]] = {}   # id -> (the map, kept so the id stays its own; text)
        self.keys: dict[str, str] = {}
        self.level = level

    def __call__(self, row: dict[str, Any]) -> str:
        if not row:
            return "{}"
        parts, keys = [], self.keys
        for key, value in row.items():
            kind = type(value)
            if kind is str:
                text = _string(value)  # what json.dumps writes for a string (ensure_ascii)
            elif value is None:
                text = "null"
            elif kind is bool:
                text = "true" if value else "false"
            elif kind is int:
                text = int.__repr__(value)
            elif kind is float and value == value and value not in _INFINITE:
                text = float.__repr__(value)  # the encoder's float text (it spells NaN and Infinity)
            elif kind is dict:
                text = self.map(value)
            else:
                return _dumps(row, self.level)
            shown = keys.get(key)
            if shown is None:
                shown = keys[key] = json.dumps(key) + ": "
            parts.append(shown + text)
        return "{" + self.inner + ("," + self.inner).join(parts) + self.end

    def map(self, value: dict[str, Any]) -> str:
        if not value:
            return "{}"
        known = self.maps.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        if len(self.maps) > 4096:
            self.maps.clear()
        text = _dumps(value, self.level + 1)
        self.maps[id(value)] = (value, text)
        return text


class _RunText:
    """`_RowText(level)(_workload(run))`, byte for byte, read from the run itself (the row's dict is not
    built): its keys' text made once, its small maps through `_RowText.map`. A row this does not write
    the common way (an observed record, a time that is not a finite number) goes through `_workload`."""

    def __init__(self, level: int):
        self.row_text = _RowText(level)
        inner = self.row_text.inner

        def key(name: str, first: bool = False) -> str:
            return ("{" if first else ",") + inner + json.dumps(name) + ": "

        self.keys = tuple(key(k, i == 0) for i, k in enumerate(ROW_KEYS))
        self.end = self.row_text.end

    def __call__(self, run: Run) -> str:
        trace = run.trace
        if trace.observed is not None:
            return self.row_text(_workload(run))
        state = END_STATES.get(run.state, PENDING)
        waiting = state == PENDING or run.state is State.RESERVED
        # `_round`'s value (+ 0.0 turns -0.0 into 0.0) and the encoder's text; a time equal to the one
        # before it (admitted on submission, started on admission) is the same text.
        submitted = round(float(trace.submitted), 3) + 0.0
        admitted = None if waiting or run.admitted is None else round(float(run.admitted), 3) + 0.0
        started = None if waiting or run.started is None else round(float(run.started), 3) + 0.0
        finished = None if run.finished is None else round(float(run.finished), 3) + 0.0
        if not -_INF < submitted < _INF or any(t is not None and not -_INF < t < _INF
                                                  for t in (admitted, started, finished)):
            return self.row_text(_workload(run))  # the encoder's NaN or Infinity: the common way
        submitted_text = float.__repr__(submitted)
        admitted_text = "null" if admitted is None else (
            submitted_text if admitted == submitted else float.__repr__(admitted))
        started_text = "null" if started is None else (
            admitted_text if started == admitted else float.__repr__(started))
        k, cq, reason, ever_admitted, maps = self.keys, run.cq, run.reason, run.ever_admitted, self.row_text.map
        return "".join((
            k[0], _string(trace.namespace), k[1], _string(trace.name), k[2], "null" if cq is None else _string(cq),
            k[3], submitted_text, k[4], admitted_text, k[5], started_text,
            k[6], "null" if finished is None else float.__repr__(finished), k[7], _string(state),
            k[8], int.__repr__(run.admissions), k[9], int.__repr__(run.preemptions),
            k[10], int.__repr__(run.evictions), k[11], maps(run.flavors or {}), k[12], maps(run.counts or {}),
            k[13], "false" if ever_admitted else "true",
            k[14], "true" if ever_admitted and not run.ever_started else "false",
            k[15], "true" if run.state is State.DEACTIVATED else "false",
            k[16], "null" if reason is None else _string(reason), self.end))


def _dumps(value: Any, level: int) -> str:
    return json.dumps(value, indent=2).replace("\n", "\n" + "  " * level) if level else json.dumps(value, indent=2)


def _streams(value: Any) -> bool:
    """Does `value` hold a `Rows` somewhere (only the document's own levels can)?"""
    if isinstance(value, Rows):
        return True
    if isinstance(value, dict):
        return any(isinstance(v, (dict, list, Rows)) and _streams(v) for v in value.values())
    if isinstance(value, list):
        return any(isinstance(v, (dict, Rows)) and _streams(v) for v in value)
    return False


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
        for key in ("admitted", "started", "finished", "preemptions", "preemptedWorkloads", "evictions",
                    "pendingAtEnd", "neverAdmitted", "neverStarted"):
            entry[key] = queue[key] - other[key]
        usage = _utilisation(other)
        entry["utilisation"] = {fr: _minus(value, usage.get(fr)) for fr, value in _utilisation(queue).items()}
        entry.update(_spot_and_cost_differences(queue, other))
        found.append(entry)
    mine = {q["name"] for q in first["clusterQueues"]}
    found += [{"clusterQueue": q["name"], "only": "second"} for q in second["clusterQueues"] if q["name"] not in mine]
    return found


def _spot_and_cost_differences(queue: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """The differences of reruns, spot interruptions and cost, where both configurations report them."""
    found: dict[str, Any] = {}
    mine, theirs = queue.get("rerunHours"), other.get("rerunHours")
    if mine is not None and theirs is not None:
        found["rerunHours"] = {r: _round(mine.get(r, 0.0) - theirs.get(r, 0.0)) for r in sorted({*mine, *theirs})}
    if "spotInterruptions" in queue or "spotInterruptions" in other:
        found["spotInterruptions"] = queue.get("spotInterruptions", 0) - other.get("spotInterruptions", 0)
    if "cost" in queue and "cost" in other:
        found["cost"] = _round(queue["cost"]["amount"] - other["cost"]["amount"], 2)
    return found


def _utilisation(queue: dict[str, Any]) -> dict[str, Optional[float]]:
    return {f"{u['flavor']}/{u['resource']}": u["utilisation"] for u in queue["usage"]}


def _queue(name: str, runs: list[Run], outcome: ReplayOutcome) -> dict[str, Any]:
    end = outcome.end
    to_admit, to_start = array("d"), array("d")
    cut_admit, cut_start = array("d"), array("d")
    states = dict.fromkeys((FINISHED, RUNNING, ADMITTED, PENDING), 0)
    rerun: dict[str, float] = {}
    # Counted in the one pass over the runs (a month of history is millions).
    admitted = started = never_started = preemptions = preempted = evictions = 0
    for run in runs:
        state = END_STATES.get(run.state, PENDING)
        states[state] += 1
        if run.ever_admitted:
            admitted += 1
            never_started += not run.ever_started
        started += run.ever_started
        if run.preemptions:
            preemptions += run.preemptions
            preempted += 1
        evictions += run.evictions
        if run.rerun:
            for resource, seconds in run.rerun.items():
                rerun[resource] = rerun.get(resource, 0.0) + seconds
        waited = end - run.trace.submitted   # while it still waits: cut at the end (a lower bound)
        if state in (FINISHED, RUNNING) and run.admitted is not None and run.started is not None:
            to_admit.append(run.admitted - run.trace.submitted)
            to_start.append(run.started - run.trace.submitted)
            continue
        if run.state is State.ADMITTED and run.admitted is not None:
            to_admit.append(run.admitted - run.trace.submitted)
        else:
            to_admit.append(waited)
            cut_admit.append(waited)
        to_start.append(waited)
        cut_start.append(waited)
    return {
        "name": name, "submitted": len(runs), "admitted": admitted, "started": started,
        "finished": states[FINISHED], "running": states[RUNNING], "admittedAtEnd": states[ADMITTED],
        "pendingAtEnd": states[PENDING], "neverAdmitted": len(runs) - admitted, "neverStarted": never_started,
        "preemptions": preemptions, "preemptedWorkloads": preempted, "evictions": evictions,
        "rerunHours": {resource: _round(display(resource, seconds / 3600)[0]) for resource, seconds in
                       sorted(rerun.items())},
        "waitToAdmit": waits(to_admit, cut_admit), "waitToStart": waits(to_start, cut_start),
        "usage": [_usage_row(flavor, resource, meter.nominal, meter.used - meter.base[0],
                             meter.borrowed - meter.base[1], outcome)
                  for (flavor, resource), meter in sorted(outcome.meters.get(name, {}).items())],
    }


def _usage_row(flavor: str, resource: str, nominal_amount: int, used: float, borrowed_seconds: float,
               outcome: ReplayOutcome) -> dict[str, Any]:
    """Mean usage over the window against nominal quota, and the borrowed resource-hours, in the report's units."""
    span = outcome.end - outcome.since
    nominal, unit = display(resource, nominal_amount)
    mean = display(resource, used / span)[0] if span > 0 else 0.0
    return {"flavor": flavor, "resource": resource, "nominal": _round(nominal), "meanUsed": _round(mean),
            "utilisation": _round(mean / nominal, 4) if nominal else None,
            "borrowedHours": _round(display(resource, borrowed_seconds / 3600)[0]), "unit": unit}


def _cohorts(outcome: ReplayOutcome) -> list[dict[str, Any]]:
    """Every Cohort with quota of its own: its own quota's usage (`cohorts.CohortUsage`), borrowing from
    its parent, and its subtree's quota and usage."""
    if outcome.cohorts is None:
        return []
    span = outcome.end - outcome.since
    found = []
    for name, meters in outcome.cohorts.meters.items():
        rows = []
        for (flavor, resource), meter in meters.items():
            subtree, own, borrowed = meter.since_opened()
            row = _usage_row(flavor, resource, meter.nominal, own, borrowed, outcome)
            row["subtreeQuota"] = _round(display(resource, meter.subtree_quota)[0])
            row["subtreeMeanUsed"] = _round(display(resource, subtree / span)[0]) if span > 0 else 0.0
            rows.append(row)
        found.append({"name": name, "usage": rows})
    return found


def _pools(outcome: ReplayOutcome) -> list[dict[str, Any]]:
    """Per pool, over the window: node-hours, the peak, the mean allocated share, hours at maxCount."""
    if outcome.nodes is None:
        return []
    found = []
    for pool in outcome.nodes.pools:
        before = outcome.pools_at_since.get(pool.name, WARMED_UP_NOTHING)
        node_seconds = pool.node_seconds - before.node_seconds
        capacity = pool.ready_capacity_seconds - before.capacity_seconds
        allocated = pool.allocated_seconds - before.allocated_seconds
        at_max = pool.at_max_seconds - before.at_max_seconds
        found.append({"name": pool.name, "nodeHours": _round(node_seconds / 3600), "peakNodes": pool.peak,
                      "meanAllocated": _round(allocated / capacity, 4) if capacity > 0 else None,
                      "hoursAtMax": _round(at_max / 3600), "resource": pool.primary, "minCount": pool.min_count,
                      "maxCount": pool.max_count, "nodeStartup": pool.startup})
    return found


def _has_spot(outcome: ReplayOutcome) -> bool:
    return outcome.nodes is not None and any(pool.spot for pool in outcome.nodes.pools)


def _add_spot(queues: list[dict[str, Any]], pools: list[dict[str, Any]], by_queue: dict[str, list[Run]],
              outcome: ReplayOutcome) -> None:
    """`spotEvictions` on every pool, `spotInterruptions` on every ClusterQueue (a configuration with spot pools)."""
    assert outcome.nodes is not None
    for row, pool in zip(pools, outcome.nodes.pools):
        row["spot"] = pool.spot
        row["spotEvictions"] = pool.evictions - outcome.pools_at_since.get(pool.name, WARMED_UP_NOTHING).spot_evictions
    for queue in queues:
        queue["spotInterruptions"] = sum(run.interruptions for run in by_queue[queue["name"]])


def _add_costs(queues: list[dict[str, Any]], pools: list[dict[str, Any]], outcome: ReplayOutcome) -> dict[str, Any]:
    """`cost` per pool (None without a price), per ClusterQueue (its shares; `unpriced` names the pools
    its pods used that have no price, so that its amount is a lower bound) and the configuration's."""
    prices, nodes = outcome.config.prices, outcome.nodes
    assert prices is not None and nodes is not None
    charged: dict[str, float] = {}
    unpriced: dict[str, list[str]] = {}
    total = unallocated = 0.0
    for row, pool in zip(pools, nodes.pools):
        price = prices.prices.get(pool.name)
        before = outcome.pools_at_since.get(pool.name, WARMED_UP_NOTHING)   # the window's share only
        held = {queue: seconds - before.held.get(queue, 0.0) for queue, seconds in pool.queue_seconds(outcome.end).items()}
        if price is None:
            row["cost"] = None
            for name in sorted(q for q, seconds in held.items() if seconds > 0):
                unpriced.setdefault(name, []).append(pool.name)
            continue
        cost = price.cost((pool.node_seconds - before.node_seconds) / 3600)
        row["cost"] = cost.as_json()
        total += cost.amount
        split = shares(cost.amount, held)
        if not split:
            unallocated += cost.amount
        for name, amount in split.items():
            charged[name] = charged.get(name, 0.0) + amount
    currency = prices.currency
    for queue in queues:
        queue["cost"] = {"amount": _round(charged.get(queue["name"], 0.0), 2), "currency": currency}
        if queue["name"] in unpriced:
            queue["cost"]["unpriced"] = unpriced[queue["name"]]
    found: dict[str, Any] = {"amount": _round(total, 2), "currency": currency,
                             "unallocated": _round(unallocated, 2)}
    missing = [pool.name for pool in nodes.pools if pool.name in prices.missing]
    if missing:
        found["unpriced"] = missing
    return found


def _workload(run: Run) -> dict[str, Any]:
    state = end_state(run)
    # Queued again after an eviction, or waiting for its ProvisioningRequest: no admission of the present.
    waiting = state == PENDING or run.state is State.RESERVED
    found: dict[str, Any] = {
        "namespace": run.trace.namespace, "name": run.trace.name, "clusterQueue": run.cq,
        "submitted": _round(run.trace.submitted),
        "admitted": None if waiting else _round(run.admitted),
        "started": None if waiting else _round(run.started), "finished": _round(run.finished),
        "state": state, "admissions": run.admissions,
        "preemptions": run.preemptions, "evictions": run.evictions, "flavors": run.flavors or {}, "counts": run.counts or {},
        "neverAdmitted": not run.ever_admitted, "neverStarted": run.ever_admitted and not run.ever_started,
        "deactivated": run.state is State.DEACTIVATED,
        "reason": run.reason,
    }
    if run.trace.observed is not None:
        found["observed"] = observed_row(run.trace.observed)
    return found


def _minus(a: Optional[float], b: Optional[float]) -> Optional[float]:
    if a is None or b is None:
        return None
    return _round(a - b, 4)


def _instant(seconds: Optional[float]) -> Optional[str]:
    if seconds is None:
        return None
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    text = moment.isoformat(timespec="milliseconds" if seconds % 1 else "seconds")
    return text.replace("+00:00", "Z")
