"""The four trace formats, detected from content (`../shared/contract/replay.md`, "Trace formats").

1. Kueue Workload exports: `kubectl get workloads -A -o yaml` (or `-o json`), a `kind: List` or
   several documents, v1beta1 or v1beta2. Several exports (finished Workloads are deleted with
   their jobs, so a month is many exports) are merged: one workload (by `metadata.uid`, else
   namespace, name and creation time) counts once, its latest state winning.
2. JSON Lines: one workload a line, with `podSets` or a job `manifest` of any modelled integration.
3. CSV with a header `submitted,namespace,queue,name,priority,runtime,count,<resource>...`.
4. Kueue's scheduler performance generator YAML (`generator`): queues and workloads both.

How a file is told apart: its first line that is neither blank nor a `#` comment. A line that is a
whole JSON object without `apiVersion`/`kind` starts JSON Lines; a first cell `submitted` starts
CSV; anything else is a YAML or JSON document stream (an export, or a generator file when its one
document has `cohorts`).

Memory stays bounded: JSON Lines and CSV are read a line at a time (a line is at most
`MAX_LINE_BYTES`), documents through the bounded loader (`aks_kueue.k8s.loader`, 64 MiB a file),
and a trace holds at most `trace.MAX_WORKLOADS` workloads. Pod templates are trimmed to what
admission and placement read, and equal shapes are kept once.

Every bad value is refused with a `TraceError` naming the file, the line or document, and the
field: the first one found, since one bad line usually means a wrong file.
"""

from __future__ import annotations

import csv
import json
import os
import stat
import sys
from contextlib import nullcontext
from typing import Any, BinaryIO, ContextManager, Iterator, Optional

from aks_kueue.k8s.loader import DEFAULT_LIMITS, STDIN, Limits, LoadError, parse_documents, parse_json
from aks_kueue.k8s.pods import pod_requests
from aks_kueue.k8s.quantity import QuantityError, parse_quantity
from aks_kueue.k8s.spelling import suggest
from aks_kueue.kueue.convert import GROUP, V1BETA1, V1BETA2, to_v1beta2
from aks_kueue.replay.trace import (Shape, Trace, TraceError, TraceWorkload, ValueProblem, Where, duration,
                                    instant, submitted_time, trim_pod_sets)

TRACE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".ndjson", ".csv")
MAX_LINE_BYTES = 1024 * 1024
JSONL_KEYS = ("submitted", "namespace", "queue", "name", "priority", "priorityClass", "runtime", "podSets",
              "manifest", "uid")
POD_SET_KEYS = ("name", "count", "minCount", "requests", "nodeSelector", "tolerations")
CSV_FIELDS = ("submitted", "namespace", "queue", "name", "priority", "runtime", "count")
CSV_OPTIONAL = ("priorityClass", "minCount")
WORKLOAD_VERSIONS = (V1BETA1, V1BETA2)
WPC_KIND = "WorkloadPriorityClass"
KUBERNETES_KEYS = ("apiVersion", "kind", "items")   # a JSON object with one is a document, not a JSON line


def trace_files(paths: list[str]) -> list[str]:
    """Files to read, in order; a directory gives its trace files (recursively, in name order)."""
    from aks_kueue.kueue.manifests import input_files

    for path in paths:
        if path != STDIN and os.path.isdir(path) and not input_files([path], TRACE_SUFFIXES):
            raise TraceError(path, None, f"a directory with no trace files ({', '.join(TRACE_SUFFIXES)})")
    return input_files(paths, TRACE_SUFFIXES)


def read_trace(paths: list[str], limits: Limits = DEFAULT_LIMITS) -> Trace:
    """Every workload of every trace file, on one clock (see `Trace.finish`)."""
    from aks_kueue.replay.generator import read_generator

    trace = Trace()
    exports = _Exports(trace)
    trace.files = files = trace_files(paths)
    for file in files:
        with _open(file) as handle:
            lines = _Lines(handle, file)
            kind = _detect(lines.peek(), lines.long_first)
            if kind == "jsonl":
                _read_jsonl(lines, file, trace)
            elif kind == "csv":
                _read_csv(lines, file, trace)
            else:
                text = lines.rest(limits.max_bytes)
                documents = parse_documents(text, file, limits)
                if _is_generator(documents):
                    if len(files) > 1:
                        raise TraceError(file, None, "a generator file defines its own queues and workloads; give it "
                                                     "alone, as Kueue's performance harness reads it")
                    read_generator(documents[0], file, trace)
                else:
                    exports.read(documents, file)
    if not trace.workloads:
        raise TraceError(files[0] if len(files) == 1 else "", None,
                         "the trace holds no workloads" + ("" if len(files) == 1 else
                                                           f" ({', '.join(files)})"))
    return trace.finish()


# Reading files ---------------------------------------------------------------------------------


# Why a file cannot be opened, by the error `open` raises.
_OPEN_ERRORS = {FileNotFoundError: "no such file", IsADirectoryError: "is a directory; give a trace file",
                PermissionError: "cannot be read (permission denied)"}


def _open(file: str) -> ContextManager[BinaryIO]:
    """A binary handle on a file, or on standard input (left open); devices are refused."""
    if file == STDIN:
        return nullcontext(sys.stdin.buffer)
    try:
        handle = open(file, "rb")
        mode = os.fstat(handle.fileno()).st_mode
    except OSError as error:
        reason = _OPEN_ERRORS.get(type(error)) or f"cannot be read ({error.strerror or error})"
        raise TraceError(file, None, reason) from None
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        handle.close()
        raise TraceError(file, None, "is a device, not a file; give a trace file")
    return handle


class _Lines:
    """Lines of a file, each at most MAX_LINE_BYTES, decoded as UTF-8, numbered from 1."""

    def __init__(self, handle: BinaryIO, file: str):
        self.handle, self.file = handle, file
        self.number = 0
        self._held: list[bytes] = []   # lines read to detect the format, not yet handed out
        self.long_first = False

    def peek(self) -> str:
        """The first line that is not blank or a comment ('' for an empty file); nothing is consumed."""
        while True:
            data = self.handle.readline(MAX_LINE_BYTES + 1)
            if not data:
                return ""
            self._held.append(data)
            if len(data) > MAX_LINE_BYTES and not data.endswith(b"\n"):
                # A JSON document on one line (jq -c) may be this long; a JSON Lines workload may not: the
                # start of the line tells which reader refuses or reads it.
                self.long_first = True
                return data[:4096].decode("utf-8", "replace").strip()
            text = self._decode(data, len(self._held)).strip()
            if text and not text.startswith("#"):
                return text

    def __iter__(self) -> Iterator[tuple[int, str]]:
        while True:
            data = self._held.pop(0) if self._held else self.handle.readline(MAX_LINE_BYTES + 1)
            if not data:
                return
            self.number += 1
            if len(data) > MAX_LINE_BYTES and not data.endswith(b"\n"):
                raise TraceError(self.file, None, f"longer than {MAX_LINE_BYTES // 1024 // 1024} MiB, the most this "
                                                  "program reads as one line", line=self.number)
            yield self.number, self._decode(data, self.number)

    def rest(self, max_bytes: int) -> str:
        """The whole file as text, for the YAML and JSON readers (at most `max_bytes`)."""
        chunks, self._held = self._held, []
        size = sum(len(c) for c in chunks)
        data = self.handle.read(max_bytes + 1 - size) if size <= max_bytes else b""
        size += len(data)
        if size > max_bytes:
            raise TraceError(self.file, None, f"is larger than {max_bytes // 1024 // 1024} MiB, the most this program "
                                              "reads as one YAML or JSON file; split the export (one file per day), "
                                              "or write the trace as JSON Lines")
        return self._decode(b"".join(chunks) + data, None)

    def _decode(self, data: bytes, line: Optional[int]) -> str:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise TraceError(self.file, None, "not a text file (it is not UTF-8); give a trace file",
                             line=line) from None
        return text[1:] if text.startswith("\ufeff") else text


def _detect(first: str, long: bool = False) -> str:
    if first.startswith("{"):
        if long:  # the start of it (`peek`): a Kubernetes object names one of these keys early
            kubernetes = any(f'"{key}"' in first[:4096] for key in KUBERNETES_KEYS)
        else:
            try:
                value = json.loads(first)
            except ValueError:
                return "documents"  # a JSON document over several lines (kubectl -o json)
            kubernetes = not isinstance(value, dict) or any(key in value for key in KUBERNETES_KEYS)
        return "documents" if kubernetes else "jsonl"
    cells = [] if long else next(csv.reader([first]), [])
    return "csv" if cells and cells[0].strip() == "submitted" else "documents"


def _is_generator(documents: list[Any]) -> bool:
    found = [d for d in documents if d is not None]
    return len(found) == 1 and isinstance(found[0], dict) and "cohorts" in found[0] and "kind" not in found[0]


# Common checks ---------------------------------------------------------------------------------


def _parsed(parse, value: Any, key: str, error) -> Any:
    """`parse(value)`; what is wrong with the value is the field's error."""
    try:
        return parse(value)
    except (ValueProblem, QuantityError) as problem:
        raise error(key, str(problem)) from None


def _text(value: Any, key: str, error) -> str:
    if not isinstance(value, str) or not value:
        raise error(key, f"{value!r} is not a name; write a non-empty string")
    return value


def _integer(value: Any, key: str, error, minimum: int = 0) -> int:
    try:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)) or (
                isinstance(value, float) and not value.is_integer()):
            raise ValueError(value)
        number = int(value)
    except ValueError:
        raise error(key, f"{value!r} is not a whole number") from None
    if number < minimum:
        raise error(key, f"{number} is less than {minimum}")
    return number


def _quantity(value: Any, key: str, error) -> str:
    if isinstance(value, float) and not isinstance(value, bool):
        value = repr(value) if not value.is_integer() else int(value)
    _parsed(parse_quantity, value, key, error)
    return str(value)


def _shape(trace: Trace, pod_sets: list[dict[str, Any]], error, field: str) -> Shape:
    """The trace's Shape for these pod sets; a new one is checked once: every quantity Kubernetes
    would parse, counts Kueue accepts. `field` is where the pod sets were given."""
    def key(index: int, name: str) -> str:
        return f"{field}[{index}].{name}" if field == "podSets" else field

    def check(shape_pod_sets: list[dict[str, Any]]) -> None:
        with_min = [i for i, ps in enumerate(shape_pod_sets) if ps.get("minCount") is not None]
        if len(with_min) > 1:
            raise error(key(with_min[1], "minCount"), "only one pod set may set minCount (Kueue's partial "
                                                      "admission reduces one pod set)")
        for index, pod_set in enumerate(shape_pod_sets):
            _parsed(pod_requests, (pod_set.get("template") or {}).get("spec") or {}, key(index, "requests"), error)

    return trace.shape(pod_sets, check)


def _pod_set(name: str, count: int, requests: dict[str, str], min_count: Any, key: str, error,
             **spec: Any) -> dict[str, Any]:
    """A Workload pod set of one container asking `requests`; `min_count` (partial admission) is
    kept when it is below `count`."""
    pod_set: dict[str, Any] = {"name": name, "count": count, "template": {"spec": {
        "containers": [{"name": "main", "resources": {"requests": requests}}], **spec}}}
    if min_count is not None:
        minimum = _integer(min_count, key, error, minimum=1)
        if minimum > count:
            raise error(key, f"{minimum} is more than count {count}")
        if minimum < count:
            pod_set["minCount"] = minimum
    return pod_set


def _submission(value: dict[str, Any], error) -> tuple[float, bool, Optional[float], Optional[int], Optional[str]]:
    """A JSON Lines or CSV workload's submission time (and whether it is an instant), runtime,
    priority and priority class (CSV gives its non-empty cells)."""
    submitted, absolute = _parsed(submitted_time, value["submitted"], "submitted", error)
    runtime = None if value.get("runtime") is None else _parsed(lambda v: duration(v, "a runtime"),
                                                                value["runtime"], "runtime", error)
    if "priority" in value and "priorityClass" in value:
        raise error("priorityClass", "give either priority or priorityClass, not both")
    priority = None if value.get("priority") is None else _integer(value["priority"], "priority", error,
                                                                       minimum=-(2**31))
    priority_class = None if value.get("priorityClass") is None else _text(value["priorityClass"], "priorityClass",
                                                                           error)
    return submitted, absolute, runtime, priority, priority_class


def _pod_sets_from_lines(pod_sets: Any, error: Where) -> list[dict[str, Any]]:
    """The contract's JSON Lines `podSets` as Workload pod sets."""
    if not isinstance(pod_sets, list) or not pod_sets:
        raise error("podSets", "must be a non-empty list of pod sets ({name, count, requests, ...})")
    found = []
    names = set()
    for index, pod_set in enumerate(pod_sets):
        if not isinstance(pod_set, dict):
            raise error(f"podSets[{index}]", "must be a map ({name, count, requests, ...})")
        at = error.under(f"podSets[{index}].")
        at.known(pod_set, POD_SET_KEYS)
        name = _text(pod_set.get("name", "main"), "name", at)
        if name in names:
            raise at("name", f"{name!r} names two pod sets; give each its own name")
        names.add(name)
        count = _integer(pod_set.get("count", 1), "count", at)  # 0 is allowed: Kueue's CRD minimum
        requests = pod_set.get("requests") or {}
        if not isinstance(requests, dict):
            raise at("requests", "must be a map of resource to quantity")
        kept = {_text(r, "requests", at): _quantity(q, f"requests.{r}", at) for r, q in requests.items()}
        spec: dict[str, Any] = {}
        selector = pod_set.get("nodeSelector") or {}
        if not isinstance(selector, dict) or not all(isinstance(v, str) for v in selector.values()):
            raise at("nodeSelector", "must be a map of label to value (strings)")
        if selector:
            spec["nodeSelector"] = dict(selector)
        tolerations = pod_set.get("tolerations") or []
        if not isinstance(tolerations, list) or not all(isinstance(t, dict) for t in tolerations):
            raise at("tolerations", "must be a list of tolerations ({key, operator, value, effect})")
        if tolerations:
            spec["tolerations"] = [dict(t) for t in tolerations]
        found.append(_pod_set(name, count, kept, pod_set.get("minCount"), "minCount", at, **spec))
    return found


def _manifest_workloads(manifest: Any, error) -> list[dict[str, Any]]:
    """The Workloads Kueue v0.19.2 would create for a job manifest (every modelled integration on)."""
    from aks_kueue.kueue.catalog import FRAMEWORKS
    from aks_kueue.kueue.jobs import JobOptions, JobOutcome, derive_workloads, is_job

    if not isinstance(manifest, dict) or not is_job(manifest):
        kind = manifest.get("kind") if isinstance(manifest, dict) else None
        raise error("manifest", f"must be a job of a Kueue integration (Job, JobSet, RayJob, ...); "
                                f"{kind!r} is not one" if kind else "must be a job manifest (a map with apiVersion "
                                                                     "and kind)")
    if not isinstance(manifest.get("metadata"), dict) or not manifest["metadata"].get("name"):
        manifest = {**manifest, "metadata": {**(manifest.get("metadata") or {}), "name": "job"}}
    options = JobOptions.from_config(frameworks=FRAMEWORKS)
    result = derive_workloads([manifest], options)[0]
    if result.errors:
        first = result.errors[0]
        raise error(f"manifest.{first.field}" if first.field else "manifest", first.message)
    if result.outcome is not JobOutcome.WORKLOAD or not result.workloads:
        raise error("manifest", result.reason or "Kueue would create no Workload for it")
    return result.workloads


# JSON Lines ------------------------------------------------------------------------------------


def _read_jsonl(lines: _Lines, file: str, trace: Trace) -> None:
    for number, text in lines:
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        error = Where(file, line=number)
        try:
            value = parse_json(stripped, file)  # the loader's bounds: nesting, keys given twice
        except LoadError as problem:
            raise error(None, problem.reason) from None
        except ValueError as problem:  # not JSON at all
            raise error(None, f"{problem}; JSON Lines hold one JSON object a line") from None
        if not isinstance(value, dict):
            raise error(None, "must be a JSON object, one workload a line")
        _jsonl_workload(value, file, number, error, trace)


def _jsonl_workload(value: dict[str, Any], file: str, number: int, error: Where, trace: Trace) -> None:
    error.known(value, JSONL_KEYS)
    if "submitted" not in value:
        raise error("submitted", "Required value: when the workload was submitted (RFC 3339, or seconds from the "
                                 "start)")
    submitted, absolute, runtime, priority, priority_class = _submission(value, error)
    if ("podSets" in value) == ("manifest" in value):
        raise error("podSets", "give either podSets or manifest (a job Kueue turns into its Workload), one of them")
    if "podSets" in value:
        made = [{"metadata": {}, "spec": {"podSets": _pod_sets_from_lines(value["podSets"], error)}}]
    else:
        made = _manifest_workloads(value["manifest"], error)
    for index, workload in enumerate(made):
        metadata, spec = workload.get("metadata") or {}, workload.get("spec") or {}
        namespace = value.get("namespace", metadata.get("namespace") or "default")
        queue = value.get("queue", spec.get("queueName"))
        if queue is None:
            raise error("queue", "Required value: the LocalQueue the workload was submitted to (or the job's "
                                 "kueue.x-k8s.io/queue-name label)")
        name = value.get("name", metadata.get("name") or f"line-{number}")
        if len(made) > 1:
            name = metadata.get("name") or f"{name}-{index}"
        pod_sets = trim_pod_sets(spec.get("podSets"))
        shape = _shape(trace, pod_sets, error, "podSets" if "podSets" in value else "manifest")
        own_priority, own_class = priority, priority_class
        if own_priority is None and own_class is None and "manifest" in value:
            ref = spec.get("priorityClassRef") or {}
            if ref.get("kind") == WPC_KIND and ref.get("name"):
                own_class = ref["name"]
            elif spec.get("priority") is not None:
                own_priority = int(spec["priority"])
        trace.add(TraceWorkload(
            namespace=_text(namespace, "namespace", error), name=_text(name, "name", error),
            queue=_text(queue, "queue", error), submitted=submitted, runtime=runtime, shape=shape,
            priority=own_priority, priority_class=own_class, absolute=absolute, uid=str(value.get("uid") or ""),
            file=file))


# CSV -------------------------------------------------------------------------------------------


def _read_csv(lines: _Lines, file: str, trace: Trace) -> None:
    header: Optional[list[str]] = None
    for cells in csv.reader(text for _, text in lines):
        error = Where(file, line=lines.number)  # the line the row ends on
        if not cells or all(not c.strip() for c in cells) or (cells[0].lstrip().startswith("#") and header is None):
            continue
        if header is None:
            header = _csv_header(cells, error)
            continue
        if len(cells) != len(header):
            raise error(None, f"{len(cells)} cells, but the header has {len(header)} columns")
        row = dict(zip(header, (c.strip() for c in cells)))
        _csv_workload(row, header, file, lines.number, error, trace)


def _csv_header(cells: list[str], error) -> list[str]:
    header = [c.strip() for c in cells]
    missing = [f for f in ("submitted", "queue", "count") if f not in header]
    if missing:
        raise error(None, f"the header lacks {', '.join(missing)}; a CSV trace starts "
                          f"{','.join(CSV_FIELDS)},<resource>...")
    duplicates = sorted({h for h in header if header.count(h) > 1})
    if duplicates:
        raise error(None, f"the header names {', '.join(duplicates)} twice")
    count_at = header.index("count")
    for index, name in enumerate(header):
        if index < count_at and name not in CSV_FIELDS + CSV_OPTIONAL:
            raise error(name, f"unknown column{suggest(name, CSV_FIELDS + CSV_OPTIONAL)}; before count come "
                              f"{', '.join(CSV_FIELDS[:-1])} (and {', '.join(CSV_OPTIONAL)}); resources come after")
        if index > count_at and name in CSV_FIELDS:
            raise error(name, "comes after count, where every column is a resource; put it before count")
        if not name:
            raise error(None, f"column {index + 1} of the header has no name")
    if not any(i > count_at and h not in CSV_OPTIONAL for i, h in enumerate(header)):
        raise error(None, "no resource columns after count (e.g. cpu,memory,nvidia.com/gpu)")
    return header


def _csv_workload(row: dict[str, str], header: list[str], file: str, number: int, error: Where, trace: Trace) -> None:
    submitted, absolute, runtime, priority, priority_class = _submission(
        {key: value for key, value in row.items() if value or key == "submitted"}, error)
    count = _integer(row["count"], "count", error)  # 0 is allowed: Kueue's CRD minimum
    count_at = header.index("count")
    requests = {name: _quantity(row[name], name, error) for name in header[count_at + 1:]
                if name not in CSV_OPTIONAL and row[name]}
    pod_set = _pod_set("main", count, requests, row.get("minCount") or None, "minCount", error)
    shape = _shape(trace, [pod_set], error, "count")
    queue = row.get("queue") or ""
    if not queue:
        raise error("queue", "Required value: the LocalQueue the workload was submitted to")
    trace.add(TraceWorkload(
        namespace=row.get("namespace") or "default", name=row.get("name") or f"line-{number}", queue=queue,
        submitted=submitted, runtime=runtime, shape=shape, priority=priority, priority_class=priority_class,
        absolute=absolute, file=file))


# Workload exports --------------------------------------------------------------------------------


class _Exports:
    """Workloads from exports, merged: one per uid (else namespace, name, creation time), the
    copy with the latest state winning and the first one's place in the trace kept."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self.seen: dict[tuple, tuple[tuple, int]] = {}  # identity -> (state rank, index in trace.workloads)

    def read(self, documents: list[Any], file: str) -> None:
        for index, value in enumerate(documents):
            if value is None:
                continue
            error = Where(file, document=index)
            if not isinstance(value, dict):
                raise error(None, "a document must be a Workload or a List of them (a map)")
            if value.get("kind") == "List" or (value.get("kind", "").endswith("List") and "items" in value):
                items = value.get("items")
                if not isinstance(items, list):
                    raise error("items", "a List must have items (a list of Workloads)")
                for position, item in enumerate(items):
                    self._one(item, file, error.under(f"items[{position}]."))
            else:
                self._one(value, file, error)

    def _one(self, manifest: Any, file: str, error: Where) -> None:
        if not isinstance(manifest, dict):
            raise error(None, "must be a Workload (a map)")
        api, kind = manifest.get("apiVersion"), manifest.get("kind")
        if kind != "Workload" or api not in WORKLOAD_VERSIONS:
            raise error("kind", f"{api}/{kind} is not a Kueue Workload; a trace holds Workloads "
                                f"(kubectl get workloads -A -o yaml), {GROUP}/v1beta2 or v1beta1")
        workload = to_v1beta2(manifest)
        metadata, spec, status = (workload.get(k) if isinstance(workload.get(k), dict) else {}
                                  for k in ("metadata", "spec", "status"))
        name = _text(metadata.get("name"), "metadata.name", error)
        namespace = metadata.get("namespace") or "default"
        created = metadata.get("creationTimestamp")
        if not isinstance(created, str):
            raise error("metadata.creationTimestamp", "Required value: when the Workload was created (kubectl "
                                                      "prints it); the trace needs it as the submission time")
        submitted = _parsed(instant, created, "metadata.creationTimestamp", error)
        queue = spec.get("queueName")
        if not isinstance(queue, str) or not queue:
            raise error("spec.queueName", "Required value: a Workload without a queue is not Kueue's to admit")
        if not isinstance(spec.get("podSets"), list) or not spec["podSets"]:
            raise error("spec.podSets", "Required value: a Workload has at least one pod set")
        for position, pod_set in enumerate(spec["podSets"]):
            if not isinstance(pod_set, dict):
                raise error(f"spec.podSets[{position}]", "must be a pod set (a map)")
            _integer(pod_set.get("count", 1), f"spec.podSets[{position}].count", error, minimum=0)
        runtime = _export_runtime(status, error)
        shape = _shape(self.trace, trim_pod_sets(spec["podSets"]), error.under("spec."), "podSets")
        ref = spec.get("priorityClassRef") if isinstance(spec.get("priorityClassRef"), dict) else {}
        priority = spec.get("priority")
        if priority is not None:
            priority = _integer(priority, "spec.priority", error, minimum=-(2**31))
        uid = metadata.get("uid") if isinstance(metadata.get("uid"), str) else ""
        identity = ("uid", uid) if uid else ("name", namespace, name, created)
        rank = _state_rank(status, metadata)
        entry = TraceWorkload(namespace=namespace, name=name, queue=queue, submitted=submitted, runtime=runtime,
                              shape=shape, priority=priority,
                              priority_class=ref.get("name") if ref.get("kind") == WPC_KIND else None,
                              absolute=True, uid=uid, file=file)
        known = self.seen.get(identity)
        if known is None:
            self.seen[identity] = (rank, len(self.trace.workloads))
            self.trace.add(entry)
        elif rank >= known[0]:
            entry.order = self.trace.workloads[known[1]].order
            self.trace.workloads[known[1]] = entry
            self.seen[identity] = (rank, known[1])


def _conditions(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in status.get("conditions") or []
            if isinstance(c, dict) and isinstance(c.get("type"), str)}


def _condition_time(conditions: dict[str, dict[str, Any]], kind: str, error) -> Optional[float]:
    condition, key = conditions.get(kind), f"status.conditions[{kind}]"
    if not condition or condition.get("status") != "True":
        return None
    when = condition.get("lastTransitionTime")
    if not isinstance(when, str):
        raise error(key, "Required value: lastTransitionTime of a True condition")
    return _parsed(instant, when, key, error)


def _export_runtime(status: dict[str, Any], error) -> Optional[float]:
    """Finished minus the start: PodsReady=True when present, else Admitted=True. Without Finished
    the workload runs until the end of the replay; finished without ever running, 0."""
    conditions = _conditions(status)
    finished = _condition_time(conditions, "Finished", error)
    if finished is None:
        return None
    started = _condition_time(conditions, "PodsReady", error)
    if started is None:
        started = _condition_time(conditions, "Admitted", error)
    return 0.0 if started is None else max(0.0, finished - started)


def _state_rank(status: dict[str, Any], metadata: dict[str, Any]) -> tuple:
    """Which copy of a workload is newer: finished first, then the latest condition change, then the
    resourceVersion (etcd's revision, a number in practice)."""
    conditions = _conditions(status)
    finished = (conditions.get("Finished") or {}).get("status") == "True"
    latest = 0.0
    for condition in conditions.values():
        try:
            latest = max(latest, instant(str(condition.get("lastTransitionTime"))))
        except ValueProblem:
            continue
    version = metadata.get("resourceVersion")
    return finished, latest, int(version) if isinstance(version, str) and version.isdigit() else -1


__all__ = ["read_trace", "trace_files", "TRACE_SUFFIXES", "MAX_LINE_BYTES"]
