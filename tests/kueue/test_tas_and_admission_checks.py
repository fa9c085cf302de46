"""Kueue's rules for Topology Aware Scheduling flavors and for which admission checks a Workload gets,
as read from v0.19.2 (`kueue/tas.py`, `kueue/admission_checks.py`)."""

from __future__ import annotations

import pytest

from aks_kueue.kueue.admission_checks import checks_for, checks_of, pod_uses, requested_pod_sets
from aks_kueue.kueue.tas import ClusterQueueTopology, explicitly_requests, missing_levels
from aks_kueue.kueue.views import ClusterQueue, PodSet

LEVELS = {"zone-host": ["topology.kubernetes.io/zone", "kubernetes.io/hostname"], "zone": ["topology.kubernetes.io/zone"]}


def queue(*flavors: tuple[str, list[str]]) -> ClusterQueue:
    return ClusterQueue.of({"kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": {"resourceGroups": [
        {"coveredResources": covered, "flavors": [{"name": name, "resources": []}]} for name, covered in flavors]}})


def pod_set(request=None) -> dict:
    return request if request is not None else {}


MIXED = ClusterQueueTopology.of(queue(("cpu", ["cpu"]), ("gpu", ["cpu", "nvidia.com/gpu"])), {"gpu": "zone-host"})
TAS_ONLY = ClusterQueueTopology.of(queue(("gpu", ["cpu"])), {"gpu": "zone"})


@pytest.mark.parametrize("topology, topology_request, flavor, requested, expected", [
    (MIXED, None, "cpu", ["cpu"], None),
    (MIXED, None, "gpu", ["cpu"], 'Flavor "gpu" supports only TopologyAwareScheduling'),
    (MIXED, {"unconstrained": True}, "gpu", ["cpu"], None),
    (MIXED, {"unconstrained": True}, "cpu", ["cpu"], 'Flavor "cpu" does not support TopologyAwareScheduling'),
    # A flavor without topology whose group covers none of the pod's resources provides quota-only ones.
    (MIXED, {"unconstrained": True}, "cpu", ["nvidia.com/gpu"], None),
    (MIXED, {"required": "kubernetes.io/hostname"}, "gpu", ["cpu"], None),
    (MIXED, {"required": "rack"}, "gpu", ["cpu"], 'Flavor "gpu" does not contain the requested level'),
    (MIXED, {"podSetGroupName": "g"}, "gpu", ["cpu"], 'Flavor "gpu" supports only TopologyAwareScheduling'),
    (TAS_ONLY, None, "gpu", ["cpu"], None),  # implied
    (TAS_ONLY, {"preferred": "kubernetes.io/hostname"}, "gpu", ["cpu"],
     'Flavor "gpu" does not contain the requested level'),
    (TAS_ONLY, {"podSetSliceRequiredTopology": "topology.kubernetes.io/zone", "podSetSliceSize": 2}, "gpu", ["cpu"],
     None),
])
def test_which_flavors_tas_lets_a_pod_set_use(topology, topology_request, flavor, requested, expected):
    assert topology.mismatch(pod_set(topology_request), flavor, LEVELS, requested) == expected


def test_only_the_request_fields_kueue_names_make_a_request_explicit():
    assert not explicitly_requests(pod_set({"podSetGroupName": "g", "podIndexLabel": "x"}))
    assert explicitly_requests(pod_set({"unconstrained": False}))
    assert explicitly_requests(pod_set({"podsetSliceRequiredTopologyConstraints": [{"topology": "a", "size": 1}]}))


def test_every_level_a_request_names_must_be_in_the_topology():
    levels = LEVELS["zone-host"]
    assert missing_levels({"required": "topology.kubernetes.io/zone", "podSetSliceRequiredTopology": "rack",
                           "podSetSliceSize": 1}, levels) == ["rack"]
    assert missing_levels({"unconstrained": True}, levels) == []
    assert missing_levels({"podSetGroupName": "g"}, levels) == [None]


CQ = {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "cpu"}, {"name": "a100"}]}],
      "admissionChecksStrategy": {"admissionChecks": [{"name": "gpu", "onFlavors": ["a100"]}, {"name": "all"}]}}


def test_checks_apply_to_their_flavors_or_to_every_flavor():
    assert checks_of(CQ) == {"gpu": frozenset({"a100"}), "all": frozenset({"cpu", "a100"})}
    assert checks_for(CQ, {"cpu"}) == ["all"]
    assert checks_for(CQ, {"a100"}) == ["gpu", "all"]
    assert checks_for(CQ, None) == ["all"]  # no quota reserved yet
    assert checks_for({"resourceGroups": CQ["resourceGroups"]}, {"cpu"}) == []


def test_a_request_holds_the_pod_sets_that_use_its_managed_resources():
    gpu = PodSet("workers", 2, {"spec": {"containers": [
        {"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})
    cpu = PodSet("launcher", 1, {"spec": {"initContainers": [
        {"name": "i", "resources": {"requests": {"cpu": "1"}}}], "containers": [{"name": "c"}]}})
    empty = PodSet("none", 0, cpu.template)
    assert [p.name for p in requested_pod_sets([cpu, gpu, empty], [])] == ["launcher", "workers"]
    assert [p.name for p in requested_pod_sets([cpu, gpu, empty], ["nvidia.com/gpu"])] == ["workers"]
    assert pod_uses(cpu.pod_spec, {"cpu"}) and not pod_uses(cpu.pod_spec, {"memory"})
