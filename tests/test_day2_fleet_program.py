"""Day 2 for a fleet, through the whole program under mocks: each run's outputs are the next one's
previous outputs, and the other members' outputs are what their own programs export (issue 20)."""

from __future__ import annotations

import json

import pytest

from aks_kueue.model.fleet import FLEET_OUTPUT, KUBECONFIG_OUTPUT
from aks_kueue.model.fleet_outputs import StackOutputs
from aks_kueue.preview.run import ProgramRefused, run_program
from aks_kueue.preview.stackfile import StackConfig
from tests.conftest import ROOT, flat
from tests.fleet_stacks import (MANAGER, SWEDEN, WEST, WORKERS, config, manager_outputs, qualified,
                                service_account_kubeconfig, worker_outputs)

MK_CLUSTER = "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster"
NAMESPACE = "kubernetes:core/v1:Namespace"


def run(stack, cfg, others, previous=None, preview=True):
    outputs = {qualified(s): dict(o.values) for s, o in others.items()}
    return run_program(StackConfig("aks-kueue", stack, flat(cfg)), ROOT, preview, previous_outputs=previous,
                       stack_outputs=outputs)


def deployed(stack, cfg, others, previous=None) -> dict:
    """What `pulumi stack output --json --show-secrets` would print after `pulumi up`."""
    return json.loads(json.dumps(run(stack, cfg, others, previous, preview=False).outputs))


def refusals(stack, cfg, others, previous):
    with pytest.raises(ProgramRefused) as error:
        run(stack, cfg, others, previous)
    return error.value.findings


def connected_workers():
    return {stack: StackOutputs({FLEET_OUTPUT: worker_outputs(stack),
                                 KUBECONFIG_OUTPUT: service_account_kubeconfig(f"aks-{stack}")})
            for stack in WORKERS}


def without_west(c):
    c["aks-kueue:fleet"]["workers"] = [w for w in c["aks-kueue:fleet"]["workers"] if w["name"] != "westus3-a100"]


@pytest.fixture(scope="module")
def manager_deployed():
    """The manager after the fleet's first three `pulumi up`s: connected to both workers."""
    return deployed(MANAGER, config(MANAGER), connected_workers())


def test_the_manager_records_the_workers_it_connects_to(manager_deployed):
    links = manager_deployed["day2"]["fleet"]
    assert links == {
        "workers/westus3-a100": {"type": MK_CLUSTER, "label": "worker westus3-a100",
                                 "facts": {"stack": qualified(WEST), "connected": True}},
        "workers/swedencentral-h100": {"type": MK_CLUSTER, "label": "worker swedencentral-h100",
                                       "facts": {"stack": qualified(SWEDEN), "connected": True}}}


def test_removing_a_worker_is_refused_until_listed_then_its_cluster_goes(manager_deployed):
    (refusal,) = refusals(MANAGER, config(MANAGER, without_west), connected_workers(), manager_deployed)
    assert refusal.kind == "day2-fleet-worker-refused" and refusal.key == "aks-kueue:fleet.workers"
    assert "`fleet.workers/westus3-a100`" in refusal.fix

    def listed(c):
        without_west(c)
        c["aks-kueue:allowReplacement"] = ["fleet.workers/westus3-a100"]
    accepted = run(MANAGER, config(MANAGER, listed), connected_workers(), manager_deployed)
    assert [r.name for r in accepted.registrations if r.type == MK_CLUSTER] == [
        "queues-multikueuecluster-swedencentral-h100"]
    assert "day2-fleet-worker-removed" in {f.kind for f in accepted.day2_findings}


def test_a_worker_whose_outputs_vanish_is_not_dropped_silently(manager_deployed):
    """Reported risk: a worker stack destroyed (or previewed without its outputs) would disconnect it."""
    workers = connected_workers()
    workers[WEST] = StackOutputs({})
    (refusal,) = refusals(MANAGER, config(MANAGER), workers, manager_deployed)
    assert refusal.key == "aks-kueue:fleet.workers[0]" and "exports no `multikueueKubeconfig`" in refusal.message
    # Offline without --stack-outputs at all: both are refused, each naming the flag that gives them.
    found = refusals(MANAGER, config(MANAGER), {}, manager_deployed)
    assert sorted(f.key for f in found) == ["aks-kueue:fleet.workers[0]", "aks-kueue:fleet.workers[1]"]
    assert all("--stack-outputs" in f.fix for f in found)


def test_a_manager_from_a_record_without_fleet_links_is_told_once(manager_deployed):
    older = json.loads(json.dumps(manager_deployed))
    del older["day2"]["fleet"]
    found = run(MANAGER, config(MANAGER, without_west), connected_workers(), older)
    assert "day2-fleet-unrecorded" in {f.kind for f in found.day2_findings}


# ---- a worker ----

def manager_read(edit=None) -> dict[str, StackOutputs]:
    return {MANAGER: StackOutputs({FLEET_OUTPUT: manager_outputs(config(MANAGER, edit) if edit else None)})}


def without_team_b(c):
    queues = c["aks-kueue:queues"]
    queues["localQueues"] = [q for q in queues["localQueues"] if q["namespace"] != "team-b"]
    c["aks-kueue:expectedWorkloads"] = [w for w in c["aks-kueue:expectedWorkloads"]
                                        if not w["queue"].startswith("team-b/")]


@pytest.fixture(scope="module")
def worker_deployed():
    return deployed(WEST, config(WEST), manager_read())


def test_a_worker_retains_its_mirrored_namespaces_and_records_its_manager(worker_deployed):
    found = run(WEST, config(WEST), manager_read(), worker_deployed)
    namespaces = [r for r in found.registrations if r.type == NAMESPACE]
    assert {r.inputs["metadata"]["name"] for r in namespaces} == {"team-a", "team-b"}
    assert all(r.options["retainOnDelete"] is True for r in namespaces)
    assert worker_deployed["day2"]["fleet"] == {"manager": {
        "type": "kubernetes:core/v1:ServiceAccount", "label": "the access of manager acme/aks-kueue/fleet-manager",
        "facts": {"stack": "acme/aks-kueue/fleet-manager"}}}
    assert found.day2_findings == []


def test_a_team_the_manager_drops_is_guarded_on_the_worker(worker_deployed):
    findings = refusals(WEST, config(WEST), manager_read(without_team_b), worker_deployed)
    assert [(f.kind, f.key) for f in findings] == [("day2-kueue-delete-refused", "aks-kueue:fleet.manager")]
    assert "LocalQueue team-b/default is no longer among the teams of the manager" in findings[0].message

    def listed(c):
        c["aks-kueue:allowReplacement"] = ["queues.LocalQueue/team-b/default"]
    accepted = run(WEST, config(WEST, listed), manager_read(without_team_b), worker_deployed)
    released = next(f for f in accepted.day2_findings if f.kind == "day2-namespace-released")
    assert released.key == "aks-kueue:fleet.manager" and "stays in the cluster" in released.message
    # The namespace is not deleted: it is no longer registered, and the state retains it.
    assert {r.inputs["metadata"]["name"] for r in accepted.registrations if r.type == NAMESPACE} == {"team-a"}


def test_a_manager_whose_outputs_cannot_be_read_takes_no_team_away(worker_deployed):
    findings = refusals(WEST, config(WEST), {}, worker_deployed)
    assert sorted(str(f.object) for f in findings) == ["LocalQueue team-a/default", "LocalQueue team-b/default"]
    assert all(f.key == "aks-kueue:fleet.manager" for f in findings)


def test_a_worker_leaving_its_fleet_is_refused_until_listed(worker_deployed):
    def plain(c):
        del c["aks-kueue:fleet"]
        c["aks-kueue:queues"]["localQueues"] = [{"name": "default", "namespace": "team-a",
                                                 "spec": {"clusterQueue": "team-a"}},
                                                {"name": "default", "namespace": "team-b",
                                                 "spec": {"clusterQueue": "team-b"}}]
    findings = refusals(WEST, config(WEST, plain), {}, worker_deployed)
    assert [(f.kind, f.key) for f in findings] == [("day2-fleet-access-refused", "aks-kueue:fleet")]

    def listed(c):
        plain(c)
        c["aks-kueue:allowReplacement"] = ["fleet.manager"]
    accepted = run(WEST, config(WEST, listed), {}, worker_deployed)
    assert not [r for r in accepted.registrations if r.type == "kubernetes:core/v1:ServiceAccount"]
    assert "day2-fleet-access-removed" in {f.kind for f in accepted.day2_findings}


def test_the_token_the_manager_holds_stays_whatever_allow_replacement_says(worker_deployed):
    from aks_kueue.preview.run import ProgramError

    held = manager_outputs()
    held["workers"][0]["tokenGeneration"] = 1

    def rotated(c):
        c["aks-kueue:fleet"]["tokenGenerations"] = [2]
        c["aks-kueue:allowReplacement"] = ["fleet.manager"]
    with pytest.raises(ProgramError) as error:
        run(WEST, config(WEST, rotated), {MANAGER: StackOutputs({FLEET_OUTPUT: held})}, worker_deployed)
    assert "aks-kueue:fleet.tokenGenerations" in str(error.value)
    assert "still connects with the token of generation 1" in str(error.value)
    assert "no allowReplacement entry lifts this" in str(error.value)
