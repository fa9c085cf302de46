"""The pack judges quotas in the units Kueue charges: a stack's Kueue Configuration (Helm) with
`resources.transformations` changes what an expected workload asks of its ClusterQueue, and
what the capacity model compares with the nodes.

Each case runs the judge on the model of the settings and the real policies on the program's
recorded preview, so the program and the pack agree.
"""

from __future__ import annotations

import copy

import yaml

from aks_kueue.judge import judge
from aks_kueue.model.from_resources import from_resources
from aks_kueue.preview.pack import evaluate, policy_view
from tests.conftest import model_of, run_config

CPU_CREDITS_RETAIN = {"resources": {"transformations": [
    {"input": "cpu", "strategy": "Retain", "outputs": {"cpu_credits": "1"}}]}}
CPU_CREDITS_REPLACE = {"resources": {"transformations": [
    {"input": "cpu", "strategy": "Replace", "outputs": {"cpu_credits": "1"}}]}}


def stack(configuration: dict, resources: list[dict], covered: list[str]) -> dict:
    """A development stack: one 3-node D8s_v5 pool, one ClusterQueue, one expected workload of
    3 pods x 2 cpu x 4Gi; the Kueue Configuration given as the chart's managerConfig."""
    manager = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", **configuration}
    return {
        "azure-native:location": "eastus",
        "aks-kueue:resourceGroupName": "rg-transform",
        "aks-kueue:environment": "development",
        "aks-kueue:cluster": {"name": "aks-transform", "kubernetesVersion": "1.34",
                              "systemPool": {"vmSize": "Standard_D4s_v5", "count": 1}},
        "aks-kueue:nodePools": [{"name": "cpu", "vmSize": "Standard_D8s_v5", "minCount": 0, "maxCount": 3,
                                 "maxPods": 110}],
        "aks-kueue:kueue": {"install": "helm", "values": {"managerConfig": {
            "controllerManagerConfigYaml": yaml.safe_dump(manager)}}},
        "aks-kueue:queues": {
            "resourceFlavors": [{"name": "cpu", "nodePool": "cpu"}],
            "clusterQueues": [{"name": "ml", "spec": {"namespaceSelector": {}, "resourceGroups": [
                {"coveredResources": covered, "flavors": [{"name": "cpu", "resources": resources}]}]}}],
            "localQueues": [{"name": "default", "namespace": "ml", "spec": {"clusterQueue": "ml"}}]},
        "aks-kueue:expectedWorkloads": [{"name": "train", "queue": "ml/default", "podSets": [
            {"name": "main", "count": 3, "requests": {"cpu": "2", "memory": "4Gi"}}]}],
    }


def verdicts(config: dict) -> tuple[list, list]:
    """(the judge's errors on the settings' model, the pack's mandatory violations)."""
    found = [(f.kind, f.message) for f in judge(model_of(config)).errors]
    run = run_config(config)
    assert from_resources(policy_view(run)).model == model_of(config)
    violations = [v for v in evaluate(run) if v.enforcement_level == "mandatory"]
    return found, violations


def test_a_quota_that_fits_only_before_the_transformation_is_rejected():
    # 6 cpu asked: cpu 20 holds it, but Kueue also charges 6 cpu_credits against 4.
    resources = [{"name": "cpu", "nominalQuota": "20"}, {"name": "memory", "nominalQuota": "72Gi"},
                 {"name": "cpu_credits", "nominalQuota": "4"}]
    config = stack(CPU_CREDITS_RETAIN, resources, ["cpu", "memory", "cpu_credits"])
    found, violations = verdicts(config)
    assert [kind for kind, _ in found] == ["workload-not-admitted"]
    assert "insufficient quota for cpu_credits in flavor cpu" in found[0][1]
    assert [v.policy for v in violations] == ["kueue-expected-workloads-fit"]
    # Without the Configuration's transformation the same stack is accepted: it is what rejects it.
    untransformed = copy.deepcopy(config)
    untransformed["aks-kueue:kueue"] = {"install": "helm"}
    assert verdicts(untransformed) == ([], [])


def test_a_quota_that_fits_only_after_the_transformation_is_accepted():
    # Replace: the pods' cpu is charged as cpu_credits alone, so a queue without cpu quota admits them.
    resources = [{"name": "memory", "nominalQuota": "72Gi"}, {"name": "cpu_credits", "nominalQuota": "20"}]
    config = stack(CPU_CREDITS_REPLACE, resources, ["memory", "cpu_credits"])
    assert verdicts(config) == ([], [])
    untransformed = copy.deepcopy(config)
    untransformed["aks-kueue:kueue"] = {"install": "helm"}
    found, violations = verdicts(untransformed)
    assert [kind for kind, _ in found] == ["workload-not-admitted"]
    assert "resource cpu unavailable in ClusterQueue" in found[0][1] and violations


def test_capacity_is_compared_in_transformed_units_where_nodes_have_the_input():
    # cpu_credits x1 of cpu: the pools hold what their nodes allocate of cpu, in credits.
    resources = [{"name": "memory", "nominalQuota": "72Gi"}, {"name": "cpu_credits", "nominalQuota": "40"}]
    judgement = judge(model_of(stack(CPU_CREDITS_REPLACE, resources, ["memory", "cpu_credits"])))
    [row] = [r for r in judgement.capacity if r.resource == "cpu_credits"]
    cpu = next(p for p in judgement.pools if p.name == "cpu").node.amounts["cpu"]
    assert row.capacity == 3 * cpu // 1000 == 23 and row.verdict == "over"  # 3 x 7.82 cores, whole credits
    assert "capacity is what the pools hold of the inputs, times the factors" in row.transformation
    assert row.to_json()["transformation"] == row.transformation
    [over] = [f for f in judgement.errors if f.kind == "quota-above-capacity"]
    assert "cpu_credits" in over.message and "transformations" in over.message


def test_a_transformed_resource_without_a_node_side_counterpart_says_so():
    hami = {"resources": {"transformations": [{"input": "nvidia.com/gpucores", "strategy": "Replace",
                                               "multiplyBy": "nvidia.com/gpu",
                                               "outputs": {"nvidia.com/total-gpucores": "1"}}]}}
    resources = [{"name": "cpu", "nominalQuota": "20"}, {"name": "memory", "nominalQuota": "72Gi"},
                 {"name": "nvidia.com/total-gpucores", "nominalQuota": "600"}]
    judgement = judge(model_of(stack(hami, resources, ["cpu", "memory", "nvidia.com/total-gpucores"])))
    [row] = [r for r in judgement.capacity if r.resource == "nvidia.com/total-gpucores"]
    assert row.capacity is None and row.verdict == "not modelled"
    assert "has no node-side counterpart (multiplyBy scales per-device amounts" in row.transformation
    assert not [f for f in judgement.errors if f.kind == "quota-above-capacity"]


def test_the_managed_extension_carries_no_transformations():
    from aks_kueue.settings import parse_settings
    from tests.conftest import flat

    managed = stack(CPU_CREDITS_RETAIN, [{"name": "cpu", "nominalQuota": "20"}], ["cpu"])
    managed["aks-kueue:kueue"] = {"install": "managed"}
    assert not parse_settings(flat(managed)).kueue.resource_rules
    assert not model_of(managed).resource_rules
