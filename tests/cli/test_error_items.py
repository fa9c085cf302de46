"""A stack file, a plan or a policy config that cannot be used is a `LoadError` (issue 29): each command's
`--json` document names the file and the field at fault in its error item's fields (`cli.md`: `errors`
is `[{"file"?, "document"?, "key"?, "message"}]` for every subcommand), and stderr's sentence names both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aks_kueue.cli import app
from tests.conftest import ROOT

runner = CliRunner()
DEV = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
WAITS = Path(__file__).parents[1] / "fixtures" / "replay" / "waits.jsonl"


def cli(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def first_error(out: str) -> dict:
    document = json.loads(out)
    assert document["result"] == "invalid"
    return document["errors"][0]


def with_config(tmp_path, lines: str, name: str = "case") -> Path:
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(DEV.replace("config:\n", "config:\n" + lines, 1))
    return path


# ---- a stack file (was StackFileError) --------------------------------------------------------

@pytest.mark.parametrize("command", [["preview"], ["replay", WAITS]])
def test_a_stack_file_value_names_the_file_and_the_stack_key(tmp_path, command):
    path = with_config(tmp_path, "  aks-kueue:weird: {a: [1, .nan]}\n")
    code, out, err = cli(*command, "--config", path, "--json")
    error = first_error(out)
    assert code == 2 and error["file"] == str(path) and error["key"] == "aks-kueue:weird.a[1]"
    assert f"{path}: aks-kueue:weird.a[1]: is NaN" in error["message"] and error["message"] in err


def test_a_stack_that_does_not_exist_names_the_file_it_looked_for():
    code, out, err = cli("validate", ROOT / "tests" / "fixtures" / "validate-mixed.yaml", "--stack", "nosuch", "--json")
    error = first_error(out)
    missing = ROOT / "stacks" / "Pulumi.nosuch.yaml"
    assert code == 2 and error["file"] == str(missing) and "key" not in error
    assert f"validate: {missing}: no such stack file" in err


# ---- a plan (was PlanError) ------------------------------------------------------------------

def test_a_plan_that_is_not_a_preview_names_the_file_and_the_step(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": [{"op": "same", "urn": "urn:pulumi:dev::aks-kueue::a::b"},
                                          {"op": "replace", "urn": "x"}]}))
    code, out, err = cli("check-plan", plan, "--json")
    assert code == 2 and first_error(out) == {"file": str(plan), "key": "steps[1].urn",
                                              "message": f"{plan}: steps[1].urn: 'x' is not a Pulumi URN"}
    assert f"check-plan: {plan}: steps[1].urn: 'x' is not a Pulumi URN" in err


def test_allow_replacement_names_the_file_it_was_read_from_and_the_entry(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": [], "config": {
        "aks-kueue:allowReplacement": '["cluster", "nodePools.BAD!"]'}}))
    code, out, err = cli("check-plan", plan, "--json")
    error = first_error(out)
    assert code == 2 and error["file"] == str(plan) and error["key"] == "aks-kueue:allowReplacement[1]"
    assert f"{plan}: aks-kueue:allowReplacement[1]: 'nodePools.BAD!'" in err
    # Read from a stack file instead: that file is named, not the plan.
    stack = with_config(tmp_path, "  aks-kueue:allowReplacement: [clusters]\n")
    code, out, err = cli("check-plan", plan, "--config", stack, "--json")
    error = first_error(out)
    assert code == 2 and error["file"] == str(stack) and error["key"] == "aks-kueue:allowReplacement[0]"
    assert f"{stack}: aks-kueue:allowReplacement[0]: 'clusters' is not an entry" in err


# ---- a policy config (was PolicyConfigError) --------------------------------------------------

@pytest.mark.parametrize("config, key, words", [
    ({"kueue-quota-fits-capacity": {"vmOverheadPercent": 80}}, "kueue-quota-fits-capacity.vmOverheadPercent",
     "80 is above the maximum 50"),
    ({"kueue-quota-fits-capacity": {"enforcementLevel": "warn"}}, "kueue-quota-fits-capacity.enforcementLevel",
     "'warn' is not an enforcement level"),
    ({"kueue-quota-fit": "mandatory"}, "kueue-quota-fit", "not a policy of this pack"),
])
def test_a_policy_config_names_the_file_the_policy_and_the_property(tmp_path, config, key, words):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(config))
    code, out, err = cli("preview", "--stack", "dev", "--policy-config", path, "--json")
    error = first_error(out)
    assert code == 2 and error["file"] == str(path) and error["key"] == key
    assert f"{path}: {key}: {words}" in err and error["message"] in err


# ---- another stack's outputs (was a ProgramError, the program's own failure) -----------------

def test_a_stack_outputs_file_is_named_in_the_error_item(tmp_path):
    path = tmp_path / "outputs.json"
    path.write_text("{")
    code, out, err = cli("simulate", ROOT / "tests" / "fixtures" / "validate-mixed.yaml", "--stack", "fleet-manager",
                         "--stack-outputs", f"acme/aks-kueue/fleet-westus3={path}", "--json")
    error = first_error(out)
    assert code == 2 and error["file"] == str(path)
    assert f"--stack-outputs acme/aks-kueue/fleet-westus3: {path}: not valid JSON" in err
