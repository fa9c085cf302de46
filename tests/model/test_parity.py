"""One model, two readers: what the program builds from settings is what the pack reads back from
the resources the program registers, and the judge says the same of both.

For every stack, every feasibility fixture, the contract example and generated stacks, with the
outputs of a first real preview (everything the cloud computes unknown) and without.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from aks_kueue.judge import judge
from aks_kueue.model.from_resources import from_resources
from aks_kueue.preview.pack import policy_view
from tests.conftest import SHARED, model_of, needs_shared, refusals, run_config, stack_doc

FIXTURES = Path(__file__).parents[1] / "fixtures" / "feasibility"


def configs() -> list:
    named = [pytest.param(stack_doc(s), s, id=s) for s in ("dev", "prod")]
    named += [pytest.param(yaml.safe_load(p.read_text())["config"], "test", id=p.stem)
              for p in sorted(FIXTURES.glob("*.yaml"))]
    example = SHARED / "contract" / "Pulumi.example.yaml"
    named.append(pytest.param(yaml.safe_load(example.read_text())["config"] if example.exists() else None,
                              "example", id="example", marks=needs_shared()))
    return named


def assert_parity(config: dict, stack: str, unknown_outputs: bool) -> None:
    from_settings = model_of(config, stack)
    run = run_config(config, stack, unknown_outputs=unknown_outputs)
    reading = from_resources(policy_view(run))
    assert reading.model == from_settings
    assert judge(reading.model).findings == judge(from_settings).findings
    # Every finding the pack reports can be pinned to a resource of the run.
    urns = {r.urn for r in run.registrations}
    for finding in judge(reading.model).findings:
        if finding.object in reading.urns:
            assert reading.urns[finding.object] in urns


@pytest.mark.parametrize("unknown_outputs", [False, True], ids=["known", "unknown-outputs"])
@pytest.mark.parametrize("config,stack", configs())
def test_the_program_and_the_pack_read_one_model(config, stack, unknown_outputs):
    assert_parity(config, stack, unknown_outputs)


# ---- generated stacks ------------------------------------------------------------------------

CPU_SIZES = ["Standard_D4s_v5", "Standard_D8s_v5", "Standard_D16s_v5", "Standard_E8s_v5"]
GPU_SIZES = ["Standard_NC8as_T4_v3", "Standard_NC24ads_A100_v4", "Standard_NC40ads_H100_v5"]
QUANTITIES = {"cpu": ["1", "4", "16", "64", "500m"], "memory": ["4Gi", "64Gi", "256Gi"], "nvidia.com/gpu": ["0", "1", "2", "8"]}


@st.composite
def stacks(draw):
    config = yaml.safe_load(yaml.safe_dump(stack_doc(draw(st.sampled_from(["dev", "prod"])))))
    config["aks-kueue:environment"] = draw(st.sampled_from(["production", "development"]))
    pools = []
    for i in range(draw(st.integers(1, 4))):
        gpu = draw(st.booleans())
        pool = {"name": f"p{i}", "vmSize": draw(st.sampled_from(GPU_SIZES if gpu else CPU_SIZES)),
                "minCount": 0, "maxCount": draw(st.integers(0, 6))}
        if draw(st.booleans()):
            pool["maxPods"] = draw(st.sampled_from([30, 110, 250]))
        if gpu and draw(st.booleans()):
            pool["taints"] = ["sku=gpu:NoSchedule"]
        if draw(st.booleans()):
            pool["spot"] = True
        if draw(st.booleans()):
            pool["labels"] = {"team": draw(st.sampled_from(["a", "b"]))}
        if gpu and draw(st.booleans()):
            pool["gpuDriver"] = draw(st.sampled_from(["Install", "None"]))
        if gpu and draw(st.booleans()):
            pool["gpuDevicePlugin"] = "external"
        if draw(st.booleans()):  # what the pool is created with, written instead of the baseline's default
            pool.update(draw(st.sampled_from([{"osDiskType": "Managed"}, {"encryptionAtHost": False},
                                              {"osDiskSizeGb": 64}, {"osSku": "AzureLinux"}])))
        pools.append(pool)
    config["aks-kueue:nodePools"] = pools
    security = config["aks-kueue:cluster"]["security"]
    security.update(draw(st.fixed_dictionaries({}, optional={
        "azurePolicy": st.booleans(), "imageCleaner": st.fixed_dictionaries({}, optional={
            "enabled": st.booleans(), "intervalHours": st.integers(24, 2160)}),
        "defender": st.just({"enabled": False}),
        "keyVaultSecretsProvider": st.fixed_dictionaries({}, optional={
            "enabled": st.booleans(), "rotationPollInterval": st.sampled_from(["2m", "1h"])})})))
    flavors = [{"name": f"f{i}", "nodePool": p["name"]} for i, p in enumerate(pools)]
    if draw(st.booleans()):  # a flavor selecting by VM size, landing on every pool of that size
        flavors.append({"name": "bysize", "spec": {"nodeLabels": {
            "node.kubernetes.io/instance-type": draw(st.sampled_from(CPU_SIZES + GPU_SIZES))}}})
    queues = []
    for q in range(draw(st.integers(1, 3))):
        chosen = draw(st.lists(st.sampled_from([f["name"] for f in flavors]), min_size=1, max_size=3, unique=True))
        spec = {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
            "flavors": [{"name": name, "resources": [{"name": r, "nominalQuota": draw(st.sampled_from(QUANTITIES[r]))}
                                                     for r in ("cpu", "memory", "nvidia.com/gpu")]}
                        for name in chosen]}]}
        if draw(st.booleans()):
            spec["cohortName"] = "shared"
        queues.append({"name": f"cq{q}", "spec": spec})
    config["aks-kueue:queues"] = {
        "resourceFlavors": flavors, "clusterQueues": queues,
        "localQueues": [{"name": "default", "namespace": f"team{q}", "spec": {"clusterQueue": f"cq{q}"}}
                        for q in range(len(queues))]}
    config["aks-kueue:expectedWorkloads"] = [
        {"name": f"w{w}", "queue": f"team{draw(st.integers(0, len(queues) - 1))}/default", "podSets": [{
            "name": "main", "count": draw(st.integers(1, 8)),
            "requests": {r: draw(st.sampled_from(QUANTITIES[r])) for r in ("cpu", "memory", "nvidia.com/gpu")},
            "tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}]}
        for w in range(draw(st.integers(0, 3)))]
    if config["aks-kueue:kueue"]["install"] == "helm" and draw(st.booleans()):
        config["aks-kueue:kueue"]["integrations"] = ["batch/job"]
    return config


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(config=stacks(), unknown_outputs=st.booleans())
def test_generated_stacks_read_one_model(config, unknown_outputs):
    assume(not refusals(config))  # the program refuses it whole, so nothing is registered to read back
    assert_parity(config, "generated", unknown_outputs)
