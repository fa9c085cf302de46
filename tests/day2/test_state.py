"""The `day2` stack output: written by one update, read back by the next."""

from __future__ import annotations

import json

from aks_kueue.day2.allow import Entry, Target
from aks_kueue.day2.replacement import AGENT_POOL
from aks_kueue.day2.state import (CLUSTER_ID_OUTPUT, OUTPUT, Record, SystemPoolOwner, Tracked, from_outputs,
                                  kept_pools, settle, stick, to_output)

POOL = Entry(Target.NODE_POOL, "cpu")


def a_record(encryption=True, vm="Standard_D8s_v5", owner=SystemPoolOwner.CLUSTER, chosen=("enableEncryptionAtHost",),
             **facts):
    pool = Tracked(POOL, AGENT_POOL, "AgentPool cpu", {"vmSize": vm, "enableEncryptionAtHost": encryption, **facts},
                   True, keys={"vmSize": "aks-kueue:nodePools[0].vmSize"}, key="aks-kueue:nodePools[0]",
                   chosen=frozenset(chosen))
    return Record({POOL: pool}, "helm", "1.34", "patch", owner)


def test_round_trip_through_json_as_pulumi_stack_output_prints_it():
    outputs = {OUTPUT: json.loads(json.dumps(to_output(a_record()))), CLUSTER_ID_OUTPUT: "/subscriptions/s/x",
               "kubeconfig": "[secret]"}
    read = from_outputs(outputs)
    assert read.record is not None and read.record.cluster_id == "/subscriptions/s/x"
    pool = read.record.get(POOL)
    assert pool.facts == {"vmSize": "Standard_D8s_v5", "enableEncryptionAtHost": True} and pool.protected
    assert pool.keys == {}  # stack-file keys and indexes are not part of the output
    assert (read.record.kueue_install, read.record.system_pool_owner) == ("helm", SystemPoolOwner.CLUSTER)


def test_missing_secret_or_foreign_outputs_say_why_the_update_is_unguarded():
    assert from_outputs({}).reason.startswith("no previous outputs")
    assert from_outputs(None).reason.startswith("no previous outputs")
    assert "exported no `day2`" in from_outputs({"clusterName": "x"}).reason
    assert "--show-secrets" in from_outputs({OUTPUT: "[secret]"}).reason
    assert "schema" in from_outputs({OUTPUT: {"schema": 99}}).reason
    broken = to_output(a_record())
    broken["resources"]["nodePools.Bad!"] = broken["resources"].pop("nodePools.cpu")
    assert "cannot be read" in from_outputs({OUTPUT: broken}).reason


def test_a_pool_keeps_the_host_encryption_it_was_created_with():
    before = a_record(encryption=False)
    # A newer VM catalog would derive True: the running pool keeps False (AKS cannot change it).
    assert stick(a_record(encryption=True), before).get(POOL).facts["enableEncryptionAtHost"] is False
    # A new vmSize replaces the pool anyway, so it gets the derived value.
    moved = stick(a_record(encryption=True, vm="Standard_D16s_v5"), before)
    assert moved.get(POOL).facts["enableEncryptionAtHost"] is True
    assert stick(a_record(), None) == a_record()
    # Written in the stack, it is not kept: the guard sees the change (and refuses it unless allowed).
    assert stick(a_record(encryption=True, chosen=()), before).get(POOL).facts["enableEncryptionAtHost"] is True


def test_a_pool_created_without_an_os_disk_choice_is_left_without_one():
    """A pool of the last deployment that was created before the program chose the OS disk keeps
    AKS's choice: the chosen values are not sent, so nothing forces a replacement."""
    before = a_record()
    chosen = ("enableEncryptionAtHost", "osDiskType", "osDiskSizeGB")
    wanted = a_record(chosen=chosen, osDiskType="Ephemeral", osDiskSizeGB=128)
    kept = stick(wanted, before).get(POOL).facts
    assert "osDiskType" not in kept and "osDiskSizeGB" not in kept
    assert kept_pools(stick(wanted, before), before) == [POOL]
    # A pool that changes size is replaced: it is new again and takes the chosen values.
    moved = stick(a_record(vm="Standard_D16s_v5", chosen=chosen, osDiskType="Ephemeral"), before)
    assert moved.get(POOL).facts["osDiskType"] == "Ephemeral" and kept_pools(moved, before) == []


def test_the_system_pool_is_inline_in_the_first_update_and_an_agent_pool_after():
    assert settle(a_record(), None).system_pool_owner is SystemPoolOwner.CLUSTER
    assert settle(a_record(), a_record()).system_pool_owner is SystemPoolOwner.AGENT_POOL


def test_kueue_objects_round_trip_under_their_own_key():
    from aks_kueue.day2.allow import queue_entry

    lq = queue_entry("LocalQueue", "team-a", "default")
    tracked = Tracked(lq, "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue", "LocalQueue team-a/default",
                      {"spec.clusterQueue": "team-a"}, False, key="aks-kueue:queues.localQueues[0]")
    record = a_record()
    record = Record({**record.resources, lq: tracked}, "managed", "1.35", "patch", SystemPoolOwner.AGENT_POOL)
    output = json.loads(json.dumps(to_output(record)))
    assert "LocalQueue/team-a/default" in output["kueueObjects"]
    assert all(not name.startswith("queues.") for name in output["resources"])  # older programs can read it
    read = from_outputs({OUTPUT: output}).record
    assert read.queues_tracked and read.get(lq).facts == {"spec.clusterQueue": "team-a"}
    assert read.get(lq).label == "LocalQueue team-a/default" and read.untracked == {}


def test_a_record_from_before_the_tracked_paths_knows_which_it_lacks():
    output = json.loads(json.dumps(to_output(a_record())))
    del output["tracked"], output["kueueObjects"]
    read = from_outputs({OUTPUT: output}).record
    assert not read.queues_tracked
    assert read.skipped(AGENT_POOL) == {"maxPods", "scaleSetPriority", "scaleSetEvictionPolicy"}
    # The pool is still kept: an unrecorded path is unknown, not a change.
    assert kept_pools(a_record(maxPods=110), read) == [POOL]
