"""Topology Aware Scheduling on AKS: existing nodes (a ProvisioningRequest check or a minCount floor),
pod sets required on one node, and topology requests Kueue would refuse on the flavors given."""

from __future__ import annotations

from aks_kueue.judge import judge
from aks_kueue.judge.finding import Amount
from aks_kueue.judge.topology import PODSET_EXCEEDS_HOST, TOPOLOGY_NEEDS_NODES, TOPOLOGY_REQUEST_MISMATCH
from tests.conftest import model_of
from tests.judge.test_feasibility import fixture


def found(config: dict, kind: str):
    return [f for f in judge(model_of(config)).findings if f.kind == kind]


def tas(edit=None) -> dict:
    """topology-needs-nodes.yaml: one TAS flavor on a Standard_D8s_v5 pool (7.82 cores a node), 0-3 nodes."""
    config = fixture("topology-needs-nodes.yaml")
    if edit:
        edit(config)
    return config


def test_scaling_from_zero_without_a_check_is_an_error_on_the_cluster_queue():
    [finding] = found(tas(), TOPOLOGY_NEEDS_NODES)
    assert finding.severity.value == "error" and finding.object == "ClusterQueue ml"
    assert finding.key == "aks-kueue:queues.clusterQueues[0].provisioning"
    assert finding.numbers["minCount"] == {"cpu": 0} and finding.numbers["floorNodes"] == 0


def test_a_floor_too_small_for_a_workload_is_an_error_and_quota_above_it_a_warning():
    def floor(c):
        c["aks-kueue:nodePools"][0]["minCount"] = 1
    findings = sorted(found(tas(floor), TOPOLOGY_NEEDS_NODES), key=lambda f: f.severity.value)
    assert [f.severity.value for f in findings] == ["error", "warning"]
    error, warning = findings
    # 4 pods of 3 cores, two to a node; one node always exists.
    assert error.key == "aks-kueue:expectedWorkloads[0].podSets[0]"
    assert (error.numbers["fit"], error.numbers["count"], error.numbers["minCountNeeded"]) == (2, 4, 2)
    assert warning.numbers["quota"]["cpu"] == Amount(20, "cores") and warning.numbers["floorNodes"] == 1


def test_a_floor_that_holds_the_work_and_the_quota_is_enough():
    def floor(c):
        c["aks-kueue:nodePools"][0]["minCount"] = 2
        cpu, memory = c["aks-kueue:queues"]["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
        cpu["nominalQuota"], memory["nominalQuota"] = "15", "50Gi"  # two nodes: 15.64 cores, 54.6Gi
    assert found(tas(floor), TOPOLOGY_NEEDS_NODES) == []


def test_check_capacity_adds_no_node_so_it_does_not_replace_a_floor():
    def capacity(c):
        c["aks-kueue:queues"]["clusterQueues"][0]["provisioning"] = {
            "class": "check-capacity.autoscaling.x-k8s.io"}
    assert [f.severity.value for f in found(tas(capacity), TOPOLOGY_NEEDS_NODES)] == ["error"]


def test_the_host_fixture_gives_the_node_and_the_need():
    [finding] = found(fixture("podset-exceeds-host.yaml"), PODSET_EXCEEDS_HOST)
    assert finding.numbers["needs"]["cpu"] == Amount(9, "cores") and finding.numbers["needs"]["pods"] == Amount(3, "count")
    assert finding.numbers["node"]["cpu"]["cpu"] == Amount(7.82, "cores")


def _provisioned(c, pod_sets):
    c["aks-kueue:queues"]["clusterQueues"][0]["provisioning"] = {
        "class": "best-effort-atomic-scale-up.autoscaling.x-k8s.io"}
    c["aks-kueue:expectedWorkloads"][0]["podSets"] = pod_sets


def _pod_set(name, count, cpu, request):
    return {"name": name, "count": count, "requests": {"cpu": cpu, "memory": "4Gi"}, "topologyRequest": request}


def test_a_pod_set_group_shares_one_node():
    group = {"required": "kubernetes.io/hostname", "podSetGroupName": "g"}
    too_big = tas(lambda c: _provisioned(c, [_pod_set("leader", 1, "3", group), _pod_set("workers", 2, "3", group)]))
    [finding] = found(too_big, PODSET_EXCEEDS_HOST)
    assert "pod set group g must run on one node" in finding.message
    assert finding.numbers["needs"]["cpu"] == Amount(9, "cores")
    fits = tas(lambda c: _provisioned(c, [_pod_set("leader", 1, "1", group), _pod_set("workers", 2, "3", group)]))
    assert found(fits, PODSET_EXCEEDS_HOST) == []


def test_each_slice_at_the_host_level_must_fit_one_node():
    def sliced(size):
        return {"required": "topology.kubernetes.io/zone", "podSetSliceRequiredTopology": "kubernetes.io/hostname",
                "podSetSliceSize": size}
    [finding] = found(tas(lambda c: _provisioned(c, [_pod_set("workers", 3, "3", sliced(3))])), PODSET_EXCEEDS_HOST)
    assert "each slice of 3 pods of podset workers" in finding.message
    assert found(tas(lambda c: _provisioned(c, [_pod_set("workers", 4, "3", sliced(2))])), PODSET_EXCEEDS_HOST) == []


def test_a_level_the_topology_lacks_is_refused_by_kueue():
    def zone_only(c):
        c["aks-kueue:queues"]["topologies"][0]["fromAks"] = ["zone"]
        _provisioned(c, [_pod_set("workers", 2, "3", {"required": "kubernetes.io/hostname"})])
    [finding] = found(tas(zone_only), TOPOLOGY_REQUEST_MISMATCH)
    assert 'Flavor "cpu" does not contain the requested level' in finding.message
    assert found(tas(zone_only), PODSET_EXCEEDS_HOST) == []


def test_an_explicit_request_on_a_flavor_without_topology_is_refused():
    def plain(c):
        c["aks-kueue:queues"]["resourceFlavors"][0].pop("spec")
        _provisioned(c, [_pod_set("workers", 2, "3", {"unconstrained": True})])
    [finding] = found(tas(plain), TOPOLOGY_REQUEST_MISMATCH)
    assert 'Flavor "cpu" does not support TopologyAwareScheduling' in finding.message


def test_tas_is_implied_in_a_tas_only_cluster_queue():
    """topology-needs-nodes.ok.yaml's workload asks for no topology, and its ClusterQueue has only TAS flavors."""
    config = fixture("topology-needs-nodes.ok.yaml")
    assert "topologyRequest" not in config["aks-kueue:expectedWorkloads"][0]["podSets"][0]
    assert found(config, TOPOLOGY_REQUEST_MISMATCH) == [] and found(config, TOPOLOGY_NEEDS_NODES) == []
