"""A trace: the workloads teams submitted, when, and for how long each ran.

Every reader (`formats`) turns its input into `TraceWorkload`s. A workload's pods are kept as
the pod sets of the v1beta2 Workload Kueue would hold (`Shape.pod_sets`), trimmed to what
admission and placement read (requests, limits, overhead, node selector, affinity,
tolerations), so that the admission core computes its usage with its own function
(`aks_kueue.admission.workloads.workload_info`), and equal shapes are kept once.

Times: `submitted` is either an instant (seconds since the Unix epoch, from an RFC 3339 time)
or seconds from the start of the trace; `Trace.finish()` puts every workload on one clock,
seconds from the earliest submission, and keeps that instant as `start`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from fractions import Fraction
from sys import intern
from typing import Any, Callable, Optional

from aks_kueue.k8s.field import FieldError
from aks_kueue.k8s.loader import LoadError
from aks_kueue.k8s.spelling import suggest
from aks_kueue.kueue.config_api import parse_duration

# Past this many workloads a trace is refused: a month of a large organisation is a few
# hundred thousand; this keeps a wrong file (or an endless stream) from exhausting memory.
MAX_WORKLOADS = 2_000_000
# A trace's submissions lie within this many days of each other, and a runtime is at most as long:
# a year of history with room to spare. A time past it is a typo (9999-12-31) that would stretch the
# replay's window until every utilisation reads 0.
MAX_SPAN_DAYS = 400
MAX_SPAN = MAX_SPAN_DAYS * 86400.0
# Trimmed pod specs keep these keys: what pod requests, flavor matching and node placement read.
POD_KEYS = ("containers", "initContainers", "overhead", "resources", "nodeSelector", "affinity", "tolerations")
CONTAINER_KEYS = ("name", "resources", "restartPolicy")
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


@dataclass(frozen=True)
class TraceError(LoadError):
    """A trace that cannot be used: the file, the line (JSON Lines, CSV) or document (YAML,
    JSON), and the field, in one sentence (`LoadError`'s)."""


@dataclass(slots=True)  # one per line read: not frozen, whose __init__ costs twice as much
class Where:
    """A place in a trace file (its line, or its document and the path to a value in it): every
    reader builds its errors with one, `where(field, message)`, so that they all read alike."""

    file: str
    document: Optional[int] = None
    line: Optional[int] = None
    prefix: str = ""   # the path to the value the fields are in (`items[2].`)

    def __call__(self, key: Optional[str], message: str) -> TraceError:
        key = self.prefix + key if key is not None else (self.prefix.rstrip(".") or None)
        return TraceError(self.file, self.document, message, line=self.line, key=key)

    def under(self, prefix: str) -> "Where":
        return replace(self, prefix=self.prefix + prefix)

    def known(self, value: Any, keys: tuple[str, ...]) -> None:
        """Refuse a `value` that is not a map, or its first key that is not one of `keys`, with the likely one."""
        if not isinstance(value, dict):
            raise self(None, "must be a map")
        for key in value:
            if key not in keys:
                text = str(key) if len(str(key)) <= 80 else str(key)[:77] + "..."  # a key can be a megabyte
                raise self(text, f"unknown field{suggest(text, keys)} (known: {', '.join(keys)})")


def refused(where: Callable[[Optional[str], str], TraceError], problem: FieldError) -> TraceError:
    """A field error built by `k8s.field` (Kubernetes' wording lives there alone), at a place in a trace."""
    return where(problem.field or None, problem.text)


@dataclass(eq=False)
class Shape:
    """The pod sets of one workload shape (v1beta2 `spec.podSets`, pod templates trimmed), kept
    once however many workloads share it. `key` is its canonical JSON."""

    pod_sets: list[dict[str, Any]]
    key: str


@dataclass(frozen=True, slots=True)
class Observed:
    """What a Workload export records of what happened (the backtest's side, `backtest`): the last
    `Admitted=True` time, the `PodsReady=True` (reason Started) time after it, and the flavors of its
    admission. Times are instants (epoch seconds) as read, seconds from the start after `Trace.finish`;
    None when it had not happened by the export."""

    admitted: Optional[float]
    started: Optional[float]
    flavors: tuple[str, ...] = ()

    def shifted(self, by: float) -> "Observed":
        return Observed(None if self.admitted is None else round(self.admitted - by, 6),
                        None if self.started is None else round(self.started - by, 6), self.flavors)


@dataclass(eq=False, slots=True)
class TraceWorkload:
    namespace: str
    name: str
    queue: str                      # the LocalQueue (spec.queueName)
    submitted: float                # an instant (epoch seconds) when `absolute`, else seconds from the start
    runtime: Optional[float]        # None: it runs until the end of the replay
    shape: Shape
    priority: Optional[int] = None
    priority_class: Optional[str] = None  # a WorkloadPriorityClass, resolved per configuration
    absolute: bool = False
    uid: str = ""
    file: str = ""                  # the file it came from (one string per file, shared)
    order: int = 0                  # position in the trace (`Trace.add`): files as given, lines in order
    line: int = 0                   # its line (JSON Lines, CSV), or 0
    document: int = -1              # its document (YAML, JSON), or -1
    item: int = -1                  # its place in a List document's items, or -1
    observed: Optional[Observed] = None   # an export's record of what happened (the backtest), or None

    def __post_init__(self) -> None:
        # A month of workloads names a few namespaces, queues and classes: one string each.
        self.namespace, self.queue = intern(self.namespace), intern(self.queue)
        if self.priority_class is not None:
            self.priority_class = intern(self.priority_class)


@dataclass
class Trace:
    workloads: list[TraceWorkload] = field(default_factory=list)
    # The instant of time 0 (the earliest submission), when the trace has real times.
    start: Optional[float] = None
    files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # A generator file defines queues as well (`formats.generator`): the configuration it makes.
    generated: Any = None
    _shapes: dict[str, Shape] = field(default_factory=dict, repr=False)

    def shape(self, pod_sets: list[dict[str, Any]], check: Optional[Callable[[list], None]] = None) -> Shape:
        """The one Shape for these (already trimmed) pod sets; `check` refuses a new one (once)."""
        key = json.dumps(pod_sets, sort_keys=True, separators=(",", ":"))
        found = self._shapes.get(key)
        if found is None:
            if check is not None:
                check(pod_sets)
            found = self._shapes[key] = Shape(pod_sets, key)
        return found

    def add(self, workload: TraceWorkload) -> None:
        """The next workload of the trace (its `order`)."""
        workload.order = len(self.workloads)
        if len(self.workloads) >= MAX_WORKLOADS:
            raise TraceError(workload.file, None,
                             f"the trace holds more than {MAX_WORKLOADS:,} workloads, the most one replay reads; "
                             "replay a shorter period (split the trace by time)")
        self.workloads.append(workload)

    def finish(self) -> "Trace":
        """One clock: seconds from the earliest submission; instants anchor relative times. A trace
        whose submissions spread over more than MAX_SPAN is refused at the one farthest from the
        others (from the median), with its file and line or document."""
        absolute = [w.submitted for w in self.workloads if w.absolute]
        anchor = min(absolute) if absolute else 0.0
        for workload in self.workloads:
            if workload.absolute:
                workload.submitted -= anchor
                workload.absolute = False
        earliest = min((w.submitted for w in self.workloads), default=0.0)
        if max((w.submitted for w in self.workloads), default=0.0) - earliest > MAX_SPAN:
            self._refuse_outlier(anchor if absolute else None)
        for workload in self.workloads:
            # To the microsecond, so that 0.3 - 0.1 is 0.2 and the same trace gives the same times.
            workload.submitted = round(workload.submitted - earliest, 6)
            if workload.observed is not None:  # only exports observe, and their times are instants
                workload.observed = workload.observed.shifted(anchor + earliest)
        self.start = anchor + earliest if absolute else None
        self._shapes.clear()
        return self

    def _refuse_outlier(self, anchor: Optional[float]) -> None:
        times = sorted(w.submitted for w in self.workloads)
        median = times[(len(times) - 1) // 2]
        outlier = max(self.workloads, key=lambda w: (abs(w.submitted - median), -w.order))
        days = (outlier.submitted - median) / 86400
        when = (f"{_iso(outlier.submitted + anchor)}, {abs(days):,.0f} days {'after' if days > 0 else 'before'} "
                f"the trace's median submission ({_iso(median + anchor)})" if anchor is not None else
                f"{outlier.submitted:g} s, {abs(days):,.0f} days {'after' if days > 0 else 'before'} the trace's "
                f"median submission")
        raise outlier_error(outlier, f"{when}: a trace's submissions lie within {MAX_SPAN_DAYS} days of each "
                                     "other; fix the time, or replay a long history in parts (split it by time)")

    @property
    def shapes(self) -> int:
        return len({id(w.shape) for w in self.workloads})


def outlier_error(workload: TraceWorkload, message: str) -> "TraceError":
    """An error about a workload's submission time, where it was read."""
    if workload.line:
        return TraceError(workload.file, None, message, line=workload.line, key="submitted")
    prefix = f"items[{workload.item}]." if workload.item >= 0 else ""
    key = "submitted" if workload.document < 0 else f"{prefix}metadata.creationTimestamp"
    return TraceError(workload.file, workload.document if workload.document >= 0 else None, message, key=key)


def _iso(seconds: float) -> str:
    from datetime import timezone

    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return f"{seconds:.0f} s after 1970"


def trim_pod_spec(spec: Any) -> dict[str, Any]:
    """The parts of a pod spec that admission and placement read; the rest (images, commands,
    environment, volumes) is dropped, so that a trace of many runs of one job keeps one shape."""
    if not isinstance(spec, dict):
        return {}
    trimmed: dict[str, Any] = {}
    for key in POD_KEYS:
        value = spec.get(key)
        if value in (None, [], {}):
            continue
        if key in ("containers", "initContainers") and isinstance(value, list):
            value = [{k: c[k] for k in CONTAINER_KEYS if k in c} if isinstance(c, dict) else c for c in value]
        if key == "affinity" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k == "nodeAffinity"}
            if not value:
                continue
        trimmed[key] = value
    return trimmed


def trim_pod_sets(pod_sets: Any) -> list[dict[str, Any]]:
    found = []
    for pod_set in pod_sets if isinstance(pod_sets, list) else []:
        if not isinstance(pod_set, dict):
            continue
        kept = {k: pod_set[k] for k in ("name", "count", "minCount", "topologyRequest") if k in pod_set}
        given = pod_set.get("template")
        template: dict[str, Any] = given if isinstance(given, dict) else {}
        kept["template"] = {"spec": trim_pod_spec(template.get("spec"))}
        found.append(kept)
    return found


# Times and durations ---------------------------------------------------------------------------


class ValueProblem(ValueError):
    """What is wrong with one value; the reader adds the file, line and field."""


def instant(value: str) -> float:
    """An RFC 3339 time as seconds since the epoch."""
    if not _RFC3339.match(value):
        raise ValueProblem(f"{_shown(value)} is not an RFC 3339 time (e.g. 2026-11-02T08:00:00Z) or a number of "
                           "seconds")
    text = value.replace("z", "Z").replace("Z", "+00:00").replace("t", "T").replace(" ", "T")
    try:
        return datetime.fromisoformat(text).timestamp()  # the pattern makes it carry its offset
    except ValueError:
        raise ValueProblem(f"{_shown(value)} is not a valid time") from None


def submitted_time(value: Any) -> tuple[float, bool]:
    """(seconds, is an instant) of a `submitted` value: an RFC 3339 time or seconds from the start
    (at most MAX_SPAN: a trace's submissions lie within that of each other)."""
    found = _seconds_or_text(value, "seconds from the start",
                             "a time; write an RFC 3339 time or seconds from the start")
    if isinstance(found, float):
        return _within_span(found, "s from the start"), False
    return instant(found), True


def duration(value: Any, what: str = "a duration", most: float = MAX_SPAN) -> float:
    """Seconds of a Go-style duration (`90s`, `5m`, `1h30m`) or a plain number of seconds, at most `most`."""
    wrong = f"{what}; write e.g. 90s, 5m, 1h30m or a number of seconds"
    found = _seconds_or_text(value, what, wrong)
    if isinstance(found, str):
        parsed: Optional[Fraction] = parse_duration(found)
        if parsed is None:
            raise ValueProblem(f"{_shown(value)} is not {wrong}")
        found = _non_negative(float(parsed), what)
    return _within_span(found, f"s of {what}", most)


def _within_span(seconds: float, what: str, most: float = MAX_SPAN) -> float:
    if seconds > most:
        raise ValueProblem(f"{seconds:g} {what} is more than {most / 86400:g} days, the longest this program "
                           f"replays; fix the value, or replay a long history in parts")
    return seconds


def _shown(value: Any) -> str:
    """A value in a message, cut short: a trace can hold a string of a megabyte."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _seconds_or_text(value: Any, what: str, wrong: str) -> float | str:
    """A number of seconds (at least 0), or the text of a string that is not one, for the caller's
    other reading; a negative number in a string goes to that reading too. Anything else is `wrong`."""
    if isinstance(value, str):
        text = value.strip()
        try:
            return _non_negative(float(text), what)
        except ValueError:  # ValueProblem too: a negative number in a string goes to the other reading
            return text
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:  # an integer past a float's range
            raise ValueProblem(f"{_shown(value)} is not {what}: it is far too large") from None
        return _non_negative(number, what)
    raise ValueProblem(f"{_shown(value)} is not {wrong}")


def _non_negative(value: float, what: str) -> float:
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueProblem(f"{value!r} is not {what}")
    if value < 0:
        raise ValueProblem(f"{value:g} is negative; {what} cannot be")
    return value


def format_duration(seconds: float) -> str:
    """`1h30m`, `45s`, `2m30.5s`: how reports print a duration."""
    if seconds != seconds:
        return "-"
    whole = round(seconds, 3)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = []
    if hours:
        parts.append(f"{int(hours)}h")
    if minutes:
        parts.append(f"{int(minutes)}m")
    if secs or not parts:
        parts.append(f"{secs:g}s" if secs != int(secs) else f"{int(secs)}s")
    return "".join(parts)
