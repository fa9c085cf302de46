"""`aks-kueue replay` end to end: configurations from flags, the contract's JSON for every exit code,
the gate, the files of --out, a stack with its pools, and Kueue's generator format."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app

FIXTURES = Path(__file__).parents[1] / "fixtures" / "replay"
QUEUES = FIXTURES / "queues.yaml"
WAITS = FIXTURES / "waits.jsonl"


def run(*args):
    result = CliRunner().invoke(app, ["replay", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def test_json_follows_the_contract():
    code, out, err = run(WAITS, "--queues", QUEUES, "--json")
    assert code == 0, err
    document = json.loads(out)
    assert {"start", "end", "configurations", "summary", "result", "errors"} <= set(document)
    assert document["result"] == "ok" and document["errors"] == [] and "differences" not in document
    (configuration,) = document["configurations"]
    assert configuration["name"] == f"queues {QUEUES}"
    (queue,) = configuration["clusterQueues"]
    assert {"name", "submitted", "admitted", "started", "finished", "preemptions", "evictions", "pendingAtEnd",
            "neverStarted", "waitToAdmit", "waitToStart", "usage"} <= set(queue)
    # Each scheduling cycle takes 2.4 s by default (kubernetes-sigs/kueue#14477), and what it decides takes
    # effect at its end. a is admitted by the cycle 0-2.4 and runs to 602.4; b (needs all 4 cores) and c (2 cores)
    # wait inadmissible; the requeue a second after a's end (603.4) starts a cycle that admits b at 605.8; c waits
    # for b (ends 1205.8, requeue 1206.8, admitted 1209.2, ends 1509.2).
    by_name = {w["name"]: w for w in configuration["workloads"]}
    assert (by_name["a"]["admitted"], by_name["b"]["admitted"], by_name["c"]["admitted"]) == (2.4, 605.8, 1209.2)
    assert document["end"] == 1509.2 and document["summary"]["workloads"] == 3
    assert any(a.startswith("scheduling cycle 2.4 s, one head per ClusterQueue per cycle (assumed: ~25 scheduling "
                            "cycles a minute") and "kubernetes-sigs/kueue#14477" in a for a in configuration["assumptions"])
    assert [w["state"] for w in configuration["workloads"]] == ["finished"] * 3


def test_text_and_markdown():
    code, out, _ = run(WAITS, "--queues", QUEUES)
    assert code == 0
    assert "per ClusterQueue" in out and "team-a" in out and "waits (p50 / p95 / max;" in out
    code, out, _ = run(WAITS, "--queues", QUEUES, "--format", "markdown")
    assert code == 0
    assert out.startswith("## aks-kueue replay: `queues ") and "| ClusterQueue | submitted |" in out


def test_a_comparison_shows_both_and_the_difference():
    code, out, _ = run(WAITS, "--queues", QUEUES, "--compare-queues", FIXTURES / "queues-bigger.yaml", "--json")
    assert code == 0
    document = json.loads(out)
    assert len(document["configurations"]) == 2
    (difference,) = document["differences"]
    # With 8 cores (the base) b gets in by the cycle it starts (62.4) and c waits for a's end (admitted 605.8,
    # wait 485.8); with 4, c waits until 1209.2 (wait 1089.2): the change makes the worst wait 603.4 s longer.
    assert difference["clusterQueue"] == "team-a"
    assert difference["waitToStart.max"] == 603.4 and difference["waitToStart.p95"] == 603.4
    code, out, _ = run(WAITS, "--queues", QUEUES, "--compare-queues", FIXTURES / "queues-bigger.yaml",
                       "--format", "markdown")
    assert "**What the change does**" in out and "(base " in out


def test_the_wait_gate_exits_1_with_its_verdict():
    code, out, err = run(WAITS, "--queues", QUEUES, "--fail-on-wait", "P95=5m", "--json")
    assert code == 1
    document = json.loads(out)
    assert document["result"] == "rejected"
    assert document["summary"]["gates"] == [{"p95": 300.0, "clusterQueue": "team-a", "value": 1089.2,
                                             "lowerBound": False, "passed": False}]
    assert "gate failed: ClusterQueue team-a waits 1089.2 s to start at p95, more than 300 s" in err
    code, _, _ = run(WAITS, "--queues", QUEUES, "--fail-on-wait", "P95=1h")
    assert code == 0


def test_a_bad_trace_line_exits_2_with_one_json_document(tmp_path):
    trace = tmp_path / "trace.jsonl"
    trace.write_text(WAITS.read_text() + '{"submitted": 0, "queue": "default", "podSets": [{"count": "two"}]}\n')
    code, out, err = run(trace, "--queues", QUEUES, "--json")
    assert code == 2
    document = json.loads(out)
    assert document["result"] == "invalid"
    (error,) = document["errors"]
    assert error["file"] == str(trace) and error["line"] == 4 and error["key"] == "podSets[0].count"
    assert "not a whole number" in error["message"]
    assert f"replay: {trace} line 4: podSets[0].count:" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("args, words", [
    (["--queues", QUEUES, "--stack", "dev"], "give one configuration"),
    (["--queues", QUEUES, "--until", "soon"], "--until"),
    (["--queues", QUEUES, "--scale-down-delay", "-5"], "--scale-down-delay"),
    (["--queues", QUEUES, "--node-startup", "gpu=5m"], "no pool gpu"),
    (["--queues", QUEUES, "--fail-on-wait", "5m"], "P95=DURATION"),
    (["--queues", QUEUES, "--format", "html"], "--format must be one of"),
    (["--queues", FIXTURES / "missing.yaml"], "no such file"),
    (["--stack", "nosuch"], "no such stack file"),
])
def test_unusable_flags_exit_2_with_a_sentence(args, words):
    code, out, err = run(WAITS, *args, "--json")
    assert code == 2
    document = json.loads(out)
    assert document["result"] == "invalid" and words in document["errors"][0]["message"]
    assert words in err


def test_invalid_queue_objects_exit_2_naming_file_and_document(tmp_path):
    queues = tmp_path / "queues.yaml"
    queues.write_text(QUEUES.read_text().replace('nominalQuota: "4"', 'nominalQuota: "four"'))
    code, out, _ = run(WAITS, "--queues", queues, "--json")
    assert code == 2
    (error,) = json.loads(out)["errors"]
    assert error["file"] == str(queues) and error["document"] == 1 and "ClusterQueue team-a" in error["message"]


def test_out_writes_the_chart_the_summary_and_the_workloads(tmp_path):
    out_dir = tmp_path / "out"
    code, _, err = run(WAITS, "--queues", QUEUES, "--compare-queues", FIXTURES / "queues-bigger.yaml",
                       "--out", out_dir)
    assert code == 0
    chart = (out_dir / "replay.png").read_bytes()
    assert chart[:8] == b"\x89PNG\r\n\x1a\n" and len(chart) > 10_000
    assert (out_dir / "summary.md").read_text().startswith("## aks-kueue replay")
    rows = list(csv.DictReader((out_dir / "workloads.csv").open()))
    assert len(rows) == 6 and {r["configuration"] for r in rows} == {f"queues {QUEUES}",
                                                                        f"queues {FIXTURES / 'queues-bigger.yaml'}"}
    c = next(r for r in rows if r["name"] == "c" and r["configuration"] == f"queues {QUEUES}")
    assert (c["admitted"], c["waitToStart"], c["state"], c["waitCut"]) == ("1209.2", "1089.2", "finished", "false")
    assert "wrote" in err


def test_dev_s_sample_jobs_on_the_dev_stack_with_its_pools():
    code, out, err = run(FIXTURES / "dev-sample-jobs.jsonl", "--stack", "dev", "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["start"] == "2026-11-02T08:00:00Z"
    (configuration,) = document["configurations"]
    assert configuration["name"] == "stack dev"
    assert {p["name"] for p in configuration["pools"]} == {"cpu", "t4"}
    by_name = {w["name"]: w for w in configuration["workloads"]}
    assert all(w["finished"] is not None for w in by_name.values())
    # The GPU jobs land on t4 and wait for its nodes (scale from zero; 8 minutes assumed for a GPU node) after
    # the 2.4 s scheduling cycle that admits them.
    assert by_name["finetune-1"]["flavors"]["main"]["nvidia.com/gpu"] == "t4"
    assert by_name["finetune-1"]["admitted"] == 2.4 and by_name["finetune-1"]["started"] == 482.4
    # The t4 quota holds two GPUs: the third finetune waits for one to end.
    assert by_name["finetune-3"]["admitted"] > by_name["finetune-2"]["finished"]
    assert any("(assumed for a GPU pool)" in a for a in configuration["assumptions"])


def test_node_startup_is_overridden_per_pool():
    code, out, _ = run(FIXTURES / "dev-sample-jobs.jsonl", "--stack", "dev", "--node-startup", "t4=2m", "--json")
    assert code == 0
    finetune = next(w for w in json.loads(out)["configurations"][0]["workloads"] if w["name"] == "finetune-1")
    assert finetune["started"] == 122.4  # the 2.4 s cycle that admits it, then 2 minutes


def test_the_contract_example_on_the_prod_stack():
    code, out, _ = run(FIXTURES / "contract-example.jsonl", "--stack", "prod", "--json")
    assert code == 0
    (workload,) = json.loads(out)["configurations"][0]["workloads"]
    # As the contract writes it, with no tolerations: prod's a100 nodes are tainted, so Kueue never admits
    # it, and the report says why in Kueue's words.
    assert workload["admitted"] is None
    assert "untolerated taint {sku gpu NoSchedule <nil>} in flavor a100" in workload["reason"]


def test_a_generator_trace_needs_no_configuration(tmp_path):
    generator = tmp_path / "generator.yaml"
    generator.write_text(yaml.safe_dump({"cohorts": [{"className": "c", "count": 1, "queuesSets": [{
        "className": "cq", "count": 2, "nominalQuota": 2, "borrowingLimit": 2, "reclaimWithinCohort": "Any",
        "withinClusterQueue": "LowerPriority", "workloadsSets": [{"count": 5, "creationIntervalMs": 100,
                                                                  "workloads": [{"className": "s", "runtimeMs": 300,
                                                                                 "priority": 1, "request": 1}]}]}]}]}))
    code, out, err = run(generator, "--json")
    assert code == 0, err
    (configuration,) = json.loads(out)["configurations"]
    assert configuration["name"] == f"generator {generator}"
    assert sum(q["finished"] for q in configuration["clusterQueues"]) == 10
    code, out, _ = run(generator, "--queues", QUEUES, "--json")
    assert code == 2 and "defines its own queues" in json.loads(out)["errors"][0]["message"]


def test_progress_a_bar_on_a_terminal_and_lines_in_a_log():
    import io

    from aks_kueue.cli import replay_progress
    from aks_kueue.replay.engine import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    state = Progress(now=3600.0, events=5, queued=5, submitted=2, finished=1, workloads=4)
    with replay_progress.progress("x", 0, 1, stream=Terminal()) as update:
        assert not isinstance(update, replay_progress.Lines)
        update(state)
    # Not a terminal (a CI log): one line every LINE_EVERY seconds of wall time, none before.
    log, clock = io.StringIO(), [0.0]
    lines = replay_progress.Lines("replay (stack prod)", log, every=5.0, clock=lambda: clock[0])
    lines(state)
    assert log.getvalue() == ""
    clock[0] = 5.0
    lines(state)
    clock[0] = 7.0
    lines(state)
    assert log.getvalue() == ("replay (stack prod): 5 events, virtual time 1h, 2 of 4 workloads submitted, "
                              "1 finished\n")


def test_a_long_replay_prints_progress_lines_on_stderr(monkeypatch):
    from aks_kueue.cli import replay_progress

    monkeypatch.setattr(replay_progress, "LINE_EVERY", 0.0)
    code, _, err = run(WAITS, "--queues", QUEUES, "--json")
    assert code == 0
    assert f"replay (queues {QUEUES}): " in err and "3 of 3 workloads submitted, 3 finished" in err


def test_workloads_no_node_can_hold_end_the_replay_on_the_prod_stack(tmp_path):
    # Issue 27's first report: on prod, a few workloads asking cpu 16 (no cpu node allocates more than 15.74)
    # were evicted by waitForPodsReady again and again until the backoff overflowed. Each is admitted once,
    # left out at its first timeout and reported; the rest of the trace runs to its end.
    rows = []
    for i in range(60):
        cpu = "16" if i % 10 == 0 else str(1 + i % 4)
        rows.append({"submitted": i * 30, "namespace": "team-a" if i % 2 else "team-b", "queue": "default",
                     "name": f"w{i}", "priorityClass": "batch-high" if i % 3 else "batch-low", "runtime": 1800,
                     "podSets": [{"name": "main", "count": 1, "requests": {"cpu": cpu, "memory": "8Gi"}}]})
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run(path, "--stack", "prod", "--json")
    assert code == 0, err
    (configuration,) = json.loads(out)["configurations"]
    big = [w for w in configuration["workloads"] if w["name"] in {f"w{i}" for i in range(0, 60, 10)}]
    assert len(big) == 6
    for workload in big:
        assert workload["evictions"] == 1 and workload["started"] is None and workload["neverStarted"]
        assert "a node of pool cpu offers cpu 15740m, the pod asks 16" in workload["reason"]
    others = [w for w in configuration["workloads"] if w not in big]
    assert all(w["finished"] is not None for w in others)
    assert any("6 workloads can never be placed on these pools" in a for a in configuration["assumptions"])


# Issue 30: nothing silent ------------------------------------------------------------------------------


def test_a_configuration_is_always_named():
    # No silent `dev`: without --stack, --config or --queues the command says what to give, and the stacks it found.
    code, out, err = run(WAITS, "--json")
    assert code == 2
    (error,) = json.loads(out)["errors"]
    assert error["message"].startswith("name the configuration to replay against: --stack NAME, --config PATH")
    assert "the stacks here: dev, fleet-manager, fleet-swedencentral, fleet-westus3, prod" in error["message"]
    assert "Traceback" not in err


def test_a_trace_that_reaches_no_cluster_queue_exits_2_naming_its_queues(tmp_path):
    trace = tmp_path / "elsewhere.jsonl"
    trace.write_text(WAITS.read_text().replace('"queue": "default"', '"queue": "gpu"'))
    code, out, _ = run(trace, "--queues", QUEUES, "--json")
    assert code == 2
    (error,) = json.loads(out)["errors"]
    assert error["message"] == (f"none of the trace's 3 workloads reaches a ClusterQueue of queues {QUEUES}: they ask "
                                "for LocalQueues team-a/gpu (3) (namespace/name, workloads); its LocalQueues are "
                                "team-a/default. Replay the trace against the configuration it came from")


def test_the_gate_fails_closed(tmp_path):
    # One workload of four reaches no ClusterQueue: it fails the gate, however short the waits of the others.
    trace = tmp_path / "trace.jsonl"
    trace.write_text(WAITS.read_text() + '{"submitted": 5, "namespace": "team-b", "queue": "default", "name": "lost", '
                                         '"runtime": 60, "podSets": [{"count": 1, "requests": {"cpu": "1"}}]}\n')
    code, out, err = run(trace, "--queues", QUEUES, "--fail-on-wait", "P95=2h", "--json")
    assert code == 1
    document = json.loads(out)
    assert document["configurations"][0]["unrouted"] == 1
    assert document["summary"]["gates"][-1] == {"p95": 7200.0, "clusterQueue": None, "value": None,
                                                "lowerBound": False, "unrouted": 1, "passed": False}
    assert "gate failed: 1 workloads reach no ClusterQueue of queues" in err
    # A wait cut at the end counts with what it had waited: a lower bound, printed so.
    trace.write_text(WAITS.read_text() + '{"submitted": 5, "namespace": "team-a", "queue": "default", "name": "huge", '
                                         '"runtime": 60, "podSets": [{"count": 1, "requests": {"cpu": "8"}}]}\n')
    code, out, err = run(trace, "--queues", QUEUES, "--fail-on-wait", "P95=10m", "--cycle-time", "0")
    assert code == 1
    # huge (8 of 4 cores) never fits: its wait to start is cut at the end, 1502 - 5 = 1497 s.
    assert "gate p95 wait to start <= 10m: team-a ≥ 24m57s FAILED" in out
    assert "gate failed: ClusterQueue team-a waits at least 1497 s to start at p95" in err
    assert "pending at the end: team-a/huge (team-a): couldn't assign flavors to pod set main" in out


def test_queues_is_repeatable_and_a_trace_of_queue_objects_says_so(tmp_path):
    documents = QUEUES.read_text().split("---\n")
    flavors, rest = tmp_path / "flavors.yaml", tmp_path / "queues"
    flavors.write_text(documents[0])
    rest.mkdir()
    (rest / "team-a.yaml").write_text("---\n".join(documents[1:]))
    code, out, err = run(WAITS, "--queues", flavors, "--queues", rest, "--json", "--cycle-time", "0")
    assert code == 0, err
    assert json.loads(out)["configurations"][0]["workloads"][2]["admitted"] == 1202.0
    # `--queues a b` takes b as a trace: it holds queue objects, and the message says what to do.
    code, out, _ = run(WAITS, "--queues", flavors, rest / "team-a.yaml", "--json")
    assert code == 2
    (error,) = json.loads(out)["errors"]
    assert error["file"] == str(rest / "team-a.yaml") and error["document"] == 0 and error["key"] == "kind"
    assert error["message"].endswith('kind: ClusterQueue "team-a" is a queue object, not a Workload: this file belongs to the '
                                "configuration; to give several queue files, repeat --queues (--queues a.yaml --queues "
                                "b.yaml), and give traces as the arguments")


def test_an_object_defined_twice_exits_2_naming_both_places(tmp_path):
    copy = tmp_path / "copy.yaml"
    copy.write_text(QUEUES.read_text().replace('nominalQuota: "4"', 'nominalQuota: "8"'))
    code, out, _ = run(WAITS, "--queues", QUEUES, "--queues", copy, "--json")
    assert code == 2
    errors = json.loads(out)["errors"]
    assert [(e["file"], e["document"]) for e in errors] == [(str(copy), 0), (str(copy), 1), (str(copy), 2)]
    assert errors[1]["message"].endswith(f'metadata.name: Duplicate value: "team-a": {QUEUES} document 1 already defines '
                                    "ClusterQueue team-a; one configuration holds one definition of each object (the "
                                    "API server keeps one per name): remove one, or replay the files apart")


def test_the_window_from_and_until(tmp_path):
    dev = FIXTURES / "dev-sample-jobs.jsonl"
    code, out, err = run(dev, "--stack", "dev", "--from", "2026-11-02T08:10:00Z", "--until", "6h", "--json")
    assert code == 0, err
    document = json.loads(out)
    assert (document["from"], document["end"]) == (600.0, 21600.0)
    submitted = [w["submitted"] for w in document["configurations"][0]["workloads"]]
    assert submitted == [600.0, 1200.0]  # 08:10 and 08:20; the three before are warm-up
    for args, words in ((["--from", "2026-11-01T00:00:00Z"], "is before the trace's first submission"),
                        (["--from", "2h", "--until", "1h"], "--until (3600 s) is before --from (7200 s)"),
                        (["--from", "720h"], "is after the trace's last submission")):
        code, out, _ = run(dev, "--stack", "dev", *args, "--json")
        assert code == 2 and words in json.loads(out)["errors"][0]["message"], (args, out)
    code, out, _ = run(WAITS, "--queues", QUEUES, "--from", "2026-11-02T09:00:00Z", "--json")
    assert code == 2 and "this trace has no real times" in json.loads(out)["errors"][0]["message"]


def test_the_cycle_time_flag(tmp_path):
    code, out, _ = run(WAITS, "--queues", QUEUES, "--cycle-time", "0", "--json")
    (configuration,) = json.loads(out)["configurations"]
    assert [w["admitted"] for w in configuration["workloads"]] == [0.0, 601.0, 1202.0]
    assert configuration["assumptions"][0] == ("scheduling cycles take no time (the scheduler's pace is not modelled) "
                                               "(given)")
    code, out, _ = run(WAITS, "--queues", QUEUES, "--cycle-time", "1m", "--json")
    (configuration,) = json.loads(out)["configurations"]
    # Admitted at the end of the cycle that decides it: a at 60; b by the cycle the requeue at 661 starts.
    assert [w["admitted"] for w in configuration["workloads"]] == [60.0, 721.0, 1382.0]
    code, out, _ = run(WAITS, "--queues", QUEUES, "--cycle-time", "2h", "--json")
    assert code == 2 and "--cycle-time 2h: a scheduling cycle of more than an hour" in \
        json.loads(out)["errors"][0]["message"]
    code, out, _ = run(WAITS, "--queues", QUEUES, "--cycle-time", "-1s", "--json")
    assert code == 2 and json.loads(out)["errors"][0]["message"].startswith("--cycle-time: ")


def test_a_generator_trace_is_not_paced_by_default(tmp_path):
    generator = tmp_path / "generator.yaml"
    generator.write_text(yaml.safe_dump({"cohorts": [{"className": "c", "count": 1, "queuesSets": [{
        "className": "cq", "count": 1, "nominalQuota": 2, "borrowingLimit": 0, "reclaimWithinCohort": "Never",
        "withinClusterQueue": "Never", "workloadsSets": [{"count": 2, "creationIntervalMs": 100, "workloads": [
            {"className": "s", "runtimeMs": 300, "priority": 1, "request": 1}]}]}]}]}))
    code, out, _ = run(generator, "--json")
    (configuration,) = json.loads(out)["configurations"]
    assert configuration["assumptions"][0].startswith("scheduling cycles take no time (the scheduler's pace is not "
                                                      "modelled) (assumed for a trace of Kueue's performance harness")
    assert [w["admitted"] for w in configuration["workloads"]] == [0.0, 0.1]
