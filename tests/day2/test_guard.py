"""The guard's comparison with the last deployment, as pure functions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aks_kueue.day2.allow import Allowances, Entry, Target
from aks_kueue.day2.guard import judge_update
from aks_kueue.day2.replacement import AGENT_POOL, MANAGED_CLUSTER, RESOURCE_GROUP, facts
from aks_kueue.day2.state import Previous, Record, SystemPoolOwner, Tracked
from tests.messages import explained

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
    report = judge_update(Previous(None, "no previous outputs (a new stack)"), record(), Allowances())
    assert not report.guarded and not report.refusals
    assert [f.kind for f in report.notices] == ["day2-unguarded"]
    assert report.notices[0].message.startswith("unguarded: no previous outputs")


def test_an_unchanged_stack_passes_silently():
    report = judge_update(previous(record()), record(), Allowances())
    assert report.guarded and report.refusals == [] and report.notices == []


@pytest.mark.parametrize("path,new", [("vmSize", "Standard_NC48ads_A100_v4"), ("gpuInstanceProfile", "MIG1g"),
                                      ("availabilityZones", ["1", "2"]), ("enableEncryptionAtHost", False)])
def test_a_replace_forcing_change_of_a_protected_pool_is_refused_naming_key_old_new_and_loss(path, new):
    report = judge_update(previous(record()), record({**POOL_FACTS, path: new}), Allowances())
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
        assert judge_update(previous(record()), record(changed), Allowances()).refusals, path


def unprotected(rec):
    """The record an update leaves when it protected nothing (protect: false, or every entry listed)."""
    return replace(rec, resources={e: replace(t, protected=False) for e, t in rec.resources.items()})


def test_unprotecting_and_replacing_in_one_update_is_refused_from_the_state():
    """Reported: protect: false (or environment: development) with a pool's vmSize was accepted with
    warnings, and Pulumi's engine lets it through (it checks `new.Protect && old.Protect`)."""
    moved = {**POOL_FACTS, "vmSize": "Standard_NC48ads_A100_v4"}
    for allow in (Allowances(), Allowances([POOL])):
        (refusal,) = judge_update(previous(record()), unprotected(record(moved)), allow).refusals
        assert refusal.kind == "day2-replace-refused" and "the last deployment left protected" in refusal.message
        assert "new.Protect && old.Protect" in explained(refusal) and "step_generator.go" in explained(refusal)
        assert "two updates: 1. list `nodePools.a100`" in refusal.fix and "only unprotects" in refusal.fix


def test_once_the_state_is_unprotected_a_listed_replacement_is_announced():
    moved = {**POOL_FACTS, "vmSize": "Standard_NC48ads_A100_v4"}
    report = judge_update(previous(unprotected(record())), unprotected(record(moved)), Allowances([POOL]))
    assert report.refusals == []
    (notice,) = report.notices
    assert notice.kind == "day2-replace" and "listed in allowReplacement" in notice.message
    assert "destroying its nodes" in notice.message and "remove `nodePools.a100`" in notice.fix


def test_without_protection_a_replacement_still_needs_its_entry():
    """Turning protection off is not an acknowledgement to destroy."""
    report = judge_update(previous(record(protected=False)), record({**POOL_FACTS, "vmSize": "x"}, protected=False),
                   Allowances())
    (refusal,) = report.refusals
    assert refusal.kind == "day2-replace-unacknowledged" and "not an acknowledgement" in explained(refusal)
    assert "add `nodePools.a100`" in refusal.fix and refusal.key == "aks-kueue:nodePools[1].vmSize"


def test_removing_a_protected_pool_needs_an_earlier_update_that_unprotects_it():
    before = record()
    after = replace(record(), resources={e: t for e, t in record().resources.items() if e != POOL})
    (refusal,) = judge_update(previous(before), after, Allowances()).refusals
    assert refusal.kind == "day2-delete-refused" and refusal.key == "aks-kueue:nodePools"
    assert "DeleteStep.Apply" in explained(refusal) and "`nodePools.a100`" in refusal.fix
    # Listing it in the same update cannot help: the program no longer registers it.
    (again,) = judge_update(previous(before), after, Allowances([POOL])).refusals
    assert "put it back" in again.fix
    # Once an update has left it unprotected, removing it with its entry deletes it, and the preview says so.
    pool = replace(before.resources[POOL], protected=False)
    unprotected_pool = replace(before, resources={**before.resources, POOL: pool})
    report = judge_update(previous(unprotected_pool), after, Allowances([POOL]))
    assert report.refusals == [] and report.notices[0].kind == "day2-delete"
    # Without it, removing an unprotected pool is still refused.
    (unlisted,) = judge_update(previous(unprotected_pool), after, Allowances()).refusals
    assert unlisted.kind == "day2-delete-unacknowledged"


def test_replacing_the_cluster_needs_its_protected_dependents_unprotected_first():
    before = record()
    moved = record()
    cluster = replace(moved.resources[CLUSTER], facts={**moved.resources[CLUSTER].facts, "location": "westus"},
                      protected=False)
    moved = replace(moved, resources={**moved.resources, CLUSTER: cluster})
    # The cluster itself is protected in the state: refused, and step 1 lists what goes with it.
    (refusal,) = judge_update(previous(before), moved, Allowances([CLUSTER])).refusals
    assert refusal.kind == "day2-replace-refused" and refusal.key == "azure-native:location"
    assert "`cluster`, `nodePools.a100`, `kueue`" in refusal.fix  # each entry unprotects only itself
    # The cluster unprotected, its pool and installer still protected: the engine's chain check.
    only_cluster = replace(before, resources={**before.resources, CLUSTER: replace(before.resources[CLUSTER],
                                                                                   protected=False)})
    (chain,) = judge_update(previous(only_cluster), moved, Allowances([CLUSTER])).refusals
    assert chain.kind == "day2-replace-chain-refused" and "AgentPool a100" in chain.message
    assert "dependentResource.Protect" in explained(chain)
    assert judge_update(previous(unprotected(before)), moved, Allowances([CLUSTER])).refusals == []
    (unlisted,) = judge_update(previous(unprotected(before)), moved, Allowances()).refusals
    assert unlisted.kind == "day2-replace-unacknowledged"


def test_a_direct_install_switch_is_refused_and_the_three_steps_pass():
    managed = record(install="managed")
    (refusal,) = judge_update(previous(managed), record(install="helm"), Allowances()).refusals
    assert refusal.kind == "day2-install-switch-refused" and refusal.key == "aks-kueue:kueue.install"
    assert "two controllers" in explained(refusal) and "three updates" in refusal.fix
    # Still refused with kueue listed: both would run at once.
    assert judge_update(previous(managed), record(install="helm"), Allowances([KUEUE])).refusals
    # 1. allowReplacement: [kueue], same mode: only unprotects.
    step1 = record(install="managed", kueue_protected=False)
    report = judge_update(previous(managed), step1, Allowances([KUEUE]))
    assert report.refusals == [] and report.notices[0].kind == "day2-allowance-unused"
    # Going to none before that is refused; after it, it passes and says what is removed.
    assert judge_update(previous(managed), record(install="none"), Allowances([KUEUE])).refusals
    report = judge_update(previous(step1), record(install="none"), Allowances([KUEUE]))
    assert report.refusals == [] and report.notices[0].kind == "day2-kueue-removed"
    # 3. The new mode.
    assert judge_update(previous(record(install="none")), record(install="helm"), Allowances()).refusals == []


@pytest.mark.parametrize("old,new,kind", [
    ("1.35", "1.37", "day2-kubernetes-minor-skip-refused"),        # reported: AKS refuses to skip a minor
    ("1.35.3", "1.35.1", "day2-kubernetes-downgrade-refused"),     # reported: labelled an upgrade
    ("1.35.3", "1.34.9", "day2-kubernetes-downgrade-refused"),
    ("1.35", "2.0", "day2-kubernetes-minor-skip-refused"),
])
def test_kubernetes_versions_move_one_minor_at_a_time_and_never_down(old, new, kind):
    (refusal,) = judge_update(previous(record(version=old)), record(version=new), Allowances()).refusals
    assert refusal.kind == kind and f"{old} -> {new}" in refusal.message
    if kind.endswith("skip-refused"):
        assert "minor versions cannot be skipped" in refusal.message and "set 1.36 in one update" in refusal.fix


@pytest.mark.parametrize("old,new,kind", [
    ("1.35", "1.36", "day2-kubernetes-upgrade"), ("1.35.1", "1.35.3", "day2-kubernetes-upgrade"),
    ("1.35.2", "1.36.1", "day2-kubernetes-upgrade"), ("1.35.3", "1.35", "day2-kubernetes-version-same-minor"),
    ("1.35", "1.35.2", "day2-kubernetes-patch-pinned"),
])
def test_kubernetes_version_moves_that_aks_takes_are_reported(old, new, kind):
    report = judge_update(previous(record(version=old)), record(version=new), Allowances())
    assert report.refusals == [] and [f.kind for f in report.notices] == [kind]


def test_a_skip_out_of_a_retired_minor_is_what_aks_allows():
    from datetime import date

    # 1.29's LTS ends in April 2026 (the calendar in aks/data): by 2030 AKS lets such a cluster skip ahead.
    report = judge_update(previous(record(version="1.29")), record(version="1.31"), Allowances(), on=date(2030, 1, 1))
    assert report.refusals == [] and [f.kind for f in report.notices] == ["day2-kubernetes-minor-skip",
                                                                         "day2-kubernetes-upgrade"]
    # While it is supported, the same skip is refused.
    assert judge_update(previous(record(version="1.29")), record(version="1.31"), Allowances(), on=date(2024, 6, 1)).refusals


def test_a_path_the_last_record_did_not_hold_is_unknown_not_a_change():
    """A record written before maxPods was tracked: the pool is kept, and the update says so once."""
    old = record()
    old = replace(old, untracked={AGENT_POOL: frozenset({"maxPods"})})
    report = judge_update(previous(old), record({**POOL_FACTS, "maxPods": 110}), Allowances())
    assert report.refusals == [] and [f.kind for f in report.notices] == ["day2-facts-unrecorded"]
    assert "maxPods" in report.notices[0].message


def test_kubernetes_version_changes_are_reported_before_they_happen():
    (notice,) = judge_update(previous(record()), record(version="1.35"), Allowances()).notices
    assert notice.kind == "day2-kubernetes-upgrade" and notice.key == "aks-kueue:cluster.kubernetesVersion"
    assert "1.34 -> 1.35" in notice.message and "outside any maintenance window" in notice.message
    (refusal,) = judge_update(previous(record(version="1.35")), record(version="1.34"), Allowances()).refusals
    assert "downgrade" in refusal.message
    (ignored,) = judge_update(previous(record(channel="stable")), record(version="1.35", channel="stable"),
                       Allowances()).notices
    assert ignored.kind == "day2-kubernetes-version-ignored"


def test_a_released_namespace_stays_and_an_unretained_one_is_deleted():
    ns = Entry(Target.NAMESPACE, "team-a")
    kept = Tracked(ns, "kubernetes:core/v1:Namespace", "Namespace team-a", {}, False, retained=True)
    before = record(extra=[kept])
    (notice,) = judge_update(previous(before), record(), Allowances()).notices
    assert notice.kind == "day2-namespace-released" and "stays in the cluster" in notice.message
    gone = record(extra=[replace(kept, retained=False)])
    (refusal,) = judge_update(previous(gone), record(), Allowances()).refusals
    assert refusal.kind == "day2-delete-unacknowledged" and "PersistentVolumeClaim" in refusal.message
    (notice,) = judge_update(previous(gone), record(), Allowances([ns])).notices
    assert notice.kind == "day2-delete" and "PersistentVolumeClaim" in notice.message


def test_uninstalling_an_unprotected_kueue_still_needs_its_entry():
    step1 = record(install="managed", kueue_protected=False)
    (refusal,) = judge_update(previous(step1), record(install="none"), Allowances()).refusals
    assert refusal.kind == "day2-install-switch-refused" and "allowReplacement does not list `kueue`" in refusal.message


def test_an_entry_that_matches_nothing_is_reported():
    (notice,) = judge_update(previous(record()), record(), Allowances([Entry(Target.NODE_POOL, "gone")])).notices
    assert notice.kind == "day2-allowance-unmatched"


# ---- Kueue objects ----

LQ = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"


def queue(kind, name, namespace=None, **facts):
    from aks_kueue.day2.allow import queue_entry

    entry = queue_entry(kind, namespace, name)
    where = f"{namespace}/{name}" if namespace else name
    return Tracked(entry, f"kubernetes:kueue.x-k8s.io/v1beta2:{kind}", f"{kind} {where}",
                   {f"spec.{k}": v for k, v in facts.items()}, False, key="aks-kueue:queues.x[0]")


TEAM_A = queue("ClusterQueue", "team-a")
DEFAULT = queue("LocalQueue", "default", "team-a", clusterQueue="team-a")
LEVELS = [{"nodeLabel": "topology.kubernetes.io/zone"}, {"nodeLabel": "kubernetes.io/hostname"}]
ZONES = queue("Topology", "zone-host", levels=LEVELS)
H100 = queue("ResourceFlavor", "h100", nodeLabels={"pool": "h100"}, topologyName="zone-host")


def with_queues(*objects, **kw):
    return record(extra=objects, **kw)


def test_removing_a_cluster_queue_with_its_local_queues_is_refused_with_the_safe_path():
    """Reported: removing a ClusterQueue and its LocalQueues was accepted with no notice, and Kueue's
    finalizer then held the delete until its timeout."""
    report = judge_update(previous(with_queues(TEAM_A, DEFAULT)), with_queues(), Allowances())
    by_object = {f.object: f for f in report.refusals}
    assert set(by_object) == {"ClusterQueue team-a", "LocalQueue team-a/default"}
    cq = by_object["ClusterQueue team-a"]
    assert cq.kind == "day2-kueue-delete-refused" and cq.key == "aks-kueue:queues.clusterQueues"
    assert "resource-in-use finalizer" in explained(cq) and "5m" in explained(cq)
    assert "stopPolicy: Hold" in cq.fix and "HoldAndDrain would evict" in cq.fix
    assert "kubectl get clusterqueue team-a" in cq.fix and "`queues.ClusterQueue/team-a`" in cq.fix
    lq = by_object["LocalQueue team-a/default"]
    assert "kubectl get workloads -n team-a" in lq.fix and "`queues.LocalQueue/team-a/default`" in lq.fix
    # Listed, both go with a notice that still says what Kueue does.
    allow = Allowances.parse(["queues.ClusterQueue/team-a", "queues.LocalQueue/team-a/default"])
    report = judge_update(previous(with_queues(TEAM_A, DEFAULT)), with_queues(), allow)
    assert report.refusals == [] and {f.kind for f in report.notices} == {"day2-kueue-delete"}


def test_renaming_a_cluster_queue_deletes_the_old_one():
    renamed = queue("ClusterQueue", "team-a2")
    (refusal,) = judge_update(previous(with_queues(TEAM_A)), with_queues(renamed), Allowances()).refusals
    assert refusal.object == "ClusterQueue team-a" and refusal.kind == "day2-kueue-delete-refused"


def test_a_local_queue_moved_to_another_cluster_queue_is_a_replacement():
    moved = queue("LocalQueue", "default", "team-a", clusterQueue="training")
    moved = replace(moved, keys={"spec.clusterQueue": "aks-kueue:queues.localQueues[0].spec.clusterQueue"})
    (refusal,) = judge_update(previous(with_queues(TEAM_A, DEFAULT)), with_queues(TEAM_A, moved), Allowances()).refusals
    assert refusal.kind == "day2-kueue-replace-refused"
    assert refusal.key == "aks-kueue:queues.localQueues[0].spec.clusterQueue"
    assert "spec.clusterQueue team-a -> training" in refusal.message and "deleteBeforeReplace" in explained(refusal)
    assert refusal.numbers == {"old": "team-a", "new": "training"}
    allow = Allowances.parse(["queues.LocalQueue/team-a/default"])
    report = judge_update(previous(with_queues(TEAM_A, DEFAULT)), with_queues(TEAM_A, moved), allow)
    assert report.refusals == [] and report.notices[0].kind == "day2-kueue-replace"


def test_a_topology_whose_levels_change_is_a_replacement():
    fewer = queue("Topology", "zone-host", levels=LEVELS[1:])
    (refusal,) = judge_update(previous(with_queues(ZONES, H100)), with_queues(fewer, H100), Allowances()).refusals
    assert refusal.kind == "day2-kueue-replace-refused" and "spec.levels" in refusal.message
    assert "no ResourceFlavor names it" in explained(refusal) and "under another name" in refusal.fix


def test_a_flavor_is_replaced_only_where_kueue_refuses_the_change():
    relabelled = queue("ResourceFlavor", "h100", nodeLabels={"pool": "h200"}, topologyName="zone-host")
    (refusal,) = judge_update(previous(with_queues(ZONES, H100)), with_queues(ZONES, relabelled), Allowances()).refusals
    assert refusal.kind == "day2-kueue-replace-refused" and "spec.nodeLabels" in refusal.message
    plain = queue("ResourceFlavor", "cpu", nodeLabels={"pool": "cpu"})
    relabel_plain = queue("ResourceFlavor", "cpu", nodeLabels={"pool": "cpu2"})
    assert judge_update(previous(with_queues(plain)), with_queues(relabel_plain), Allowances()).refusals == []
    # Dropping the topologyName is an update Kueue refuses: said before the update.
    dropped = queue("ResourceFlavor", "h100", nodeLabels={"pool": "h100"})
    (refusal,) = judge_update(previous(with_queues(ZONES, H100)), with_queues(ZONES, dropped), Allowances()).refusals
    assert refusal.kind == "day2-kueue-immutable-refused" and "topologyName is immutable" in refusal.message


@pytest.mark.parametrize("gone,held", [
    (queue("ResourceFlavor", "a100"), "no ClusterQueue names it"),
    (queue("AdmissionCheck", "team-a-provisioning", controllerName="kueue.x-k8s.io/provisioning-request"),
     "no ClusterQueue names it"),
    (ZONES, "no ResourceFlavor names it"),
    (queue("Cohort", "research"), None),
])
def test_every_guarded_kind_is_refused_when_it_goes(gone, held):
    (refusal,) = judge_update(previous(with_queues(gone)), with_queues(), Allowances()).refusals
    assert refusal.kind == "day2-kueue-delete-refused" and f"`{gone.entry}`" in refusal.fix
    assert held is None or held in explained(refusal)


def test_kueue_objects_go_with_the_cluster_or_the_install_without_entries_of_their_own():
    moved_cluster = record(extra=[])
    cluster = replace(moved_cluster.resources[CLUSTER], facts={**moved_cluster.resources[CLUSTER].facts,
                                                               "location": "westus"})
    moved_cluster = replace(moved_cluster, resources={**moved_cluster.resources, CLUSTER: cluster})
    report = judge_update(previous(unprotected(with_queues(TEAM_A))), unprotected(moved_cluster), Allowances([CLUSTER]))
    assert report.refusals == [] and [f.kind for f in report.notices] == ["day2-replace"]
    # Kueue uninstalled on purpose: its entry covers every queue object.
    report = judge_update(previous(unprotected(with_queues(TEAM_A))), record(install="none", extra=[]), Allowances([KUEUE]))
    assert report.refusals == [] and [f.kind for f in report.notices] == ["day2-kueue-removed"]


def test_a_record_without_kueue_objects_is_said_to_be_unrecorded():
    old = replace(with_queues(), queues_tracked=False)
    report = judge_update(previous(old), with_queues(TEAM_A), Allowances())
    assert report.refusals == [] and [f.kind for f in report.notices] == ["day2-kueue-objects-unrecorded"]


def test_a_listed_kueue_object_that_stays_is_reported_unused():
    allow = Allowances.parse(["queues.ClusterQueue/team-a"])
    (notice,) = judge_update(previous(with_queues(TEAM_A)), with_queues(TEAM_A), allow).notices
    assert notice.kind == "day2-allowance-unused" and "unprotects" not in notice.message


def test_a_pool_removed_while_its_listed_cluster_is_replaced_goes_with_it():
    before = unprotected(record())
    moved = unprotected(record())
    cluster = replace(moved.resources[CLUSTER], facts={**moved.resources[CLUSTER].facts, "location": "westus"})
    moved = replace(moved, resources={e: t for e, t in {**moved.resources, CLUSTER: cluster}.items() if e != POOL})
    report = judge_update(previous(before), moved, Allowances([CLUSTER]))
    assert report.refusals == [] and {f.kind for f in report.notices} == {"day2-replace", "day2-delete"}
    # Without the cluster listed, both are refused.
    assert {f.kind for f in judge_update(previous(before), moved, Allowances()).refusals} == {
        "day2-replace-unacknowledged", "day2-delete-unacknowledged"}
