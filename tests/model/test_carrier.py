"""What the program registers for the policy pack: the model ConfigMap (expected workloads, stack
keys, environment), the kubeconfig kept in the provider's secret outputs, and stated node
capacity as a pool tag."""

from __future__ import annotations

import pytest
import yaml

from aks_kueue.aks.capacity_tag import CAPACITY_TAG, explicit_node
from aks_kueue.model.carrier import (CARRIER_NAME, CARRIER_NAMESPACE, ENVIRONMENT_KEY, KEYS_KEY, WORKLOADS_KEY,
                                     read_keys, read_workloads, subject_keys)
from aks_kueue.preview.pack import evaluate
from tests.conftest import edited, model_of, run_config, run_stack, stack_doc

CONFIG_MAP = "kubernetes:core/v1:ConfigMap"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_what_no_other_resource_says_travels_in_one_configmap(stack):
    run = run_stack(stack)
    carriers = run.of_type(CONFIG_MAP)
    assert len(carriers) == 1
    inputs = carriers[0].inputs
    assert inputs["metadata"]["name"] == CARRIER_NAME and inputs["metadata"]["namespace"] == CARRIER_NAMESPACE
    assert inputs["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "aks-kueue"
    model = model_of(stack_doc(stack), stack)
    assert read_workloads(inputs["data"][WORKLOADS_KEY]) == [w.manifest for w in model.workloads]
    assert read_keys(inputs["data"][KEYS_KEY]) == subject_keys(model)
    assert read_keys(inputs["data"][KEYS_KEY])["node pool cpu"] == "aks-kueue:nodePools[0]"
    assert inputs["data"][ENVIRONMENT_KEY] == model.environment == ("development" if stack == "dev" else "production")
    # It goes to the cluster through the cluster's own provider, like every Kubernetes object of the program.
    assert carriers[0].provider.endswith("pulumi:providers:kubernetes::main-k8s")


def test_no_expected_workloads_still_carries_the_keys():
    run = run_config(edited("dev", lambda c: c.pop("aks-kueue:expectedWorkloads")))
    [carrier] = run.of_type(CONFIG_MAP)
    assert WORKLOADS_KEY not in carrier.inputs["data"] and "ClusterQueue dev" in carrier.inputs["data"][KEYS_KEY]


def test_a_workload_edited_in_the_carrier_is_judged_from_the_carrier():
    """The policies read the ConfigMap, not the settings: a job shape changed there is caught."""
    run = run_stack("dev")
    carrier = run.of_type(CONFIG_MAP)[0]
    data = carrier.raw_inputs["data"]
    workloads = read_workloads(data[WORKLOADS_KEY])
    etl = next(w for w in workloads if w["metadata"]["name"] == "etl")
    etl["spec"]["podSets"][0]["count"] = 40  # 40 x 3 cores, past the queue's 20
    carrier.raw_inputs = {**carrier.raw_inputs, "data": {**data, WORKLOADS_KEY: yaml.safe_dump_all(workloads)}}
    found = [v for v in evaluate(run) if v.policy == "kueue-expected-workloads-fit"]
    assert found and all(v.enforcement_level == "mandatory" and v.urn == carrier.urn for v in found)
    assert any(v.message.startswith("aks-kueue:expectedWorkloads[1]: workload ml/etl can never be admitted")
               for v in found), found


def test_the_kubeconfig_provider_keeps_it_in_secret_outputs():
    provider = run_stack("dev").of_type("pulumi:providers:kubernetes")[0]
    assert provider.additional_secret_outputs == ["kubeconfig"]
    assert "kubeconfig" in provider.secret_paths


def test_stated_capacity_is_tagged_on_the_pool_and_read_back_alike():
    def unknown_size(config):
        config["aks-kueue:nodePools"][0].update(vmSize="Standard_Custom_X", capacity={
            "cpu": 16, "memory": "64Gi"})

    config = edited("dev", unknown_size)
    pool = next(p for p in run_config(config).of_type("azure-native:containerservice:AgentPool")
                if p.inputs["agentPoolName"] == "cpu")
    expected = model_of(config).pools[0].explicit
    assert explicit_node(pool.inputs["tags"][CAPACITY_TAG]) == expected
    assert pool.inputs["tags"]["managed-by"] == "aks-kueue"
