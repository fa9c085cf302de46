"""`aks-kueue simulate` with the Configuration in force: a Configuration document in the input turns
fair sharing on, the document says which mode decided, and each ClusterQueue's share is reported."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app

FAIR = Path(__file__).parents[1] / "fixtures" / "fair-sharing" / "simulate.yaml"


def decide(path: Path) -> dict:
    result = CliRunner().invoke(app, ["simulate", str(path), "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_a_configuration_in_the_input_turns_fair_sharing_on(tmp_path):
    fair = decide(FAIR)
    assert fair["admission"]["mode"] == "FairSharing"
    assert fair["admission"]["configuration"] == f"the Kueue Configuration in {FAIR} document 0"
    (incoming,) = fair["workloads"]
    # TestFairPreemptions "reclaim borrowable quota from user using the most": team-a (at its nominal 3)
    # borrows 1 more; team-b borrows 2. LessThanOrEqualToFinalShare: team-a's share with it, 1/9 of the
    # cohort's 9 lendable, is at most team-b's after losing b1 (1/9): b1 goes, the first by UID.
    assert incoming["mode"] == "Preempt"
    assert incoming["preemptionTargets"] == [{"namespace": "team-b", "name": "b1", "clusterQueue": "team-b"}]
    shares = {q["name"]: q for q in fair["clusterQueues"]}
    assert shares["team-b"]["weightedShare"] == 223 and shares["team-b"]["borrowing"]  # ceil(2000 / 9)
    assert shares["team-a"]["weightedShare"] == 0 and shares["team-a"]["dominantResource"] is None

    classical_input = tmp_path / "classical.yaml"
    classical_input.write_text(yaml.safe_dump_all([d for d in yaml.safe_load_all(FAIR.read_text())
                                                   if d.get("kind") != "Configuration"]))
    classical = decide(classical_input)
    assert classical["admission"]["mode"] == "Classical" and "clusterQueues" not in classical
    # Classically team-a would borrow after the preemption, and without borrowWithinCohort it may not
    # reclaim while borrowing: nothing can be preempted, the workload waits.
    assert classical["workloads"][0]["mode"] == "Preempt" and classical["workloads"][0]["preemptionTargets"] == []


def test_the_text_says_which_mode_decided():
    result = CliRunner().invoke(app, ["simulate", str(FAIR)])
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    assert "decided with entries ordered and preemption targets chosen by the fair sharing algorithm" in text
    assert "weightedShare" in text


def test_a_helm_stack_brings_its_configuration(tmp_path, monkeypatch):
    """--stack: the Configuration the Helm chart renders with the stack's managerConfig decides."""
    import shutil

    from aks_kueue.preview import stackfile
    from tests.conftest import ROOT, edited

    (tmp_path / "stacks").mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    monkeypatch.setattr(stackfile, "project_root", lambda: tmp_path)
    configuration = ("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing:\n"
                     "  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]\n")
    stack = edited("dev", lambda c: c["aks-kueue:kueue"]["values"].update(
        managerConfig={"controllerManagerConfigYaml": configuration}))
    (tmp_path / "stacks" / "Pulumi.fair.yaml").write_text(yaml.safe_dump({"config": stack}))
    shutil.copy(ROOT / "stacks" / "Pulumi.dev.yaml", tmp_path / "stacks" / "Pulumi.dev.yaml")
    empty = tmp_path / "nothing.yaml"
    empty.write_text("---\n")
    result = CliRunner().invoke(app, ["simulate", str(empty), "--stack", "fair", "--json"])
    assert result.exit_code == 0, result.stderr
    admission = json.loads(result.stdout)["admission"]
    assert admission == {"mode": "FairSharing", "configuration": "the Kueue Configuration --stack fair installs",
                         "preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
                         "admissionFairSharing": None}
    result = CliRunner().invoke(app, ["simulate", str(empty), "--stack", "dev", "--json"])
    assert json.loads(result.stdout)["admission"]["mode"] == "Classical"
