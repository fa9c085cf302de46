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

Every file is read through the shared bounded reader (`aks_kueue.k8s.loader.open_binary`): a path
must be a regular file (a named pipe, a device or a socket is refused before it is read; `-` reads
standard input), JSON Lines and CSV are read a line at a time (a line is at most `MAX_LINE_BYTES`,
a file at most `LINE_LIMITS.max_bytes`), documents through the bounded YAML/JSON loader (64 MiB a
file, nesting, YAML aliases, keys given twice), and a trace holds at most `trace.MAX_WORKLOADS`
workloads. Pod templates are trimmed to what admission and placement read, and equal shapes are
kept once.

Values are held to what Kubernetes and Kueue accept before anything is built from them: names by
Kubernetes' rules (`aks_kueue.k8s.names`), priorities and pod counts as int32, quantities as
Kubernetes reads them (`quantity.request_problem`), times within `trace.MAX_SPAN`, and each new pod
set shape through Kueue's own Workload validation (`kueue.validate`: its CRD schema and webhook).
Every bad value is refused with a `TraceError` naming the file, the line or document, and the
field: the first one found, since one bad line usually means a wrong file.
"""

from __future__ import annotations

import csv
import json
import os
import re
from typing import Any, Callable, Iterator, Optional

from aks_kueue.k8s import names
from aks_kueue.k8s import field as fe
from aks_kueue.k8s.field import show
from aks_kueue.k8s.loader import DEFAULT_LIMITS, MIB, STDIN, Bounded, Limits, LoadError, open_binary, parse_documents, \
    parse_json
from aks_kueue.k8s.pods import pod_requests
from aks_kueue.k8s.quantity import QuantityError, parse_quantity, request_problem
from aks_kueue.k8s.spelling import suggest
from aks_kueue.kueue.convert import GROUP, V1BETA1, V1BETA2, to_v1beta2
from aks_kueue.replay.trace import (Observed, Shape, Trace, TraceError, TraceWorkload, ValueProblem, Where, duration,
                                    instant, refused, submitted_time, trim_pod_sets)

TRACE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".ndjson", ".csv")
MAX_LINE_BYTES = 1024 * 1024
# A JSON Lines or CSV trace file is read a line at a time, up to this size: 2,000,000 workloads
# (`MAX_WORKLOADS`) of a few hundred bytes each, with room to spare.
LINE_LIMITS = Limits(max_bytes=4096 * MIB, too_large="as one JSON Lines or CSV trace file; split the trace by time")
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
JSONL_KEYS = ("submitted", "namespace", "queue", "name", "priority", "priorityClass", "runtime", "podSets",
              "manifest", "uid")
POD_SET_KEYS = ("name", "count", "minCount", "requests", "nodeSelector", "tolerations")
CSV_FIELDS = ("submitted", "namespace", "queue", "name", "priority", "runtime", "count")
CSV_OPTIONAL = ("priorityClass", "minCount")
WORKLOAD_VERSIONS = (V1BETA1, V1BETA2)
WPC_KIND = "WorkloadPriorityClass"
# Objects of a configuration (`--queues`), not of a trace: a trace argument holding them is a flag mistake.
QUEUE_KINDS = ("ResourceFlavor", "ClusterQueue", "LocalQueue", "Cohort", WPC_KIND, "AdmissionCheck",
               "ProvisioningRequestConfig", "Topology", "MultiKueueConfig", "MultiKueueCluster")
KUBERNETES_KEYS = ("apiVersion", "kind", "items")   # a JSON object with one is a document, not a JSON line
# A uid is whatever the API server made (a UUID); this bounds what a trace may claim as one.
MAX_UID = 128


def trace_files(paths: list[str]) -> list[str]:
    """Files to read, in order; a directory gives its trace files (recursively, in name order)."""
    from aks_kueue.kueue.manifests import input_files

    for path in paths:
        if path != STDIN and os.path.isdir(path) and not input_files([path], TRACE_SUFFIXES):
            raise TraceError(path, None, f"a directory with no trace files ({', '.join(TRACE_SUFFIXES)})")
    return input_files(paths, TRACE_SUFFIXES)


def read_trace(paths: list[str], limits: Limits = DEFAULT_LIMITS) -> Trace:
    """Every workload of every trace file, on one clock (see `Trace.finish`). `limits` bound each YAML
    or JSON document file; JSON Lines and CSV files have `LINE_LIMITS`."""
    from aks_kueue.replay.generator import read_generator

    trace = Trace()
    exports = _Exports(trace)
    trace.files = files = trace_files(paths)
    reader = _Reader(trace)
    for file in files:
        with open_binary(file, LINE_LIMITS, "a trace file", regular_only=file != STDIN) as handle:
            lines = _Lines(handle, file)
            kind = _detect(lines.peek(), lines.long_first)
            if kind == "jsonl":
                reader.jsonl(lines, file)
            elif kind == "csv":
                reader.csv(lines, file)
            else:
                text = lines.rest(limits.max_bytes)
                try:
                    documents = parse_documents(text, file, limits)
                except LoadError as error:
                    raise _placed(error) from None
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


def _placed(error: LoadError) -> LoadError:
    """A loader's error with its line, as every trace error names one."""
    if error.position is None:
        return error
    return TraceError(error.source, error.document, error.unplaced(), line=error.position)


# Reading files ---------------------------------------------------------------------------------


class _Lines:
    """Lines of a file, each at most MAX_LINE_BYTES, decoded as UTF-8, numbered from 1."""

    def __init__(self, handle: Bounded, file: str):
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
            except (ValueError, RecursionError):
                # A JSON document over several lines (kubectl -o json), or a line its reader refuses.
                return "jsonl" if first.endswith("}") else "documents"
            kubernetes = not isinstance(value, dict) or any(key in value for key in KUBERNETES_KEYS)
        return "documents" if kubernetes else "jsonl"
    if first.startswith("["):
        return "documents"  # a JSON array: a document, never a JSON line or a CSV header
    try:
        cells = [] if long else next(csv.reader([first]), [])
    except csv.Error:
        return "csv"  # a first line the CSV reader refuses, and says why
    return "csv" if cells and cells[0].strip() == "submitted" else "documents"


def _is_generator(documents: list[Any]) -> bool:
    found = [d for d in documents if d is not None]
    return len(found) == 1 and isinstance(found[0], dict) and "cohorts" in found[0] and "kind" not in found[0]


# Common checks ---------------------------------------------------------------------------------


def _parsed(parse: Callable[[Any], Any], value: Any, key: str, error: Where) -> Any:
    """`parse(value)`; what is wrong with the value is the field's error."""
    try:
        return parse(value)
    except (ValueProblem, QuantityError) as problem:
        raise error(key, str(problem)) from None


def _text(value: Any, key: str, error: Where) -> str:
    if not isinstance(value, str) or not value:
        raise error(key, f"{show(value)} is not a name; write a non-empty string")
    return value


def _name(value: Any, key: str, error: Where, rule: Callable[[Any], Optional[str]] = names.dns1123_subdomain_problem,
          known: Optional[set[str]] = None) -> str:
    """A Kubernetes name (`rule`: a DNS-1123 subdomain unless said otherwise); `known` remembers good ones."""
    if known is not None and value in known:
        return value
    text = _text(value, key, error)
    problem = rule(text)
    if problem:
        raise refused(error, fe.invalid(key, text, problem))
    if known is not None:
        known.add(text)
    return text


def _integer(value: Any, key: str, error: Where, minimum: int = 0, maximum: int = INT32_MAX) -> int:
    """A whole number in [minimum, maximum] (Kueue's API fields are int32): 2, 2.0 and "2"."""
    if isinstance(value, str) and len(value.strip()) > 20:
        raise error(key, f"{show(value)} is not a whole number from {minimum} to {maximum}")
    try:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)) or (
                isinstance(value, float) and not value.is_integer()):
            raise ValueError(value)
        number = int(value)
    except (ValueError, OverflowError):
        raise error(key, f"{show(value)} is not a whole number") from None
    if number < minimum:
        raise error(key, f"{number} is less than {minimum}")
    if number > maximum:
        raise refused(error, fe.invalid(key, number, f"must be at most {maximum:,} (Kueue's API holds it as a "
                                                        "32-bit integer)"))
    return number


def _quantity(value: Any, key: str, error: Where) -> str:
    if isinstance(value, float) and not isinstance(value, bool):
        value = repr(value) if not value.is_integer() else int(value)
    _parsed(parse_quantity, value, key, error)
    return str(value)


class _Reader:
    """The JSON Lines and CSV readers of one trace: what they have checked once is remembered (names
    that recur, pod sets as written, runtimes), so a line costs little more than its JSON."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self.namespaces: set[str] = set()
        self.queues: set[str] = set()
        self.classes: set[str] = set()
        self.pod_sets: dict[str, Shape] = {}     # JSON Lines podSets as written -> their shape
        self.runtimes: dict[Any, float] = {}

    # JSON Lines ------------------------------------------------------------------------------

    def jsonl(self, lines: _Lines, file: str) -> None:
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
            self.jsonl_workload(value, file, number, error)

    def jsonl_workload(self, value: dict[str, Any], file: str, number: int, error: Where) -> None:
        error.known(value, JSONL_KEYS)
        if "submitted" not in value:
            raise refused(error, fe.required("submitted", "when the workload was submitted (RFC 3339, or seconds "
                                                                "from the start)"))
        submitted, absolute, runtime, priority, priority_class = self.submission(value, error)
        if ("podSets" in value) == ("manifest" in value):
            raise error("podSets", "give either podSets or manifest (a job Kueue turns into its Workload), one of "
                                   "them")
        uid = value.get("uid")
        if uid is not None and (not isinstance(uid, str) or len(uid) > MAX_UID):
            raise error("uid", f"{show(uid)} is not a uid; write a string of at most {MAX_UID} characters")
        if "podSets" in value:
            self.trace.add(TraceWorkload(
                namespace=_name(value.get("namespace", "default"), "namespace", error,
                                names.dns1123_label_problem, self.namespaces),
                name=_name(value.get("name", f"line-{number}"), "name", error),
                queue=self.queue(value.get("queue"), error), submitted=submitted, runtime=runtime,
                shape=self.pod_set_shape(value["podSets"], error), priority=priority, priority_class=priority_class,
                absolute=absolute, uid=uid or "", file=file, line=number))
            return
        made = _manifest_workloads(value["manifest"], error)
        for index, workload in enumerate(made):
            metadata, spec = workload.get("metadata") or {}, workload.get("spec") or {}
            name = value.get("name", metadata.get("name") or f"line-{number}")
            if len(made) > 1:
                name = metadata.get("name") or f"{name}-{index}"
            shape = _shape(self.trace, trim_pod_sets(spec.get("podSets")), error, "manifest")
            own_priority, own_class = priority, priority_class
            if own_priority is None and own_class is None:
                ref = spec.get("priorityClassRef") or {}
                if ref.get("kind") == WPC_KIND and ref.get("name"):
                    own_class = _name(ref["name"], "manifest", error, known=self.classes)
                elif spec.get("priority") is not None:
                    own_priority = _integer(spec["priority"], "manifest", error, INT32_MIN)
            self.trace.add(TraceWorkload(
                namespace=_name(value.get("namespace", metadata.get("namespace") or "default"), "namespace", error,
                                names.dns1123_label_problem, self.namespaces),
                name=_name(name, "name", error),
                queue=self.queue(value.get("queue", spec.get("queueName")), error), submitted=submitted,
                runtime=runtime, shape=shape, priority=own_priority, priority_class=own_class, absolute=absolute,
                uid=uid or "", file=file, line=number))

    def queue(self, value: Any, error: Where) -> str:
        if value is None or value == "":
            raise refused(error, fe.required("queue", "the LocalQueue the workload was submitted to (or the "
                                                            "job's kueue.x-k8s.io/queue-name label)"))
        return _name(value, "queue", error, known=self.queues)

    def pod_set_shape(self, pod_sets: Any, error: Where) -> Shape:
        """The contract's JSON Lines `podSets` as Workload pod sets, checked once per way they are written.
        The way is the parsed value's repr: it tells apart every JSON value (1, 1.0 and true, a string's
        characters), costs a third of a canonical JSON text, and the trace keeps one Shape per content."""
        written = repr(pod_sets)
        known = self.pod_sets.get(written)
        if known is None:
            known = self.pod_sets[written] = _shape(self.trace, _pod_sets_from_lines(pod_sets, error), error,
                                                    "podSets")
        return known

    def submission(self, value: dict[str, Any], error: Where
                   ) -> tuple[float, bool, Optional[float], Optional[int], Optional[str]]:
        """A JSON Lines or CSV workload's submission time (and whether it is an instant), runtime,
        priority and priority class (CSV gives its non-empty cells)."""
        submitted, absolute = _parsed(submitted_time, value["submitted"], "submitted", error)
        runtime = None
        given = value.get("runtime")
        if given is not None:
            remembered = type(given) in (str, int)  # not a bool (True == 1), nor a float (NaN != NaN)
            runtime = self.runtimes.get(given) if remembered else None
            if runtime is None:
                runtime = _parsed(lambda v: duration(v, "a runtime"), given, "runtime", error)
                if remembered and len(self.runtimes) < 65536:
                    self.runtimes[given] = runtime
        if "priority" in value and "priorityClass" in value:
            raise error("priorityClass", "give either priority or priorityClass, not both")
        priority = None if value.get("priority") is None else _integer(value["priority"], "priority", error,
                                                                           INT32_MIN)
        priority_class = None if value.get("priorityClass") is None else _name(value["priorityClass"],
                                                                               "priorityClass", error,
                                                                               known=self.classes)
        return submitted, absolute, runtime, priority, priority_class

    # CSV ---------------------------------------------------------------------------------------

    def csv(self, lines: _Lines, file: str) -> None:
        header: Optional[list[str]] = None
        rows = csv.reader(text for _, text in lines)
        while True:
            try:
                cells = next(rows)
            except StopIteration:
                return
            except csv.Error as problem:  # a cell past the csv module's limit, a NUL byte, an open quote
                raise TraceError(file, None, f"not a CSV row the reader can read ({problem}); a cell holds at most "
                                             f"{csv.field_size_limit() // 1024} KiB", line=lines.number) from None
            error = Where(file, line=lines.number)  # the line the row ends on
            if not cells or all(not c.strip() for c in cells) or (
                    cells[0].lstrip().startswith("#") and header is None):
                continue
            if header is None:
                header = _csv_header(cells, error)
                continue
            if len(cells) != len(header):
                raise error(None, f"{len(cells)} cells, but the header has {len(header)} columns")
            row = dict(zip(header, (c.strip() for c in cells)))
            self.csv_workload(row, header, file, lines.number, error)

    def csv_workload(self, row: dict[str, str], header: list[str], file: str, number: int, error: Where) -> None:
        submitted, absolute, runtime, priority, priority_class = self.submission(
            {key: value for key, value in row.items() if value or key == "submitted"}, error)
        count = _integer(row["count"], "count", error)  # 0 is allowed: Kueue's CRD minimum
        count_at = header.index("count")
        requests = {name: _quantity(row[name], name, error) for name in header[count_at + 1:]
                    if name not in CSV_OPTIONAL and row[name]}
        pod_set = _pod_set("main", count, requests, row.get("minCount") or None, "minCount", error)
        shape = _shape(self.trace, [pod_set], error, "count")
        self.trace.add(TraceWorkload(
            namespace=_name(row.get("namespace") or "default", "namespace", error, names.dns1123_label_problem,
                            self.namespaces),
            name=_name(row.get("name") or f"line-{number}", "name", error),
            queue=self.queue(row.get("queue"), error), submitted=submitted, runtime=runtime, shape=shape,
            priority=priority, priority_class=priority_class, absolute=absolute, file=file, line=number))


def _shape(trace: Trace, pod_sets: list[dict[str, Any]], error: Where, field: str) -> Shape:
    """The trace's Shape for these pod sets; a new one is checked once, as Kueue's Workload validation
    checks `spec.podSets` (its CRD schema and webhook: names, int32 counts, minCount, at most 18 pod
    sets, non-negative requests) and as Kubernetes reads each request (`request_problem`). `field`
    is where the pod sets were given (`podSets` for JSON Lines, `count` for CSV, `spec.podSets` ...)."""
    def check(shape_pod_sets: list[dict[str, Any]]) -> None:
        from aks_kueue.kueue.validate import load_object, validate_object

        workload = {"apiVersion": V1BETA2, "kind": "Workload", "metadata": {"name": "trace", "namespace": "default"},
                    "spec": {"queueName": "trace", "podSets": shape_pod_sets}}
        for found in validate_object(load_object(workload)):
            raise error(_where_in(found.field, field), found.text)
        for index, pod_set in enumerate(shape_pod_sets):
            spec = (pod_set.get("template") or {}).get("spec") or {}
            for path, resource, quantity in _amounts(spec):
                value = _parsed(parse_quantity, quantity, _where_in(f"spec.podSets[{index}].template.spec.{path}",
                                                                    field), error)
                problem = request_problem(str(resource), value) or names.qualified_name_problem(str(resource))
                if problem is not None:
                    raise refused(error, fe.invalid(_where_in(f"spec.podSets[{index}].template.spec.{path}", field),
                                                    quantity, problem))
            _parsed(pod_requests, spec, _where_in(f"spec.podSets[{index}].template.spec", field), error)

    return trace.shape(pod_sets, check)


def _amounts(spec: dict[str, Any]) -> Iterator[tuple[str, Any, Any]]:
    """Every request, limit and overhead of a trimmed pod spec: (its path, the resource, the quantity)."""
    for group in ("initContainers", "containers"):
        for index, container in enumerate(spec.get(group) or []):
            resources = (container.get("resources") if isinstance(container, dict) else None) or {}
            for kind in ("requests", "limits"):
                for resource, quantity in (resources.get(kind) or {}).items():
                    yield f"{group}[{index}].resources.{kind}.{resource}", resource, quantity
    for kind in ("requests", "limits"):
        for resource, quantity in ((spec.get("resources") or {}).get(kind) or {}).items():
            yield f"resources.{kind}.{resource}", resource, quantity
    for resource, quantity in (spec.get("overhead") or {}).items():
        yield f"overhead.{resource}", resource, quantity


_KEYED = re.compile(r"\.(requests|limits)\[([^\]]+)\]")
_REQUESTS = re.compile(r"\.template\.spec\.containers\[0\]\.resources\.requests(?:\[(.+)\]|\.(.+))$")


def _where_in(path: str, field: str) -> str:
    """A Workload field (`spec.podSets[0].template.spec.containers[0].resources.requests[cpu]`) where the
    trace wrote it: JSON Lines `podSets[0].requests.cpu`, the CSV column `cpu` (or `count`, `minCount`),
    an export's own path; a job manifest's Workload by its own path, after `manifest:`."""
    path = _KEYED.sub(r".\1.\2", path)  # the webhook's requests[cpu] as the schema's requests.cpu
    if field == "spec.podSets":
        return path
    if field == "manifest":
        return f"manifest: its Workload's {path}"
    written = _REQUESTS.sub(lambda m: ".requests." + (m[1] or m[2]), path.removeprefix("spec."))
    if field == "podSets":
        return written if ".template." not in written else written.partition(".template.")[0]
    resource = written.partition(".requests.")[2]  # CSV: a resource column, else count or minCount
    return resource or ("count" if written.endswith(".count") or written == "podSets" else "minCount")


def _pod_set(name: str, count: int, requests: dict[str, str], min_count: Any, key: str, error: Where,
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


def _pod_sets_from_lines(pod_sets: Any, error: Where) -> list[dict[str, Any]]:
    """The contract's JSON Lines `podSets` as Workload pod sets."""
    if not isinstance(pod_sets, list) or not pod_sets:
        raise error("podSets", "must be a non-empty list of pod sets ({name, count, requests, ...})")
    found = []
    taken = set()
    for index, pod_set in enumerate(pod_sets):
        if not isinstance(pod_set, dict):
            raise error(f"podSets[{index}]", "must be a map ({name, count, requests, ...})")
        at = error.under(f"podSets[{index}].")
        at.known(pod_set, POD_SET_KEYS)
        name = _name(pod_set.get("name", "main"), "name", at, names.dns1123_label_problem)
        if name in taken:
            raise at("name", f"{name!r} names two pod sets; give each its own name")
        taken.add(name)
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


def _manifest_workloads(manifest: Any, error: Where) -> list[dict[str, Any]]:
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
        raise error(f"manifest.{first.field}" if first.field else "manifest", first.text)
    if result.outcome is not JobOutcome.WORKLOAD or not result.workloads:
        raise error("manifest", result.reason or "Kueue would create no Workload for it")
    return result.workloads


def _csv_header(cells: list[str], error: Where) -> list[str]:
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
        if index > count_at and name not in CSV_OPTIONAL and (problem := names.qualified_name_problem(name)):
            raise refused(error, fe.invalid(name, name, f"a resource name: {problem}"))
    if not any(i > count_at and h not in CSV_OPTIONAL for i, h in enumerate(header)):
        raise error(None, "no resource columns after count (e.g. cpu,memory,nvidia.com/gpu)")
    return header


# Workload exports --------------------------------------------------------------------------------


class _Exports:
    """Workloads from exports, merged: one per uid (else namespace, name, creation time), the
    copy with the latest state winning and the first one's place in the trace kept."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self.seen: dict[tuple, tuple[tuple, int]] = {}  # identity -> (state rank, index in trace.workloads)
        self.namespaces: set[str] = set()
        self.queues: set[str] = set()
        self.classes: set[str] = set()

    def read(self, documents: list[Any], file: str) -> None:
        for index, value in enumerate(documents):
            if value is None:
                continue
            error = Where(file, document=index)
            if not isinstance(value, dict):
                raise error(None, "a document must be a Workload or a List of them (a map)")
            if value.get("kind") == "List" or (str(value.get("kind", "")).endswith("List") and "items" in value):
                items = value.get("items")
                if not isinstance(items, list):
                    raise error("items", "a List must have items (a list of Workloads)")
                for position, item in enumerate(items):
                    self._one(item, file, error.under(f"items[{position}]."), index, position)
            else:
                self._one(value, file, error, index, -1)

    def _one(self, manifest: Any, file: str, error: Where, document: int, item: int) -> None:
        if not isinstance(manifest, dict):
            raise error(None, "must be a Workload (a map)")
        api, kind = manifest.get("apiVersion"), manifest.get("kind")
        if kind is None and isinstance(manifest.get("Items"), list):
            raise error(None, "is a page of the Azure Retail Prices API, not a trace: give each price file with "
                              "its own --prices (--prices a.json --prices b.json)")
        if kind in QUEUE_KINDS or (kind == "Configuration" and str(api).startswith("config.kueue.x-k8s.io/")):
            name = _map(manifest.get("metadata")).get("name")
            raise error("kind", f"{kind}{' ' + show(name) if name else ''} is a queue object, not a Workload: this "
                                "file belongs to the configuration; to give several queue files, repeat --queues "
                                "(--queues a.yaml --queues b.yaml), and give traces as the arguments")
        if kind != "Workload" or api not in WORKLOAD_VERSIONS:
            raise error("kind", f"{show(api)}/{show(kind)} is not a Kueue Workload; a trace holds Workloads "
                                f"(kubectl get workloads -A -o yaml), {GROUP}/v1beta2 or v1beta1")
        workload = to_v1beta2(manifest)
        metadata, spec, status = (_map(workload.get(k)) for k in ("metadata", "spec", "status"))
        name = _name(metadata.get("name"), "metadata.name", error)
        namespace = _name(metadata.get("namespace") or "default", "metadata.namespace", error,
                          names.dns1123_label_problem, self.namespaces)
        created = metadata.get("creationTimestamp")
        if not isinstance(created, str):
            raise refused(error, fe.required("metadata.creationTimestamp", "when the Workload was created "
                                                 "(kubectl prints it); the trace needs it as the submission time"))
        submitted = _parsed(instant, created, "metadata.creationTimestamp", error)
        queue = spec.get("queueName")
        if not isinstance(queue, str) or not queue:
            raise refused(error, fe.required("spec.queueName", "a Workload without a queue is not Kueue's to admit"))
        queue = _name(queue, "spec.queueName", error, known=self.queues)
        if not isinstance(spec.get("podSets"), list) or not spec["podSets"]:
            raise refused(error, fe.required("spec.podSets", "a Workload has at least one pod set"))
        for position, pod_set in enumerate(spec["podSets"]):
            if not isinstance(pod_set, dict):
                raise error(f"spec.podSets[{position}]", "must be a pod set (a map)")
            _integer(pod_set.get("count", 1), f"spec.podSets[{position}].count", error)
        runtime = _export_runtime(status, error)
        shape = _shape(self.trace, trim_pod_sets(spec["podSets"]), error, "spec.podSets")
        ref = _map(spec.get("priorityClassRef"))
        priority = spec.get("priority")
        if priority is not None:
            priority = _integer(priority, "spec.priority", error, INT32_MIN)
        priority_class = None
        if ref.get("kind") == WPC_KIND and ref.get("name") is not None:
            priority_class = _name(ref.get("name"), "spec.priorityClassRef.name", error, known=self.classes)
        given = metadata.get("uid")
        uid = given if isinstance(given, str) else ""
        if len(uid) > MAX_UID:
            raise error("metadata.uid", f"{show(uid)} is not a uid; a uid has at most {MAX_UID} characters")
        identity = ("uid", uid) if uid else ("name", namespace, name, created)
        rank = _state_rank(status, metadata)
        entry = TraceWorkload(namespace=namespace, name=name, queue=queue, submitted=submitted, runtime=runtime,
                              shape=shape, priority=priority, priority_class=priority_class, absolute=True, uid=uid,
                              file=file, document=document, item=item, observed=_observed(status, error))
        known = self.seen.get(identity)
        if known is None:
            self.seen[identity] = (rank, len(self.trace.workloads))
            self.trace.add(entry)
        elif rank >= known[0]:
            entry.order = self.trace.workloads[known[1]].order
            self.trace.workloads[known[1]] = entry
            self.seen[identity] = (rank, known[1])


def _map(value: Any) -> dict[str, Any]:
    """A part of a manifest that should be a map, as one (anything else reads as empty)."""
    return value if isinstance(value, dict) else {}


def _conditions(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    conditions = status.get("conditions")
    return {c["type"]: c for c in conditions if isinstance(c, dict) and isinstance(c.get("type"), str)} \
        if isinstance(conditions, list) else {}


def _condition_time(conditions: dict[str, dict[str, Any]], kind: str, error: Where) -> Optional[tuple[float, str]]:
    """A True condition's lastTransitionTime (seconds, as written)."""
    condition, key = conditions.get(kind), f"status.conditions[{kind}]"
    if not condition or condition.get("status") != "True":
        return None
    when = condition.get("lastTransitionTime")
    if not isinstance(when, str):
        raise refused(error, fe.required(key, "lastTransitionTime of a True condition"))
    return _parsed(instant, when, key, error), when


def _observed(status: dict[str, Any], error: Where) -> Optional[Observed]:
    """What the export records of what happened, for the backtest; None for a Workload without conditions.
    Admitted: the `Admitted=True` condition's time, which is the last admission (a condition keeps only
    its last transition). Started: `PodsReady=True` after it, unless its reason is `Recovered` (pods
    that failed and recovered: the start itself is lost). Flavors: those of `status.admission`."""
    conditions = _conditions(status)
    if not conditions:
        return None
    admitted = _condition_time(conditions, "Admitted", error)
    started = _condition_time(conditions, "PodsReady", error) if admitted is not None else None
    if admitted is None or (started is not None and (conditions["PodsReady"].get("reason") == "Recovered"
                                                     or started[0] < admitted[0])):
        started = None  # a recovery's time, or a stale one from before the last admission
    flavors: set[str] = set()
    assignments = _map(status.get("admission")).get("podSetAssignments")
    for assignment in assignments if isinstance(assignments, list) and admitted is not None else []:
        flavors.update(str(f) for f in _map(_map(assignment).get("flavors")).values())
    return Observed(None if admitted is None else admitted[0], None if started is None else started[0],
                    tuple(sorted(flavors)))


def _export_runtime(status: dict[str, Any], error: Where) -> Optional[float]:
    """Finished minus the start: PodsReady=True when present, else Admitted=True. Without Finished
    the workload runs until the end of the replay; finished without ever being admitted, 0 (it never
    ran). A Finished time before the start it is measured from is refused: the export contradicts
    itself, and a runtime of 0 would be a quiet guess."""
    conditions = _conditions(status)
    finished = _condition_time(conditions, "Finished", error)
    if finished is None:
        return None
    start, kind = _condition_time(conditions, "PodsReady", error), "PodsReady"
    if start is None:
        start, kind = _condition_time(conditions, "Admitted", error), "Admitted"
    if start is None:
        return 0.0
    if finished[0] < start[0]:
        raise error("status.conditions[Finished]",
                    f"lastTransitionTime {finished[1]} is before the {kind} condition's ({start[1]}): a Workload "
                    "finishes after it starts; fix the export (its runtime cannot be read)")
    return _parsed(lambda seconds: duration(seconds, "a runtime"), finished[0] - start[0],
                   "status.conditions[Finished]", error)


def _state_rank(status: dict[str, Any], metadata: dict[str, Any]) -> tuple:
    """Which copy of a workload is newer: finished first, then the latest condition change, then the
    resourceVersion (etcd's revision: digits, compared by length then value, never converted)."""
    conditions = _conditions(status)
    finished = (conditions.get("Finished") or {}).get("status") == "True"
    latest = 0.0
    for condition in conditions.values():
        try:
            latest = max(latest, instant(str(condition.get("lastTransitionTime"))))
        except ValueProblem:
            continue
    version = metadata.get("resourceVersion")
    revision = (len(version), version) if isinstance(version, str) and version.isdigit() else (-1, "")
    return finished, latest, revision


__all__ = ["read_trace", "trace_files", "TRACE_SUFFIXES", "MAX_LINE_BYTES", "LINE_LIMITS"]
