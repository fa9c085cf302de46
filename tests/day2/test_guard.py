"""The guard's comparison with the last deployment, as pure functions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aks_kueue.day2.allow import Allowances, Entry, Target
from aks_kueue.day2.guard import judge
from aks_kueue.day2.replacement import AGENT_POOL, MANAGED_CLUSTER, RESOURCE_GROUP, facts
from aks_kueue.day2.state import Previous, Record, SystemPoolOwner, Tracked

POOL = Entry(Target.NODE_POOL, "a100")
CLUSTER = Entry(Target.CLUSTER)
KUEUE = Entry(Target.KUEUE)
POOL_FACTS = {"resourceGroupName": "rg", "resourceName": "aks", "agentPoolName": "a100",
              "vmSize": "Standard_NC24ads_A100_v4", "enableEncryptionAtHost": True}


def record(pool_facts=POOL_FACTS, protected=True, install="managed", version="1.34", channel="patch",
           extra=(), kueue_protected=None):
    found = [
        Tracked(Entry(Target.RESOURCE_GROUP), RESOURCE_GROUP, "ResourceGroup rg",
                {"resourceGroupName": "rg", "location": "eastus"}, protected, key="aks-kueue:resourceGroupName"),
        Tracked(CLUSTER, MANAGED_CLUSTER, "ManagedCluster aks",
                {"resourceGroupName": "rg", "resourceName": "aks", "location": "eastus"}, protected,
                keys={"location": "azure-native:location"}, key="aks-kueue:cluster"),
        Tracked(POOL, AGENT_POOL, "AgentPool a100", dict(pool_facts), protected,
                keys={"vmSize": "aks-kueue:nodePools[1].vmSize", "availabilityZones": "aks-kueue:nodePools[1].zones"},
                key="aks-kueue:nodePools[1]"),
        *extra,
    ]
    if install != "none":
        found.append(Tracked(KUEUE, "azure-native:kubernetesconfiguration:Extension", "the Kueue installer", {},
                             protected if kueue_protected is None else kueue_protected))
    return Record({t.entry: t for t in found}, install, version, channel, SystemPoolOwner.AGENT_POOL)


def previous(rec):
    return Previous(rec)


def test_without_previous_outputs_the_update_is_unguarded():
    report = judge(Previous(None, "no previous outputs (a new stack)"), record(), Allowances())
    assert not report.guarded and not report.refusals
    assert [f.kind for f in report.notices] == ["day2-unguarded"]
    assert report.notices[0].message.startswith("unguarded: no previous outputs")


def test_an_unchanged_stack_passes_silently():
    report = judge(previous(record()), record(), Allowances())
    assert report.guarded and report.refusals == [] and report.notices == []


@pytest.mark.parametrize("path,new", [("vmSize", "Standard_NC48ads_A100_v4"), ("gpuInstanceProfile", "MIG1g"),
                                      ("availabilityZones", ["1", "2"]), ("enableEncryptionAtHost", False)])
def test_a_replace_forcing_change_of_a_protected_pool_is_refused_naming_key_old_new_and_loss(path, new):
    report = judge(previous(record()), record({**POOL_FACTS, path: new}), Allowances())
    (refusal,) = report.refusals
    assert refusal.severity == "error" and refusal.kind == "day2-replace-refused"
    keys = {"vmSize": "aks-kueue:nodePools[1].vmSize", "availabilityZones": "aks-kueue:nodePools[1].zones"}
    assert refusal.key == keys.get(path, "aks-kueue:nodePools[1]")
    assert str(POOL_FACTS.get(path, "(unset)")) in refusal.message or "(unset)" in refusal.message
    assert "replaces AgentPool a100" in refusal.message and "every pod running on them" in refusal.message
    assert "`nodePools.a100`" in refusal.fix
    assert refusal.numbers == {"old": POOL_FACTS.get(path), "new": new}


def test_every_forcing_path_of_the_data_is_refused():
    """Whatever the data says forces a replacement, the guard refuses on a protected resource."""
    for path in facts().resources[AGENT_POOL].paths:
        changed = {**POOL_FACTS, path: "changed"}
        assert judge(previous(record()), record(changed), Allowances()).refusals, path


def test_allow_replacement_turns_the_refusal_into_a_statement_of_what_is_destroyed():
    moved = {**POOL_FACTS, "vmSize": "Standard_NC48ads_A100_v4"}
    desired = record(moved)
    desired = replace(desired, resources={**desired.resources, POOL: replace(desired.resources[POOL], protected=False)})
    report = judge(previous(record()), desired, Allowances([POOL]))
    assert report.refusals == []
    (notice,) = report.notices
    assert notice.kind == "day2-replace" and "listed in allowReplacement" in notice.message
    assert "destroying its nodes" in notice.message and "remove `nodePools.a100`" in notice.fix


def test_without_protection_a_replacement_is_announced_not_refused():
    report = judge(previous(record(protected=False)), record({**POOL_FACTS, "vmSize": "x"}, protected=False),
                   Allowances())
    assert report.refusals == [] and "protection is off" in report.notices[0].message


def test_removing_a_protected_pool_needs_an_earlier_update_that_unprotects_it():
    before = record()
    after = replace(record(), resources={e: t for e, t in record().resources.items() if e != POOL})
    (refusal,) = judge(previous(before), after, Allowances()).refusals
    assert refusal.kind == "day2-delete-refused" and refusal.key == "aks-kueue:nodePools"
    assert "earlier update" in refusal.message and "`nodePools.a100`" in refusal.fix
    # Listing it in the same update cannot help: the program no longer registers it.
    (again,) = judge(previous(before), after, Allowances([POOL])).refusals
    assert "put it back" in again.fix
    # Once an update has left it unprotected, removing it deletes it, and the preview says so.
    pool = replace(before.resources[POOL], protected=False)
    unprotected = replace(before, resources={**before.resources, POOL: pool})
    report = judge(previous(unprotected), after, Allowances())
    assert report.refusals == [] and report.notices[0].kind == "day2-delete"


def test_replacing_the_cluster_needs_its_protected_dependents_unprotected_first():
    before = record()
    moved = record()
    cluster = replace(moved.resources[CLUSTER], facts={**moved.resources[CLUSTER].facts, "location": "westus"},
                      protected=False)
    moved = replace(moved, resources={**moved.resources, CLUSTER: cluster})
    (refusal,) = judge(previous(before), moved, Allowances([CLUSTER])).refusals
    assert refusal.kind == "day2-replace-chain-refused" and refusal.key == "azure-native:location"
    assert "AgentPool a100" in refusal.message and "pulumi/pulumi#15776" in refusal.message
    assert "`cluster`, `nodePools.a100`, `kueue`" in refusal.fix  # each entry unprotects only itself
    unprotected = replace(before, resources={e: replace(t, protected=False) for e, t in before.resources.items()})
    assert judge(previous(unprotected), moved, Allowances([CLUSTER])).refusals == []


def test_a_direct_install_switch_is_refused_and_the_three_steps_pass():
    managed = record(install="managed")
    (refusal,) = judge(previous(managed), record(install="helm"), Allowances()).refusals
    assert refusal.kind == "day2-install-switch-refused" and refusal.key == "aks-kueue:kueue.install"
    assert "two controllers" in refusal.message and "three updates" in refusal.fix
    # Still refused with kueue listed: both would run at once.
    assert judge(previous(managed), record(install="helm"), Allowances([KUEUE])).refusals
    # 1. allowReplacement: [kueue], same mode: only unprotects.
    step1 = record(install="managed", kueue_protected=False)
    report = judge(previous(managed), step1, Allowances([KUEUE]))
    assert report.refusals == [] and report.notices[0].kind == "day2-allowance-unused"
    # Going to none before that is refused; after it, it passes and says what is removed.
    assert judge(previous(managed), record(install="none"), Allowances([KUEUE])).refusals
    report = judge(previous(step1), record(install="none"), Allowances([KUEUE]))
    assert report.refusals == [] and report.notices[0].kind == "day2-kueue-removed"
    # 3. The new mode.
    assert judge(previous(record(install="none")), record(install="helm"), Allowances()).refusals == []


def test_kubernetes_version_changes_are_reported_before_they_happen():
    (notice,) = judge(previous(record()), record(version="1.35"), Allowances()).notices
    assert notice.kind == "day2-kubernetes-upgrade" and notice.key == "aks-kueue:cluster.kubernetesVersion"
    assert "1.34 -> 1.35" in notice.message and "outside any maintenance window" in notice.message
    (refusal,) = judge(previous(record(version="1.35")), record(version="1.34"), Allowances()).refusals
    assert "downgrade" in refusal.message
    (ignored,) = judge(previous(record(channel="stable")), record(version="1.35", channel="stable"),
                       Allowances()).notices
    assert ignored.kind == "day2-kubernetes-version-ignored"


def test_a_released_namespace_stays_and_an_unretained_one_is_deleted():
    ns = Entry(Target.NAMESPACE, "team-a")
    kept = Tracked(ns, "kubernetes:core/v1:Namespace", "Namespace team-a", {}, False, retained=True)
    before = record(extra=[kept])
    (notice,) = judge(previous(before), record(), Allowances()).notices
    assert notice.kind == "day2-namespace-released" and "stays in the cluster" in notice.message
    gone = record(extra=[replace(kept, retained=False)])
    (notice,) = judge(previous(gone), record(), Allowances()).notices
    assert notice.kind == "day2-delete" and "PersistentVolumeClaim" in notice.message


def test_an_entry_that_matches_nothing_is_reported():
    (notice,) = judge(previous(record()), record(), Allowances([Entry(Target.NODE_POOL, "gone")])).notices
    assert notice.kind == "day2-allowance-unmatched"
