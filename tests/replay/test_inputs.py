"""Hostile input, class by class, through the command as a user runs it: each is refused with exit 2, one
sentence naming the file, the line or document, and the field, and the contract's JSON error shape;
none reaches the last-resort handler ("failed unexpectedly")."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

import pytest
import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app

FIXTURES = Path(__file__).parents[1] / "fixtures" / "replay"
QUEUES = FIXTURES / "queues.yaml"
GOOD = {"submitted": 0, "namespace": "team-a", "queue": "default", "name": "ok", "podSets": [{"requests": {"cpu": "1"}}]}
V1B2 = "kueue.x-k8s.io/v1beta2"
DIGITS = "1" * 5000


@pytest.fixture(autouse=True)
def bugs_are_raised(monkeypatch):
    """The last-resort handler raises again under AKS_KUEUE_DEBUG: an input that reached it would end
    these tests with its exception (exit 1), not with the exit 2 they expect."""
    monkeypatch.setenv("AKS_KUEUE_DEBUG", "1")


def refused(path: Path, *flags: str) -> dict:
    """Replay `path`: exit 2, and the one error of the JSON document (checked against stderr's sentence)."""
    result = CliRunner().invoke(app, ["replay", str(path), *flags, "--queues", str(QUEUES), "--json"])
    assert result.exit_code == 2, result.stdout
    document = json.loads(result.stdout)
    assert document["result"] == "invalid"
    (error,) = document["errors"]
    assert "failed unexpectedly" not in error["message"]
    assert error["message"] in result.stderr
    assert set(error) <= {"file", "line", "document", "key", "message"}
    return error


def check(error: dict, path: Path, *, line: Optional[int] = None, document: Optional[int] = None,
          key: Optional[str] = None, words: str = "") -> None:
    assert error.get("file") == str(path)
    assert error.get("line") == line and error.get("document") == document and error.get("key") == key, error
    where = f"{path} line {line}" if line is not None else f"{path} document {document}" if document is not None \
        else str(path)  # a document's error with a line names the line
    assert error["message"].startswith(f"{where}: " + (f"{key}: " if key else "")), error["message"]
    assert words in error["message"], error["message"]


def lines(tmp_path: Path, *rows: object, name: str = "trace.jsonl") -> Path:
    """A JSON Lines trace: a good first line, then `rows` (dicts or raw text)."""
    path = tmp_path / name
    texts = [json.dumps(GOOD)] + [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(texts) + "\n")
    return path


def row(**fields: object) -> dict:
    return {**GOOD, "name": "bad", **fields}


# The files themselves -------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused_before_it_is_read(tmp_path):
    fifo = tmp_path / "trace.jsonl"
    os.mkfifo(fifo)  # a writer never comes: reading it would wait forever
    check(refused(fifo), fifo, words="is a named pipe (FIFO), not a regular file")
    queues = tmp_path / "queues.yaml"
    os.mkfifo(queues)
    result = CliRunner().invoke(app, ["replay", str(FIXTURES / "waits.jsonl"), "--queues", str(queues), "--json"])
    assert result.exit_code == 2 and "is a named pipe (FIFO), not a regular file" in result.stdout


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_device_is_refused():
    check(refused(Path("/dev/zero")), Path("/dev/zero"), words="a device, not a regular file")


def test_a_file_past_the_size_cap_is_refused(tmp_path, monkeypatch):
    from aks_kueue.k8s.loader import Limits
    from aks_kueue.replay import formats

    monkeypatch.setattr(formats, "LINE_LIMITS", Limits(max_bytes=4096, too_large="as one trace file"))
    path = lines(tmp_path, *[row(name=f"w{i}") for i in range(100)])
    check(refused(path), path, words="is larger than 4,096 bytes")


def test_a_line_longer_than_a_mib_is_refused_at_its_line(tmp_path):
    path = lines(tmp_path, row(name="n" * (1024 * 1024 + 1)))
    check(refused(path), path, line=2, words="longer than 1 MiB")


def test_a_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n\xff\xfe\n")
    check(refused(path), path, line=2, words="not UTF-8")


# Parsing -----------------------------------------------------------------------------------------


def test_json_that_does_not_parse(tmp_path):
    path = lines(tmp_path, '{"submitted": 0, "queue": "default", "podSets": [{}]')
    check(refused(path), path, line=2, words="not valid JSON")


@pytest.mark.parametrize("text, words", [
    ('{"submitted": 0, "queue": "default", "queue": "other", "podSets": [{}]}', "the key 'queue' appears twice"),
    ('{"submitted": 0, "queue": "default", "podSets": [{}], "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
     "nested deeper than 100 levels"),
    ('{"submitted": 0, "queue": "default", "priority": ' + DIGITS + ', "podSets": [{}]}',
     "a number with more than 4,300 digits"),
])
def test_keys_twice_deep_nesting_and_endless_digits_in_a_json_line(tmp_path, text, words):
    path = lines(tmp_path, text)
    check(refused(path), path, line=2, words=words)


def test_a_json_array_nested_100000_deep_as_the_first_line(tmp_path):
    path = tmp_path / "trace.jsonl"
    path.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    check(refused(path), path, line=1, words="nested deeper than 100 levels")


def _workload(**spec: object) -> dict:
    return {"apiVersion": V1B2, "kind": "Workload",
            "metadata": {"name": "a", "namespace": "team-a", "creationTimestamp": "2026-11-02T08:00:00Z"},
            "spec": {"queueName": "default", "priority": 5, "podSets": [{"name": "main", "count": 1, "template": {
                "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}], **spec}}


@pytest.mark.parametrize("suffix, text, line, words", [
    (".yaml", yaml.safe_dump(_workload()).replace("queueName: default", "queueName: default\n  queueName: b"), 20,
     "the key 'queueName' appears twice"),
    (".json", json.dumps(_workload(), indent=2).replace('"queueName": "default"',
                                                        '"queueName": "default", "queueName": "b"'), 10,
     "the key 'queueName' appears twice"),
    (".yaml", yaml.safe_dump(_workload()).replace("priority: 5", "priority: " + DIGITS), 18,
     "a number with more than 4,300 digits"),
    (".json", json.dumps(_workload(), indent=2).replace('"priority": 5', '"priority": ' + DIGITS), 11,
     "a number with more than 4,300 digits"),
    (".yaml", "a:\n" + "".join("  " * i + "-\n" for i in range(1, 150)), 101, "nested deeper than 100 levels"),
    (".yaml", yaml.safe_dump(_workload()) + "  bad: [\n", len(yaml.safe_dump(_workload()).splitlines()) + 2,
     "not valid YAML"),  # the parser notices the open list at the end of the file
])
def test_a_document_that_cannot_be_read_is_refused_at_its_line(tmp_path, suffix, text, line, words):
    path = tmp_path / f"export{suffix}"
    path.write_text(text)
    error = refused(path)
    check(error, path, line=line, document=error.get("document"), words=words)
    assert error.get("document") in (None, 0)


def test_a_csv_cell_past_the_csv_limit(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text(f"submitted,queue,count,cpu\n0,default,1,1\n0,default,1,{'1' * 140_000}\n")
    check(refused(path), path, line=3, words="a cell holds at most 128 KiB")


def test_a_csv_with_a_nul_byte(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("submitted,queue,count,cpu\n0,default,1,1\n0,def\0ault,1,1\n")
    check(refused(path), path, line=3, key="queue", words="RFC 1123 subdomain")


# Values ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fields, key, words", [
    ({"submitted": "NaN"}, "submitted", "not an RFC 3339 time"),
    ({"submitted": 1e300}, "submitted", "more than 400 days"),
    ({"runtime": 1e300}, "runtime", "more than 400 days"),
    ({"runtime": "Infinity"}, "runtime", "not a runtime"),
    ({"priority": 2**31}, "priority", "must be at most 2,147,483,647"),
    ({"priority": -(2**31) - 1}, "priority", "less than -2147483648"),
    ({"priority": float("nan")}, "priority", "not a whole number"),
    ({"podSets": [{"count": 2**31, "requests": {"cpu": "1"}}]}, "podSets[0].count", "must be at most"),
    ({"podSets": [{"count": -1}]}, "podSets[0].count", "less than 0"),
    ({"podSets": [{"requests": {"cpu": "-1"}}]}, "podSets[0].requests.cpu", "must be greater than or equal to 0"),
    ({"podSets": [{"requests": {"memory": "1e300"}}]}, "podSets[0].requests.memory", "64-bit integer"),
    ({"podSets": [{"requests": {"nvidia.com/gpu": "0.5"}}]}, "podSets[0].requests.nvidia.com/gpu",
     "must be an integer"),
    ({"podSets": [{"name": "Main", "requests": {"cpu": "1"}}]}, "podSets[0].name", "RFC 1123 label"),
    ({"podSets": [{"name": f"p{i}", "requests": {"cpu": "1"}} for i in range(19)]}, "podSets",
     "must have at most 18 items"),
    ({"name": "n" * 100_000}, "name", "must be no more than 253 characters"),
    ({"namespace": "team\u0000a"}, "namespace", "RFC 1123 label"),
    ({"queue": "Default"}, "queue", "RFC 1123 subdomain"),
    ({"priorityClass": "x" * 300}, "priorityClass", "must be no more than 253 characters"),
    ({"uid": "u" * 1000}, "uid", "at most 128 characters"),
])
def test_a_value_kubernetes_or_kueue_would_refuse_is_refused_at_its_line_and_field(tmp_path, fields, key, words):
    path = lines(tmp_path, row(**fields))
    check(refused(path), path, line=2, key=key, words=words)


@pytest.mark.parametrize("cells, key, words", [
    ("0,default,bad,1,-1", "cpu", "must be greater than or equal to 0"),
    (f"0,default,bad,{2**31},1", "count", "must be at most"),
    ("1e300,default,bad,1,1", "submitted", "more than 400 days"),
    ("0,default,BAD,1,1", "name", "RFC 1123 subdomain"),
])
def test_the_same_bounds_in_csv(tmp_path, cells, key, words):
    path = tmp_path / "trace.csv"
    path.write_text(f"submitted,queue,name,count,cpu\n0,default,ok,1,1\n{cells}\n")
    check(refused(path), path, line=3, key=key, words=words)


def test_a_far_future_submission_is_refused_at_its_line(tmp_path):
    path = lines(tmp_path, row(submitted="2026-11-02T08:00:00Z"), row(submitted="2026-11-02T09:00:00Z", name="b"),
                 row(submitted="9999-12-31T00:00:00Z", name="typo"), row(submitted="2026-11-03T08:00:00Z", name="c"))
    check(refused(path), path, line=4, key="submitted", words="days after the trace's median submission")


@pytest.mark.parametrize("change, key, words", [
    (lambda w: w["spec"].update(priority=2**31), "spec.priority", "must be at most"),
    (lambda w: w["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"].update(
        cpu="-2"), "spec.podSets[0].template.spec.containers[0].resources.requests.cpu",
     "must be greater than or equal to 0"),
    (lambda w: w["metadata"].update(name="N" * 300), "metadata.name", "must be no more than 253 characters"),
    (lambda w: w.update(status={"conditions": [
        {"type": "Admitted", "status": "True", "lastTransitionTime": "2026-11-02T09:00:00Z"},
        {"type": "Finished", "status": "True", "lastTransitionTime": "2026-11-02T08:30:00Z"}]}),
     "status.conditions[Finished]", "is before the Admitted condition's"),
])
def test_an_export_is_held_to_the_same_bounds_at_its_document_and_field(tmp_path, change, key, words):
    workload = _workload()
    change(workload)
    path = tmp_path / "export.yaml"
    path.write_text(yaml.safe_dump_all([_workload(), workload]))
    check(refused(path), path, document=1, key=key, words=words)


@pytest.mark.parametrize("change, key, words", [
    (lambda d: d["cohorts"][0]["queuesSets"][0]["workloadsSets"][0].update(count=10**12),
     "cohorts[0].queuesSets[0].workloadsSets[0].count", "more than 2,000,000 workloads"),
    (lambda d: d["cohorts"][0]["queuesSets"][0].update(count=10**9), "cohorts[0].queuesSets[0].count",
     "more than 10,000"),
    (lambda d: d["cohorts"][0]["queuesSets"][0]["workloadsSets"][0]["workloads"][0].update(priority=2**40),
     "cohorts[0].queuesSets[0].workloadsSets[0].workloads[0].priority", "32-bit integer"),
    (lambda d: d["cohorts"][0]["queuesSets"][0]["workloadsSets"][0]["workloads"][0].update(request="-1"),
     "cohorts[0].queuesSets[0].workloadsSets[0].workloads[0].request", "must be greater than or equal to 0"),
    (lambda d: d["cohorts"][0]["queuesSets"][0].update(className="Q" * 100), "cohorts[0].queuesSets[0].className",
     "must be no more than 63 characters"),
])
def test_a_generator_file_is_checked_before_it_is_expanded(tmp_path, change, key, words):
    document = {"cohorts": [{"className": "cohort", "count": 5, "queuesSets": [{
        "className": "cq", "count": 6, "nominalQuota": 20, "workloadsSets": [{
            "count": 10, "creationIntervalMs": 100, "workloads": [
                {"className": "small", "runtimeMs": 200, "priority": 50, "request": 1}]}]}]}]}
    change(document)
    path = tmp_path / "generator.yaml"
    path.write_text(yaml.safe_dump(document))
    result = CliRunner().invoke(app, ["replay", str(path), "--json"])
    assert result.exit_code == 2
    (error,) = json.loads(result.stdout)["errors"]
    check(error, path, document=0, key=key, words=words)


def test_more_workloads_than_a_replay_reads(tmp_path, monkeypatch):
    from aks_kueue.replay import trace

    monkeypatch.setattr(trace, "MAX_WORKLOADS", 3)
    path = lines(tmp_path, row(name="b"), row(name="c"), row(name="d"))
    check(refused(path), path, words="more than 3 workloads")
