"""validate reports a file that defines an object twice (issue 28: a file holding every object twice passed)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from aks_kueue.cli import app
from tests.conftest import ROOT

EXAMPLE = ROOT / "tests" / "fixtures" / "kueue-examples" / "admin" / "single-clusterqueue-setup.yaml"


def test_a_file_holding_every_object_twice_has_the_second_copies_invalid(tmp_path):
    text = EXAMPLE.read_text()
    twice = tmp_path / "twice.yaml"
    twice.write_text(text + "\n---\n" + text)
    result = CliRunner().invoke(app, ["validate", str(twice), "--json"])
    doc = json.loads(result.stdout)
    once = json.loads(CliRunner().invoke(app, ["validate", str(EXAMPLE), "--json"]).stdout)["summary"]["objects"]
    assert result.exit_code == 1 and doc["summary"] == {"objects": 2 * once, "valid": once, "invalid": once,
                                                        "skipped": doc["summary"]["skipped"]}
    first, second = doc["objects"][:once], doc["objects"][once:]
    assert all(o["valid"] for o in first) and not any(o["valid"] for o in second)
    error = second[0]["errors"][0]
    assert error["field"] == "metadata.name"
    assert error["message"].startswith(f"Duplicate value: \"{second[0]['name']}\"")
    assert "already defines" in error["message"] and "AlreadyExists (kubectl create)" in error["message"]


def test_the_same_name_in_two_files_is_no_duplicate():
    # A folder of examples holds many objects of one name in separate files, each applied on its own.
    doc = json.loads(CliRunner().invoke(app, ["validate", str(EXAMPLE.parent), "--json"]).stdout)
    assert not any("Duplicate value" in e["message"] for o in doc["objects"] for e in o["errors"])


def test_an_object_the_stack_creates_given_again_is_a_duplicate(tmp_path):
    again = tmp_path / "cohort.yaml"
    again.write_text("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: research}\nspec: {}\n")
    doc = json.loads(CliRunner().invoke(app, ["validate", str(again), "--stack", "prod", "--json"]).stdout)
    (cohort,) = [o for o in doc["objects"] if o["file"] == str(again)]
    assert not cohort["valid"] and cohort["errors"][0]["message"].startswith(
        "Duplicate value: \"research\": stack prod document ")
