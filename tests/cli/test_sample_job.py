"""`aks-kueue sample-job`: for every LocalQueue of dev and prod and every kind the stack enables, the job it
prints passes `validate` and is admitted (`Fit`) by `simulate` against the stack's own queue objects, on
flavors whose nodes it tolerates and fits; and every refusal exits as the contract says, with numbers."""

from __future__ import annotations

import shutil
from functools import lru_cache

import pytest
import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.cli.sample_job import KINDS
from aks_kueue.judge import judge
from aks_kueue.k8s.scheduling import SCHEDULING_EFFECTS, tolerates
from aks_kueue.settings import parse_settings
from tests.conftest import ROOT, edited, flat, model_of, stack_doc

runner = CliRunner()


def cli(*args):
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


@lru_cache(maxsize=None)
def queue_objects(stack: str) -> str:
    """The stack's Kueue objects and namespaces as YAML, as the program creates them."""
    model = model_of(stack_doc(stack), stack)
    docs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n.name, "labels": dict(n.labels)}}
            for n in model.namespaces]
    return yaml.safe_dump_all(docs + [dict(o.manifest) for o in model.objects], sort_keys=False)


def cases():
    found = []
    for stack in ("dev", "prod"):
        settings = parse_settings(flat(stack_doc(stack)))
        enabled = [k for k, f in KINDS.items() if f in settings.kueue.frameworks_in_force]
        for entry in settings.queues.local_queues:
            for kind in enabled:
                for gpus in (0, 1):
                    found.append(pytest.param(stack, f"{entry.namespace}/{entry.name}", kind, gpus,
                                              id=f"{stack}-{entry.namespace}-{kind}-{gpus}gpu"))
    return found


def test_the_matrix_covers_both_stacks_and_every_kind():
    ids = {(p.values[0], p.values[2]) for p in cases()}
    assert ids == {("dev", "Job"), ("dev", "JobSet"), ("dev", "RayJob"),
                   ("prod", "Job"), ("prod", "JobSet"), ("prod", "RayJob"), ("prod", "MPIJob")}
    lqs = {stack: len(stack_doc(stack)["aks-kueue:queues"]["localQueues"]) for stack in ("dev", "prod")}
    assert len(cases()) == 2 * 3 * lqs["dev"] + 2 * 4 * lqs["prod"]


@pytest.mark.parametrize("stack,queue,kind,gpus", cases())
def test_each_sample_validates_and_is_admitted_where_its_pods_can_run(stack, queue, kind, gpus, tmp_path):
    args = ["sample-job", "--stack", stack, "--queue", queue, "--kind", kind] + (["--gpus", str(gpus)] if gpus else [])
    code, out, err = cli(*args)
    assert code == 0, err
    job = yaml.safe_load(out)
    namespace, local_queue = queue.split("/")
    assert job["kind"] == kind and job["metadata"]["namespace"] == namespace
    assert job["metadata"]["labels"] == {"kueue.x-k8s.io/queue-name": local_queue}
    sample = tmp_path / "sample.yaml"
    sample.write_text(out)

    code, _, err = cli("validate", str(sample), "--stack", stack)
    assert code == 0, err
    # The promise as the README gives it: `simulate --stack` takes the stack's own queue objects.
    code, out, err = cli("simulate", str(sample), "-s", stack, "--json")
    assert code == 0, err
    (workload,) = yaml.safe_load(out)["workloads"]
    assert workload["mode"] == "Fit", workload["message"]
    assert workload["source"]["kind"] == kind

    # The pods tolerate every taint of the pools their flavors land on, and a GPU pod got a GPU flavor.
    judgement = judge(model_of(stack_doc(stack), stack))
    templates = _templates(job)
    for pod_set in workload["podSets"]:
        pod = templates[pod_set["name"]]
        for flavor in set(pod_set["flavors"].values()):
            for pool, nodes in judgement.flavors[flavor].pools:
                for taint in (t for t in pool.spec.taints if t.get("effect") in SCHEDULING_EFFECTS):
                    assert any(tolerates(t, taint) for t in pod.get("tolerations") or []), (pod_set, taint)
        asks_gpu = "nvidia.com/gpu" in pod["containers"][0]["resources"]["requests"]
        assert asks_gpu is ("nvidia.com/gpu" in pod_set["flavors"])
        if asks_gpu:
            assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == str(gpus)
    assert any("nvidia.com/gpu" in p["flavors"] for p in workload["podSets"]) is bool(gpus)


def _templates(job: dict) -> dict[str, dict]:
    """The pod spec of each pod set, by the pod set's name as Kueue names it."""
    spec = job["spec"]
    if job["kind"] == "Job":
        return {"main": spec["template"]["spec"]}
    if job["kind"] == "JobSet":
        return {r["name"]: r["template"]["spec"]["template"]["spec"] for r in spec["replicatedJobs"]}
    if job["kind"] == "RayJob":
        cluster = spec["rayClusterSpec"]
        return {"head": cluster["headGroupSpec"]["template"]["spec"], "submitter": spec["submitterPodTemplate"]["spec"],
                **{g["groupName"]: g["template"]["spec"] for g in cluster["workerGroupSpecs"]}}
    return {kind.lower(): r["template"]["spec"] for kind, r in spec["mpiReplicaSpecs"].items()}


def test_a_gpu_pod_asks_for_half_its_nodes_share_and_says_where_it_lands():
    code, out, _ = cli("sample-job", "--stack", "dev", "--queue", "ml/default", "--gpus", "1")
    assert code == 0
    job = yaml.safe_load(out)
    # Standard_NC8as_T4_v3 nodes allocate 7.22 cpu and 48.7 GiB to pods around one T4: half, rounded down.
    assert job["spec"]["template"]["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "3", "memory": "24Gi", "nvidia.com/gpu": "1"},
        "limits": {"memory": "24Gi", "nvidia.com/gpu": "1"}}
    assert out.splitlines()[2] == ("#   main: 1 x cpu 3, memory 24Gi, nvidia.com/gpu 1 -> t4 (pool t4, "
                                   "Standard_NC8as_T4_v3)")


# --- refusals ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("args,code,message", [
    (["--stack", "dev", "--queue", "ml/default", "--kind", "MPIJob"], 2,
     "sample-job: --kind MPIJob: its integration kubeflow.org/mpijob is not enabled on stack dev "
     "(kueue.integrations); choose one it enables: Job, JobSet, RayJob"),
    (["--stack", "prod", "--queue", "team-a/default", "--kind", "PyTorchJob"], 2,
     "sample-job: --kind 'PyTorchJob' is not a kind sample-job writes (it writes Job, JobSet, RayJob, MPIJob; "
     "stack prod enables Job, JobSet, RayJob, MPIJob)"),
    (["--stack", "prod", "--queue", "team-a/default", "--kind", "raijob"], 2, "did you mean 'rayjob'?"),
    (["--stack", "prod", "--queue", "team-a/defualt"], 2, "team-b/training; did you mean 'team-a/default'?"),
    (["--stack", "prdo", "--queue", "a/b"], 2, "known stacks: dev, fleet-manager, fleet-swedencentral, fleet-westus3, prod; did you mean 'prod'?"),
    (["--stack", "prod", "--queue", "team-c/default"], 2,
     "sample-job: stack prod has no LocalQueue team-c/default; its LocalQueues: team-a/default, team-a/training, "
     "team-b/default, team-b/training"),
    (["--stack", "prod", "--queue", "default"], 2,
     "sample-job: --queue 'default' is not NAMESPACE/LOCALQUEUE, for example team-a/default"),
    (["--stack", "staging", "--queue", "a/b"], 2,
     "no such stack file; known stacks: dev, fleet-manager, fleet-swedencentral, fleet-westus3, prod"),
    (["--stack", "dev", "--queue", "ml/default", "--gpus", "2"], 1,
     "sample-job: --gpus 2: no flavor of ClusterQueue dev offers 2 GPUs to one pod in both quota and nodes "
     "(cpu: nvidia.com/gpu quota 0, 0 per node; t4: nvidia.com/gpu quota 2, 1 per node (Standard_NC8as_T4_v3)); "
     "ask for fewer"),
])
def test_refusals_say_why_and_exit_as_the_contract_says(args, code, message):
    exit_code, out, err = cli("sample-job", *args)
    assert exit_code == code
    assert out == ""
    assert message in err and "Traceback" not in err


def test_stack_and_queue_are_required():
    exit_code, _, err = cli("sample-job", "--queue", "ml/default")
    assert exit_code == 2 and "--stack" in err
    exit_code, _, err = cli("sample-job", "--stack", "dev", "--gpus", "-1", "--queue", "ml/default")
    assert exit_code == 2 and "--gpus" in err


@pytest.fixture
def custom_stack(tmp_path, monkeypatch):
    """Write a stack file into a copy of the project's layout and point the CLI at it."""
    from aks_kueue.preview import stackfile

    (tmp_path / "stacks").mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    monkeypatch.setattr(stackfile, "project_root", lambda: tmp_path)

    def write(config: dict) -> str:
        (tmp_path / "stacks" / "Pulumi.custom.yaml").write_text(yaml.safe_dump({"config": config}))
        return "custom"
    return write


def _dev_queue(edit_spec) -> dict:
    def edit(c):
        edit_spec(c["aks-kueue:queues"]["clusterQueues"][0]["spec"], c)
    return edited("dev", edit)


def test_workers_shrink_to_the_quota(custom_stack):
    def one_gpu(spec, _):
        spec["resourceGroups"][0]["flavors"][1]["resources"][2]["nominalQuota"] = "1"
    stack = custom_stack(_dev_queue(one_gpu))
    code, out, err = cli("sample-job", "--stack", stack, "--queue", "ml/default", "--kind", "JobSet", "--gpus", "1")
    assert code == 0, err
    workers = yaml.safe_load(out)["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert (workers["parallelism"], workers["completions"]) == (1, 1)


def assert_one_worker_of_one_cpu(stack: str) -> None:
    code, out, err = cli("sample-job", "--stack", stack, "--queue", "ml/default", "--kind", "JobSet")
    assert code == 0, err
    workers = yaml.safe_load(out)["spec"]["replicatedJobs"][0]["template"]["spec"]
    assert workers["parallelism"] == 1
    assert workers["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "1"


def test_pods_shrink_to_a_small_cpu_quota(custom_stack):
    def small(spec, _):
        spec["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "1500m"
    stack = custom_stack(_dev_queue(small))
    assert_one_worker_of_one_cpu(stack)
    code, _, err = cli("sample-job", "--stack", stack, "--queue", "ml/default", "--kind", "RayJob")
    # head 1 cpu and the submitter's 500m leave no room for a worker: refused with the figures.
    assert code == 1
    assert "nominal cpu quota in flavor cpu leaves cpu 0 for the job's workers pods" in err


def test_a_queue_without_gpus_refuses_gpus(custom_stack):
    def no_gpus(spec, config):
        spec["resourceGroups"] = [{"coveredResources": ["cpu", "memory"], "flavors": [
            {"name": "cpu", "resources": [{"name": "cpu", "nominalQuota": "20"}, {"name": "memory", "nominalQuota": "72Gi"}]}]}]
        config["aks-kueue:expectedWorkloads"] = [w for w in config["aks-kueue:expectedWorkloads"]
                                                 if "nvidia.com/gpu" not in w["podSets"][0]["requests"]]
    stack = custom_stack(_dev_queue(no_gpus))
    code, _, err = cli("sample-job", "--stack", stack, "--queue", "ml/default", "--gpus", "1")
    assert code == 1
    assert "--gpus 1: ClusterQueue dev covers no GPU resource (nvidia.com/*, amd.com/*)" in err
    code, out, _ = cli("sample-job", "--stack", stack, "--queue", "ml/default")
    assert code == 0 and "nvidia.com/gpu" not in out.split("apiVersion", 1)[1]


def test_when_kueue_would_send_the_pods_nowhere_the_judge_refuses_the_sample(custom_stack):
    """A flavor listed first with quota but no pool under it: Kueue admits the job there, and its pods
    would stay Pending. The judge's own rule says so, and nothing is printed."""
    def ghost_first(spec, config):
        config["aks-kueue:queues"]["resourceFlavors"].append(
            {"name": "ghost", "spec": {"nodeLabels": {"kubernetes.azure.com/agentpool": "gone"}}})
        spec["resourceGroups"][0]["flavors"].insert(0, {"name": "ghost", "resources": [
            {"name": "cpu", "nominalQuota": "4"}, {"name": "memory", "nominalQuota": "16Gi"},
            {"name": "nvidia.com/gpu", "nominalQuota": "0"}]})
    stack = custom_stack(_dev_queue(ghost_first))
    code, out, err = cli("sample-job", "--stack", stack, "--queue", "ml/default")
    assert code == 1 and out == ""
    assert "no sample fits this queue as the stack stands" in err and "ghost" in err


def test_an_unusable_stack_exits_2_naming_the_key(custom_stack):
    def bad(spec, _):
        spec["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "lots"
    stack = custom_stack(_dev_queue(bad))
    code, _, err = cli("sample-job", "--stack", stack, "--queue", "ml/default")
    assert code == 2
    assert "sample-job: --stack custom cannot be used:" in err
    assert "aks-kueue:queues.clusterQueues[0].spec.resourceGroups[0].flavors[0].resources[0].nominalQuota" in err


def test_the_sample_fits_what_kueues_transformations_charge(custom_stack):
    """A Configuration that charges a cpu_credit per cpu, against 1 credit: the JobSet's two workers shrink
    to one, and what the judge then proves (with the same transformation) admits it."""
    def credits(spec, config):
        spec["resourceGroups"].append({"coveredResources": ["cpu_credits"], "flavors": [
            {"name": "credits", "resources": [{"name": "cpu_credits", "nominalQuota": "1"}]}]})
        config["aks-kueue:queues"]["resourceFlavors"].append({"name": "credits", "spec": {}})
        config["aks-kueue:kueue"]["values"]["managerConfig"] = {"controllerManagerConfigYaml": yaml.safe_dump({
            "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
            "resources": {"transformations": [{"input": "cpu", "strategy": "Retain",
                                               "outputs": {"cpu_credits": "1"}}]}})}
    stack = custom_stack(_dev_queue(credits))
    assert_one_worker_of_one_cpu(stack)
    # The RayJob's head and submitter alone are charged 1.5 credits: no sample, and the figures say why.
    code, _, err = cli("sample-job", "--stack", stack, "--queue", "ml/default", "--kind", "RayJob")
    assert code == 1 and "transformations charge the sample's pods cpu_credits" in err
