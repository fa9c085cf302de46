"""Spot pools (issue 32), as docs/queues.md ("Spot pools") tells them: the quota a pool's vCPUs are
judged against (a regular GPU pool its VM family's, a spot pool, GPU or not, the region's one Spot
vCPU quota), and a flavor bound to a spot pool, assigned only to what tolerates AKS's spot taint."""

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
    return {f.key: f"{f.message}; {f.fix}" for f in judge(model_of(config)).findings
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
    assert "is a spot pool that needs 16 vCPUs of the region's Spot vCPU quota" in t4
    assert "(the stack's 2 spot pools together: 40 vCPUs)" in t4
    assert "Total Regional Spot vCPUs" in t4 and "VM family's quota in" not in t4


SPOT_TOLERATION = {"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal", "value": "spot",
                   "effect": "NoSchedule"}


def _t4_spot(tolerations=None):
    """dev's t4 pool made spot, and its flavor given `tolerations` (docs/queues.md's example)."""
    def edit(config):
        config["aks-kueue:nodePools"][1]["spot"] = True
        if tolerations is not None:
            config["aks-kueue:queues"]["resourceFlavors"][1]["spec"] = {"tolerations": tolerations}
    return edit


def test_a_flavor_bound_to_a_spot_pool_carries_the_spot_taint_and_is_assigned_only_when_tolerated():
    """Without a toleration the GPU job (which tolerates only the pool's own sku=gpu taint) can never
    be admitted: the t4 flavor now carries the spot taint, and Kueue assigns a flavor only to pod
    sets that tolerate its nodeTaints. The flavor's own toleration opens it (Kueue counts it, and
    adds it to the pods it admits)."""
    model = model_of(edited("dev", _t4_spot()))
    t4 = next(o for o in model.of_kind("ResourceFlavor") if o.name == "t4")
    assert t4.manifest["spec"]["nodeTaints"] == [{"key": "sku", "value": "gpu", "effect": "NoSchedule"},
                                                 {"key": "kubernetes.azure.com/scalesetpriority", "value": "spot",
                                                  "effect": "NoSchedule"}]
    refused = [f for f in judge(model).findings if f.kind == "workload-not-admitted"]
    assert [f.object for f in refused] == ["workload ml/notebook-finetune"]
    opened = model_of(edited("dev", _t4_spot([SPOT_TOLERATION])))
    t4 = next(o for o in opened.of_kind("ResourceFlavor") if o.name == "t4")
    assert t4.manifest["spec"]["tolerations"] == [SPOT_TOLERATION]
    assert not [f for f in judge(opened).findings if f.kind == "workload-not-admitted"]
