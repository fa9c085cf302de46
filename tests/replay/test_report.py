"""The contract's JSON: per ClusterQueue and per pool, percentiles, censored waits, differences, gates."""

from __future__ import annotations

import json

from aks_kueue.replay import ReplayConfig, ReplayOptions, read_trace, replay
from aks_kueue.replay.report import Gate, Rows, RunRows, configuration, document, dumps, percentile
from tests.replay.builders import one_queue, pool, run, validated, workload, write_trace


def test_percentiles_are_nearest_rank():
    waits = [float(i) for i in range(1, 21)]
    assert percentile(waits, 0.95) == 19.0
    assert percentile(waits, 0.5) == 10.0
    assert percentile([7.0], 0.95) == 7.0
    assert percentile([], 0.5) is None


def _trace(tmp_path):
    rows = [workload("a", 0, cpu=4, runtime=10), workload("b", 1, cpu=4, runtime=10),
            workload("c", 2, cpu=8, runtime=10)]  # c needs 8 of 4: it waits to the end
    return read_trace([str(write_trace(tmp_path / "t.jsonl", rows))])


def test_a_queue_s_counts_waits_and_usage(tmp_path):
    outcome, _ = run(tmp_path, one_queue(4), [workload("a", 0, cpu=4, runtime=10), workload("b", 1, cpu=4, runtime=10),
                                              workload("c", 2, cpu=8, runtime=10)])
    report = configuration(outcome)
    (queue,) = report["clusterQueues"]
    assert (queue["submitted"], queue["admitted"], queue["started"], queue["finished"]) == (3, 2, 2, 2)
    assert (queue["pendingAtEnd"], queue["neverStarted"], queue["preemptions"]) == (1, 0, 0)
    assert (queue["running"], queue["admittedAtEnd"], queue["neverAdmitted"], queue["preemptedWorkloads"]) == (0, 0, 1, 0)
    # Waits to admission: a 0, b 10 (admitted at 11), c still waiting at the end (21): 19 so far, a censored
    # wait, which makes the p95 and the max lower bounds (the p50, 10, lies below it: exact).
    assert queue["waitToAdmit"] == {"p50": 10.0, "p95": 19.0, "max": 19.0, "censored": 1, "lowerBounds": ["p95", "max"]}
    (usage,) = queue["usage"]
    assert usage == {"flavor": "default", "resource": "cpu", "nominal": 4.0, "meanUsed": round(4 * 20 / 21, 3),
                     "utilisation": round(20 / 21, 4), "borrowedHours": 0.0, "unit": "cores"}
    c = next(w for w in report["workloads"] if w["name"] == "c")
    assert (c["admitted"], c["started"], c["finished"], c["neverStarted"]) == (None, None, None, False)
    a = next(w for w in report["workloads"] if w["name"] == "a")
    assert a == {"namespace": "team-a", "name": "a", "clusterQueue": "team-a", "submitted": 0.0, "admitted": 0.0,
                 "started": 0.0, "finished": 10.0, "state": "finished", "admissions": 1, "preemptions": 0,
                 "evictions": 0, "flavors": {"main": {"cpu": "default"}}, "counts": {"main": 1}, "neverAdmitted": False,
                 "neverStarted": False, "deactivated": False, "reason": None}


def test_two_configurations_differences_and_the_gate(tmp_path):
    trace = _trace(tmp_path)
    small = replay(ReplayConfig("small", validated(one_queue(4))), trace)
    big = replay(ReplayConfig("big", validated(one_queue(8))), trace)
    found = document([big, small], trace, Gate("p95", 5.0))
    assert [c["name"] for c in found["configurations"]] == ["big", "small"]
    (difference,) = found["differences"]
    # With 8 cores a and b start at once and c after them (at 11): waits 0, 0, 9 against 0, 10, 19.
    assert difference["waitToStart.p95"] == 9.0 - 19.0
    assert difference["pendingAtEnd"] == -1
    assert difference["utilisation"]["default/cpu"] is not None
    (gate,) = found["summary"]["gates"]
    assert gate == {"p95": 5.0, "clusterQueue": "team-a", "value": 9.0, "lowerBound": False, "passed": False}
    assert found["summary"]["workloads"] == 3
    assert json.loads(dumps(found))["summary"]["workloads"] == 3  # plain JSON all the way down


def test_pools_in_the_report(tmp_path):
    outcome, _ = run(tmp_path, one_queue(16), [workload("a", 0, cpu=2, runtime=3600)], pools=[pool("cpu")],
                     node_startup={"cpu": 300.0})
    (entry,) = configuration(outcome)["pools"]
    assert entry == {"name": "cpu", "nodeHours": round(3900 / 3600, 3), "peakNodes": 1, "meanAllocated": 0.5,
                     "hoursAtMax": 0.0, "resource": "cpu", "minCount": 0, "maxCount": 2, "nodeStartup": 300.0}
    assumptions = configuration(outcome)["assumptions"]
    assert any("pool cpu: a new node is Ready 300 s after the autoscaler adds it (given)" in a for a in assumptions)


def test_the_same_input_gives_the_same_document_byte_for_byte(tmp_path):
    trace_rows = [workload(f"w{i}", i % 7, cpu=1 + i % 3, runtime=5 + i % 11, priority=i % 2) for i in range(40)]
    texts = []
    for _ in range(2):
        trace = read_trace([str(write_trace(tmp_path / "t.jsonl", trace_rows))])
        outcome = replay(ReplayConfig("x", validated(one_queue(6))), trace)
        texts.append(dumps(document([outcome], trace)))
    assert texts[0] == texts[1]


def test_the_streamed_document_is_json_dumps_byte_for_byte(tmp_path):
    # `write` streams the workloads one by one; what it writes is exactly json.dumps(indent=2) of the whole.
    rows = [workload(f"w{i}", i, cpu=1 + i % 3, runtime=5, priority=i % 2) for i in range(12)]
    trace = read_trace([str(write_trace(tmp_path / "t.jsonl", rows))])
    outcomes = [replay(ReplayConfig(name, validated(one_queue(cpu))), trace) for name, cpu in (("a", 4), ("b", 2))]
    found = document(outcomes, trace, Gate("p95", 5.0))
    whole = json.loads(dumps(found))
    assert len(whole["configurations"][0]["workloads"]) == 12
    assert dumps(found) == json.dumps(whole, indent=2)
    assert dumps({"empty": [], "none": {}, "rows": [], "n": 1}) == json.dumps({"empty": [], "none": {}, "rows": [],
                                                                             "n": 1}, indent=2)


def test_rows_written_from_the_runs_are_the_text_of_their_dicts(tmp_path):
    # `RunRows.texts` writes a row from its run without building its dict (a million rows): the same text,
    # in every state a row can be in: finished, running and pending at the end, preempted, parked with a reason.
    rows = [workload(f"w{i}", i % 5, cpu=1 + i % 4, runtime=3 + i % 7, priority=i % 3) for i in range(30)]
    rows += [workload("lost", 2, queue="nowhere"), workload("late", 11.5, cpu=1, runtime=None)]
    objects = one_queue(5, preemption={"withinClusterQueue": "LowerPriority"})
    trace = read_trace([str(write_trace(tmp_path / "t.jsonl", rows))])
    outcome = replay(ReplayConfig("x", validated(objects)), trace, ReplayOptions(until=12.25))
    found = RunRows(outcome)
    texts = list(found.texts(3))
    assert texts == list(Rows.texts(found, 3))
    states = {json.loads(text)["state"] for text in texts}
    assert states == {"finished", "running", "pending"}
    assert any(json.loads(text)["preemptions"] for text in texts)
    assert any(json.loads(text)["reason"] for text in texts)
