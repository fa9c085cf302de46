"""The `fleet` outputs both ways, and one model of a fleet member whichever reader built it."""

from __future__ import annotations

import json

import pytest

from aks_kueue.judge import judge
from aks_kueue.model import carrier
from aks_kueue.model.fleet import FLEET_OUTPUT
from aks_kueue.model.fleet_outputs import StackOutputs, mirrored_objects, normalise, worker_model
from aks_kueue.model.props import UnreadableValue
from aks_kueue.model.from_resources import from_resources
from aks_kueue.preview.pack import policy_view
from tests.fleet_stacks import (MANAGER, SWEDEN, WEST, WORKERS, manager_model, manager_outputs, model, qualified, run,
                                service_account_kubeconfig, worker_outputs, worker_stack_outputs)


def engine_numbers(value):
    """What a StackReference hands back: every number a float (protobuf Struct)."""
    return json.loads(json.dumps(value), parse_int=float)


def test_a_worker_model_read_back_from_its_output_is_the_worker():
    worker = model(WEST, others={MANAGER: StackOutputs({FLEET_OUTPUT: manager_outputs()})})
    read = worker_model(normalise(engine_numbers(worker_outputs(WEST))), qualified(WEST))
    assert [p.name for p in read.pools] == [p.name for p in worker.pools]
    for theirs, ours in zip(read.pools, worker.pools):
        assert (theirs.vm_size, theirs.max_count, theirs.max_pods, theirs.taints, theirs.labels, theirs.daemonsets) == (
            ours.vm_size, ours.max_count, ours.max_pods, ours.taints, ours.labels, ours.daemonsets)
        assert theirs.key == f"{qualified(WEST)}: {ours.key}"
    assert [o.manifest for o in read.objects] == [o.manifest for o in worker.objects]
    assert read.namespaces == worker.namespaces and read.installs[0].frameworks == worker.installs[0].frameworks
    assert read.cluster.region == "westus3" and read.cluster.security.authorized_ip_ranges == ("52.160.10.0/24",)


@pytest.mark.parametrize("broken", [{}, {"schema": 1, "role": "manager"}, {"schema": 1, "role": "worker"},
                                    {"schema": 2, "role": "worker", "cluster": {}}])
def test_an_output_of_another_shape_is_unreadable_not_a_crash(broken):
    with pytest.raises(UnreadableValue, match="cannot be read"):
        worker_model(broken, qualified(WEST))
    with pytest.raises(UnreadableValue, match="cannot be read"):
        mirrored_objects(broken, qualified(MANAGER))


def test_mirrored_objects_keep_the_manager_key():
    items = mirrored_objects(manager_outputs(), qualified(MANAGER))
    assert [(o.kind, o.label) for o in items][:2] == [("LocalQueue", "LocalQueue team-a/default"),
                                                     ("LocalQueue", "LocalQueue team-b/default")]
    assert items[0].key == f"aks-kueue:fleet.manager ({qualified(MANAGER)}: aks-kueue:queues.localQueues[0])"


def assert_one_model(stack, others):
    # The offline run names its own stack with the placeholder organization.
    from_settings = model(stack, others=others, own=f"organization/aks-kueue/{stack}")
    reading = from_resources(policy_view(run(stack, others=others)))
    assert reading.model.fleet == from_settings.fleet
    assert reading.model == from_settings
    assert judge(reading.model).findings == judge(from_settings).findings


def test_the_manager_and_the_pack_read_one_model():
    workers = {WEST: worker_stack_outputs(WEST, kubeconfig=service_account_kubeconfig()),
               SWEDEN: worker_stack_outputs(SWEDEN)}
    assert_one_model(MANAGER, workers)


def test_a_worker_and_the_pack_read_one_model():
    assert_one_model(WEST, {MANAGER: StackOutputs({FLEET_OUTPUT: manager_outputs()})})


def test_an_unreadable_fleet_entry_of_the_model_configmap_is_reported():
    resources = policy_view(run(MANAGER))
    (configmap,) = [r for r in resources if r.resource_type == "kubernetes:core/v1:ConfigMap"
                    and r.props["metadata"]["name"] == carrier.CARRIER_NAME]
    fleet = json.loads(configmap.props["data"][carrier.FLEET_KEY])
    del fleet["workers"][0]["name"]
    configmap.props["data"][carrier.FLEET_KEY] = json.dumps(fleet)
    model = from_resources(resources).model
    assert model.fleet is None
    (unreadable,) = model.unreadable
    assert unreadable.subject == f"ConfigMap {carrier.CARRIER_NAME}" and "data.fleet.json: " in unreadable.message


def test_the_pack_reads_the_kubeconfig_from_the_manager_secret():
    workers = {w: worker_stack_outputs(w, kubeconfig=service_account_kubeconfig()) for w in WORKERS}
    fleet = from_resources(policy_view(run(MANAGER, others=workers))).model.fleet
    assert [(w.name, w.kubeconfig.known, w.kubeconfig.problems) for w in fleet.workers] == [
        ("westus3-a100", True, ()), ("swedencentral-h100", True, ())]
    assert fleet.crds == ("jobset.x-k8s.io/jobset",)
    assert manager_model().fleet.crds == fleet.crds
