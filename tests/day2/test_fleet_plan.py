"""check-plan on a fleet's links: a manager's MultiKueueClusters, kubeconfig Secrets and MultiKueueConfig,
a worker's multikueue service account, RBAC and token Secrets (hand-made plans in Pulumi's shape, and the
URNs the real program registers under the mocks)."""

from __future__ import annotations

import pytest

from aks_kueue.day2.allow import MANAGER_ENTRY, Allowances, worker_entry
from aks_kueue.day2.plan import judge_plan, kept_generations, parse_plan, watched
from tests.day2 import plans


def judged(steps, allow=(), config=None):
    parsed, _ = parse_plan(plans.document(steps))
    return judge_plan(parsed, Allowances.parse(allow), kept_generations(config or {}))


def offending(steps, allow=(), config=None):
    return [j for j in judged(steps, allow, config) if j.offending]


def delete(urn, inputs=None, op="delete"):
    return plans.step(op, urn, old=plans.state(urn, inputs or {}))


@pytest.mark.parametrize("urn,inputs,entry", [
    (plans.MK_CLUSTER, {"metadata": {"name": "westus3-a100"}}, "fleet.workers/westus3-a100"),
    (plans.MK_CLUSTER, {}, "fleet.workers/westus3-a100"),
    (plans.KUBECONFIG_SECRET, {"metadata": {"name": "multikueue-westus3-a100", "namespace": "kueue-system"}},
     "fleet.workers/westus3-a100"),
    (plans.KUBECONFIG_SECRET, {}, "fleet.workers/westus3-a100"),
    (plans.MK_CHECK, {"metadata": {"name": "multikueue"}}, "queues.AdmissionCheck/multikueue"),
    (plans.SERVICE_ACCOUNT, {"metadata": {"name": "multikueue-sa", "namespace": "kueue-system"}}, "fleet.manager"),
    (plans.CLUSTER_ROLE, {}, "fleet.manager"), (plans.ROLE_BINDING, {}, "fleet.manager"),
    (plans.token_secret(1), {"type": "kubernetes.io/service-account-token"}, "fleet.manager"),
])
def test_each_fleet_link_is_watched_and_passes_once_listed(urn, inputs, entry):
    (found,) = offending([delete(urn, inputs)])
    assert str(found.entry) == entry and found.line().startswith(f"{urn}: delete: deletes {entry}")
    assert offending([delete(urn, inputs)], [entry]) == []


def test_other_secrets_are_not_watched():
    urn = plans.STACK + "aksKueue:index:KueueInstall$kubernetes:core/v1:Secret::kueue-values"
    assert offending([delete(urn, {"metadata": {"name": "multikueue-x"}})]) == []


def test_a_replacement_of_a_worker_link_is_refused_step_by_step():
    old = plans.state(plans.MK_CLUSTER, {"metadata": {"name": "westus3-a100"}})
    steps = [plans.step(op, plans.MK_CLUSTER, old=old, new=old, replaceReasons=["spec"])
             for op in ("delete-replaced", "replace", "create-replacement")]
    assert [j.step.op for j in offending(steps)] == ["delete-replaced", "replace", "create-replacement"]


def test_the_multikueue_config_goes_with_the_workers_it_lists():
    steps = [delete(plans.MK_CONFIG, plans.mk_config_inputs("westus3-a100", "swedencentral-h100")),
             delete(plans.MK_CLUSTER), delete(plans.MK_CLUSTER_SWEDEN)]
    found = offending(steps, ["fleet.workers/westus3-a100"])
    config = next(j for j in found if j.step.urn == plans.MK_CONFIG)
    assert config.entry == worker_entry("swedencentral-h100")
    assert "which lists westus3-a100, swedencentral-h100" in config.why and "goes inactive" in config.why
    assert "does not list fleet.workers/swedencentral-h100" in config.why
    both = ["fleet.workers/westus3-a100", "fleet.workers/swedencentral-h100"]
    assert offending(steps, both) == []
    passed = next(j for j in judged(steps, both) if j.step.urn == plans.MK_CONFIG)
    assert "goes with the workers it lists" in passed.why


def test_a_multikueue_config_whose_clusters_are_secret_is_judged_by_the_clusters_the_plan_deletes():
    secret = {"metadata": {"name": "multikueue"}, "spec": "[secret]"}
    steps = [delete(plans.MK_CONFIG, secret), delete(plans.MK_CLUSTER)]
    (config,) = [j for j in offending(steps) if j.step.urn == plans.MK_CONFIG]
    assert config.entry == worker_entry("westus3-a100")
    assert offending(steps, ["fleet.workers/westus3-a100"]) == []
    # Nothing to go by: refused, saying so; a listed worker entry takes it.
    (alone,) = offending([delete(plans.MK_CONFIG, secret)])
    assert alone.entry is None and "does not show (a secret)" in alone.why
    assert offending([delete(plans.MK_CONFIG, secret)], ["fleet.workers/westus3-a100"]) == []


def test_an_update_of_the_multikueue_config_passes():
    old = plans.state(plans.MK_CONFIG, plans.mk_config_inputs("westus3-a100", "swedencentral-h100"))
    new = plans.state(plans.MK_CONFIG, plans.mk_config_inputs("swedencentral-h100"))
    assert judged([plans.step("update", plans.MK_CONFIG, old=old, new=new, diffReasons=["spec"])]) == []


def test_an_unknown_operation_on_the_multikueue_config_is_refused():
    (found,) = offending([delete(plans.MK_CONFIG, plans.mk_config_inputs("westus3-a100"), op="transmogrify")])
    assert "not a step operation this check-plan knows" in found.why


def test_a_rotations_last_step_deletes_the_old_token_without_an_entry():
    old_token = delete(plans.token_secret(1), {"metadata": {"name": "multikueue-sa-token-1"}})
    (ok,) = judged([old_token], config=plans.worker_config([2]))
    assert not ok.offending and "no longer in aks-kueue:fleet.tokenGenerations" in ok.why
    # Still kept (here by default, [1]), or a config that says nothing: refused.
    assert offending([old_token], config=plans.worker_config())
    assert offending([old_token], config=plans.worker_config([2, 1]))
    assert offending([old_token])
    assert offending([old_token], config={"aks-kueue:fleet": "[secret]"})
    # A replacement of a kept token is no rotation.
    token = plans.state(plans.token_secret(2), {"metadata": {"name": "multikueue-sa-token-2"}})
    replaced = plans.step("delete-replaced", plans.token_secret(2), old=token, new=token)
    assert offending([replaced], config=plans.worker_config([3]))


def test_kept_generations_read_the_config_as_a_plan_or_a_stack_file_holds_it():
    assert kept_generations(plans.worker_config([2, 1])) == {1, 2}
    assert kept_generations({"aks-kueue:fleet": {"role": "worker", "manager": "a/b/c"}}) == {1}
    assert kept_generations({"aks-kueue:fleet": '{"role": "manager", "workers": []}'}) is None
    assert kept_generations({"aks-kueue:fleet": "not json"}) is None


# ---- the URNs the program registers ----

@pytest.fixture(scope="module")
def fleet_runs():
    from aks_kueue.model.fleet import FLEET_OUTPUT, KUBECONFIG_OUTPUT
    from aks_kueue.model.fleet_outputs import StackOutputs
    from tests.fleet_stacks import MANAGER, WEST, WORKERS, manager_outputs, run, service_account_kubeconfig, \
        worker_outputs

    workers = {stack: StackOutputs({FLEET_OUTPUT: worker_outputs(stack),
                                    KUBECONFIG_OUTPUT: service_account_kubeconfig(f"aks-{stack}")})
               for stack in WORKERS}
    return run(MANAGER, others=workers), run(WEST, others={MANAGER: StackOutputs({FLEET_OUTPUT: manager_outputs()})})


def test_every_fleet_link_the_program_registers_is_watched(fleet_runs):
    manager, worker = fleet_runs

    def entries(run_, kinds):
        found = {}
        for r in run_.registrations:
            kind = r.type.rsplit(":", 1)[-1]
            if kind in kinds and r.custom:
                steps, _ = parse_plan(plans.document([delete(r.urn, r.inputs)]))
                found[r.name] = watched(steps[0])
        return found

    managed = entries(manager, ("MultiKueueCluster", "Secret"))
    assert managed == {"queues-multikueuecluster-westus3-a100": worker_entry("westus3-a100"),
                       "queues-multikueuecluster-swedencentral-h100": worker_entry("swedencentral-h100"),
                       "fleet-kubeconfig-westus3-a100": worker_entry("westus3-a100"),
                       "fleet-kubeconfig-swedencentral-h100": worker_entry("swedencentral-h100")}
    access = entries(worker, ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Secret"))
    assert {n: e for n, e in access.items() if e is not None} == {
        "fleet-sa": MANAGER_ENTRY, "fleet-role": MANAGER_ENTRY, "fleet-binding": MANAGER_ENTRY,
        "fleet-token-1": MANAGER_ENTRY}
    # RBAC of other components is not the manager's access.
    assert {n for n, e in access.items() if e is None} == {"monitoring-kueue-metrics-reader",
                                                           "monitoring-kueue-metrics-reader-binding"}
    # The MultiKueueConfig and the check, by the names the program gives them.
    config = next(r for r in manager.registrations if r.type.endswith(":MultiKueueConfig"))
    steps, _ = parse_plan(plans.document([delete(config.urn, config.inputs),
                                          *(delete(r.urn, r.inputs) for r in manager.registrations
                                            if r.type.endswith(":MultiKueueCluster"))]))
    judged_config = next(j for j in judge_plan(steps, Allowances()) if j.step.urn == config.urn)
    assert judged_config.offending and "westus3-a100, swedencentral-h100" in judged_config.why
