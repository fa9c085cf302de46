"""`aks-kueue simulate --stack fleet-manager --stack-outputs ...`: the jobs teams submit, raced across
the example fleet's workers."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.model.fleet import FLEET_OUTPUT, KUBECONFIG_OUTPUT
from tests.conftest import ROOT
from tests.fleet_stacks import MANAGER, SWEDEN, WEST, WORKERS, qualified, worker_outputs

runner = CliRunner()
JOBS = ROOT / "tests" / "fixtures" / "fleet" / "jobs.yaml"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    out = tmp_path_factory.mktemp("outputs")
    files = {}
    for stack in WORKERS:
        files[stack] = out / f"{stack}.json"
        files[stack].write_text(json.dumps({FLEET_OUTPUT: worker_outputs(stack), KUBECONFIG_OUTPUT: "[secret]"}))
    return files


def simulate(*args):
    result = runner.invoke(app, ["simulate", str(JOBS), "--stack", MANAGER, *args])
    return result


def test_each_job_is_raced_on_the_workers(outputs):
    result = simulate("--json", *[f"--stack-outputs={qualified(s)}={outputs[s]}" for s in WORKERS])
    assert result.exit_code == 0, result.stderr
    decisions = {d["source"]["name"]: d for d in json.loads(result.stdout)["workloads"]}
    finetune = decisions["finetune"]
    assert finetune["clusterQueue"] == "team-a" and finetune["mode"] == "Fit"
    assert finetune["admissionChecks"] == [{"name": "multikueue", "state": "Pending"}]
    assert [(w["name"], w["mode"], w["podSets"][0]["flavors"]["nvidia.com/gpu"]) for w in finetune["workers"]] == [
        ("westus3-a100", "Fit", "a100"), ("swedencentral-h100", "Fit", "h100")]
    assert finetune["dispatchedTo"] == "westus3-a100"
    # The two finetunes took westus3's four A100s (team-a's two, and team-b's lent through the cohort):
    # Kueue there would preempt for it (Preempt), swedencentral admits it.
    big = decisions["big"]
    assert [(w["name"], w["mode"]) for w in big["workers"]] == [("westus3-a100", "Preempt"),
                                                                ("swedencentral-h100", "Fit")]
    assert decisions["finetune-2"]["workers"][0]["borrowing"] is True
    assert big["dispatchedTo"] == "swedencentral-h100"


def test_without_a_worker_output_only_the_others_are_raced(outputs):
    result = simulate("--json", f"--stack-outputs={qualified(SWEDEN)}={outputs[SWEDEN]}")
    assert result.exit_code == 0
    decisions = json.loads(result.stdout)["workloads"]
    assert {w["name"] for d in decisions for w in d["workers"]} == {"swedencentral-h100"}
    assert "westus3-a100" in result.stderr and "nothing is dispatched there" in result.stderr


def test_the_text_shows_the_race(outputs):
    result = runner.invoke(app, ["simulate", str(JOBS), "--stack", MANAGER,
                                 *[f"--stack-outputs={qualified(s)}={outputs[s]}" for s in WORKERS]],
                           env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "AllAtOnce dispatch to the workers" in result.stdout and "taken to win the race" in result.stdout


def test_stack_outputs_of_a_stack_that_is_no_manager_is_refused(outputs):
    result = runner.invoke(app, ["simulate", str(JOBS), "--stack", WEST, f"--stack-outputs=x/y/z={outputs[WEST]}"])
    assert result.exit_code == 2 and "is not a MultiKueue manager" in result.stderr
    result = runner.invoke(app, ["simulate", str(JOBS), f"--stack-outputs=x/y/z={outputs[WEST]}"])
    assert result.exit_code == 2 and "needs --stack" in result.stderr
