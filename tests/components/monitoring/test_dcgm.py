"""The DCGM exporter: NVIDIA's pinned chart, on the GPU pools only, tolerating their taints, scraped by a PodMonitor."""

from __future__ import annotations

import pytest

from aks_kueue.aks import dcgm_exporter
from aks_kueue.k8s.scheduling import requirement_matches, untolerated_taint
from aks_kueue.model.from_settings import from_settings
from aks_kueue.settings import parse_settings
from aks_kueue.versions import DCGM_EXPORTER_CHART_REPOSITORY, DCGM_EXPORTER_CHART_VERSION
from tests.components.monitoring.conftest import POD_MONITOR, RELEASE, one
from tests.conftest import ROOT, edited, flat, run_config, stack_doc

# Top-level keys of the chart's values.yaml at tag 4.5.3-4.8.2 (NVIDIA/dcgm-exporter deployment/values.yaml);
# Helm ignores unknown keys silently, so a misspelt one would do nothing.
CHART_VALUES = {
    "image", "arguments", "imagePullSecrets", "nameOverride", "fullnameOverride", "namespaceOverride", "hostPID",
    "runtimeClassName", "priorityClassName", "hostNetwork", "serviceAccount", "rollingUpdate", "podLabels",
    "podAnnotations", "podSecurityContext", "securityContext", "service", "resources", "serviceMonitor",
    "nodeSelector", "tolerations", "affinity", "extraHostVolumes", "extraConfigMapVolumes", "extraVolumeMounts",
    "extraEnv", "kubeletPath", "tlsServerConfig", "basicAuth", "kubernetes", "debugDump", "kubernetesDRA",
    "customMetrics", "livenessProbe", "readinessProbe",
}


def model_pools(stack_config: dict):
    """The user pools as the program sees them (`aks_kueue.model`), AKS's node taints included."""
    return from_settings(parse_settings(flat(stack_config)), ROOT, "test").pools


def gpu_pools(stack_config: dict):
    return [p for p in model_pools(stack_config) if p.needs_device_plugin]


def _node_matches(values: dict, labels: dict) -> bool:
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return any(all(requirement_matches(r, labels) for r in term["matchExpressions"]) for term in terms)


def test_values_place_the_exporter_on_gpu_pools_only_and_tolerate_them():
    every = model_pools(stack_doc("prod"))
    pools = [p for p in every if p.needs_device_plugin]
    assert [p.name for p in pools] == ["a100", "h100"]
    values = dcgm_exporter.helm_values(pools)
    assert set(values) <= CHART_VALUES
    assert values["serviceMonitor"] == {"enabled": False}
    for pool in every:
        labels = {dcgm_exporter.AGENTPOOL_LABEL: pool.name}
        assert _node_matches(values, labels) is (pool in pools), pool.name
        if pool in pools:
            assert pool.taints and untolerated_taint(list(pool.taints), values["tolerations"]) is None, pool.name
    assert values["resources"]["requests"] == dcgm_exporter.REQUESTS


def test_spot_gpu_pools_are_tolerated_too():
    def edit(c):
        c["aks-kueue:nodePools"][1]["spot"] = True
        c["aks-kueue:nodePools"][1]["taints"] = ["team=ml:NoExecute"]
    pools = gpu_pools(edited("dev", edit))
    values = dcgm_exporter.helm_values(pools)
    assert len(pools[0].taints) == 2 and untolerated_taint(list(pools[0].taints), values["tolerations"]) is None
    assert {"key": "team", "operator": "Equal", "value": "ml", "effect": "NoExecute"} in values["tolerations"]
    assert untolerated_taint([{"key": "other", "value": "x", "effect": "NoSchedule"}], values["tolerations"])


def test_prod_installs_the_pinned_chart_and_scrapes_it(prod):
    release = next(r for r in prod.of_type(RELEASE) if r.inputs["chart"] == "dcgm-exporter")
    inputs = release.inputs
    assert inputs["version"] == DCGM_EXPORTER_CHART_VERSION == "4.8.2"
    assert inputs["repositoryOpts"] == {"repo": DCGM_EXPORTER_CHART_REPOSITORY}
    assert (inputs["name"], inputs["namespace"]) == (dcgm_exporter.RELEASE, "kube-system")
    assert inputs["values"] == dcgm_exporter.helm_values(gpu_pools(stack_doc("prod")))
    gpu_agent_pools = {r.urn for r in prod.of_type("azure-native:containerservice:AgentPool")
                       if r.inputs["agentPoolName"] in ("a100", "h100")}
    assert gpu_agent_pools <= set(release.depends_on)
    assert release.provider == one(prod, "pulumi:providers:kubernetes").urn
    assert release.urn in one(prod, POD_MONITOR).depends_on
    assert prod.outputs["monitoring"]["gpuMetrics"]["pools"] == ["a100", "h100"]


@pytest.mark.parametrize("gpu_metrics", [True, False])
def test_no_exporter_without_gpu_pools_or_when_off(gpu_metrics):
    def edit(c):
        c["aks-kueue:monitoring"] = {"gpuMetrics": gpu_metrics}
        if gpu_metrics:
            c["aks-kueue:nodePools"] = c["aks-kueue:nodePools"][:1]
            c["aks-kueue:queues"]["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"] = \
                c["aks-kueue:queues"]["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"][:1]
            c["aks-kueue:queues"]["resourceFlavors"] = c["aks-kueue:queues"]["resourceFlavors"][:1]
            c["aks-kueue:expectedWorkloads"] = c["aks-kueue:expectedWorkloads"][1:]
    run = run_config(edited("dev", edit), stack="dev")
    assert [r for r in run.of_type(RELEASE) if r.inputs["chart"] == "dcgm-exporter"] == []
    assert run.of_type(POD_MONITOR) == []
    assert "gpuMetrics" not in run.outputs["monitoring"]
