"""The backtest: a Workload export that records what happened, replayed against the configuration that was in
force, each workload's observed times beside the predicted ones, the errors summed up, and a `--node-startup`
suggested per pool. The example is docs/replay.md's ("How far to trust it"), worked by hand there and here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.replay import read_trace
from aks_kueue.replay.trace import TraceError

EXAMPLES = Path(__file__).parents[2] / "docs" / "examples" / "replay"
EXPORT, QUEUES = EXAMPLES / "backtest-export.yaml", EXAMPLES / "backtest-queues.yaml"


def _replay(*args):
    result = CliRunner().invoke(app, ["replay", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_the_export_s_observed_times():
    # Seconds from the first creation (08:00:00Z): the last Admitted, and PodsReady after it; wl-4's are those of
    # its second admission (09:23:20, 09:30:00); wl-5 was pending at the export.
    trace = read_trace([str(EXPORT)])
    observed = {w.name: w.observed for w in trace.workloads}
    assert {name: (o.admitted, o.started) for name, o in observed.items()} == {
        "wl-1": (2.0, 40.0), "wl-2": (301.0, 751.0), "wl-3": (3641.0, 3680.0), "wl-4": (5000.0, 5400.0),
        "wl-5": (None, None)}
    assert observed["wl-1"].flavors == ("a100",) and observed["wl-5"].flavors == ()


def test_the_backtest_example_by_hand():
    # Predicted with 2.4 s cycles and no nodes (started = admitted): wl-1 2.4, wl-2 302.4; wl-3 and wl-4 wait for
    # the 16 GPUs: wl-1 ends at 3,602.4, the requeue at 3,603.4 starts the cycle that admits wl-3 at 3,605.8;
    # wl-2 ends at 3,902.4, wl-4 is admitted at 3,905.8. wl-5 still waits at the end (2 h, the export's time).
    code, out, err = _replay(EXPORT, "--queues", QUEUES, "--until", "2h", "--json")
    assert code == 0, err
    (configuration,) = json.loads(out)["configurations"]
    rows = {w["name"]: w for w in configuration["workloads"]}
    assert {n: (w["admitted"], w["observed"]["admitted"]) for n, w in rows.items()} == {
        "wl-1": (2.4, 2.0), "wl-2": (302.4, 301.0), "wl-3": (3605.8, 3641.0), "wl-4": (3905.8, 5000.0),
        "wl-5": (None, None)}
    # Admitted errors 0.4, 1.4, 35.2, 1,094.2 (wl-4: its preemptor is not in the export, so the replay cannot
    # preempt it); started errors 37.6, 448.6, 74.2, 1,494.2 (no nodes: the replay starts them at admission).
    # Nearest rank over 4: the median is the 2nd, the p95 the 4th.
    assert configuration["backtest"] == {
        "compared": 4,
        "admitted": {"compared": 4, "medianError": 1.4, "p95Error": 1094.2, "within5m": 0.75, "censored": 0},
        "started": {"compared": 4, "medianError": 74.2, "p95Error": 1494.2, "within5m": 0.5, "censored": 0}}
    # PodsReady after admission on gpua100: 38, 450, 39, 400 s; above 2 minutes {400, 450} (median 400), below
    # {38, 39} (median 38): 362 s.
    assert configuration["nodeStartup"] == [{"pool": "gpua100", "suggested": 362.0, "waited": 2, "notWaited": 2,
                                             "medianWaited": 400.0, "medianNotWaited": 38.0, "threshold": 120.0}]
    code, out, _ = _replay(EXPORT, "--queues", QUEUES, "--until", "2h")
    assert "suggested from the exports: --node-startup gpua100=6m2s" in out
    assert "│ time admitted            │ 4         │ 1.4s" in out


def test_a_workload_the_replay_never_admits_is_compared_with_a_censored_error(tmp_path):
    # With 8 GPUs, only one runs at a time: by 2 h the replay has admitted wl-1 (2.4), wl-2 (3,605.8 after wl-1's
    # end) and nothing more (wl-2 runs to 7,205.8). wl-3 and wl-4, admitted in the export, count with an error of
    # at least the time from their observed admission to the end: 7,200 - 3,641 and 7,200 - 5,000.
    queues = tmp_path / "queues.yaml"
    queues.write_text(QUEUES.read_text().replace('nominalQuota: "16"', 'nominalQuota: "8"'))
    code, out, _ = _replay(EXPORT, "--queues", queues, "--until", "2h", "--json")
    assert code == 0
    admitted = json.loads(out)["configurations"][0]["backtest"]["admitted"]
    # Errors 0.4, 3,304.8 (wl-2: 3,605.8 - 301), 3,559 and 2,200 (censored): sorted 0.4, 2,200, 3,304.8, 3,559.
    assert admitted == {"compared": 4, "medianError": 2200.0, "p95Error": 3559.0, "within5m": 0.25, "censored": 2}


def test_what_an_export_does_not_record_is_not_guessed(tmp_path):
    documents = yaml.safe_load(EXPORT.read_text())
    wl1, wl3 = documents["items"][0], documents["items"][2]
    # A recovery's PodsReady time is not the start: no observed start.
    wl1["status"]["conditions"][2]["reason"] = "Recovered"
    # A PodsReady before the last admission is stale (from an earlier admission): no observed start.
    wl3["status"]["conditions"][2]["lastTransitionTime"] = "2026-11-02T08:59:00Z"
    del documents["items"][3:]
    path = tmp_path / "export.yaml"
    path.write_text(yaml.safe_dump(documents))
    observed = {w.name: w.observed for w in read_trace([str(path)]).workloads}
    assert (observed["wl-1"].admitted, observed["wl-1"].started) == (2.0, None)
    assert (observed["wl-3"].admitted, observed["wl-3"].started) == (3641.0, None)
    # A trace that does not record what happened (JSON Lines) has no observed times, and no backtest.
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text(json.dumps({"submitted": 0, "namespace": "team-a", "queue": "default", "name": "x",
                                 "runtime": 60, "podSets": [{"count": 1, "requests": {"nvidia.com/gpu": "8"}}]}) + "\n")
    code, out, _ = _replay(jsonl, "--queues", QUEUES, "--json")
    (configuration,) = json.loads(out)["configurations"]
    assert "backtest" not in configuration and "observed" not in configuration["workloads"][0]


def test_a_bad_condition_time_is_refused_where_it_is_written(tmp_path):
    documents = yaml.safe_load(EXPORT.read_text())
    documents["items"][0]["status"]["conditions"][1]["lastTransitionTime"] = "yesterday"
    path = tmp_path / "export.yaml"
    path.write_text(yaml.safe_dump(documents))
    with pytest.raises(TraceError) as raised:
        read_trace([str(path)])
    assert raised.value.key == "items[0].status.conditions[Admitted]"
