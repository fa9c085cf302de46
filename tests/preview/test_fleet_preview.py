"""The example fleet previewed offline as its stacks read each other (`--stack-outputs STACK=FILE`):
clean once its placeholders are filled in, and three edits of it rejected by the pack, each naming the key to change."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.preview.outcome import document, preview
from aks_kueue.preview.stackfile import StackConfig
from tests.conftest import ROOT, flat
from tests.fleet_stacks import MANAGER, SWEDEN, WEST, WORKERS, config, qualified

runner = CliRunner()


def outcome(stack: str, cfg: dict, outputs: dict[str, object], previous=None):
    return preview(StackConfig("aks-kueue", stack, flat(cfg)), ROOT, stack_outputs=outputs, previous_outputs=previous)


def write(path, outputs) -> object:
    path.write_text(json.dumps(outputs))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Each member's outputs as the previews leave them, in the order of the first pulumi ups:
    the manager alone, then each worker having read it."""
    out = tmp_path_factory.mktemp("fleet")
    first = outcome(MANAGER, config(MANAGER), {})
    assert first.exit_code == 0, [str(f) for f in first.findings]
    manager = write(out / "manager.json", first.run.outputs)
    found = {MANAGER: manager}
    for stack in WORKERS:
        worker = outcome(stack, config(stack), {qualified(MANAGER): manager})
        assert worker.exit_code == 0, [str(f) for f in worker.findings if f.severity == "error"]
        found[stack] = write(out / f"{stack}.json", worker.run.outputs)
    return found


def workers(files, **replaced):
    return {qualified(s): replaced.get(s, files[s]) for s in WORKERS}


def test_the_example_fleet_previews_clean(files):
    done = outcome(MANAGER, config(MANAGER), workers(files))
    assert done.exit_code == 0 and done.result == "ok"
    assert [f for f in done.findings if f.severity == "error"] == []
    mandatory = [v for v in done.violations if v.enforcement_level == "mandatory"]
    assert mandatory == []
    kinds = {f.kind for f in done.findings}
    assert "fleet-worker-not-ready" not in kinds and "fleet-kubeconfig-not-checked" in kinds
    assert len([r for r in done.run.registrations if r.type.endswith(":MultiKueueCluster")]) == 2


def rejected(done, kind: str) -> list:
    assert done.exit_code == 1 and done.result == "rejected"
    named = [f for f in done.findings if f.kind == kind and f.severity == "error"]
    assert named, [str(f) for f in done.findings if f.severity == "error"]
    doc = document(done)
    assert any(v["policy"] == "kueue-multikueue-fleet" and v["enforcementLevel"] == "mandatory"
               and v["message"].startswith(named[0].key) for v in doc["violations"])
    return named


def test_a_workload_no_worker_can_run_is_rejected(files):
    def bigger(c):
        c["aks-kueue:expectedWorkloads"][0]["podSets"][0]["requests"]["nvidia.com/gpu"] = "2"
    [finding] = rejected(outcome(MANAGER, config(MANAGER, bigger), workers(files)), "fleet-workload-unrunnable")
    assert finding.key == "aks-kueue:expectedWorkloads[0]"


def test_a_manager_quota_above_the_workers_sum_is_rejected(files):
    def overbooked(c):
        c["aks-kueue:queues"]["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2][
            "nominalQuota"] = "16"
    [finding] = rejected(outcome(MANAGER, config(MANAGER, overbooked), workers(files)), "fleet-quota-overbooked")
    assert finding.key == ("aks-kueue:queues.clusterQueues[0].spec.resourceGroups[0].flavors[0].resources[2]"
                           ".nominalQuota")
    assert finding.numbers["manager"].value == 21 and finding.numbers["workers"].value == 8


def test_a_worker_without_a_team_namespace_is_rejected(files, tmp_path):
    """The manager's last deployment (its previous outputs) exported team-b; the worker has lost it."""
    stale = json.loads(files[SWEDEN].read_text())
    stale["fleet"]["namespaces"] = [n for n in stale["fleet"]["namespaces"] if n["name"] != "team-b"]
    edited = write(tmp_path / "stale.json", stale)
    done = outcome(MANAGER, config(MANAGER), workers(files, **{SWEDEN: edited}), previous=files[MANAGER])
    [finding] = rejected(done, "fleet-team-missing")
    assert finding.key == "aks-kueue:fleet.workers[1]" and finding.numbers["missing"] == ["namespace team-b"]


def test_the_cli_reads_stack_outputs(files, tmp_path):
    # The shipped manager with its placeholders filled in (as shipped it is rejected for them, issue 28).
    stack_file = tmp_path / f"Pulumi.{MANAGER}.yaml"
    stack_file.write_text(yaml.safe_dump({"config": config(MANAGER)}))
    result = runner.invoke(app, ["preview", "--config", str(stack_file), "--json",
                                 *[f"--stack-outputs={qualified(s)}={files[s]}" for s in WORKERS]])
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["result"] == "ok" and "fleet" in doc["outputs"]
    assert {r["name"] for r in doc["resources"] if r["type"] == "kubernetes:core/v1:Secret"} == {
        "fleet-kubeconfig-westus3-a100", "fleet-kubeconfig-swedencentral-h100"}


@pytest.mark.parametrize("flag,message", [("acme/aks-kueue/x", "takes STACK=FILE"),
                                          ("=outputs.json", "takes STACK=FILE")])
def test_a_malformed_stack_outputs_flag_exits_2(flag, message):
    result = runner.invoke(app, ["preview", "--stack", MANAGER, "--stack-outputs", flag])
    assert result.exit_code == 2 and message in result.stderr


def test_an_unreadable_stack_outputs_file_is_invalid(tmp_path):
    missing = tmp_path / "none.json"
    result = runner.invoke(app, ["preview", "--stack", WEST, "--json",
                                 f"--stack-outputs={qualified(MANAGER)}={missing}"])
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["result"] == "invalid" and doc["errors"][0]["file"] == str(missing)
    assert str(missing) in doc["errors"][0]["message"]


def test_a_preview_document_stands_for_a_stack_never_deployed(files, tmp_path):
    """Issue 28: the fleet docs made the other stacks' outputs with `pulumi stack output --json`, which needs a
    deployment; what `aks-kueue preview --json` prints gives them offline."""
    from aks_kueue.k8s.loader import LoadError
    from aks_kueue.preview.run import read_previous_outputs

    documents = {}
    for stack in WORKERS:
        outputs = json.loads(files[stack].read_text())
        documents[stack] = write(tmp_path / f"{stack}.preview.json", {
            "project": "aks-kueue", "stack": stack, "resources": [], "violations": [], "outputs": outputs,
            "findings": [], "capacity": {}, "result": "rejected"})
        assert read_previous_outputs(documents[stack], preview_document=True) == outputs
    done = outcome(MANAGER, config(MANAGER), {qualified(s): documents[s] for s in WORKERS})
    assert done.exit_code == 0 and {row.workers_read for row in done.judgement.fleet_quota} == {2}
    invalid = write(tmp_path / "invalid.json", {"project": "aks-kueue", "stack": "x", "resources": [], "outputs": {},
                                                "result": "invalid", "errors": []})
    with pytest.raises(LoadError, match="this `aks-kueue preview --json` document has no outputs"):
        read_previous_outputs(invalid, preview_document=True)
