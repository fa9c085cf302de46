"""`aks-kueue validate`: the contract's JSON, its exit codes, and Kueue's verdicts."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from aks_kueue.cli import app

FIXTURE = Path(__file__).parents[1] / "fixtures" / "validate-mixed.yaml"


def run(*args):
    result = CliRunner().invoke(app, ["validate", *args])
    return result.exit_code, result.stdout, result.stderr


def test_json_verdicts_per_object():
    code, out, _ = run(str(FIXTURE), "--json")
    assert code == 1
    objects = json.loads(out)["objects"]
    assert [(o["kind"], o["name"], o["valid"]) for o in objects] == [
        ("ClusterQueue", "legacy", True), ("ClusterQueue", "broken", False), ("ResourceFlavor", "default", True),
        ("LocalQueue", "main", True), ("Workload", "wl", False)]
    for obj in objects:
        assert set(obj) == {"apiVersion", "kind", "name", "namespace", "valid", "errors", "file", "document"}
    assert [o["document"] for o in objects] == [0, 1, 2, 2, 2]  # a kind: List's items share its index
    assert {o["file"] for o in objects} == {str(FIXTURE)}
    assert objects[0]["apiVersion"] == "kueue.x-k8s.io/v1beta1" and objects[3]["namespace"] == "team-a"
    assert objects[1]["errors"] == [{"field": "spec.resourceGroups[0].flavors[0].resources[1].lendingLimit",
                                     "message": 'Invalid value: "8Gi": must be nil when cohort is empty'}]
    assert objects[4]["errors"][0]["field"].endswith("containers[0].resources.requests[pods]")


def test_all_valid_exits_0(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a}\n")
    code, out, _ = run(str(path))
    assert code == 0 and out.startswith("ok      ResourceFlavor a")


def test_unknown_kueue_kind_is_an_invalid_object_named_by_file_and_document(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a}\n---\n"
                    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Queue\nmetadata: {name: b}\n")
    code, out, _ = run(str(path), "--json")
    assert code == 1
    bad = json.loads(out)["objects"][1]
    assert (bad["file"], bad["document"], bad["valid"]) == (str(path), 1, False)
    assert bad["errors"] == [{"field": "kind", "message": 'Unsupported value: "Queue": not a Kueue kind'}]


def test_an_error_says_its_fact_then_its_fix(tmp_path):
    """The contract's errors have a field and a message: the message is the FieldError's fact and, after "; ",
    its fix, in the text as in the JSON (issue 29: the fact is one sentence, the advice is the fix)."""
    path = tmp_path / "typo.yaml"
    path.write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: a}\nspec: {parentNme: b}\n")
    said = 'unknown field "spec.parentNme"; it is not part of this kind\'s schema; did you mean \'parentName\'?'
    code, out, _ = run(str(path), "--json")
    assert code == 1 and json.loads(out)["objects"][0]["errors"] == [{"field": "spec.parentNme", "message": said}]
    code, out, _ = run(str(path))
    assert code == 1 and f"        spec.parentNme: {said}\n" in out


def test_bad_yaml_and_missing_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("kind: [\n")
    code, _, err = run(str(path))
    assert code == 2 and "not valid YAML at line" in err and "Traceback" not in err
    code, _, err = run(str(tmp_path / "none.yaml"))
    assert code == 2 and "no such file" in err


def test_workload_rules(tmp_path):
    path = tmp_path / "wl.yaml"
    pod = {"spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "-1"}}}]}}
    path.write_text(json.dumps({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                                "metadata": {"name": "w", "namespace": "n"},
                                "spec": {"podSets": [{"name": "a", "count": 2, "minCount": 1, "template": pod},
                                                     {"name": "b", "count": 2, "minCount": 1, "template": pod}]}}))
    code, out, _ = run(str(path), "--json")
    errors = json.loads(out)["objects"][0]["errors"]
    assert code == 1
    assert {"field": "spec.podSets", "message": "Invalid value: 2: at most one podSet can use minCount"} in errors
    assert any(e["field"] == "spec.podSets[0].template.spec.containers[0].resources.requests[cpu]" and
               "greater than or equal to 0" in e["message"] for e in errors)


def _workload_errors(tmp_path, metadata: dict, pod_set: dict) -> list[dict]:
    path = tmp_path / "wl.yaml"
    template = {"spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}]}}
    path.write_text(json.dumps({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                                "metadata": {"name": "w", "namespace": "n", **metadata},
                                "spec": {"podSets": [{"name": "a", "count": 4, "template": template, **pod_set}]}}))
    code, out, _ = run(str(path), "--json")
    errors = json.loads(out)["objects"][0]["errors"]
    assert (code == 1) == bool(errors)
    return errors


def test_workload_slice_size_rules(tmp_path):
    required = {"topologyRequest": {"podSetSliceRequiredTopology": "kubernetes.io/hostname"}}
    assert _workload_errors(tmp_path, {}, required) == [{
        "field": "spec.podSets[0].topologyRequest.podSetSliceSize",
        "message": "Required value: must be set when podSetSliceRequiredTopology is specified"}]
    stray = {"topologyRequest": {"required": "kubernetes.io/hostname", "podSetSliceSize": 2}}
    assert [e["message"] for e in _workload_errors(tmp_path, {}, stray)] == [
        "Forbidden: may not be set when podSetSliceRequiredTopology is not specified"]
    fine = {"topologyRequest": {"podSetSliceRequiredTopology": "kubernetes.io/hostname", "podSetSliceSize": 2}}
    assert _workload_errors(tmp_path, {}, fine) == []


def test_workload_metadata_rules(tmp_path):
    labelled = {"template": {"metadata": {"labels": {"bad key!": "x"}}, "spec": {"containers": [{"name": "c"}]}}}
    assert [e["field"] for e in _workload_errors(tmp_path, {}, labelled)] == ["spec.podSets[0].template.metadata.labels"]
    gated = {"annotations": {"kueue.x-k8s.io/admission-gated-by": "example.com/gate, example.com/gate"}}
    assert [e["message"] for e in _workload_errors(tmp_path, gated, {})] == [
        'Invalid value: "example.com/gate, example.com/gate": duplicate gate name: example.com/gate']
    not_a_path = {"annotations": {"kueue.x-k8s.io/admission-gated-by": "gate"}}
    assert "domain-prefixed path" in _workload_errors(tmp_path, not_a_path, {})[0]["message"]
    elastic = {"annotations": {"kueue.x-k8s.io/elastic-job": "true"}}
    assert [e["message"] for e in _workload_errors(tmp_path, elastic, {"minCount": 2})] == [
        "Invalid value: 1: partial admission and elastic job cannot be used together"]
    assert _workload_errors(tmp_path, {}, {"minCount": 2}) == []
