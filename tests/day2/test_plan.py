"""check-plan's classification of a `pulumi preview --json` plan."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from aks_kueue.day2.allow import Allowances, Entry, Target
from aks_kueue.day2.plan import allowances_from_config, judge_plan, parse_plan, watched
from aks_kueue.k8s.loader import LoadError
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
    (plans.QUEUE, {}, "queues.LocalQueue/team-a/default"), (plans.MAINTENANCE, {}, None),
])
def test_what_is_watched(urn, inputs, entry):
    steps, _ = parse_plan(plans.document([plans.step("delete", urn, old=plans.state(urn, inputs))]))
    found = watched(steps[0])
    assert (str(found) if found else None) == entry


def test_allow_replacement_is_read_from_the_plan_config():
    steps, config = parse_plan(plans.document(plans.replace_pool(), allow=["nodePools.a100"]))
    assert Entry(Target.NODE_POOL, "a100") in allowances_from_config(config)
    with pytest.raises(LoadError) as error:
        allowances_from_config({"aks-kueue:allowReplacement": '["clusters"]'}, "plan.json")
    assert error.value.key == "aks-kueue:allowReplacement[0]" and error.value.source == "plan.json"
    assert str(error.value).startswith("plan.json: aks-kueue:allowReplacement[0]: 'clusters' is not an entry")


@pytest.mark.parametrize("doc,fragment", [
    ([], "not a `pulumi preview --json` document"), ({"resources": []}, "neither `steps`"),
    ({"steps": [{"op": "delete"}]}, "plan.json: steps[0]: has no `op` and `urn`"),
    ({"steps": [{"op": "delete", "urn": "nope"}]}, "plan.json: steps[0].urn: 'nope' is not a Pulumi URN"),
])
def test_documents_that_are_not_plans(doc, fragment):
    with pytest.raises(LoadError) as error:
        parse_plan(doc, "plan.json")
    assert fragment in str(error.value)


# pkg/resource/deploy/step.go `StepOps` of pulumi/pulumi, in its order: v3.259.0 and main 1b59498
# (2026-08-21) list the same 17.
STEP_GO_OPS = ["same", "create", "update", "delete", "replace", "create-replacement", "delete-replaced", "read",
               "read-replacement", "refresh", "discard", "discard-replaced", "remove-pending-replace", "import",
               "import-replacement", "diff", "extend-parameterize"]
PULUMI_MIRROR = Path("/work/.mirror/pulumi+pulumi/repo")


def test_every_step_operation_of_the_engine_is_judged():
    from aks_kueue.day2.plan import OPERATIONS

    assert list(OPERATIONS) == STEP_GO_OPS


@pytest.mark.skipif(not PULUMI_MIRROR.is_dir(), reason="no pulumi/pulumi mirror on this machine")
def test_the_operations_are_those_of_the_engine_source():
    source = subprocess.run(["git", "--git-dir", str(PULUMI_MIRROR), "show", "HEAD:pkg/resource/deploy/step.go"],
                            capture_output=True, text=True, check=True).stdout
    block = source.split("var StepOps = []display.StepOp{", 1)[1].split("}", 1)[0]
    names = dict(re.findall(r'(Op\w+)\s+display\.StepOp = "([\w-]+)"', source))
    assert [names[n] for n in re.findall(r"(Op\w+),", block)] == STEP_GO_OPS


@pytest.mark.parametrize("op,offends,verb", [
    ("import-replacement", True, "replaces"), ("read-replacement", True, "replaces"),
    ("remove-pending-replace", True, "deletes"), ("delete-replaced", True, "deletes"),
    ("discard", False, None), ("discard-replaced", False, None), ("refresh", False, None), ("import", False, None),
    ("diff", False, None), ("read", False, None), ("same", False, None), ("update", False, None),
    ("extend-parameterize", False, None), ("create", False, None),
])
def test_each_operation_is_judged_by_what_it_does_to_the_resource(op, offends, verb):
    """Reported: import-replacement exited 0."""
    pool = plans.state(plans.A100, plans.pool_inputs("a100", "x"))
    found = offending(plans.document([plans.step(op, plans.A100, old=pool, new=pool)]))
    assert bool(found) is offends
    if offends:
        assert found[0].line().startswith(f"{plans.A100}: {op}: {verb} nodePools.a100")


def test_an_operation_the_gate_does_not_know_is_refused_on_what_it_watches():
    pool = plans.state(plans.A100, plans.pool_inputs("a100", "x"))
    (found,) = offending(plans.document([plans.step("transmogrify", plans.A100, old=pool)]))
    assert "not a step operation this check-plan knows" in found.why
    assert offending(plans.document([plans.step("transmogrify", plans.MAINTENANCE, old=pool)])) == []


VERSIONED = ("urn:pulumi:prod::aks-kueue::aksKueue:index:NodePools$"
             "azure-native:containerservice/v20250901:AgentPool::pools-a100")
VERSIONED_CLUSTER = ("urn:pulumi:prod::aks-kueue::aksKueue:index:AksCluster$"
                     "azure-native:containerservice/v20240901:ManagedCluster::main-aks")
VERSIONED_EXTENSION = ("urn:pulumi:prod::aks-kueue::aksKueue:index:KueueInstall$"
                       "azure-native:kubernetesconfiguration/v20230501:Extension::kueue-extension")
VERSIONED_RG = ("urn:pulumi:prod::aks-kueue::aksKueue:index:AksCluster$"
                "azure-native:resources/v20240301:ResourceGroup::rg")


@pytest.mark.parametrize("urn,entry", [
    (VERSIONED, "nodePools.a100"), (VERSIONED_CLUSTER, "cluster"), (VERSIONED_EXTENSION, "kueue"),
    (VERSIONED_RG, "resourceGroup"),
])
def test_a_type_token_with_an_api_version_is_read(urn, entry):
    """Reported: steps whose type token carries an API version exited 0."""
    doc = plans.document([plans.step("delete", urn, old=plans.state(urn, {"agentPoolName": "a100"}))])
    (found,) = offending(doc)
    assert str(found.entry) == entry


@pytest.mark.parametrize("urn,inputs,entry", [
    (plans.QUEUE, {"metadata": {"name": "default", "namespace": "team-a"}}, "queues.LocalQueue/team-a/default"),
    (plans.QUEUE, {}, "queues.LocalQueue/team-a/default"),
    (plans.STACK + "aksKueue:index:KueueQueues$kubernetes:kueue.x-k8s.io/v1beta1:ClusterQueue::"
                   "queues-clusterqueue-team-a",
     {}, "queues.ClusterQueue/team-a"),
    (plans.STACK + "aksKueue:index:KueueQueues$kubernetes:kueue.x-k8s.io/v1beta2:Topology::queues-topology-zone-host",
     {"metadata": {"name": "zone-host"}}, "queues.Topology/zone-host"),
])
def test_kueue_objects_are_watched_and_listed_by_their_entry(urn, inputs, entry):
    doc = plans.document([plans.step("delete", urn, old=plans.state(urn, inputs))])
    (found,) = offending(doc)
    assert str(found.entry) == entry
    assert offending(doc, [entry]) == []


def test_a_workload_priority_class_is_not_watched():
    urn = plans.STACK + ("aksKueue:index:KueueQueues$kubernetes:kueue.x-k8s.io/v1beta2:WorkloadPriorityClass::"
                         "queues-workloadpriorityclass-batch-low")
    assert offending(plans.document([plans.step("delete", urn, old=plans.state(urn, {}))])) == []
