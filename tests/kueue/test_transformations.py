"""`resources.excludeResourcePrefixes` and `resources.transformations`, as Kueue v0.19.2 charges them.

The upstream cases (`tests/fixtures/upstream/TestNewInfoTransformations.yaml`, from
pkg/workload/workload_test.go `TestNewInfo`) go through `workload_info`, the one place the
admission core computes what a pending Workload charges, with the rules read from a
Configuration's `resources` section as Kueue decodes it.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from aks_kueue.admission import workload_info
from aks_kueue.kueue.transformations import NO_RULES, ResourceRules, Strategy, Transformation

UPSTREAM = Path(__file__).parents[1] / "fixtures" / "upstream" / "TestNewInfoTransformations.yaml"
CASES = yaml.safe_load(UPSTREAM.read_text())["cases"]


def manifest(pod_sets: list[dict]) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": "w", "namespace": "ns"},
            "spec": {"queueName": "lq", "podSets": [
                {"name": p["name"], "count": p["count"], "template": {"spec": {"containers": [
                    {"name": "c", "resources": {"requests": p["requests"]}}]}}} for p in pod_sets]}}


@pytest.mark.parametrize("case", CASES, ids=[c["upstream"] for c in CASES])
def test_upstream_newinfo_cases(case):
    rules = ResourceRules.from_configuration({"resources": case["resources"]})
    info = workload_info(manifest(case["podSets"]), rules=rules)
    assert {ps.name: ps.total() for ps in info.podsets} == case["total"]


def test_without_rules_the_same_pods_charge_what_they_ask():
    # The rules are what changes the charge: without them, the first upstream case keeps its vpc1.
    info = workload_info(manifest(CASES[0]["podSets"]))
    assert info.podsets[0].total()["networking.example.com/vpc1"] == 1


def rules(**transformation) -> ResourceRules:
    return ResourceRules.from_configuration({"resources": {"transformations": [transformation]}})


def test_retain_keeps_the_input_and_adds_the_outputs():
    applied = rules(input="cpu", strategy="Retain", outputs={"cpu_credits": 1}).apply({"cpu": Fraction(3)})
    assert applied == {"cpu": 3, "cpu_credits": 3}


def test_the_strategy_defaults_to_retain():
    transformation = rules(input="cpu", outputs={"credits": "2"}).transformations[0]
    assert transformation.strategy is Strategy.RETAIN
    assert rules(input="cpu", outputs={"credits": "2"}).apply({"cpu": Fraction(1, 2)}) == {"cpu": Fraction(1, 2),
                                                                                          "credits": 1}


def test_replace_drops_the_input():
    applied = rules(input="nvidia.com/gpu", strategy="Replace", outputs={"gpu_credits": "100"}).apply(
        {"nvidia.com/gpu": Fraction(2), "cpu": Fraction(4)})
    assert applied == {"cpu": 4, "gpu_credits": 200}


def test_multiply_by_scales_the_outputs_only_when_the_pod_asks_for_the_multiplier():
    hami = rules(input="nvidia.com/gpucores", strategy="Replace", multiplyBy="nvidia.com/gpu",
                 outputs={"nvidia.com/total-gpucores": "1"})
    assert hami.apply({"nvidia.com/gpu": Fraction(2), "nvidia.com/gpucores": Fraction(30)}) == {
        "nvidia.com/gpu": 2, "nvidia.com/total-gpucores": 60}
    assert hami.apply({"nvidia.com/gpucores": Fraction(30)}) == {"nvidia.com/total-gpucores": 30}


def test_negative_outputs_are_allowances_floored_at_zero_apart_from_direct_requests():
    allowance = ResourceRules.from_configuration({"resources": {"transformations": [
        {"input": "memory", "strategy": "Replace", "outputs": {"overage": "1"}},
        {"input": "cpu", "strategy": "Retain", "outputs": {"overage": "-1Gi"}}]}})
    assert allowance.apply({"memory": Fraction(3 * 2**30), "cpu": Fraction(2)})["overage"] == 2**30
    assert allowance.apply({"memory": Fraction(2**29), "cpu": Fraction(1), "overage": Fraction(5)})["overage"] == 5


def test_excluded_prefixes_drop_resources_before_transformations_see_them():
    both = ResourceRules.from_configuration({"resources": {
        "excludeResourcePrefixes": ["example.com/"],
        "transformations": [{"input": "example.com/fpga", "strategy": "Replace", "outputs": {"credits": "5"}}]}})
    assert both.apply({"example.com/fpga": Fraction(1), "cpu": Fraction(1)}) == {"cpu": 1}
    assert both.excluded("example.com/fpga") and not both.excluded("cpu")


def test_reading_a_configuration():
    assert ResourceRules.from_configuration(None) is not None and not ResourceRules.from_configuration(None)
    assert not ResourceRules.from_configuration({"resources": {"quotaCheckStrategy": "BlockUndeclared"}})
    read = ResourceRules.from_configuration({"resources": {"transformations": [
        {"input": "cpu", "strategy": "Replace", "outputs": {"a": 0.5, "b": "not a quantity", "c": True}}]}})
    assert read.transformations == (Transformation("cpu", Strategy.REPLACE, (("a", Fraction(1, 2)),)),)
    assert read.generated() == {"a"}
    assert read.describe() == ["cpu -> a x0.5 (Replace)"]
    assert NO_RULES.apply({"cpu": Fraction(1)}) == {"cpu": 1}
