"""Kueue's scheduler performance generator format: queues and workloads as the harness makes them."""

from __future__ import annotations

import pytest
import yaml

from aks_kueue.replay import ReplayConfig, replay
from aks_kueue.replay.formats import read_trace
from aks_kueue.replay.trace import TraceError
from tests.conftest import ROOT
from tests.replay.builders import validated

SMALL = {"cohorts": [{"className": "cohort", "count": 2, "queuesSets": [{
    "className": "cq", "count": 2, "nominalQuota": 4, "borrowingLimit": 2, "reclaimWithinCohort": "Any",
    "withinClusterQueue": "LowerPriority", "workloadsSets": [
        {"count": 3, "creationIntervalMs": 100, "workloads": [
            {"className": "small", "runtimeMs": 200, "priority": 50, "request": 1}]},
        {"count": 1, "creationIntervalMs": 500, "workloads": [
            {"className": "large", "runtimeMs": 1000, "priority": 200, "request": "4"}]}]}]}]}


def _read(tmp_path, document):
    path = tmp_path / "generator.yaml"
    path.write_text(yaml.safe_dump(document))
    return read_trace([str(path)])


def test_queues_and_workloads_as_kueue_s_harness_makes_them(tmp_path):
    trace = _read(tmp_path, SMALL)
    generated = trace.generated
    queues = [o for o in generated.objects if o["kind"] == "ClusterQueue"]
    assert [q["metadata"]["name"] for q in queues] == ["cq-0-0-cohort-0", "cq-0-1-cohort-0", "cq-0-0-cohort-1",
                                                       "cq-0-1-cohort-1"]
    spec = queues[0]["spec"]
    assert spec["cohortName"] == "cohort-0" and spec["queueingStrategy"] == "BestEffortFIFO"
    assert spec["resourceGroups"][0]["flavors"] == [{"name": "rf", "resources": [
        {"name": "cpu", "nominalQuota": "4", "borrowingLimit": "2"}]}]
    assert spec["preemption"] == {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"}
    assert len(trace.workloads) == 4 * 4
    mine = [w for w in trace.workloads if w.namespace == "cq-0-0-cohort-0"]
    # The k-th of a set is created (k+1) x creationIntervalMs after the start; sets run side by side.
    assert [(w.name, w.submitted) for w in mine] == [("small-0-0-0", 0.0), ("small-0-1-0", 0.1),
                                                       ("small-0-2-0", 0.2), ("large-1-0-0", 0.4)]
    assert mine[0].runtime == 0.2 and mine[0].priority == 50 and mine[-1].priority == 200
    assert trace.start is None  # relative times only: seconds from the first creation at 100 ms
    assert [w.order for w in trace.workloads] == list(range(16))


def test_the_generated_queues_are_valid_kueue_objects_and_replay(tmp_path):
    trace = _read(tmp_path, SMALL)
    outcome = replay(ReplayConfig("generator", validated(trace.generated.objects)), trace)
    assert all(r.finished is not None for r in outcome.runs)


def test_kueue_s_baseline_scenario_is_read_whole():
    trace = read_trace([str(ROOT / "benchmarks" / "data" / "kueue-baseline.generator.yaml")])
    assert len(trace.workloads) == 15_000
    assert len(trace.generated.queue_classes) == 30
    assert trace.shapes == 3


@pytest.mark.parametrize("change, key, words", [
    (lambda d: d["cohorts"][0].update(cuont=1), "cohorts[0].cuont", "did you mean 'count'"),
    (lambda d: d["cohorts"][0]["queuesSets"][0].update(reclaimWithinCohort="Sometimes"),
     "cohorts[0].queuesSets[0].reclaimWithinCohort", "not a preemption policy"),
    (lambda d: d["cohorts"][0]["queuesSets"][0].update(count=-1), "cohorts[0].queuesSets[0].count",
     "at least 0"),
    (lambda d: d["cohorts"][0]["queuesSets"][0].update(nominalQuota="twenty"),
     "cohorts[0].queuesSets[0].nominalQuota", "not a quantity"),
    (lambda d: d["cohorts"][0]["queuesSets"][0]["workloadsSets"][0]["workloads"][0].update(runtimeMs="1s"),
     "cohorts[0].queuesSets[0].workloadsSets[0].workloads[0].runtimeMs", "not a whole number"),
    (lambda d: d.update(cohorts=[]), "cohorts", "non-empty list"),
])
def test_a_bad_generator_file_is_refused_with_its_key(tmp_path, change, key, words):
    document = yaml.safe_load(yaml.safe_dump(SMALL))
    change(document)
    with pytest.raises(TraceError) as caught:
        _read(tmp_path, document)
    assert caught.value.key == key and words in str(caught.value)


def test_a_generator_file_goes_alone(tmp_path):
    path = tmp_path / "generator.yaml"
    path.write_text(yaml.safe_dump(SMALL))
    other = tmp_path / "more.jsonl"
    other.write_text('{"submitted": 0, "queue": "q", "podSets": [{}]}\n')
    with pytest.raises(TraceError, match="give it alone"):
        read_trace([str(path), str(other)])


def test_an_empty_document_before_the_generator_is_refused_naming_cohorts(tmp_path):
    path = tmp_path / "generator.yaml"
    path.write_text("---\n---\n" + yaml.safe_dump(SMALL))
    with pytest.raises(TraceError) as caught:
        read_trace([str(path)])
    assert caught.value.key == "cohorts" and "must be a map" in str(caught.value)
