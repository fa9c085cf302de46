"""What `provisioning`, `fromAks` and `topologyRequest` generate: ordinary model objects with their stack
keys, registered by the program in dependency order and read back identically by the pack."""

from __future__ import annotations

import pytest

from aks_kueue.aks.autoscaler import ATOMIC_SCALE_UP
from aks_kueue.judge import blocking_findings, judge
from aks_kueue.kueue.admission_checks import PROVISIONING_CONTROLLER
from tests.conftest import edited, filled_doc, model_of, run_stack, stack_doc
from tests.model.test_parity import assert_parity

KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"


def by_label(model) -> dict:
    return {o.label: o for o in model.objects}


def test_prod_generates_the_check_and_its_config_per_cluster_queue():
    objects = by_label(model_of(stack_doc("prod"), "prod"))
    for index, (queue, on) in enumerate([("team-a", ["a100"]), ("team-b", ["a100"]), ("training", None)]):
        key = f"aks-kueue:queues.clusterQueues[{index}].provisioning"
        config = objects[f"ProvisioningRequestConfig {queue}-provisioning"]
        check = objects[f"AdmissionCheck {queue}-provisioning"]
        assert config.key == check.key == key
        assert config.manifest["spec"] == {"provisioningClassName": ATOMIC_SCALE_UP}
        assert check.manifest["spec"] == {"controllerName": PROVISIONING_CONTROLLER, "parameters": {
            "apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": f"{queue}-provisioning"}}
        strategy = objects[f"ClusterQueue {queue}"].manifest["spec"]["admissionChecksStrategy"]
        expected = {"name": f"{queue}-provisioning", **({"onFlavors": on} if on else {})}
        assert strategy == {"admissionChecks": [expected]}


def test_prod_topology_is_expanded_to_aks_node_labels_and_bound_by_its_flavor():
    objects = by_label(model_of(stack_doc("prod"), "prod"))
    topology = objects["Topology zone-host"]
    assert topology.key == "aks-kueue:queues.topologies[0]"
    assert topology.manifest["spec"] == {"levels": [{"nodeLabel": "topology.kubernetes.io/zone"},
                                                    {"nodeLabel": "kubernetes.io/hostname"}]}
    assert objects["ResourceFlavor h100"].manifest["spec"]["topologyName"] == "zone-host"


def test_a_check_the_spec_already_lists_is_kept_and_ours_appended():
    def edit(c):
        cq = c["aks-kueue:queues"]["clusterQueues"][0]
        cq["provisioning"] = {"class": ATOMIC_SCALE_UP, "onFlavors": ["t4"], "parameters": {"ValidUntilSeconds": "600"}}
        cq["spec"]["admissionChecks"] = ["other"]  # v1beta1 spelling, converted first
    model = model_of(edited("dev", edit))
    objects = by_label(model)
    assert objects["ClusterQueue dev"].manifest["spec"]["admissionChecksStrategy"] == {"admissionChecks": [
        {"name": "other"}, {"name": "dev-provisioning", "onFlavors": ["t4"]}]}
    assert objects["ProvisioningRequestConfig dev-provisioning"].manifest["spec"]["parameters"] == {
        "ValidUntilSeconds": "600"}
    # `other` is defined nowhere: Kueue would keep the queue inactive, and the program refuses it.
    [finding] = blocking_findings(model)
    assert finding.key == ("aks-kueue:queues.clusterQueues[0].spec.admissionChecksStrategy.admissionChecks[0].name")


def test_a_topology_request_reaches_the_workload_as_kueues_field():
    request = {"required": "kubernetes.io/hostname", "podSetGroupName": "g", "podIndexLabel": "idx"}

    def edit(c):
        c["aks-kueue:expectedWorkloads"][0]["podSets"][0]["topologyRequest"] = request
    [workload] = [w for w in model_of(edited("dev", edit)).workloads if w.label.endswith("notebook-finetune")]
    assert workload.manifest["spec"]["podSets"][0]["topologyRequest"] == request


def test_prod_preview_registers_the_objects_in_dependency_order():
    run = run_stack("prod")
    by_name = {r.name: r for r in run.registrations}
    order = [r.urn for r in run.registrations]
    kinds = {r.type.rsplit(":", 1)[1] for r in run.registrations if r.type.startswith(KUEUE)}
    assert {"Topology", "AdmissionCheck", "ProvisioningRequestConfig"} <= kinds
    pairs = [("queues-topology-zone-host", "queues-resourceflavor-h100"),
             ("queues-provisioningrequestconfig-training-provisioning", "queues-admissioncheck-training-provisioning"),
             ("queues-admissioncheck-training-provisioning", "queues-clusterqueue-training"),
             ("queues-admissioncheck-team-a-provisioning", "queues-clusterqueue-team-a")]
    for first, then in pairs:
        assert by_name[first].urn in by_name[then].depends_on, (first, then)
        assert order.index(by_name[first].urn) < order.index(by_name[then].urn)


def test_prod_is_feasible_and_its_namespaces_reach_both_of_their_queues():
    model = model_of(filled_doc("prod"), "prod")
    assert [f for f in judge(model).errors] == []
    labels = {n.name: n.labels for n in model.namespaces}
    assert labels["team-a"]["kueue-team"] == "team-a" and labels["team-a"]["kueue-training"] == "true"
    assert labels["team-b"]["kueue-training"] == "true"


@pytest.mark.parametrize("unknown_outputs", [False, True])
def test_user_checks_and_requests_are_read_back_identically(unknown_outputs):
    def edit(c):
        c["aks-kueue:queues"]["clusterQueues"][0]["provisioning"] = {"class": ATOMIC_SCALE_UP,
                                                                     "parameters": {"a": "b"}}
        c["aks-kueue:queues"]["topologies"] = [{"name": "host", "fromAks": ["hostname"]}]
        c["aks-kueue:expectedWorkloads"][0]["podSets"][0]["topologyRequest"] = {"unconstrained": True}
    assert_parity(edited("dev", edit), "test", unknown_outputs)
