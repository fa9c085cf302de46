"""check-plan's classification of a `pulumi preview --json` plan."""

from __future__ import annotations

import pytest

from aks_kueue.day2.allow import Allowances, Entry, Target
from aks_kueue.day2.plan import PlanError, allowances_from_config, judge_plan, parse_plan, watched
from tests.day2 import plans


def offending(doc, allow=()):
    steps, _ = parse_plan(doc)
    return [j for j in judge_plan(steps, Allowances.parse(allow)) if j.offending]


def test_an_update_passes():
    assert offending(plans.document(plans.SAME_AND_UPDATE)) == []


def test_a_split_replacement_gives_one_line_per_destructive_step():
    found = offending(plans.document(plans.replace_pool()))
    assert [j.step.op for j in found] == ["delete-replaced", "replace", "create-replacement"]
    line = found[1].line()
    assert line.startswith(plans.A100 + ": replace: replaces nodePools.a100")
    assert "aks-kueue:allowReplacement does not list" in line and line.endswith("Pulumi's reasons: vmSize")
    # The same when the replacement creates first.
    assert len(offending(plans.document(plans.replace_pool(delete_first=False)))) == 3


def test_allow_replacement_lets_exactly_that_resource_go():
    steps = plans.replace_pool() + plans.replace_pool(plans.CPU, "cpu")
    found = offending(plans.document(steps), ["nodePools.a100"])
    assert {j.entry for j in found} == {Entry(Target.NODE_POOL, "cpu")}


def test_deletes_are_refused_unless_the_old_state_retains_the_object():
    pool = plans.state(plans.A100, plans.pool_inputs("a100", "x"), protect=True)
    team = plans.state(plans.TEAM_A, {"metadata": {"name": "team-a"}}, retainOnDelete=True)
    team_gone = plans.state(plans.TEAM_A, {"metadata": {"name": "team-a"}})
    (deleted,) = offending(plans.document([plans.step("delete", plans.A100, old=pool)]))
    assert deleted.line().startswith(plans.A100 + ": delete: deletes nodePools.a100")
    assert offending(plans.document([plans.step("delete", plans.TEAM_A, old=team)])) == []
    (namespace,) = offending(plans.document([plans.step("delete", plans.TEAM_A, old=team_gone)]))
    assert namespace.entry == Entry(Target.NAMESPACE, "team-a")


@pytest.mark.parametrize("urn,inputs,entry", [
    (plans.RG, {}, "resourceGroup"), (plans.CLUSTER, {}, "cluster"),
    (plans.SYSTEM, {"agentPoolName": "system", "mode": "System"}, "systemPool"),
    (plans.A100, {"agentPoolName": "a100"}, "nodePools.a100"),
    (plans.EXTENSION, {"extensionType": "microsoft.kueue"}, "kueue"),
    (plans.RELEASE, {"chart": "oci://registry.k8s.io/kueue/charts/kueue"}, "kueue"),
    (plans.TEAM_A, {"metadata": {"name": "team-a"}}, "namespaces.team-a"),
    (plans.QUEUE, {}, None), (plans.MAINTENANCE, {}, None),
])
def test_what_is_watched(urn, inputs, entry):
    steps, _ = parse_plan(plans.document([plans.step("delete", urn, old=plans.state(urn, inputs))]))
    found = watched(steps[0])
    assert (str(found) if found else None) == entry


def test_allow_replacement_is_read_from_the_plan_config():
    steps, config = parse_plan(plans.document(plans.replace_pool(), allow=["nodePools.a100"]))
    assert Entry(Target.NODE_POOL, "a100") in allowances_from_config(config)
    with pytest.raises(PlanError, match="allowReplacement"):
        allowances_from_config({"aks-kueue:allowReplacement": '["clusters"]'})


@pytest.mark.parametrize("doc,fragment", [
    ([], "not a `pulumi preview --json` document"), ({"resources": []}, "neither `steps`"),
    ({"steps": [{"op": "delete"}]}, "steps[0] has no `op` and `urn`"),
    ({"steps": [{"op": "delete", "urn": "nope"}]}, "not a Pulumi URN"),
])
def test_documents_that_are_not_plans(doc, fragment):
    with pytest.raises(PlanError) as error:
        parse_plan(doc)
    assert fragment in str(error.value)
