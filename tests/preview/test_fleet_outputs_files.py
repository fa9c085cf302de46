"""`python -m aks_kueue.preview.fleet`: a fleet's members previewed offline in the order of their first
pulumi ups, each then given the others' outputs."""

from __future__ import annotations

import json
import shutil

from aks_kueue.preview.fleet import write_fleet_outputs
from tests.conftest import ROOT


def test_a_manager_whose_workers_have_no_stack_file_here_gets_no_worker_outputs(tmp_path):
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    shutil.copy(ROOT / "stacks" / "Pulumi.fleet-manager.yaml", stacks)
    shutil.copy(ROOT / "stacks" / "Pulumi.dev.yaml", stacks)   # not a fleet member: left alone
    done = write_fleet_outputs(stacks, tmp_path / "out", ROOT)
    assert done == ["fleet-manager"]
    assert (tmp_path / "out" / "fleet-manager.args").read_text() == ""
    outputs = json.loads((tmp_path / "out" / "fleet-manager.outputs.json").read_text())
    assert outputs["fleet"]["role"] == "manager" and not (tmp_path / "out" / "dev.args").exists()


def test_each_member_is_given_the_others(tmp_path):
    out = tmp_path / "out"
    assert write_fleet_outputs(ROOT / "stacks", out, ROOT) == ["fleet-manager", "fleet-westus3", "fleet-swedencentral"]
    manager_args = (out / "fleet-manager.args").read_text().splitlines()
    assert manager_args == [f"--stack-outputs=acme/aks-kueue/fleet-westus3={out / 'fleet-westus3.outputs.json'}",
                            f"--stack-outputs=acme/aks-kueue/fleet-swedencentral="
                            f"{out / 'fleet-swedencentral.outputs.json'}"]
    assert (out / "fleet-westus3.args").read_text() == (
        f"--stack-outputs=acme/aks-kueue/fleet-manager={out / 'fleet-manager.outputs.json'}\n")
    # What the manager's own program exported is what the worker mirrored (no hand-built outputs).
    worker = json.loads((out / "fleet-westus3.outputs.json").read_text())["fleet"]
    mirrored = {(o["manifest"]["kind"], o["manifest"]["metadata"]["name"]) for o in worker["objects"]
                if o["key"].startswith("aks-kueue:fleet.manager")}
    assert mirrored == {("LocalQueue", "default"), ("WorkloadPriorityClass", "batch-high"),
                        ("WorkloadPriorityClass", "batch-low")}
