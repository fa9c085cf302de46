"""`clusterQueues[].provisioning`, `topologies[].fromAks` and `podSets[].topologyRequest`: what is
accepted, and every refusal names its key and says what would be right."""

from __future__ import annotations

import pytest

from aks_kueue.aks.autoscaler import ATOMIC_SCALE_UP, CHECK_CAPACITY
from aks_kueue.kueue import catalog
from aks_kueue.settings import SettingsError, parse_settings
from tests.conftest import edited, flat, model_of

QUEUE = "aks-kueue:queues.clusterQueues[0]"


def problems(config: dict) -> list[str]:
    try:
        parse_settings(flat(config))
    except SettingsError as error:
        return [str(p) for p in error.problems]
    try:
        model_of(config)
    except SettingsError as error:
        return [str(p) for p in error.problems]
    return []


def with_provisioning(provisioning, stack: str = "dev") -> dict:
    return edited(stack, lambda c: c["aks-kueue:queues"]["clusterQueues"][0].update(provisioning=provisioning))


@pytest.mark.parametrize("value", [{"class": ATOMIC_SCALE_UP}, {"class": CHECK_CAPACITY, "onFlavors": ["t4"]},
                                   {"class": ATOMIC_SCALE_UP, "parameters": {"ValidUntilSeconds": "600"}}])
def test_the_classes_aks_answers_are_accepted(value):
    assert problems(with_provisioning(value)) == []


@pytest.mark.parametrize("value, expected", [
    ({"class": "queued-provisioning.gke.io"}, f"{QUEUE}.provisioning.class: 'queued-provisioning.gke.io' is not a "
                                              "class AKS's cluster autoscaler provides"),
    ({"onFlavors": ["t4"]}, f"{QUEUE}.provisioning.class: is required but missing"),
    ({"class": ATOMIC_SCALE_UP, "onFlavors": ["h100"]},
     f"{QUEUE}.provisioning.onFlavors[0]: flavor 'h100' is not one of this ClusterQueue's flavors (cpu, t4)"),
    ({"class": ATOMIC_SCALE_UP, "onFlavors": []}, f"{QUEUE}.provisioning.onFlavors: an empty list"),
    ({"class": ATOMIC_SCALE_UP, "parameters": {"x": "y" * 256}}, f"{QUEUE}.provisioning.parameters: x: 256 "
                                                                   "characters"),
    ({"class": ATOMIC_SCALE_UP, "managedResources": ["nvidia.com/gpu"]},
     f"{QUEUE}.provisioning.managedResources: unknown key"),
])
def test_bad_provisioning_names_its_key(value, expected):
    [found] = problems(with_provisioning(value))
    assert found.startswith(expected), found


def test_a_cluster_queue_name_too_long_for_the_config_name_is_refused():
    def edit(c):
        name = "q" * 60
        c["aks-kueue:queues"]["clusterQueues"][0].update(name=name, provisioning={"class": ATOMIC_SCALE_UP})
        c["aks-kueue:queues"]["localQueues"][0]["spec"]["clusterQueue"] = name
    [found] = problems(edited("dev", edit))
    assert found.startswith(f"{QUEUE}.provisioning: the generated ProvisioningRequestConfig 'qqq")
    assert "at most 50 characters" in found


def test_provisioning_is_refused_with_node_auto_provisioning():
    def edit(c):
        c["aks-kueue:cluster"]["nodeProvisioning"] = "Auto"
        c["aks-kueue:nodePools"] = []
        for flavor in c["aks-kueue:queues"]["resourceFlavors"]:
            flavor.pop("nodePool")
        c["aks-kueue:queues"]["clusterQueues"][0]["provisioning"] = {"class": ATOMIC_SCALE_UP}
        c.pop("aks-kueue:expectedWorkloads")
    [found] = problems(edited("dev", edit))
    assert found.startswith(f"{QUEUE}.provisioning: ProvisioningRequests are answered by the cluster autoscaler")
    assert "node auto-provisioning" in found and "nodeProvisioning: Manual" in found


@pytest.mark.parametrize("levels, expected", [
    (["hostname", "zone"], "levels go from the broadest to the node: write ['zone', 'hostname']"),
    (["zone", "rack"], "'rack' is not a level AKS labels nodes with; use zone and hostname"),
    (["zone", "zone"], "each level may appear once"),
    ([], "give at least one level: zone, hostname"),
])
def test_bad_from_aks_levels(levels, expected):
    config = edited("dev", lambda c: c["aks-kueue:queues"].update(topologies=[{"name": "t", "fromAks": levels}]))
    assert problems(config) == [f"aks-kueue:queues.topologies[0].fromAks: {expected}" + (
        "" if "AKS labels" not in expected else
        " (zone: topology.kubernetes.io/zone, hostname: kubernetes.io/hostname), or give spec.levels with your own "
        "node labels")]


def test_from_aks_and_spec_levels_together_are_refused():
    config = edited("dev", lambda c: c["aks-kueue:queues"].update(topologies=[
        {"name": "t", "fromAks": ["zone"], "spec": {"levels": [{"nodeLabel": "topology.kubernetes.io/zone"}]}}]))
    assert problems(config) == ["aks-kueue:queues.topologies[0].fromAks: give either fromAks or spec.levels, not "
                                "both; fromAks expands to spec.levels"]


def _with_request(request) -> dict:
    return edited("dev", lambda c: c["aks-kueue:expectedWorkloads"][0]["podSets"][0].update(topologyRequest=request))


@pytest.mark.parametrize("request_, key, fragment", [
    ({"required": "hostname"}, "required", "'hostname' is a fromAks name; Kueue's field takes the level's node label: "
                                           "kubernetes.io/hostname"),
    ({"required": "kubernetes.io/hostname", "preferred": "topology.kubernetes.io/zone"}, "preferred",
     "give one of required, preferred or unconstrained, not required and preferred"),
    ({"podSetGroupName": "g"}, "podSetGroupName", "needs required or preferred"),
    ({"required": "kubernetes.io/hostname", "podSetGroupName": "g", "podSetSliceRequiredTopology":
      "kubernetes.io/hostname", "podSetSliceSize": 1}, "podSetGroupName", "may not be set with slices"),
    ({"unconstrained": True, "levels": "x"}, "levels", "unknown key"),
])
def test_bad_topology_requests_name_their_key(request_, key, fragment):
    found = problems(_with_request(request_))
    assert len(found) == 1 and found[0].startswith("aks-kueue:expectedWorkloads[0]"), found
    assert f"podSets[0].topologyRequest.{key}: " in found[0] and fragment in found[0], found


def test_a_slice_larger_than_the_pod_set_is_refused():
    found = problems(_with_request({"podSetSliceRequiredTopology": "kubernetes.io/hostname", "podSetSliceSize": 2}))
    assert len(found) == 1 and "podSets[0].topologyRequest.podSetSliceSize: 2 is above the pod set's count 1" in found[0]


def _tas_off(c):
    gates = {"TopologyAwareScheduling": False}
    gates.update({g: False for g, needs in catalog.GATE_REQUIREMENTS.items()
                  if "TopologyAwareScheduling" in needs and catalog.FEATURE_GATES[g].default})
    c["aks-kueue:kueue"]["featureGates"] = gates


def test_tas_off_is_accepted_without_topologies_and_refused_with_them():
    assert problems(edited("dev", _tas_off)) == []

    def with_topology(c):
        _tas_off(c)
        c["aks-kueue:queues"]["topologies"] = [{"name": "zone-host", "fromAks": ["zone", "hostname"]}]
    [found] = problems(edited("dev", with_topology))
    assert found.startswith("aks-kueue:kueue.featureGates.TopologyAwareScheduling: TopologyAwareScheduling is off, "
                            "and Topology zone-host use(s) Topology Aware Scheduling")

    def with_request(c):
        _tas_off(c)
        c["aks-kueue:expectedWorkloads"][0]["podSets"][0]["topologyRequest"] = {"unconstrained": True}
    [found] = problems(edited("dev", with_request))
    assert "workload ml/notebook-finetune use(s) Topology Aware Scheduling" in found
