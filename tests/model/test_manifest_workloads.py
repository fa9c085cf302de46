"""`expectedWorkloads: [{manifest: PATH}]`: a job file turned into the Workload Kueue would create,
proven by the pack exactly as a hand-written shape is."""

from __future__ import annotations

import copy

import yaml

from aks_kueue.judge import judge
from tests.conftest import ROOT, edited, model_of, refusals, run_config
from tests.model.test_parity import assert_parity

JOB = ROOT / "tests" / "fixtures" / "jobs" / "finetune-job.yaml"


def with_job(path) -> dict:
    return edited("dev", lambda c: c.update({"aks-kueue:expectedWorkloads": [{"manifest": str(path)}]}))


def test_a_job_file_becomes_the_workload_kueue_would_create():
    [workload] = model_of(with_job(JOB)).workloads
    manifest = workload.manifest
    assert workload.key == "aks-kueue:expectedWorkloads[0]"
    assert manifest["kind"] == "Workload" and manifest["metadata"]["namespace"] == "ml"
    assert manifest["metadata"]["name"].startswith("job-finetune-")
    assert manifest["spec"]["queueName"] == "default"
    [pod_set] = manifest["spec"]["podSets"]
    assert pod_set["count"] == 2
    container = pod_set["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": "1"}


def test_a_fitting_job_is_proven_and_a_too_big_one_refused(tmp_path):
    config = with_job(JOB)
    assert refusals(config) == []
    assert [f for f in judge(model_of(config)).errors] == []
    big = yaml.safe_load(JOB.read_text())
    big["spec"]["parallelism"] = big["spec"]["completions"] = 3  # 3 GPUs on a queue of 2
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(big))
    [finding] = judge(model_of(with_job(path))).errors
    assert finding.kind == "workload-not-admitted" and finding.key == "aks-kueue:expectedWorkloads[0]"


def test_the_pack_reads_the_derived_workload_back():
    assert_parity(with_job(JOB), "dev", unknown_outputs=False)
    run = run_config(with_job(JOB), "dev")
    carrier = next(r for r in run.registrations if r.type == "kubernetes:core/v1:ConfigMap")
    assert "job-finetune-" in carrier.inputs["data"]["workloads.yaml"]


def test_a_file_without_a_job_or_a_job_kueue_would_not_manage_is_refused(tmp_path):
    empty = tmp_path / "cm.yaml"
    empty.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: ml}\n")
    [problem] = refusals(with_job(empty))
    assert problem.startswith("aks-kueue:expectedWorkloads[0].manifest: ") and "holds no job Kueue manages" in problem
    ray = copy.deepcopy(yaml.safe_load(JOB.read_text()))
    ray.update(apiVersion="ray.io/v1", kind="RayJob", spec={"entrypoint": "python x.py", "rayClusterSpec": {
        "headGroupSpec": {"template": {"spec": {"containers": [{"name": "head", "image": "ray"}]}}}}})
    unmanaged = tmp_path / "ray.yaml"
    unmanaged.write_text(yaml.safe_dump(ray))
    config = with_job(unmanaged)
    config["aks-kueue:kueue"]["integrations"] = ["batch/job"]
    [problem] = refusals(config)
    assert "Kueue would not manage this object" in problem


def test_a_missing_file_is_refused_naming_the_key():
    [problem] = refusals(with_job(ROOT / "tests" / "fixtures" / "jobs" / "nope.yaml"))
    assert problem.startswith("aks-kueue:expectedWorkloads[0].manifest: ") and "no such file" in problem


def test_a_job_file_with_only_generate_name_is_named_as_simulate_names_it(tmp_path):
    job = yaml.safe_load(JOB.read_text())
    job["metadata"]["generateName"] = job["metadata"].pop("name") + "-"
    path = tmp_path / "generated.yaml"
    path.write_text(yaml.safe_dump(job))
    [workload] = model_of(with_job(path)).workloads
    import re

    assert re.fullmatch(r"job-finetune-[b-z2-9]{5}-[0-9a-f]{5}", workload.manifest["metadata"]["name"])
    assert refusals(with_job(path)) == []
