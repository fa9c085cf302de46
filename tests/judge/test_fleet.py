"""Each fleet check of `judge/fleet.py`, on the example fleet: quiet as shipped, and firing, with its
numbers, key and fix, once the fleet is edited to break what it checks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from aks_kueue.judge import blocking_findings, fleet, judge
from aks_kueue.judge.feasibility import manager_admission
from aks_kueue.judge.finding import ERROR, WARNING
from aks_kueue.judge.rules import FLEET, RULES, Judging, run
from aks_kueue.model.fleet import FLEET_OUTPUT
from aks_kueue.model.fleet_outputs import StackOutputs, kubeconfig_check
from tests.fleet_stacks import (MANAGER, SWEDEN, WEST, WORKERS, config, manager_model, manager_outputs, model,
                                qualified, service_account_kubeconfig, worker_outputs, worker_stack_outputs)


def kinds(findings) -> list[str]:
    return [f.kind for f in findings]


def found(check, m, kind=None):
    return [f for f in check(m) if kind is None or f.kind == kind]


@pytest.fixture(scope="module")
def shipped():
    return manager_model()


def test_the_shipped_fleet_has_no_fleet_error(shipped):
    findings = run(Judging(shipped), keep=lambda each: each.policy == FLEET) + list(manager_admission(shipped))
    assert [f for f in findings if f.severity == ERROR] == []
    # What an offline preview cannot read is said: the kubeconfigs are secrets.
    assert kinds(findings) == [fleet.KUBECONFIG_NOT_CHECKED, fleet.KUBECONFIG_NOT_CHECKED]


# ---- what the workers can run -----------------------------------------------------------------

def _more_gpus(c):
    c["aks-kueue:expectedWorkloads"][0]["podSets"][0]["requests"]["nvidia.com/gpu"] = "2"


def test_a_workload_no_worker_can_run_is_an_error():
    m = manager_model(config(MANAGER, _more_gpus))
    [finding] = found(fleet.workload_coverage, m)
    assert finding.kind == fleet.WORKLOAD_UNRUNNABLE and finding.severity == ERROR
    assert finding.key == "aks-kueue:expectedWorkloads[0]" and finding.object == "workload team-a/llm-finetune"
    assert finding.numbers == {"workers": ["westus3-a100", "swedencentral-h100"], "canRun": []}
    assert "westus3-a100:" in finding.message and "swedencentral-h100:" in finding.message


def test_a_workload_only_one_worker_can_run_is_a_single_point_of_failure():
    def edit(c):
        pods = c["aks-kueue:expectedWorkloads"][0]["podSets"][0]
        pods["requests"].update(cpu="30", memory="250Gi")   # an H100 node, not an A100 one
    [finding] = found(fleet.workload_coverage, manager_model(config(MANAGER, edit)))
    assert finding.kind == fleet.WORKLOAD_ONE_WORKER and finding.severity == WARNING
    assert finding.numbers["canRun"] == ["swedencentral-h100"]


def test_a_worker_without_its_kubeconfig_yet_is_not_raced():
    workers = {WEST: worker_stack_outputs(WEST), SWEDEN: worker_stack_outputs(SWEDEN, kubeconfig=None)}
    m = manager_model(workers=workers)
    assert found(fleet.workload_coverage, m) == []   # both workloads still run on westus3-a100
    [not_ready] = found(fleet.workers_ready, m)
    assert not_ready.key == "aks-kueue:fleet.workers[1]" and "no kubeconfig yet" in not_ready.message


def test_a_workload_the_manager_quota_never_admits_is_reported():
    def edit(c):
        c["aks-kueue:queues"]["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2][
            "nominalQuota"] = "1"
    [finding] = found(manager_admission, manager_model(config(MANAGER, edit)))
    assert finding.kind == "workload-not-admitted" and finding.key == "aks-kueue:expectedWorkloads[0]"


# ---- quota --------------------------------------------------------------------------------------

def _manager_gpus(value):
    def edit(c):
        for cq in c["aks-kueue:queues"]["clusterQueues"]:
            cq["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["nominalQuota"] = value
    return edit


@pytest.mark.parametrize("gpus,severity", [("5", None), ("7", WARNING), ("9", ERROR)])
def test_manager_quota_against_the_workers_sum(gpus, severity):
    """The workers hold 8 GPUs (2 per team on each of two workers): 10 is 1.25x, 14 is 1.75x, 18 is 2.25x."""
    findings = found(fleet.quota_overbooked, manager_model(config(MANAGER, _manager_gpus(gpus))))
    if severity is None:
        assert findings == []
        return
    [finding] = findings
    assert finding.severity == severity and finding.numbers["resource"] == "nvidia.com/gpu"
    assert finding.numbers["workers"].value == 8 and finding.numbers["manager"].value == 2 * int(gpus)
    assert finding.numbers["perWorker"] == {"westus3-a100": finding.numbers["workers"].__class__(4, "count"),
                                            "swedencentral-h100": finding.numbers["workers"].__class__(4, "count")}
    assert finding.key == ("aks-kueue:queues.clusterQueues[0].spec.resourceGroups[0].flavors[0].resources[2]"
                           ".nominalQuota")


def test_quota_for_a_resource_no_worker_holds_is_an_error():
    def edit(c):
        group = c["aks-kueue:queues"]["clusterQueues"][0]["spec"]["resourceGroups"][0]
        group["coveredResources"].append("example.com/fpga")
        group["flavors"][0]["resources"].append({"name": "example.com/fpga", "nominalQuota": "2"})
    [finding] = found(fleet.quota_overbooked, manager_model(config(MANAGER, edit)))
    assert finding.severity == ERROR and finding.numbers["ratio"] is None and "hold 0" in finding.message


def test_automated_quota_management_needs_one_flavor_per_cluster_queue():
    def edit(c):
        c["aks-kueue:kueue"]["featureGates"] = {"MultiKueueManagerQuotaAutomation": True}
        c["aks-kueue:fleet"]["quotaManagement"] = "Automated"
        queues = c["aks-kueue:queues"]
        queues["resourceFlavors"].append({"name": "spare"})
        group = queues["clusterQueues"][1]["spec"]["resourceGroups"][0]
        group["flavors"].append({"name": "spare", "resources": [{"name": r, "nominalQuota": "0"}
                                                                 for r in group["coveredResources"]]})
    m = manager_model(config(MANAGER, edit))
    [finding] = found(fleet.quota_automation, m)
    assert finding.object == "ClusterQueue team-b"
    assert finding.key == "aks-kueue:queues.clusterQueues[1].spec.resourceGroups"
    assert finding.numbers == {"flavors": ["fleet", "spare"]}
    multikueue_config = next(o for o in m.objects if o.kind == "MultiKueueConfig")
    assert multikueue_config.manifest["spec"]["quotaManagement"] == "Automated"


# ---- what the workers hold ----------------------------------------------------------------------

def test_a_worker_missing_a_team_namespace_and_local_queue():
    stale = manager_outputs()
    stale["teams"]["localQueues"] = stale["teams"]["localQueues"][:1]     # the worker ran before team-b existed
    workers = {WEST: worker_stack_outputs(WEST), SWEDEN: worker_stack_outputs(SWEDEN, manager=stale)}
    # The manager's last deployment exported team-b: the worker had it to mirror.
    exported = {**workers, MANAGER: StackOutputs({FLEET_OUTPUT: manager_outputs()})}
    [finding] = found(fleet.teams_missing, manager_model(workers=exported))
    assert finding.kind == fleet.TEAM_MISSING and finding.key == "aks-kueue:fleet.workers[1]"
    assert finding.severity == ERROR
    assert finding.numbers["missing"] == ["namespace team-b", "LocalQueue team-b/default"]
    assert qualified(SWEDEN) in finding.fix
    # This update adds team-b: the workers mirror it after it, so meanwhile it is a warning.
    [new] = found(fleet.teams_missing, manager_model(workers={**workers, MANAGER: StackOutputs({FLEET_OUTPUT: stale})}))
    assert new.severity == WARNING and "this update adds" in new.message


def test_a_priority_class_value_the_workers_have_not_mirrored_yet_is_a_warning():
    stale = manager_outputs()
    stale["teams"]["workloadPriorityClasses"][0]["value"] = 500   # the worker mirrored batch-high before it rose
    workers = {WEST: worker_stack_outputs(WEST), SWEDEN: worker_stack_outputs(SWEDEN, manager=stale)}
    [finding] = found(fleet.priority_values, manager_model(workers=workers))
    assert finding.kind == fleet.PRIORITY_VALUES and finding.severity == WARNING
    assert finding.key == "aks-kueue:fleet.workers[1]" and qualified(SWEDEN) in finding.fix
    assert finding.numbers == {"worker": "swedencentral-h100", "classes": {"batch-high": {"manager": 1000,
                                                                                        "worker": 500}}}
    assert "batch-high is 1000 here and 500 there" in finding.message
    # The judge runs it, and a warning is aks-kueue-warnings' to report.
    from aks_kueue.judge.rules import policy_for

    [judged] = [f for f in judge(manager_model(workers=workers)).findings if f.kind == fleet.PRIORITY_VALUES]
    assert judged == finding and policy_for(judged) == "aks-kueue-warnings"
    assert found(fleet.priority_values, manager_model()) == []


def test_an_integration_the_manager_runs_and_a_worker_does_not():
    def edit(c):
        c["aks-kueue:kueue"]["integrations"] = ["batch/job"]
    workers = {WEST: worker_stack_outputs(WEST), SWEDEN: worker_stack_outputs(SWEDEN, config(SWEDEN, edit))}
    [finding] = found(fleet.integrations, manager_model(workers=workers), fleet.INTEGRATION_MISSING)
    assert finding.key == "aks-kueue:fleet.workers[1]" and finding.numbers == {"missing": ["jobset.x-k8s.io/jobset"]}


def test_an_integration_multikueue_cannot_dispatch_or_the_worker_role_does_not_cover():
    def edit(c):
        c["aks-kueue:kueue"]["integrations"] = ["batch/job", "jobset.x-k8s.io/jobset", "trainer.kubeflow.org/trainjob"]
    findings = found(fleet.integrations, manager_model(config(MANAGER, edit)), fleet.INTEGRATION_NOT_DISPATCHED)
    assert len(findings) == 1 and "trainer.kubeflow.org/trainjob" in findings[0].message
    assert findings[0].key == "aks-kueue:kueue" and findings[0].severity == WARNING


def test_crds_the_manager_needs_and_does_not_install(shipped):
    assert shipped.fleet.crds == ("jobset.x-k8s.io/jobset",)
    without = replace(shipped, fleet=replace(shipped.fleet, crds=()))
    [finding] = found(fleet.integrations, without, fleet.CRDS_MISSING)
    assert finding.severity == ERROR and finding.numbers["framework"] == "jobset.x-k8s.io/jobset"
    assert finding.numbers["crds"][0].endswith("/v0.12.0/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml")


# ---- credentials and reach ----------------------------------------------------------------------

BAD_KUBECONFIGS = {
    "exec": ("users", "exec plugins are not allowed"),
    "tokenFile": ("users", "tokenFile is not allowed"),
    "insecure-skip-tls-verify": ("clusters", "insecure TLS verification is not allowed"),
    "certificate-authority": ("clusters", "certificate-authority file paths are not allowed"),
}


@pytest.mark.parametrize("field", list(BAD_KUBECONFIGS))
def test_a_kubeconfig_kueue_refuses(field):
    import yaml

    where, message = BAD_KUBECONFIGS[field]
    doc = yaml.safe_load(service_account_kubeconfig())
    inner = doc[where][0]["user" if where == "users" else "cluster"]
    inner[field] = {"exec": {"command": "kubelogin"}, "tokenFile": "/var/run/token", "insecure-skip-tls-verify": True,
                    "certificate-authority": "/etc/ca.crt"}[field]
    workers = {WEST: worker_stack_outputs(WEST, kubeconfig=yaml.safe_dump(doc)), SWEDEN: worker_stack_outputs(SWEDEN)}
    [refused] = found(fleet.kubeconfigs, manager_model(workers=workers), fleet.KUBECONFIG_REFUSED)
    assert refused.key == "aks-kueue:fleet.workers[0]" and message in refused.message
    assert "a-token" not in str(refused)   # a kubeconfig's content never reaches a message


def test_the_service_account_kubeconfig_is_accepted():
    check = kubeconfig_check(service_account_kubeconfig())
    assert check.known and check.problems == ()
    workers = {w: worker_stack_outputs(w, kubeconfig=service_account_kubeconfig()) for w in WORKERS}
    assert found(fleet.kubeconfigs, manager_model(workers=workers)) == []


def test_a_worker_whose_ranges_leave_out_the_manager_egress_is_unreachable():
    def edit(c):
        # A range outside the manager's egress (the example fleet's is filled in: tests/conftest.py `filled`).
        c["aks-kueue:cluster"]["security"]["apiServerAuthorizedIpRanges"] = ["198.51.100.0/24"]
    workers = {WEST: worker_stack_outputs(WEST, config(WEST, edit)), SWEDEN: worker_stack_outputs(SWEDEN)}
    [finding] = found(fleet.reachability, manager_model(workers=workers))
    assert finding.kind == fleet.WORKER_UNREACHABLE and finding.severity == ERROR
    assert finding.numbers == {"egress": ["52.160.10.10/32"], "authorized": ["198.51.100.0/24"]}


def test_reach_not_checked_without_the_manager_egress_or_to_a_private_worker():
    def no_egress(c):
        del c["aks-kueue:fleet"]["egressIpRanges"]
    findings = found(fleet.reachability, manager_model(config(MANAGER, no_egress)))
    assert kinds(findings) == [fleet.REACH_NOT_CHECKED] * 2
    assert {f.key for f in findings} == {"aks-kueue:fleet.egressIpRanges"} and "not checked" in findings[0].message

    def private(c):
        c["aks-kueue:cluster"]["security"].update(privateCluster=True, deployerInClusterNetwork=True)
        del c["aks-kueue:cluster"]["security"]["apiServerAuthorizedIpRanges"]
    workers = {WEST: worker_stack_outputs(WEST, config(WEST, private)), SWEDEN: worker_stack_outputs(SWEDEN)}
    [finding] = found(fleet.reachability, manager_model(workers=workers))
    assert finding.kind == fleet.REACH_NOT_CHECKED and "private" in finding.message


def test_kueue_minor_versions_that_differ():
    """This program pins one Kueue minor release; a worker of another version of it may run another."""
    older = worker_outputs(WEST)
    older["kueue"]["version"] = "0.18.3"
    workers = {WEST: StackOutputs({FLEET_OUTPUT: older, "multikueueKubeconfig": "[secret]"}),
               SWEDEN: worker_stack_outputs(SWEDEN)}
    [finding] = found(fleet.kueue_versions, manager_model(workers=workers))
    assert finding.numbers == {"manager": "0.19", "worker": "0.18"} and finding.key == "aks-kueue:fleet.workers[0]"


# ---- the manager's admission checks and MultiKueue objects -------------------------------------

@pytest.fixture()
def with_checks(tmp_path):
    """The manager with admission checks of its own, written as a queue manifest."""
    import yaml

    def build(checks: list[dict], on_team_a: list[dict]):
        path = tmp_path / "checks.yaml"
        path.write_text(yaml.safe_dump_all(checks))

        def edit(c):
            c["aks-kueue:queueManifests"] = [str(path)]
            spec = c["aks-kueue:queues"]["clusterQueues"][0]["spec"]
            spec["admissionChecksStrategy"] = {"admissionChecks": on_team_a}
        return manager_model(config(MANAGER, edit))
    return build


def _check(name, controller, kind, config_name):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "AdmissionCheck", "metadata": {"name": name},
            "spec": {"controllerName": controller, "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": kind,
                                                                 "name": config_name}}}


def test_two_multikueue_checks_on_one_cluster_queue(with_checks):
    # The program leaves a ClusterQueue that names a MultiKueue check of the stack's own alone...
    m = with_checks([_check("second", "kueue.x-k8s.io/multikueue", "MultiKueueConfig", "multikueue")],
                    [{"name": "second"}])
    team_a = next(o for o in m.objects if o.label == "ClusterQueue team-a")
    assert team_a.manifest["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "second"}]}
    assert found(fleet.admission_checks, m) == []
    # ...so two on one queue come from resources changed by hand, which the pack reads the same way.
    from aks_kueue.model.desired import KueueItem

    spec = {**team_a.manifest["spec"], "admissionChecksStrategy": {"admissionChecks": [{"name": "second"},
                                                                                        {"name": "multikueue"}]}}
    both = replace(m, objects=tuple(KueueItem({**o.manifest, "spec": spec}, o.key) if o is team_a else o
                                    for o in m.objects))
    [finding] = found(fleet.admission_checks, both)
    assert finding.kind == fleet.CHECKS_CONFLICT and "2 MultiKueue checks (second, multikueue)" in finding.message
    assert finding.key == "aks-kueue:queues.clusterQueues[0].spec.admissionChecksStrategy.admissionChecks"
    assert "so Kueue keeps it inactive" in finding.message


def test_a_multikueue_check_per_flavor(with_checks):
    m = with_checks([], [{"name": "multikueue", "onFlavors": ["fleet"]}])
    [finding] = found(fleet.admission_checks, m)
    assert "per flavor" in finding.message


def test_a_provisioning_check_beside_the_multikueue_check(with_checks):
    provisioning = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ProvisioningRequestConfig",
                    "metadata": {"name": "prov"},
                    "spec": {"provisioningClassName": "check-capacity.autoscaling.x-k8s.io"}}
    m = with_checks([provisioning, _check("prov", "kueue.x-k8s.io/provisioning-request", "ProvisioningRequestConfig",
                                          "prov")], [{"name": "prov"}])
    [finding] = found(fleet.admission_checks, m)
    assert "beside the ProvisioningRequest check prov" in finding.message


def test_the_check_without_a_config_while_no_worker_is_ready():
    bootstrap = model(MANAGER)
    [finding] = found(fleet.check_config, bootstrap)
    assert finding.severity == WARNING and "until a worker has exported its kubeconfig" in finding.message
    assert not [o for o in bootstrap.objects if o.kind in ("MultiKueueConfig", "MultiKueueCluster")]
    broken = replace(manager_model(), objects=tuple(o for o in manager_model().objects if o.kind != "MultiKueueConfig"))
    [finding] = found(fleet.check_config, broken)
    assert finding.severity == ERROR


def test_more_than_twenty_workers_are_refused():
    def edit(c):
        c["aks-kueue:fleet"]["workers"] = [{"name": f"w{i}", "stack": f"acme/aks-kueue/w{i}"} for i in range(21)]
    m = model(MANAGER, config(MANAGER, edit))
    [finding] = blocking_findings(m)
    assert finding.kind == fleet.TOO_MANY_WORKERS and RULES[finding.kind].blocking
    assert finding.key == "aks-kueue:fleet.workers"
    assert finding.numbers == {"workers": 21, "limit": 20}


def test_a_listed_stack_that_is_a_manager_or_of_another_manager():
    other = worker_outputs(WEST)
    other["manager"] = "acme/aks-kueue/another-manager"
    workers = {WEST: StackOutputs({FLEET_OUTPUT: other}), SWEDEN: StackOutputs({FLEET_OUTPUT: manager_outputs()})}
    findings = found(fleet.worker_outputs, manager_model(workers=workers))
    assert [(f.key, f.severity) for f in findings] == [("aks-kueue:fleet.workers[0]", WARNING),
                                                       ("aks-kueue:fleet.workers[1]", ERROR)]
    assert "another-manager" in findings[0].message and "not a worker's output" in findings[1].message


# ---- the worker's side --------------------------------------------------------------------------

def _worker(generations=None, manager=None):
    def edit(c):
        if generations is not None:
            c["aks-kueue:fleet"]["tokenGenerations"] = generations
    outputs = manager if manager is not None else _manager_holding(1)
    return model(WEST, config(WEST, edit), {MANAGER: StackOutputs({FLEET_OUTPUT: outputs})} if outputs else {})


def _manager_holding(generation):
    outputs = manager_outputs()
    outputs["workers"][0]["tokenGeneration"] = generation
    return outputs


def test_a_worker_whose_manager_has_no_outputs_yet():
    m = _worker(manager={})
    [finding] = found(fleet.manager_ready, m)
    assert finding.key == "aks-kueue:fleet.manager" and not m.of_kind("LocalQueue")
    assert found(fleet.manager_ready, _worker()) == []


def test_rotation_keeps_the_token_the_manager_holds():
    assert blocking_findings(_worker()) == [] and found(fleet.token_rotating, _worker()) == []
    assert blocking_findings(_worker([2, 1])) == []
    [rotating] = found(fleet.token_rotating, _worker([2, 1]))
    assert rotating.severity == WARNING and rotating.key == "aks-kueue:fleet.tokenGenerations"
    [refused] = blocking_findings(_worker([2]))
    assert refused.kind == fleet.TOKEN_IN_USE and RULES[refused.kind].blocking
    assert refused.key == "aks-kueue:fleet.tokenGenerations"
    assert refused.numbers == {"held": 1, "kept": [2]}
    assert blocking_findings(_worker([2], _manager_holding(2))) == []


def test_the_judge_runs_the_fleet_checks_and_skips_the_manager_capacity(shipped):
    judgement = judge(shipped)
    assert judgement.capacity == []      # the manager has no pools: its quota is the workers'
    assert fleet.KUBECONFIG_NOT_CHECKED in kinds(judgement.findings)
    assert "quota-above-capacity" not in kinds(judgement.findings)
