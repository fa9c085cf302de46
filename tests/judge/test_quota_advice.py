"""The quota a pool's vCPUs are judged against (issue 32): a regular GPU pool its VM family's, a
spot pool (GPU or not) the region's one Spot vCPU quota, through the judge's check-in-azure rule
on both readers of the model."""

from __future__ import annotations

from aks_kueue.judge import judge
from aks_kueue.judge.stack import CHECK_IN_AZURE
from tests.conftest import edited, model_of


def _pools(**spot):
    def edit(config):
        for pool in config["aks-kueue:nodePools"]:
            if pool["name"] in spot:
                pool["spot"] = spot[pool["name"]]
    return edit


def quota_advice(config) -> dict[str, str]:
    return {f.key: f.message for f in judge(model_of(config)).findings
            if f.kind == CHECK_IN_AZURE and "quota" in f.message}


def test_a_regular_gpu_pool_is_judged_against_its_family():
    advice = quota_advice(edited("dev", _pools()))
    assert list(advice) == ["aks-kueue:nodePools[1]"]
    assert "Standard_NC8as_T4_v3 at 2 nodes needs 16 vCPUs of its VM family's quota in" in advice[
        "aks-kueue:nodePools[1]"]


def test_spot_pools_are_judged_against_the_spot_quota_and_the_advice_names_it():
    advice = quota_advice(edited("dev", _pools(cpu=True, t4=True)))
    assert list(advice) == ["aks-kueue:nodePools[0]", "aks-kueue:nodePools[1]"]
    t4 = advice["aks-kueue:nodePools[1]"]
    assert "is a spot pool: it needs 16 vCPUs of the region's Spot vCPU quota" in t4
    assert "(the stack's 2 spot pools together: 40 vCPUs)" in t4
    assert "Total Regional Spot vCPUs" in t4 and "VM family's quota in" not in t4
