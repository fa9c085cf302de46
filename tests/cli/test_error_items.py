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


# ---- a stack's settings (SettingsError): each problem at its stack key, in the stack file -----

TOO_OLD = ('kubernetesVersion: "1.35"', 'kubernetesVersion: "1.31"', "aks-kueue:cluster.kubernetesVersion",
           "Kubernetes 1.31 is too old; this program needs 1.34 or newer")
NO_MANIFEST = ("config:\n", "config:\n  aks-kueue:queueManifests: [nosuch.yaml]\n", "aks-kueue:queueManifests[0]",
               "nosuch.yaml: no such file")  # refused by model.from_settings, not by the settings themselves
JOBS = ROOT / "tests" / "fixtures" / "fleet" / "jobs.yaml"
MIXED = ROOT / "tests" / "fixtures" / "validate-mixed.yaml"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A copy of the project's layout whose stacks/ holds the stack files the test writes (--stack reads them)."""
    from aks_kueue.preview import stackfile

    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    monkeypatch.setattr(stackfile, "project_root", lambda: tmp_path)
    return tmp_path


def stack_file(folder: Path, case: tuple, like: str = "dev", name: str = "case") -> Path:
    old, new, _, _ = case
    text = (ROOT / "stacks" / f"Pulumi.{like}.yaml").read_text()
    assert old in text
    path = folder / f"Pulumi.{name}.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


def assert_names_file_and_key(code, out, err, path, case):
    _, _, key, words = case
    error = first_error(out)
    assert code == 2 and error["file"] == str(path) and error["key"] == key
    assert error["message"].startswith(f"{path}: {key}: {words}") and error["message"] in err


@pytest.mark.parametrize("case", [TOO_OLD, NO_MANIFEST], ids=["settings", "model"])
@pytest.mark.parametrize("command", [["validate", MIXED], ["simulate", MIXED], ["replay", WAITS]])
def test_a_stack_flag_names_the_stack_file_and_the_key(project, command, case):
    path = stack_file(project / "stacks", case)
    assert_names_file_and_key(*cli(*command, "--stack", "case", "--json"), path, case)


@pytest.mark.parametrize("case", [TOO_OLD, NO_MANIFEST], ids=["settings", "model"])
@pytest.mark.parametrize("command", [["replay", WAITS], ["preview"]])
def test_a_config_flag_names_the_stack_file_and_the_key(tmp_path, command, case):
    path = stack_file(tmp_path, case)
    assert_names_file_and_key(*cli(*command, "--config", path, "--json"), path, case)


def test_a_fleet_managers_stack_names_its_file_and_the_key(project, tmp_path):
    from tests.fleet_stacks import MANAGER, SWEDEN, qualified

    path = stack_file(project / "stacks", TOO_OLD, like=MANAGER, name=MANAGER)
    outputs = tmp_path / "outputs.json"
    outputs.write_text("{}")
    result = cli("simulate", JOBS, "--stack", MANAGER, "--stack-outputs", f"{qualified(SWEDEN)}={outputs}", "--json")
    assert_names_file_and_key(*result, path, TOO_OLD)


@pytest.mark.parametrize("case", [TOO_OLD, NO_MANIFEST], ids=["settings", "model"])
def test_sample_job_names_the_stack_file_and_the_key(project, case):
    path = stack_file(project / "stacks", case)
    code, out, err = cli("sample-job", "--stack", "case", "--queue", "ml/default")
    _, _, key, words = case
    assert code == 2 and out == ""
    assert f"sample-job: --stack case cannot be used:\n{path}: {key}: {words}" in err


def test_check_plan_names_the_stack_file_it_read_allow_replacement_from(project, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": []}))
    case = ("config:\n", "config:\n  aks-kueue:allowReplacement: [clusters]\n", "aks-kueue:allowReplacement[0]",
            "'clusters' is not an entry")
    path = stack_file(project / "stacks", case)
    assert_names_file_and_key(*cli("check-plan", plan, "--stack", "case", "--json"), path, case)


def test_a_blocking_finding_names_the_stack_file_and_the_key(tmp_path):
    """What the judge refuses in a stack (the program refuses it too) is at its key, as the settings' problems are."""
    case = ("spec: {clusterQueue: dev}", "spec: {clusterQueue: nope}", "aks-kueue:queues.localQueues[0].spec.clusterQueue",
            'Not found: ClusterQueue "nope" is not defined')
    path = stack_file(tmp_path, case)
    assert_names_file_and_key(*cli("replay", WAITS, "--config", path, "--json"), path, case)


def test_a_secret_keys_value_stays_out_of_the_error(tmp_path):
    """A key with a `secure:` value anywhere in it is secret as a whole: its other values are never shown."""
    case = ("      maxCount: 3\n", "      maxCount: hushhush\n      labels: {team: {secure: v1:abcdef}}\n",
            "aks-kueue:nodePools[0].maxCount", "the secret value is not valid: expected a valid integer")
    path = stack_file(tmp_path, case)
    code, out, err = cli("replay", WAITS, "--config", path, "--json")
    assert_names_file_and_key(code, out, err, path, case)
    assert "hushhush" not in out + err


# ---- a flag's error says the command's name once ----------------------------------------------

@pytest.mark.parametrize("command", [["check-plan", "PLAN"], ["preview"], ["report", "--out", "OUT"]])
def test_stack_and_config_together_say_the_command_once(tmp_path, command):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"steps": []}))
    args = [plan if a == "PLAN" else tmp_path / "out" if a == "OUT" else a for a in command]
    code, out, err = cli(*args, "--stack", "dev", "--config", ROOT / "stacks" / "Pulumi.dev.yaml")
    assert code == 2 and err == f"{command[0]}: give either --stack or --config, not both\n"
    if command[0] != "report":  # report has no --json
        code, out, err = cli(*args, "--stack", "dev", "--config", ROOT / "stacks" / "Pulumi.dev.yaml", "--json")
        assert first_error(out) == {"message": "give either --stack or --config, not both"}
