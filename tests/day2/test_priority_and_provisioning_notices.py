"""Day 2 of a stack's WorkloadPriorityClasses and ProvisioningRequestConfigs (issue 28: swapping two values, setting
one to 5, removing one and changing a ProvisioningRequestConfig were accepted with no notice), and one recipe for a
refused pool removal (no day2-allowance-unmatched warnings contradicting it)."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from aks_kueue.preview.outcome import preview
from aks_kueue.preview.run import run_program
from aks_kueue.preview.stackfile import StackConfig
from tests.conftest import ROOT, filled_doc, flat, refusals
from tests.messages import explained


@lru_cache(maxsize=None)
def previous() -> str:
    outputs = run_program(StackConfig("aks-kueue", "prod", flat(filled_doc("prod"))), ROOT, False).outputs
    return json.dumps(outputs)


def notices(edit, tmp_path) -> list:
    config = filled_doc("prod")
    edit(config)
    path = tmp_path / "previous.json"
    path.write_text(previous())
    done = preview(StackConfig("aks-kueue", "prod", flat(config)), ROOT, previous_outputs=path)
    assert done.refusals == [], [str(f) for f in done.refusals]
    return [f for f in done.run.day2_findings if f.kind.startswith(("day2-priority", "day2-provisioning"))]


def classes(c) -> dict:
    return {p["name"]: p for p in c["aks-kueue:queues"]["workloadPriorityClasses"]}


def test_a_value_change_says_what_happens_to_admitted_and_pending_workloads(tmp_path):
    found, inversion = notices(lambda c: classes(c)["batch-high"].update(value=5), tmp_path)
    assert found.kind == "day2-priority-changed" and found.severity.value == "warning"
    assert inversion.kind == "day2-priority-inversion"  # 5 is below batch-low's 100
    assert found.message == "batch-high: value 1000 -> 5, which Kueue sets on every Workload that names the class"
    assert "pending ones move in their ClusterQueues' order at once" in explained(found)


def test_swapped_values_are_a_priority_inversion(tmp_path):
    def swap(c):
        classes(c)["batch-high"]["value"], classes(c)["batch-low"]["value"] = 100, 1000
    found = notices(swap, tmp_path)
    assert [f.kind for f in found] == ["day2-priority-changed", "day2-priority-changed", "day2-priority-inversion"]
    assert found[2].message == "batch-low (100 -> 1000) now ranks above batch-high (1000 -> 100), a priority inversion"
    assert "admitted workloads of the class that ranked higher become ones the other's may preempt" in \
        explained(found[2])


def test_removing_an_unused_class_says_what_happens_to_jobs_that_name_it(tmp_path):
    def remove(c):
        c["aks-kueue:queues"]["workloadPriorityClasses"] = [classes(c)["batch-high"]]
        for workload in c["aks-kueue:expectedWorkloads"]:
            if workload.get("priorityClass") == "batch-low":
                workload["priorityClass"] = "batch-high"
    (found,) = notices(remove, tmp_path)
    assert found.kind == "day2-priority-removed"
    assert "keep the priority they have" in explained(found) and "gets no Workload" in explained(found)


def test_removing_a_class_the_stack_still_names_is_refused():
    def remove(c):
        c["aks-kueue:queues"]["workloadPriorityClasses"] = [classes(c)["batch-high"]]
    assert refusals(_edited(remove)) == [
        "aks-kueue:expectedWorkloads[1].priorityClass: WorkloadPriorityClass 'batch-low' is not defined; define it or "
        "name another"]


def _edited(edit) -> dict:
    config = filled_doc("prod")
    edit(config)
    return config


def test_a_changed_provisioning_request_config_says_what_happens_to_waiting_workloads(tmp_path):
    def change(c):
        c["aks-kueue:queues"]["clusterQueues"][0]["provisioning"]["parameters"] = {"ValidUntilSeconds": "600"}
    (found,) = notices(change, tmp_path)
    assert found.kind == "day2-provisioning-config-changed" and found.object == "ProvisioningRequestConfig " \
                                                                                "team-a-provisioning"
    assert "workloads still waiting for that check get a new one and wait for capacity again" in explained(found)


@pytest.mark.parametrize("listed", [False, True])
def test_a_refused_pool_removal_gives_one_recipe(listed, tmp_path):
    def remove(c):
        c["aks-kueue:nodePools"] = [p for p in c["aks-kueue:nodePools"] if p["name"] != "h100"]
        queues = c["aks-kueue:queues"]
        queues["resourceFlavors"] = [f for f in queues["resourceFlavors"] if f["name"] != "h100"]
        queues["clusterQueues"] = [q for q in queues["clusterQueues"] if q["name"] != "training"]
        queues["localQueues"] = [q for q in queues["localQueues"] if q["name"] != "training"]
        queues["topologies"] = []
        c["aks-kueue:expectedWorkloads"] = [w for w in c["aks-kueue:expectedWorkloads"] if w["name"] != "h100-pretrain"]
        c["aks-kueue:allowReplacement"] = (["nodePools.h100"] if listed else []) + [
            "queues.ResourceFlavor/h100", "queues.ClusterQueue/training", "queues.LocalQueue/team-a/training",
            "queues.LocalQueue/team-b/training", "queues.Topology/zone-host",
            "queues.AdmissionCheck/training-provisioning"]
    path = tmp_path / "previous.json"
    path.write_text(previous())
    done = preview(StackConfig("aks-kueue", "prod", flat(_edited(remove))), ROOT, previous_outputs=path)
    assert [f.kind for f in done.refusals] == ["day2-delete-refused"]
    assert done.refusals[0].fix.startswith("take two updates: 1. put it back, with `nodePools.h100` in "
                                           "aks-kueue:allowReplacement: that update only unprotects it")
    # Nothing said beside it contradicts the recipe: the run shown is the guard-less rerun, whose notices go.
    assert not [f for f in done.findings if f.kind.startswith("day2-allowance") or f.kind == "day2-unguarded"]
    assert done.run is not None and done.run.day2_findings == []
