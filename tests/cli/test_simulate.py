"""`aks-kueue simulate` end to end: the contract's JSON, file order, usage carried forward, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from aks_kueue.cli import app

FIXTURES = Path(__file__).parents[1] / "fixtures"
TEAM = FIXTURES / "simulate" / "team-queue.yaml"


def run(*args):
    result = CliRunner().invoke(app, ["simulate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_follows_the_contract():
    code, out, _ = run(str(TEAM), "--json")
    assert code == 0
    workloads = json.loads(out)["workloads"]
    for item in workloads:
        assert {"namespace", "name", "clusterQueue", "mode", "borrowing", "podSets", "message", "source",
                "preemptionTargets", "file", "document"} <= set(item)
        assert item["source"] == {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "name": item["name"]}
        assert item["file"] == str(TEAM)
        for podset in item["podSets"]:
            assert set(podset) == {"name", "count", "flavors"}
    summary = [(w["name"], w["mode"], w["borrowing"]) for w in workloads]
    # The admitted workload is usage, not a decision; the rest go in file order.
    assert summary == [("tolerates-spot", "Fit", False), ("borrows", "Fit", True),
                       ("no-room-left", "Preempt", True), ("too-big-ever", "NoFit", False)]
    by_name = {w["name"]: w for w in workloads}
    assert by_name["tolerates-spot"]["podSets"] == [{"name": "main", "count": 4,
                                                     "flavors": {"cpu": "spot", "memory": "spot"}}]
    assert by_name["borrows"]["podSets"][0]["flavors"] == {"cpu": "on-demand", "memory": "on-demand"}
    assert by_name["too-big-ever"]["podSets"] == []
    assert ("insufficient quota for cpu in flavor on-demand, previously considered podsets requests (0) "
            "+ current podset request (20) > maximum capacity (8)") in by_name["too-big-ever"]["message"]
    assert "insufficient unused quota for cpu in flavor on-demand, 1 more needed" in by_name["no-room-left"]["message"]
    assert by_name["borrows"]["message"] == ""


def test_earlier_admissions_count_for_later_workloads(tmp_path):
    text = TEAM.read_text()
    # Without the 5-CPU workload, the next one fits without preemption.
    documents = [d for d in text.split("\n---\n") if "name: borrows," not in d]
    lighter = tmp_path / "lighter.yaml"
    lighter.write_text("\n---\n".join(documents))
    code, out, _ = run(str(lighter), "--json")
    modes = {w["name"]: w["mode"] for w in json.loads(out)["workloads"]}
    assert code == 0 and modes["no-room-left"] == "Fit"


def test_v1beta1_input_and_kind_list(tmp_path):
    listing = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "default"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "cq"},
         "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
             {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "2"}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue", "metadata": {"name": "q", "namespace": "ns"},
         "spec": {"clusterQueue": "cq"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Workload", "metadata": {"name": "w", "namespace": "ns"},
         "spec": {"queueName": "q", "podSets": [{"name": "main", "count": 2, "template": {"spec": {
             "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}},
    ]}
    path = tmp_path / "list.yaml"
    path.write_text(json.dumps(listing))
    code, out, _ = run(str(path), "--json")
    assert code == 0
    assert json.loads(out)["workloads"][0]["podSets"][0]["flavors"] == {"cpu": "default"}


def test_unusable_input_exits_2_with_file_and_document(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: a}\n---\n- 1\n")
    code, out, err = run(str(bad), "--json")
    assert code == 2
    assert f"{bad} document 1: a document must be a Kubernetes object" in err and "Traceback" not in err
    # Exactly one JSON document on stdout, with the error in it too.
    assert json.loads(out)["errors"] == [{"file": str(bad), "document": 1, "message": err.strip()[len("simulate: "):]}]
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: [\n")
    code, out, err = run(str(broken), "--json")
    assert code == 2 and "not valid YAML" in err
    assert "not valid YAML" in json.loads(out)["errors"][0]["message"]


def test_invalid_objects_are_rejected_before_simulating(tmp_path):
    text = TEAM.read_text().replace('nominalQuota: "4"}, {name: memory, nominalQuota: 16Gi}]\n---',
                                    'nominalQuota: "4", lendingLimit: "9"}, {name: memory, nominalQuota: 16Gi}]\n---')
    path = tmp_path / "invalid.yaml"
    path.write_text(text)
    code, out, err = run(str(path), "--json")
    assert code == 1
    assert "ClusterQueue team-b" in err and "lendingLimit" in err
    document = json.loads(out)
    assert document["workloads"] == [] and any("lendingLimit" in e["message"] for e in document["errors"])


def test_human_output_is_a_table_as_wide_as_the_terminal():
    wide = CliRunner().invoke(app, ["simulate", str(TEAM)], env={"COLUMNS": "200"})
    assert wide.exit_code == 0
    assert "team-a/too-big-ever" in wide.stdout and "NoFit" in wide.stdout and "Preempt" in wide.stdout
    assert max(len(line) for line in wide.stdout.splitlines()) > 120
    narrow = CliRunner().invoke(app, ["simulate", str(TEAM)], env={"COLUMNS": "80"})
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80
    # Counts per ClusterQueue, then the one-line summary.
    assert "per ClusterQueue" in narrow.stdout
    assert narrow.stdout.splitlines()[-1] == "4 workloads: 2 Fit, 1 Preempt, 1 NoFit; 1 objects skipped"


def test_admitted_usage_is_held_to_kueues_status_rules(tmp_path):
    text = TEAM.read_text().replace('resourceUsage: {cpu: "2", memory: 4Gi}', 'resourceUsage: {cpu: "3m", memory: 4Gi}')
    path = tmp_path / "odd-usage.yaml"
    path.write_text(text)
    code, _, err = run(str(path))
    assert code == 1
    assert "status.admission.podSetAssignments[0].resourceUsage[cpu]: Invalid value: \"3m\": is not a multiple of 2" in err


def _write(tmp_path, name: str, documents: list[dict]) -> Path:
    path = tmp_path / name
    path.write_text("\n---\n".join(json.dumps(d) for d in documents))
    return path


def _queue(name, cohort=None):
    spec = {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
        {"name": "f", "resources": [{"name": "cpu", "nominalQuota": "4"}]}]}]}
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


BASE = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "f"}},
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": "q", "namespace": "ns"},
         "spec": {"clusterQueue": "cq"}}]


def _job(name="w", queue="q", count=1):
    spec = {"podSets": [{"name": "main", "count": count, "template": {"spec": {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}
    if queue:
        spec["queueName"] = queue
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": name, "namespace": "ns"},
            "spec": spec}


def test_a_cohort_cycle_makes_its_queues_inactive(tmp_path):
    cohorts = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": a},
                "spec": {"parentName": b}} for a, b in (("a", "b"), ("b", "a"))]
    path = _write(tmp_path, "cycle.yaml", [*BASE, *cohorts, _queue("cq", cohort="a"), _job()])
    code, out, err = run(str(path), "--json")
    assert code == 0, err
    [decision] = json.loads(out)["workloads"]
    assert (decision["mode"], decision["message"]) == ("NoFit", "ClusterQueue cq is inactive")


def test_duplicates_are_refused_as_the_api_server_would(tmp_path):
    path = _write(tmp_path, "twice.yaml", [*BASE, _queue("cq"), _job()])
    code, out, err = run(str(path), str(path))
    assert code == 1 and out == ""
    assert "Duplicate value" in err and f"{path} document 2 already defines ClusterQueue cq" in err


def test_odd_inputs_get_sentences_not_tracebacks(tmp_path):
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(bytes(range(128, 256)) * 8)
    for command in ("simulate", "validate"):
        result = CliRunner().invoke(app, [command, str(garbage)])
        assert result.exit_code == 2, result.stderr
        assert "not UTF-8" in result.stderr and "Traceback" not in result.stderr
    bad_count = _job()
    bad_count["spec"]["podSets"][0]["count"] = "two"
    odd_status = {**_job("odd"), "status": {"admission": "yes"}}
    for documents in ([*BASE, _queue("cq"), bad_count], [*BASE, _queue("cq"), odd_status],
                      [{**BASE[0], "metadata": "x"}]):
        result = CliRunner().invoke(app, ["simulate", str(_write(tmp_path, "odd.yaml", documents))])
        assert result.exit_code == 1 and "Traceback" not in result.stderr, result.stderr
        assert isinstance(result.exception, SystemExit), result.exception


def test_a_workload_without_a_queue_name_says_so(tmp_path):
    code, out, _ = run(str(_write(tmp_path, "noqueue.yaml", [*BASE, _queue("cq"), _job(queue=None)])), "--json")
    assert code == 0
    assert json.loads(out)["workloads"][0]["message"].startswith("spec.queueName is not set")


def test_validate_judges_kueue_objects_beside_namespaces():
    result = CliRunner().invoke(app, ["validate", str(TEAM), "--json"])
    assert result.exit_code == 0, result.stderr
    kinds = [o["kind"] for o in json.loads(result.stdout)["objects"]]
    assert "Namespace" not in kinds and kinds.count("Workload") == 5


def test_requests_past_int64_are_clamped_as_kueue_does(tmp_path):
    huge = _job()
    huge["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1e30"
    code, out, _ = run(str(_write(tmp_path, "huge.yaml", [*BASE, _queue("cq"), huge])), "--json")
    assert code == 0
    assert "current podset request (9223372036854775807m)" in json.loads(out)["workloads"][0]["message"]


def test_empty_input_says_there_was_nothing(tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("---\n")
    for command in ("simulate", "validate"):
        result = CliRunner().invoke(app, [command, str(empty), "--json"])
        assert result.exit_code == 0 and "no Kueue objects" in result.stderr
        document = json.loads(result.stdout)
        classical = {"mode": "Classical", "configuration": "Kueue v0.19.2's defaults (no Configuration given)",
                     "preemptionStrategies": None, "admissionFairSharing": None}
        assert document in ({"workloads": [], "skipped": [], "summary": {"workloads": 0, "Fit": 0, "Preempt": 0,
                                                                          "NoFit": 0, "skipped": 0},
                             "admission": classical, "result": "ok"},
                            {"objects": [], "skipped": [], "summary": {"objects": 0, "valid": 0, "invalid": 0,
                                                                        "skipped": 0}, "result": "ok"})


def test_each_workload_lists_the_admission_checks_it_waits_for():
    """Kueue's AdmissionChecksForWorkload: with quota reserved, the checks on its flavors; without, those on all."""
    code, out, _ = run(str(FIXTURES / "simulate" / "provisioning.yaml"), "--json")
    assert code == 0
    checks = {w["source"]["name"]: (w["mode"], w["admissionChecks"]) for w in json.loads(out)["workloads"]}
    assert checks == {
        "etl": ("Fit", [{"name": "approval", "state": "Pending"}]),
        "finetune": ("Fit", [{"name": "a100-provisioning", "state": "Pending"}, {"name": "approval", "state": "Pending"}]),
        "second-finetune": ("Preempt", [{"name": "approval", "state": "Pending"}]),
    }
    # A queue without checks lists none.
    assert all(w["admissionChecks"] == [] for w in json.loads(run(str(TEAM), "--json")[1])["workloads"])


def test_the_table_says_a_fit_waits_for_its_checks():
    result = CliRunner().invoke(app, ["simulate", str(FIXTURES / "simulate" / "provisioning.yaml")],
                                env={"COLUMNS": "300"})
    assert "quota reserved, admitted once a100-provisioning, approval are Ready" in result.stdout
