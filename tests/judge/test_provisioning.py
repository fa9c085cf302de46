"""ProvisioningRequest checks: when they can never pass on AKS, and when what they ask the cluster
autoscaler for can never be provisioned within the pools' maxCount."""

from __future__ import annotations

import pytest
import yaml

from aks_kueue.aks.autoscaler import ATOMIC_SCALE_UP, CHECK_CAPACITY
from aks_kueue.aks.pools import Pool
from aks_kueue.judge import judge
from aks_kueue.judge.provisioning import PODSET_UNPROVISIONABLE, PROVISIONING_UNAVAILABLE
from aks_kueue.judge.rules import RULES
from aks_kueue.model import Cluster, Install, KueueItem, Model
from tests.conftest import edited, model_of
from tests.judge.test_feasibility import fixture

V1BETA2 = "kueue.x-k8s.io/v1beta2"


def kinds(config_or_model, kind: str):
    model = config_or_model if isinstance(config_or_model, Model) else model_of(config_or_model)
    return [f for f in judge(model).findings if f.kind == kind]


def _objects(provisioning_class=ATOMIC_SCALE_UP, config: bool = True) -> list[dict]:
    objects = [
        {"apiVersion": V1BETA2, "kind": "ResourceFlavor", "metadata": {"name": "cpu"},
         "spec": {"nodeLabels": {"kubernetes.azure.com/agentpool": "cpu"}}},
        {"apiVersion": V1BETA2, "kind": "AdmissionCheck", "metadata": {"name": "prov"},
         "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request", "parameters": {
             "apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "prov-config"}}},
        {"apiVersion": V1BETA2, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": {
            "namespaceSelector": {}, "admissionChecksStrategy": {"admissionChecks": [{"name": "prov"}]},
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": "cpu", "resources": [{"name": "cpu", "nominalQuota": "8"}]}]}]}},
    ]
    if config:
        objects.append({"apiVersion": V1BETA2, "kind": "ProvisioningRequestConfig", "metadata": {"name": "prov-config"},
                        "spec": {"provisioningClassName": provisioning_class}})
    return objects


def _model(objects, **cluster) -> Model:
    """As the pack reads resources written by hand (queueManifests, or another program)."""
    base = {"name": "aks", "region": "eastus", "kubernetes_version": "1.34"}
    pool = Pool(name="cpu", vm_size="Standard_D8s_v5", max_count=3, max_pods=110)
    return Model(cluster=Cluster(**{**base, **cluster}), pools=(pool,), installs=(Install("helm", version="0.19.2"),),
                 objects=tuple(KueueItem(o, f"{o['kind']} {o['metadata']['name']}") for o in objects))


@pytest.mark.parametrize("objects, cluster, fragment", [
    (_objects(), {"node_provisioning": "Auto"}, "uses node auto-provisioning (nodeProvisioning Auto, sku Base)"),
    (_objects(), {"sku": "Automatic", "node_provisioning": "Auto"}, "sku Automatic"),
    (_objects(), {"kubernetes_version": "1.32"}, "needs Kubernetes 1.33 or later for AKS's cluster autoscaler to "
                                                 "answer its ProvisioningRequests, and the cluster runs 1.32"),
    (_objects(config=False), {}, "names ProvisioningRequestConfig prov-config, which is not defined"),
    (_objects("queued-provisioning.gke.io"), {}, "'queued-provisioning.gke.io' is not a class AKS's cluster "
                                                 "autoscaler provides"),
])
def test_a_check_that_can_never_pass_on_aks(objects, cluster, fragment):
    [finding] = kinds(_model(objects, **cluster), PROVISIONING_UNAVAILABLE)
    assert fragment in finding.message and finding.severity.value == "error"
    assert finding.numbers["admissionCheck"] == "prov"


@pytest.mark.parametrize("provisioning_class", [ATOMIC_SCALE_UP, CHECK_CAPACITY])
def test_a_check_aks_answers_passes(provisioning_class):
    assert kinds(_model(_objects(provisioning_class)), PROVISIONING_UNAVAILABLE) == []


def test_a_check_no_cluster_queue_uses_is_not_judged():
    objects = _objects("queued-provisioning.gke.io")
    objects[2]["spec"].pop("admissionChecksStrategy")
    assert kinds(_model(objects), PROVISIONING_UNAVAILABLE) == []


def test_the_unprovisionable_fixture_names_the_best_pool_and_its_numbers():
    [finding] = kinds(fixture("podset-unprovisionable.yaml"), PODSET_UNPROVISIONABLE)
    assert finding.key == "aks-kueue:expectedWorkloads[0].podSets[0]"
    assert (finding.numbers["count"], finding.numbers["fit"]) == (3, 2)
    assert "one pool grown holds at best 2" in finding.message
    assert "growing one node pool, all or nothing" in RULES[PODSET_UNPROVISIONABLE].explanation
    # The pools hold the pods together, so the capacity checks alone find nothing.
    assert [f for f in judge(model_of(fixture("podset-unprovisionable.yaml"))).errors] == [finding]


def test_a_floor_on_the_other_pool_makes_it_provisionable():
    def floor(c):
        c["aks-kueue:nodePools"][1]["minCount"] = 1  # t4b always holds one pod; t4a grows to 2
    assert kinds(edited_fixture("podset-unprovisionable.yaml", floor), PODSET_UNPROVISIONABLE) == []


def test_check_capacity_grows_nothing_and_is_not_judged_for_provisioning():
    def capacity(c):
        c["aks-kueue:queues"]["clusterQueues"][0]["provisioning"]["class"] = CHECK_CAPACITY
    assert kinds(edited_fixture("podset-unprovisionable.yaml", capacity), PODSET_UNPROVISIONABLE) == []


def edited_fixture(name: str, edit) -> dict:
    config = fixture(name)
    edit(config)
    return config


def _launcher_and_workers(c):
    """A CPU launcher and GPU workers under one check that covers both pools, each scaling from zero."""
    c["aks-kueue:queues"]["clusterQueues"][0]["provisioning"] = {"class": ATOMIC_SCALE_UP}
    c["aks-kueue:expectedWorkloads"] = [{"name": "mpi", "queue": "ml/default", "podSets": [
        {"name": "launcher", "count": 1, "requests": {"cpu": "1", "memory": "2Gi"}},
        {"name": "workers", "count": 2, "requests": {"cpu": "6", "memory": "40Gi", "nvidia.com/gpu": "1"},
         "tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}]}]


def test_a_request_that_needs_two_pools_grown_is_never_provisioned():
    [finding] = kinds(edited("dev", _launcher_and_workers), PODSET_UNPROVISIONABLE)
    assert finding.key == "aks-kueue:expectedWorkloads[0]"
    assert finding.numbers["podSets"] == {"launcher": ["cpu"], "workers": ["t4"]}
    assert "needs more than one node pool grown" in finding.message


def test_a_floor_that_holds_the_launcher_leaves_one_pool_to_grow():
    def floor(c):
        _launcher_and_workers(c)
        c["aks-kueue:nodePools"][0]["minCount"] = 1
    assert kinds(edited("dev", floor), PODSET_UNPROVISIONABLE) == []


def test_managed_resources_keep_the_launcher_out_of_the_request(tmp_path):
    """A config written in queueManifests may limit the request to GPU pod sets, as Microsoft's GPU sample does."""
    manifests = tmp_path / "provisioning.yaml"
    manifests.write_text(yaml.safe_dump_all([
        {"apiVersion": V1BETA2, "kind": "ProvisioningRequestConfig", "metadata": {"name": "gpu"},
         "spec": {"provisioningClassName": ATOMIC_SCALE_UP, "managedResources": ["nvidia.com/gpu"]}},
        {"apiVersion": V1BETA2, "kind": "AdmissionCheck", "metadata": {"name": "gpu"},
         "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request", "parameters": {
             "apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "gpu"}}}]))

    def edit(c):
        _launcher_and_workers(c)
        cq = c["aks-kueue:queues"]["clusterQueues"][0]
        cq.pop("provisioning")
        cq["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "gpu"}]}
        c["aks-kueue:queueManifests"] = [str(manifests)]
    config = edited("dev", edit)
    assert kinds(config, PODSET_UNPROVISIONABLE) == [] and kinds(config, PROVISIONING_UNAVAILABLE) == []
