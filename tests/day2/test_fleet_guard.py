"""The guard on a fleet's links, as pure functions: a manager's workers, a worker's manager access,
and a worker's mirrored teams (issue 20, day 2 for a fleet)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aks_kueue.day2.allow import MANAGER_ENTRY, Allowances, Entry, Target, parse_entry, queue_entry, worker_entry
from aks_kueue.day2.guard import judge_update
from aks_kueue.day2.replacement import MULTIKUEUE_CLUSTER, NAMESPACE, SERVICE_ACCOUNT
from aks_kueue.day2.state import Previous, Record, SystemPoolOwner, Tracked, from_outputs, to_output
from aks_kueue.kueue import multikueue as mk
from tests.messages import explained

WEST, SWEDEN = "acme/aks-kueue/fleet-westus3", "acme/aks-kueue/fleet-swedencentral"
MANAGER = "acme/aks-kueue/fleet-manager"
CHECK = queue_entry("AdmissionCheck", None, "multikueue")
TEAM_B_QUEUE = queue_entry("LocalQueue", "team-b", "default")


def worker(name, stack, connected=True, index=0):
    return Tracked(worker_entry(name), MULTIKUEUE_CLUSTER, f"worker {name}", {"stack": stack, "connected": connected},
                   False, key=f"aks-kueue:fleet.workers[{index}]")


def check():
    return Tracked(CHECK, "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck", "AdmissionCheck multikueue",
                   {"spec.controllerName": mk.CONTROLLER}, False, key="aks-kueue:fleet")


def manager_record(*workers, fleet_tracked=True):
    found = [check(), *workers]
    return Record({t.entry: t for t in found}, "helm", "1.35", "patch", SystemPoolOwner.AGENT_POOL,
                  fleet_tracked=fleet_tracked)


def access(manager=MANAGER):
    return Tracked(MANAGER_ENTRY, SERVICE_ACCOUNT, f"the access of manager {manager}", {"stack": manager}, False,
                   key="aks-kueue:fleet.manager")


def team(namespace, retained=True):
    namespace_entry = Entry(Target.NAMESPACE, namespace)
    queue = queue_entry("LocalQueue", namespace, "default")
    return [Tracked(namespace_entry, NAMESPACE, f"Namespace {namespace}", {}, False, retained=retained),
            Tracked(queue, "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", f"LocalQueue {namespace}/default",
                    {"spec.clusterQueue": namespace}, False)]


def worker_record(*parts, link=True):
    found = [t for part in parts for t in part] + ([access()] if link is True else [link] if link else [])
    return Record({t.entry: t for t in found}, "helm", "1.35", "patch", SystemPoolOwner.AGENT_POOL)


def run(before, after, allow=()):
    return judge_update(Previous(before), after, Allowances.parse(allow))


BOTH = manager_record(worker("westus3-a100", WEST), worker("swedencentral-h100", SWEDEN, index=1))


# ---- the manager's workers ----

def test_removing_a_connected_worker_is_refused_with_the_drain():
    report = run(BOTH, manager_record(worker("swedencentral-h100", SWEDEN)))
    (refusal,) = report.refusals
    assert refusal.kind == "day2-fleet-worker-refused" and refusal.key == "aks-kueue:fleet.workers"
    assert refusal.object == "worker westus3-a100"
    assert "no longer in aks-kueue:fleet.workers" in refusal.message
    assert "Admitting remote no longer exists" in explained(refusal) and "runs twice" in explained(refusal)
    assert "stopPolicy: Hold" in refusal.fix and "kubectl get workloads -A -l kueue.x-k8s.io/multikueue-origin" \
        in refusal.fix and "kubectl get multikueuecluster westus3-a100" in refusal.fix
    assert "`fleet.workers/westus3-a100` in aks-kueue:allowReplacement" in refusal.fix
    assert "MultiKueueConfig too" not in refusal.message   # another worker stays connected


def test_a_listed_worker_goes_with_a_notice_and_no_unused_entry():
    report = run(BOTH, manager_record(worker("swedencentral-h100", SWEDEN)), ["fleet.workers/westus3-a100"])
    assert report.refusals == []
    (notice,) = report.notices
    assert notice.kind == "day2-fleet-worker-removed" and "that was not drained" in explained(notice)
    assert "kubectl delete workloads -A -l kueue.x-k8s.io/multikueue-origin=multikueue" in notice.fix


def test_the_last_connected_worker_takes_the_multikueue_config_with_it():
    one = manager_record(worker("westus3-a100", WEST))
    (refusal,) = run(one, manager_record()).refusals
    assert "with the last worker the MultiKueueConfig too" in refusal.message
    assert "admit nothing" in refusal.message


def test_a_listed_worker_whose_stack_exports_no_kubeconfig_is_refused_naming_its_index():
    """A worker's outputs vanishing (its stack destroyed, its fleet key removed) would disconnect it silently."""
    after = manager_record(worker("westus3-a100", WEST, connected=False), worker("swedencentral-h100", SWEDEN, index=1))
    (refusal,) = run(BOTH, after).refusals
    assert refusal.key == "aks-kueue:fleet.workers[0]"
    assert "still listed" in refusal.message and "exports no `multikueueKubeconfig`" in refusal.message
    assert f"run pulumi up on {WEST}" in refusal.fix and f"--stack-outputs {WEST}=FILE" in refusal.fix


def test_a_worker_renamed_to_another_stack_is_refused():
    after = manager_record(worker("westus3-a100", "acme/aks-kueue/fleet-westus3b"),
                           worker("swedencentral-h100", SWEDEN, index=1))
    (refusal,) = run(BOTH, after).refusals
    assert refusal.key == "aks-kueue:fleet.workers[0].stack"
    assert "points its MultiKueueCluster at another cluster" in refusal.message
    assert refusal.numbers == {"old": WEST, "new": "acme/aks-kueue/fleet-westus3b"}


def test_a_worker_that_was_never_connected_goes_freely():
    before = manager_record(worker("westus3-a100", WEST), worker("new", "acme/aks-kueue/new", connected=False))
    report = run(before, manager_record(worker("westus3-a100", WEST)), ["fleet.workers/new"])
    assert report.refusals == [] and report.notices == []
    # A worker becoming ready later is a connection, not a change.
    assert run(before, manager_record(worker("westus3-a100", WEST), worker("new", "acme/aks-kueue/new"))).notices == []


def test_an_unchanged_fleet_passes_and_an_unused_entry_is_said():
    assert run(BOTH, BOTH).refusals == [] and run(BOTH, BOTH).notices == []
    (notice,) = run(BOTH, BOTH, ["fleet.workers/westus3-a100"]).notices
    assert notice.kind == "day2-allowance-unused" and "neither removes nor disconnects worker westus3-a100" \
        in notice.message


def test_a_record_from_before_the_fleet_links_says_it_cannot_compare_them():
    report = run(manager_record(fleet_tracked=False), BOTH)
    assert [f.kind for f in report.notices] == ["day2-fleet-unrecorded"] and report.refusals == []


def test_leaving_the_fleet_refuses_for_every_connected_worker_and_the_check():
    alone = Record({}, "helm", "1.35", "patch", SystemPoolOwner.AGENT_POOL)
    report = run(BOTH, alone)
    assert sorted(f.kind for f in report.refusals) == ["day2-fleet-worker-refused", "day2-fleet-worker-refused",
                                                       "day2-kueue-delete-refused"]
    check_refusal = next(f for f in report.refusals if f.kind == "day2-kueue-delete-refused")
    assert check_refusal.key == "aks-kueue:fleet"   # the program made the check of the fleet key


# ---- a worker: its manager's access, its mirrored teams ----

def test_a_worker_leaving_its_fleet_is_refused_until_listed():
    before = worker_record(team("team-a"))
    after = replace(before, resources={e: t for e, t in before.resources.items() if e != MANAGER_ENTRY})
    (refusal,) = run(before, after).refusals
    assert refusal.kind == "day2-fleet-access-refused" and refusal.key == "aks-kueue:fleet"
    assert "multikueue-sa service account" in refusal.message and "workerLostTimeout" in explained(refusal)
    assert f"remove this worker from {MANAGER}'s aks-kueue:fleet.workers" in refusal.fix
    report = run(before, after, ["fleet.manager"])
    assert report.refusals == [] and [f.kind for f in report.notices] == ["day2-fleet-access-removed"]


def test_a_worker_moving_to_another_manager_is_said():
    before = worker_record(team("team-a"))
    after = worker_record(team("team-a"), link=access("acme/aks-kueue/other-manager"))
    (notice,) = run(before, after).notices
    assert notice.kind == "day2-fleet-manager-changed" and f"{MANAGER} still holds its kubeconfig" in notice.message


def test_a_team_the_manager_dropped_is_refused_on_the_worker_in_the_managers_words():
    before = worker_record(team("team-a"), team("team-b"))
    report = run(before, worker_record(team("team-a")))
    (refusal,) = report.refusals
    assert refusal.kind == "day2-kueue-delete-refused" and refusal.key == "aks-kueue:fleet.manager"
    assert f"no longer among the teams of the manager {MANAGER}" in refusal.message
    assert "it is the manager's team" in refusal.fix and f"`{TEAM_B_QUEUE}`" in refusal.fix
    (released,) = report.notices
    assert released.kind == "day2-namespace-released" and released.key == "aks-kueue:fleet.manager"
    assert f"the manager {MANAGER} has no team in namespace team-b" in released.message
    assert "stays in the cluster" in released.message
    # Listed, the LocalQueue goes; the namespace is still only forgotten (retainOnDelete).
    listed = run(before, worker_record(team("team-a")), [str(TEAM_B_QUEUE)])
    assert listed.refusals == [] and {f.kind for f in listed.notices} == {"day2-kueue-delete",
                                                                         "day2-namespace-released"}


def test_a_mirrored_namespace_the_state_does_not_retain_is_refused_naming_the_manager():
    before = worker_record(team("team-a"), team("team-b", retained=False))
    (refusal, *_) = [f for f in run(before, worker_record(team("team-a")), [str(TEAM_B_QUEUE)]).refusals]
    assert refusal.kind == "day2-delete-unacknowledged" and refusal.key == "aks-kueue:fleet.manager"
    assert f"keep the team on {MANAGER}" in refusal.fix and "`namespaces.team-b`" in refusal.fix


def test_a_stand_alone_stack_keeps_its_own_words():
    before = worker_record(team("team-a"), team("team-b"), link=None)
    (refusal,) = run(before, worker_record(team("team-a"), link=None)).refusals
    assert refusal.key == "aks-kueue:queues.localQueues" and "no longer in the stack" in refusal.message


# ---- the record and the entries ----

def test_the_fleet_links_survive_the_stack_output():
    outputs = {"day2": to_output(BOTH)}
    read = from_outputs(outputs).record
    assert read.fleet_tracked
    assert {e: t.facts for e, t in read.resources.items() if e.target is Target.FLEET} == {
        worker_entry("westus3-a100"): {"stack": WEST, "connected": True},
        worker_entry("swedencentral-h100"): {"stack": SWEDEN, "connected": True}}
    assert "fleet" not in to_output(BOTH)["resources"] and set(to_output(BOTH)["fleet"]) == {
        "workers/westus3-a100", "workers/swedencentral-h100"}
    old = to_output(BOTH)
    del old["fleet"]
    assert from_outputs({"day2": old}).record.fleet_tracked is False


@pytest.mark.parametrize("text,entry", [
    ("fleet.workers/westus3-a100", worker_entry("westus3-a100")), ("fleet.manager", MANAGER_ENTRY)])
def test_fleet_entries_parse_and_print_back(text, entry):
    assert parse_entry(text) == entry and str(entry) == text


@pytest.mark.parametrize("text,fragment", [
    ("fleet.workers", "names no worker; write fleet.workers/<name>"),
    ("fleet.workers/", "names no worker"),
    ("fleet.workers/West_US", "is not a worker name (a DNS label"),
    ("fleet.manager/acme", "fleet.manager takes no name"),
    ("fleet.tokenGenerations/1", "is not a fleet entry; write fleet.workers/<name>"),
    ("fleet", "is not a fleet entry"),
])
def test_bad_fleet_entries_say_what_to_write(text, fragment):
    with pytest.raises(ValueError) as error:
        parse_entry(text)
    assert fragment in str(error.value)


def test_a_fleet_entry_unprotects_nothing():
    from aks_kueue.day2.allow import Protection

    protection = Protection(True, Allowances.parse(["fleet.workers/westus3-a100", "fleet.manager"]))
    assert protection.protects(Entry(Target.CLUSTER))
    assert not protection.protects(worker_entry("westus3-a100"))


def test_the_docs_say_what_the_guard_says():
    """The drain in docs/fleet.md and the allowReplacement row of docs/day2.md use the guard's forms and commands."""
    from aks_kueue.day2.allow import FORMS
    from tests.conftest import ROOT

    fleet_doc = " ".join((ROOT / "docs" / "fleet.md").read_text().split())   # as read, not as wrapped
    day2_doc = (ROOT / "docs" / "day2.md").read_text()
    row = next(line for line in day2_doc.splitlines() if line.startswith("| `aks-kueue:allowReplacement` |"))
    for form in ("fleet.workers/<name>", "fleet.manager"):
        assert form in FORMS and f"`{form}`" in row and f"`{form}`" in fleet_doc
    (refusal,) = run(BOTH, manager_record(worker("swedencentral-h100", SWEDEN))).refusals
    for command in (f"kubectl get workloads -A -l {mk.ORIGIN_LABEL}", "kubectl get multikueuecluster westus3-a100",
                    "stopPolicy: Hold"):
        assert command in refusal.fix and command in fleet_doc
    assert "Admitting remote no longer exists" in explained(refusal) and "Admitting remote no longer exists" in fleet_doc
    (notice,) = run(BOTH, manager_record(worker("swedencentral-h100", SWEDEN)), ["fleet.workers/westus3-a100"]).notices
    cleanup = f"kubectl delete workloads -A -l {mk.ORIGIN_LABEL}={mk.DEFAULT_ORIGIN}"
    assert cleanup in notice.fix and cleanup in fleet_doc
