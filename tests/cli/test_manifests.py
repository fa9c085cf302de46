"""`validate` and `simulate` over the folders teams already have: mixed kinds, jobs, stdin.

Objects are written here from Kueue's documented behaviour; the quick start is Kueue's
own ("Run a Kubernetes Job" / single ClusterQueue setup): a 9-CPU ClusterQueue and jobs
of 3 pods that each ask for 1 CPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app

V = "kueue.x-k8s.io/v1beta2"
FLAVOR = {"apiVersion": V, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}}
CLUSTER_QUEUE = {"apiVersion": V, "kind": "ClusterQueue", "metadata": {"name": "cluster-queue"},
                 "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", "memory"],
                          "flavors": [{"name": "default-flavor", "resources": [
                              {"name": "cpu", "nominalQuota": 9}, {"name": "memory", "nominalQuota": "36Gi"}]}]}]}}
LOCAL_QUEUE = {"apiVersion": V, "kind": "LocalQueue", "metadata": {"name": "user-queue"},
               "spec": {"clusterQueue": "cluster-queue"}}


def sample_job(**metadata) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"generateName": "sample-job-", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"},
                         **metadata},
            "spec": {"parallelism": 3, "completions": 3, "suspend": True, "template": {"spec": {
                "containers": [{"name": "dummy-job", "image": "registry.k8s.io/e2e-test-images/agnhost:2.53",
                                "args": ["entrypoint-tester", "hello", "world"],
                                "resources": {"requests": {"cpu": 1, "memory": "200Mi"}}}],
                "restartPolicy": "Never"}}}}


SERVICE_ACCOUNT = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "runner"}}
ROLE = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r", "namespace": "x"},
        "rules": []}


def write(path: Path, *documents: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return path


def run(*args, stdin: str | None = None):
    result = CliRunner().invoke(app, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def quick_start(tmp_path: Path) -> Path:
    folder = tmp_path / "quick-start"
    write(folder / "setup" / "single-clusterqueue-setup.yaml", FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE)
    for i in range(4):
        write(folder / f"job-{i}.yml", sample_job(), SERVICE_ACCOUNT)
    return folder


def test_quick_start_nine_cpus_admit_three_of_four_three_pod_jobs(tmp_path):
    code, out, err = run("simulate", str(quick_start(tmp_path)), "--json")
    assert code == 0, err
    document = json.loads(out)
    modes = [w["mode"] for w in document["workloads"]]
    assert modes[:3] == ["Fit", "Fit", "Fit"] and modes[3] != "Fit"
    for workload in document["workloads"]:
        assert workload["podSets"][0]["count"] == 3 if workload["mode"] == "Fit" else True
        assert workload["source"]["apiVersion"] == "batch/v1" and workload["source"]["kind"] == "Job"
        assert workload["source"]["name"].startswith("sample-job-") and workload["namespace"] == "default"
        assert workload["clusterQueue"] == "cluster-queue" and workload["preemptionTargets"] == []
    assert "insufficient unused quota for cpu in flavor default-flavor, 3 more needed" in \
        document["workloads"][3]["message"]
    assert document["summary"] == {"workloads": 4, "Fit": 3, "Preempt": modes.count("Preempt"),
                                   "NoFit": modes.count("NoFit"), "skipped": 4}
    assert {(s["kind"], s["reason"]) for s in document["skipped"]} == {("ServiceAccount", "not a Kueue object")}
    # The jobs had neither name nor namespace: both are said.
    assert "named from generateName 'sample-job-'" in err and "goes to default" in err


def test_folders_are_read_recursively_in_name_order_like_kubectl(tmp_path):
    folder = quick_start(tmp_path)
    (folder / "notes.txt").write_text("not a manifest")
    code, out, _ = run("validate", str(folder), "--json")
    assert code == 0
    files = [Path(o["file"]).relative_to(folder).as_posix() for o in json.loads(out)["objects"]]
    assert files == ["job-0.yml", "job-1.yml", "job-2.yml", "job-3.yml"] + \
        ["setup/single-clusterqueue-setup.yaml"] * 3


def test_validate_a_mixed_file_judges_kueue_objects_and_jobs_and_skips_the_rest(tmp_path):
    job = sample_job(name="ok-job", namespace="team")
    bad = sample_job(name="bad-job", namespace="team",
                     annotations={"kueue.x-k8s.io/job-min-parallelism": "3"})
    path = write(tmp_path / "mixed.yaml", SERVICE_ACCOUNT, FLAVOR, job, ROLE, bad,
                 {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "team"},
                  "spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}})
    code, out, _ = run("validate", str(path), "--json")
    assert code == 1
    document = json.loads(out)
    assert [(o["kind"], o["name"], o["valid"], o["document"]) for o in document["objects"]] == [
        ("ResourceFlavor", "default-flavor", True, 1), ("Job", "ok-job", True, 2), ("Job", "bad-job", False, 4)]
    assert document["objects"][2]["errors"] == [{
        "field": "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]",
        "message": "Invalid value: 3: should be between 0 and 2"}]
    assert [(s["kind"], s["document"], s["reason"][:40]) for s in document["skipped"]] == [
        ("ServiceAccount", 0, "not a Kueue object"), ("Role", 3, "not a Kueue object"),
        ("Deployment", 5, "Kueue would not manage this object: it h")]
    for skipped in document["skipped"]:
        assert set(skipped) == {"file", "document", "apiVersion", "kind", "name", "reason"}
    assert document["summary"] == {"objects": 3, "valid": 2, "invalid": 1, "skipped": 3}


def test_text_output_ends_with_the_summary(tmp_path):
    path = write(tmp_path / "mixed.yaml", SERVICE_ACCOUNT, FLAVOR)
    code, out, _ = run("validate", str(path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("ok      ResourceFlavor default-flavor  (") and "document 1)" in lines[0]
    assert lines[1].startswith("skipped v1 ServiceAccount runner")
    assert lines[-1] == "1 objects: 1 valid, 0 invalid, 1 skipped"


def test_standard_input_mixed_with_files(tmp_path):
    setup = write(tmp_path / "setup.yaml", FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE)
    jobs = yaml.safe_dump_all([sample_job(name="a"), sample_job(name="b")])
    code, out, err = run("simulate", str(setup), "-", "--json", stdin=jobs)
    assert code == 0, err
    workloads = json.loads(out)["workloads"]
    assert [(w["file"], w["document"], w["source"]["name"], w["mode"]) for w in workloads] == [
        ("-", 0, "a", "Fit"), ("-", 1, "b", "Fit")]


def test_namespace_option_places_objects_without_one(tmp_path):
    path = write(tmp_path / "q.yaml", FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE, sample_job(name="a"))
    code, out, err = run("simulate", str(path), "-n", "research", "--json")
    assert code == 0
    [workload] = json.loads(out)["workloads"]
    assert workload["namespace"] == "research" and workload["clusterQueue"] == "cluster-queue"
    assert "LocalQueue user-queue: no namespace, so it goes to research" in err


def test_a_job_without_a_queue_label_gets_the_default_local_queue(tmp_path):
    default = {**LOCAL_QUEUE, "metadata": {"name": "default", "namespace": "team"}}
    job = sample_job(name="plain", namespace="team")
    del job["metadata"]["labels"]
    path = write(tmp_path / "q.yaml", FLAVOR, CLUSTER_QUEUE, default, job)
    code, out, err = run("simulate", str(path), "--json")
    assert code == 0, err
    [workload] = json.loads(out)["workloads"]
    assert (workload["mode"], workload["clusterQueue"]) == ("Fit", "cluster-queue")
    assert "Kueue gives it the LocalQueue 'default'" in err


def test_integrations_option_decides_what_kueue_manages(tmp_path):
    path = write(tmp_path / "q.yaml", FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE, sample_job(name="a"))
    code, out, _ = run("simulate", str(path), "--integrations", "pod,deployment", "--json")
    assert code == 0
    document = json.loads(out)
    assert document["workloads"] == []
    assert document["skipped"][0]["reason"].startswith(
        "Kueue would not manage this object: the integration batch/job is not enabled")
    code, _, err = run("simulate", str(path), "--integrations", "batch/jobs")
    assert code == 2 and "'batch/jobs' is not a Kueue integration; did you mean 'batch/job'" in err
    code, _, err = run("validate", str(path), "--integrations", "pod", "--stack", "dev")
    assert code == 2 and "either --integrations or --stack" in err


def test_stack_option_reads_the_stacks_integrations(tmp_path):
    path = write(tmp_path / "q.yaml", FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE, sample_job(name="a"))
    code, out, err = run("simulate", str(path), "--stack", "dev", "--json")
    assert code == 0, err
    assert [w["mode"] for w in json.loads(out)["workloads"]] == ["Fit"]
    code, out, err = run("validate", str(path), "--stack", "nosuch", "--json")
    assert code == 2 and "no such stack file" in err and json.loads(out)["errors"]


def test_a_configuration_in_the_input_says_which_integrations_are_on(tmp_path):
    config = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
              "integrations": {"frameworks": ["pod"]}}
    path = write(tmp_path / "q.yaml", config, FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE, sample_job(name="a"))
    code, out, err = run("validate", str(path), "--json")
    assert code == 0, err
    document = json.loads(out)
    assert ("Configuration", True) in [(o["kind"], o["valid"]) for o in document["objects"]]
    assert [s["kind"] for s in document["skipped"]] == ["Job"]
    assert "integrations of the Kueue Configuration" in err
    config["waitForPodsReady"] = {"enable": True}
    code, out, _ = run("validate", str(write(tmp_path / "bad.yaml", config)), "--json")
    assert code == 1 and json.loads(out)["objects"][0]["errors"][0]["field"] == "waitForPodsReady.enable"


def test_a_folder_without_kueue_objects_is_fine(tmp_path):
    write(tmp_path / "app" / "rbac.yaml", SERVICE_ACCOUNT, ROLE)
    for command in ("validate", "simulate"):
        code, out, err = run(command, str(tmp_path / "app"), "--json")
        assert code == 0 and "no Kueue objects" in err
        assert json.loads(out)["summary"]["skipped"] == 2


def test_simulate_rejects_jobs_kueue_would_refuse_with_one_json_document(tmp_path):
    bad = sample_job(name="bad", namespace="team", annotations={"kueue.x-k8s.io/job-min-parallelism": "7"})
    path = write(tmp_path / "q.yaml", FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE, bad)
    code, out, err = run("simulate", str(path), "--json")
    assert code == 1
    assert f"{path} document 3: Job team/bad: metadata.annotations[kueue.x-k8s.io/job-min-parallelism]" in err
    document = json.loads(out)
    assert document["workloads"] == [] and [e["document"] for e in document["errors"]] == [3]


def test_the_same_job_twice_is_refused(tmp_path):
    path = write(tmp_path / "q.yaml", FLAVOR, CLUSTER_QUEUE, LOCAL_QUEUE, sample_job(name="a"))
    code, _, err = run("simulate", str(path), str(path))
    assert code == 1 and "Duplicate value" in err and "already defines Job default/a" in err


def test_a_missing_path_and_a_list_that_is_not_objects(tmp_path):
    code, out, err = run("validate", str(tmp_path / "nothing"), "--json")
    assert code == 2 and "no such file" in err and json.loads(out)["errors"][0]["file"] == str(tmp_path / "nothing")
    path = tmp_path / "list.yaml"
    path.write_text("apiVersion: v1\nkind: List\nitems: [1]\n")
    code, _, err = run("validate", str(path))
    assert code == 2 and f"{path} document 0: a list item must be a Kubernetes object" in err


def test_validate_checks_a_configuration_as_strictly_as_kueue_reads_it(tmp_path):
    typo = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
            "waitForPodsReady": {"timeot": "5m"}}
    code, out, _ = run("validate", str(write(tmp_path / "typo.yaml", typo)), "--json")
    assert code == 1
    [error] = json.loads(out)["objects"][0]["errors"]
    assert error["field"] == "waitForPodsReady.timeot" and "timeout" in error["message"]
    legacy = {"apiVersion": "config.kueue.x-k8s.io/v1beta1", "kind": "Configuration",
              "integrations": {"frameworks": ["batch/job"]}}
    job = sample_job(name="a", namespace="team")
    code, out, err = run("validate", str(write(tmp_path / "legacy.yaml", legacy, job)), "--json")
    assert code == 0, err
    assert [o["kind"] for o in json.loads(out)["objects"]] == ["Configuration", "Job"]
