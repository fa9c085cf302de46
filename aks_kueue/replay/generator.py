"""Kueue's scheduler performance generator format (`test/performance/scheduler/runner/generator/
generator.go` at v0.19.2): one file that defines both the queues and the workloads.

    cohorts:
    - className: cohort          # cohorts {className}-{i}, `count` of them
      count: 5
      queuesSets:
      - className: cq            # ClusterQueues {className}-{set}-{i}-{cohort}, one flavor, resource cpu
        count: 6
        nominalQuota: 20
        borrowingLimit: 100
        reclaimWithinCohort: Any
        withinClusterQueue: LowerPriority
        workloadsSets:
        - count: 350             # per ClusterQueue: `count` rounds of the workloads below,
          creationIntervalMs: 100   # one created every creationIntervalMs
          workloads:
          - {className: small, runtimeMs: 200, priority: 50, request: 1}

As the harness builds them (`generateQueue`, `generateWlSet`): one ResourceFlavor `rf` (no labels),
each ClusterQueue with `namespaceSelector: {}`, BestEffortFIFO and the given preemption, a namespace
and a LocalQueue named after it; each workload one pod requesting `request` cpu, created
(k+1) x creationIntervalMs after the start for the k-th of its set (the sets of a queue run side by
side), running `runtimeMs` once admitted (the harness's controller marks it Finished then). The
harness runs every queue's sets at once, so workloads of different queues share instants; they are
ordered as written (cohort, queue, set), standing for the API server's creation order.
TAS fields (`topology`, `podCount` with topology constraints) are read; topology is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from aks_kueue.k8s import names
from aks_kueue.k8s import field as fe
from aks_kueue.k8s.field import show
from aks_kueue.k8s.quantity import QuantityError, parse_quantity, request_problem
from aks_kueue.k8s.spelling import suggest
from aks_kueue.kueue.convert import V1BETA2
from aks_kueue.replay.trace import MAX_SPAN, MAX_SPAN_DAYS, MAX_WORKLOADS, Trace, TraceWorkload, Where, refused

POLICIES = ("Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any")
TOP_KEYS = ("cohorts", "resourceFlavor", "topology")
COHORT_KEYS = ("className", "count", "queuesSets")
QUEUE_KEYS = ("className", "count", "nominalQuota", "borrowingLimit", "reclaimWithinCohort", "withinClusterQueue",
              "workloadsSets")
SET_KEYS = ("count", "creationIntervalMs", "workloads")
WORKLOAD_KEYS = ("className", "runtimeMs", "priority", "request", "podCount", "tasConstraint", "tasLevel", "sliceSize")
DEFAULT_FLAVOR = "rf"
# ClusterQueues one generator file may make: Kueue's large-scale scenario has 1,000.
MAX_CLUSTER_QUEUES = 10_000
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


@dataclass
class Generated:
    """The configuration a generator file defines, and which class each ClusterQueue is of."""

    file: str
    objects: list[dict[str, Any]]
    queue_classes: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def read_generator(document: dict[str, Any], file: str, trace: Trace) -> None:
    error = Where(file, document=0)
    if not isinstance(document, dict):
        raise error("cohorts", "must be a map")  # what the generator needs first
    error.known(document, TOP_KEYS)
    flavor = DEFAULT_FLAVOR
    notes = []
    if document.get("resourceFlavor") is not None:
        spec = document["resourceFlavor"]
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            raise error("resourceFlavor.name", "must be the flavor's name")
        flavor = spec["name"]
    if document.get("topology") is not None:
        notes.append("the generator file defines a topology: Topology Aware Scheduling is not modelled, so pods "
                     "are admitted on quota alone")
    cohorts = document.get("cohorts")
    if not isinstance(cohorts, list) or not cohorts:
        raise error("cohorts", "must be a non-empty list (Kueue's generator needs at least one cohort)")
    _sizes(cohorts, error)  # before anything is built: counts of 10^12 are refused, not expanded
    objects: list[dict[str, Any]] = [{"apiVersion": V1BETA2, "kind": "ResourceFlavor", "metadata": {"name": flavor},
                                      "spec": {}}]
    generated = Generated(file, objects, notes=notes)
    made: list[tuple[float, int, TraceWorkload]] = []
    # `_sizes` checked the structure and the counts: this pass reads the values and builds.
    for ci, cohort_set in enumerate(cohorts):
        at = error.under(f"cohorts[{ci}].")
        cohort_class = _name(cohort_set.get("className"), "className", at)
        for cohort_index in range(cohort_set["count"]):
            cohort = f"{cohort_class}-{cohort_index}"
            for qi, queue_set in enumerate(cohort_set["queuesSets"]):
                q_at = at.under(f"queuesSets[{qi}].")
                queue_class = _name(queue_set.get("className"), "className", q_at)
                resource = {"name": "cpu",
                            "nominalQuota": _quantity(queue_set.get("nominalQuota"), "nominalQuota", q_at)}
                if queue_set.get("borrowingLimit") not in (None, ""):
                    resource["borrowingLimit"] = _quantity(queue_set["borrowingLimit"], "borrowingLimit", q_at)
                preemption = {key: _policy(queue_set.get(key), key, q_at)
                              for key in ("reclaimWithinCohort", "withinClusterQueue")}
                for queue_index in range(queue_set["count"]):
                    name = f"{queue_class}-{qi}-{queue_index}-{cohort}"
                    generated.queue_classes[name] = queue_class
                    objects += _queue_objects(name, cohort, flavor, resource, preemption)
                    for si, workload_set in enumerate(queue_set["workloadsSets"]):
                        s_at = q_at.under(f"workloadsSets[{si}].")
                        interval = workload_set["creationIntervalMs"]
                        shapes = [_template(t, trace, s_at.under(f"workloads[{i}]."))
                                  for i, t in enumerate(workload_set["workloads"])]
                        k = 0
                        for round_index in range(workload_set["count"]):
                            for ti, (wl_class, runtime, priority, shape) in enumerate(shapes):
                                k += 1
                                submitted = k * interval / 1000
                                made.append((submitted, len(made), TraceWorkload(
                                    namespace=name, name=f"{wl_class}-{si}-{round_index}-{ti}", queue=name,
                                    submitted=submitted, runtime=runtime, shape=shape, priority=priority,
                                    file=file)))
    made.sort(key=lambda m: (m[0], m[1]))
    for _, _, workload in made:
        trace.add(workload)
    trace.generated = generated
    trace.notes += notes


def _sizes(cohorts: list[Any], error: Where) -> None:
    """How many ClusterQueues and workloads the file makes, from its counts alone; refused past
    MAX_CLUSTER_QUEUES and MAX_WORKLOADS at the count that goes over. It checks the structure too (each
    level a list of maps with known keys), so the building pass reads it as it is."""
    queues = workloads = 0
    for at, cohort_set in _entries(cohorts, error, "cohorts", COHORT_KEYS):
        cohort_count = _count(cohort_set.get("count"), "count", at)
        for q_at, queue_set in _entries(cohort_set.get("queuesSets"), at, "queuesSets", QUEUE_KEYS):
            queue_count = _count(queue_set.get("count"), "count", q_at)
            queues += cohort_count * queue_count
            if queues > MAX_CLUSTER_QUEUES:
                raise q_at("count", f"{queue_count:,} ClusterQueues in each of {cohort_count:,} cohorts make more "
                                    f"than {MAX_CLUSTER_QUEUES:,}, the most one replay holds")
            for s_at, workload_set in _entries(queue_set.get("workloadsSets"), q_at, "workloadsSets", SET_KEYS):
                rounds = _count(workload_set.get("count"), "count", s_at)
                templates = workload_set.get("workloads")
                if not isinstance(templates, list) or not templates:
                    raise s_at("workloads", "must be a non-empty list of workload templates")
                workloads += cohort_count * queue_count * rounds * len(templates)
                if workloads > MAX_WORKLOADS:
                    raise s_at("count", f"{rounds:,} rounds of {len(templates)} workloads in "
                                        f"{cohort_count * queue_count:,} ClusterQueues make more than "
                                        f"{MAX_WORKLOADS:,} workloads, the most one replay reads")
                interval = _count(workload_set.get("creationIntervalMs"), "creationIntervalMs", s_at)
                if rounds * len(templates) * interval / 1000 > MAX_SPAN:
                    raise s_at("creationIntervalMs", f"{rounds * len(templates):,} workloads {interval:,} ms apart "
                                                     f"span more than {MAX_SPAN_DAYS} days, the longest this "
                                                     "program replays")


def _entries(value: Any, error: Where, key: str, keys: tuple[str, ...]) -> Iterator[tuple[Where, dict[str, Any]]]:
    """The maps of the list at `key` (each with only `keys`), each with where it is."""
    if not isinstance(value, list):
        raise error(key, f"must be a list of {key}")
    for index, entry in enumerate(value):
        at = error.under(f"{key}[{index}].")
        at.known(entry, keys)
        yield at, entry


def _queue_objects(name: str, cohort: str, flavor: str, resource: dict, preemption: dict) -> list[dict[str, Any]]:
    return [
        {"apiVersion": V1BETA2, "kind": "ClusterQueue", "metadata": {"name": name},
         "spec": {"cohortName": cohort, "namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                  "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
                  "preemption": dict(preemption),
                  "resourceGroups": [{"coveredResources": ["cpu"],
                                      "flavors": [{"name": flavor, "resources": [dict(resource)]}]}]}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        {"apiVersion": V1BETA2, "kind": "LocalQueue", "metadata": {"name": name, "namespace": name},
         "spec": {"clusterQueue": name}},
    ]


def _template(template: Any, trace: Trace, error: Where) -> tuple[str, float, int, Any]:
    error.known(template, WORKLOAD_KEYS)
    wl_class = _name(template.get("className"), "className", error)
    runtime = _count(template.get("runtimeMs"), "runtimeMs", error) / 1000
    if runtime > MAX_SPAN:
        raise error("runtimeMs", f"{runtime:,.0f} s is more than {MAX_SPAN_DAYS} days, the longest this program "
                                 "replays")
    priority = template.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise error("priority", f"{show(priority)} is not a whole number")
    if not INT32_MIN <= priority <= INT32_MAX:
        raise refused(error, fe.invalid("priority", priority, f"must be a 32-bit integer, from {INT32_MIN} to "
                                                              f"{INT32_MAX} (Kueue's Workload holds its priority as one)"))
    request = _quantity(template.get("request"), "request", error)
    pods = _count(template.get("podCount", 1) or 1, "podCount", error)
    if pods > INT32_MAX:
        raise refused(error, fe.invalid("podCount", pods, f"must be at most {INT32_MAX} (a pod set's count is int32)"))
    pod_set = {"name": "main", "count": max(1, pods),
               "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": request}}}]}}}
    return wl_class, runtime, priority, trace.shape([pod_set])


def _name(value: Any, key: str, error: Where) -> str:
    """A class name: the generated objects' names are made of it, so it is a DNS label (as short as the
    names it goes into allow; Kueue's validation holds the names made of it to their rules too)."""
    if not isinstance(value, str) or not value:
        raise refused(error, fe.required(key, "a class name"))
    problem = names.dns1123_label_problem(value)
    if problem:
        raise refused(error, fe.invalid(key, value, problem))
    return value


def _count(value: Any, key: str, error: Where) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise error(key, f"{show(value)} is not a whole number of at least 0")
    return value


def _quantity(value: Any, key: str, error: Where) -> str:
    if value is None:
        raise refused(error, fe.required(key, "a cpu quantity"))
    text = str(value) if not isinstance(value, float) or not value.is_integer() else str(int(value))
    try:
        problem = request_problem("cpu", parse_quantity(text))
    except QuantityError as found:
        raise error(key, str(found)) from None
    if problem is not None:
        raise refused(error, fe.invalid(key, value, problem))
    return text


def _policy(value: Optional[Any], key: str, error) -> str:
    if value in (None, ""):
        return "Never"
    if value not in POLICIES:
        raise error(key, f"{show(value)} is not a preemption policy{suggest(str(value), POLICIES)} "
                         f"({', '.join(POLICIES)})")
    return value
