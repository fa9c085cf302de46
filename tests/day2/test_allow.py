"""allowReplacement entries and what they unprotect."""

from __future__ import annotations

import pytest

from aks_kueue.day2.allow import Allowances, Entry, Protection, Target, parse_entry


@pytest.mark.parametrize("text,entry", [
    ("cluster", Entry(Target.CLUSTER)), ("systemPool", Entry(Target.SYSTEM_POOL)),
    ("nodePools.a100", Entry(Target.NODE_POOL, "a100")), ("kueue", Entry(Target.KUEUE)),
    ("resourceGroup", Entry(Target.RESOURCE_GROUP)), ("namespaces.team-a", Entry(Target.NAMESPACE, "team-a")),
    ("queues.ClusterQueue/team-a", Entry(Target.QUEUES, "ClusterQueue/team-a")),
    ("queues.LocalQueue/team-a/default", Entry(Target.QUEUES, "LocalQueue/team-a/default")),
    ("queues.Topology/zone.host", Entry(Target.QUEUES, "Topology/zone.host")),
    ("queues.Cohort/research", Entry(Target.QUEUES, "Cohort/research")),
    ("queues.ResourceFlavor/h100", Entry(Target.QUEUES, "ResourceFlavor/h100")),
    ("queues.AdmissionCheck/team-a-provisioning", Entry(Target.QUEUES, "AdmissionCheck/team-a-provisioning")),
])
def test_each_form_parses_and_prints_back(text, entry):
    assert parse_entry(text) == entry and str(entry) == text


@pytest.mark.parametrize("text,fragment", [
    ("clusters", "cluster, systemPool, nodePools.<name>"), ("nodePools", "names no pool"),
    ("nodePools.GPU", "not an AKS pool name"), ("namespaces.Team_A", "not a namespace name"),
    ("kueue.helm", "kueue takes no name"), (3, "not an entry"),
    ("queues.LocalQueue/default", "named with its namespace; write queues.LocalQueue/<namespace>/<name>"),
    ("queues.ClusterQueue/a/b", "a ClusterQueue has no namespace"),
    ("queues.WorkloadPriorityClass/x", "not a Kueue kind the guard watches"),
    ("queues.ClusterQueue", "names no ClusterQueue"), ("queues.ClusterQueue/Team_A", "not a Kubernetes object name"),
    ("queues.LocalQueue/Team/x", "not a namespace name"),
])
def test_bad_entries_say_what_an_entry_may_be(text, fragment):
    with pytest.raises(ValueError) as error:
        parse_entry(text)
    assert fragment in str(error.value)


def test_an_entry_unprotects_exactly_its_resource():
    protection = Protection(True, Allowances.parse(["nodePools.a100", "namespaces.team-a"]))
    assert not protection.protects(Entry(Target.NODE_POOL, "a100"))
    assert protection.protects(Entry(Target.NODE_POOL, "cpu")) and protection.protects(Entry(Target.CLUSTER))
    assert not protection.retains(Entry(Target.NAMESPACE, "team-a"))
    assert protection.retains(Entry(Target.NAMESPACE, "team-b"))
    assert not Protection(False, Allowances()).protects(Entry(Target.CLUSTER))


def test_a_kueue_kind_is_read_as_kubectl_reads_it_and_written_as_kueue_spells_it():
    assert str(parse_entry("queues.clusterqueue/team-a")) == "queues.ClusterQueue/team-a"
    assert parse_entry("queues.localqueue/team-a/default").kind == "LocalQueue"


def test_a_kueue_entry_protects_nothing():
    entry = parse_entry("queues.ClusterQueue/team-a")
    assert not Protection(True, Allowances()).protects(entry)
    assert not Protection(True, Allowances([entry])).protects(entry)
