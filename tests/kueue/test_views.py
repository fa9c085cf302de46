"""The typed views of Kueue objects (`kueue/views.py`): built from what validation accepts, without checking again."""

from __future__ import annotations

import copy

import pytest

from aks_kueue.kueue.admission_checks import checks_for, checks_of
from aks_kueue.kueue.validate import load_object, validate_object
from aks_kueue.kueue.views import (AdmissionCheck, BorrowWithinCohort, ClusterQueue, ClusterQueuePreemption, Cohort,
                                   FlavorFungibility, LocalQueue, MultiKueueConfig, Other, ProvisioningRequestConfig,
                                   ResourceFlavor, Topology, Workload, WorkloadPriorityClass, view)
from tests.kueue.corpus import other_kinds
from tests.kueue.test_golden import objects


def accepted(manifest: dict) -> dict:
    obj = load_object(copy.deepcopy(manifest))
    assert validate_object(obj) == []
    return obj.defaulted


def by_name(kind: str, name: str) -> dict:
    return accepted(next(o for o in other_kinds() if o["kind"] == kind and o["metadata"]["name"] == name))


def test_every_object_validation_accepts_has_a_view():
    """The golden corpus: valid objects of every kind and 4,000 damaged copies. Whatever passes the checks
    reads as a view; a view that reached for a field the schema lets be absent would raise here."""
    seen: dict[type, int] = {}
    for manifest in objects():
        obj = load_object(copy.deepcopy(manifest))
        if validate_object(obj):
            continue
        each = view(obj.defaulted)
        assert each.name == obj.name
        seen[type(each)] = seen.get(type(each), 0) + 1
        if isinstance(each, ClusterQueue):
            # The checks of the view are those Kueue's reading of the spec finds.
            assert each.checks == checks_of(obj.spec)
            assert each.checks_for(None) == checks_for(obj.spec, None)
            assert each.checks_for(each.flavor_names[:1]) == checks_for(obj.spec, each.flavor_names[:1])
    assert {ClusterQueue, Cohort, ResourceFlavor, LocalQueue, Workload, AdmissionCheck, ProvisioningRequestConfig,
            Topology, WorkloadPriorityClass, MultiKueueConfig, Other} <= set(seen)
    assert sum(seen.values()) > 500


def test_a_cluster_queue_reads_its_quotas_in_kueue_units_and_its_checks():
    cq = view(by_name("ClusterQueue", "full"))
    assert isinstance(cq, ClusterQueue)
    assert cq.cohort == "org" and cq.namespace_selector == {"matchLabels": {"team": "a"}}
    [group] = cq.resource_groups
    assert group.covered_resources == ("cpu", "memory", "pods") and group.flavor_names == ("default",)
    cpu, memory, pods = group.flavors[0].resources
    assert (cpu.nominal_quota, cpu.borrowing_limit, cpu.lending_limit) == (8000, 4000, 2000)  # millicores
    assert (memory.nominal_quota, memory.borrowing_limit) == (32 * 2**30, None) and pods.nominal_quota == 50
    assert cq.checks == {"prov": frozenset({"default"})} and cq.stop_policy == "None"


def test_the_other_kinds_read_their_fields():
    cohort = view(by_name("Cohort", "org"))
    assert isinstance(cohort, Cohort) and cohort.parent == "root"
    assert cohort.resource_groups[0].flavors[0].resources[0].lending_limit == 2000
    flavor = view(by_name("ResourceFlavor", "tas"))
    assert isinstance(flavor, ResourceFlavor) and flavor.topology_name == "default"
    assert flavor.node_labels == {"pool": "gpu"} and flavor.node_taints[0]["key"] == "sku"
    lq = view(by_name("LocalQueue", "lq"))
    assert isinstance(lq, LocalQueue) and (lq.namespace, lq.cluster_queue, lq.stopped) == ("team", "cq", False)
    check = view(by_name("AdmissionCheck", "prov"))
    assert isinstance(check, AdmissionCheck)
    assert check.names("ProvisioningRequestConfig") == "cfg" and check.names("MultiKueueConfig") is None
    config = view(by_name("ProvisioningRequestConfig", "cfg"))
    assert isinstance(config, ProvisioningRequestConfig) and config.managed_resources == ("nvidia.com/gpu",)
    topology = view(by_name("Topology", "default"))
    assert isinstance(topology, Topology) and topology.levels == ("topology.kubernetes.io/zone",
                                                                   "kubernetes.io/hostname")
    assert view(by_name("WorkloadPriorityClass", "high")) == WorkloadPriorityClass("high", 1000)
    assert view(by_name("MultiKueueConfig", "mk")) == MultiKueueConfig("mk", ("west",))


@pytest.mark.parametrize("pod_set, name, count", [({}, "main", 1), ({"name": "workers", "count": 3}, "workers", 3)])
def test_a_workload_reads_its_pod_sets_with_kueue_defaults(pod_set, name, count):
    manifest = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
                "metadata": {"name": "w", "namespace": "team"},
                "spec": {"queueName": "lq", "podSets": [{**pod_set, "template": {"spec": {"containers": [
                    {"name": "c", "image": "busybox"}]}}}]}}
    workload = view(accepted(manifest))
    assert isinstance(workload, Workload) and (workload.namespace, workload.queue_name) == ("team", "lq")
    [only] = workload.pod_sets
    assert (only.name, only.count, only.min_count, dict(only.topology_request)) == (name, count, None, {})
    assert only.pod_spec["containers"][0]["name"] == "c"


def _queue(spec: dict) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
            "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "4"}]}]}], **spec}}


def test_a_cluster_queue_reads_what_admission_decides_with():
    """Preemption, fungibility, queueing, fair sharing and admission scope, as the admission core and replay
    read them (`ClusterQueueInfo.of`, the replay's QueueState): Kueue's defaults when absent."""
    plain = view(accepted(_queue({})))
    assert isinstance(plain, ClusterQueue)
    assert (plain.preemption, plain.flavor_fungibility) == (ClusterQueuePreemption(), FlavorFungibility())
    assert (plain.queueing_strategy, plain.fair_weight, plain.admission_mode, plain.stopped) == \
        ("BestEffortFIFO", 1.0, None, False)
    given = view(accepted(_queue({
        "cohortName": "org", "queueingStrategy": "StrictFIFO", "fairSharing": {"weight": "500m"},
        "stopPolicy": "Hold", "admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"},
        "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any",
                       "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100}},
        "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"}})))
    assert isinstance(given, ClusterQueue)
    assert given.preemption == ClusterQueuePreemption("LowerPriority", "Any", BorrowWithinCohort("LowerPriority", 100))
    assert given.flavor_fungibility == FlavorFungibility("TryNextFlavor", "MayStopSearch")
    assert (given.queueing_strategy, given.fair_weight, given.admission_mode, given.stopped) == \
        ("StrictFIFO", 0.5, "UsageBasedAdmissionFairSharing", True)


def test_fair_weights_and_priority_class_references():
    lq = LocalQueue.of({"metadata": {"name": "lq", "namespace": "team"},
                        "spec": {"clusterQueue": "cq", "fairSharing": {"weight": "2"}}})
    assert lq.fair_weight == 2.0 and LocalQueue.of({"metadata": {"name": "lq"}, "spec": {}}).namespace == "default"
    cohort = Cohort.of({"metadata": {"name": "org"}, "spec": {"fairSharing": {"weight": "0"}}})
    assert cohort.fair_weight == 0.0

    def workload(kind: str) -> Workload:
        return Workload.of({"metadata": {"name": "w", "namespace": "team"}, "spec": {
            "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": kind, "name": "high"}, "podSets": []}})
    # Only a WorkloadPriorityClass gives the admission core its value; a Kubernetes PriorityClass is not one.
    assert workload("WorkloadPriorityClass").priority_class == "high"
    assert workload("PriorityClass").priority_class is None
