"""One test per Kueue v0.19.2 integration, built from Kueue's own example manifest for the kind
(`tests/fixtures/kueue-examples`, site/static/examples at v0.19.2), or from a manifest written
from the upstream type where there is none. Each pins the pod-set names, counts and per-pod
requests (Kueue's units: cpu in milli-units, memory in bytes) that the integration's builder
code makes; the test names the upstream file it follows.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from aks_kueue.admission import workload_info
from aks_kueue.kueue.catalog import FRAMEWORKS
from aks_kueue.kueue.jobs import JobOptions, JobOutcome, derive_workloads, workload_name
from aks_kueue.kueue.jobs.podsets import Reader
from aks_kueue.kueue.manifests import complete, read_inputs

EXAMPLES = Path(__file__).parents[2] / "fixtures" / "kueue-examples"
ALL = JobOptions.from_config(frameworks=FRAMEWORKS, feature_gates={"SparkApplicationIntegration": True})
MI, GI = 2**20, 2**30


def example(*parts: str) -> list[dict]:
    documents = read_inputs([EXAMPLES.joinpath(*parts)])
    complete(documents, "default")
    return [d.manifest for d in documents]


def results(objects: list[dict], options: JobOptions = ALL):
    return [r for r in derive_workloads(objects, options) if r.outcome is not JobOutcome.MEMBER]


def shapes(workload: dict) -> list[tuple[str, int, dict]]:
    """(name, count, one pod's charge) per pod set, as the admission core reads the Workload."""
    return [(ps.name, ps.count, ps.per_pod) for ps in workload_info(workload).podsets]


def only(objects: list[dict], options: JobOptions = ALL) -> dict:
    [result] = results(objects, options)
    assert result.errors == [] and result.outcome is JobOutcome.WORKLOAD, (result.errors, result.reason)
    [workload] = result.workloads
    return workload


# Already modelled: checked against the upstream builders ---------------------------------------

def test_batch_job():
    # pkg/controller/jobs/job/job_controller.go `PodSets`, `podsCount`: parallelism 3 capped by completions 3.
    workload = only(example("jobs", "sample-job.yaml"))
    assert shapes(workload) == [("main", 3, {"cpu": 1000, "memory": 200 * MI})]


def test_jobset():
    # pkg/controller/jobs/jobset/jobset_controller.go `PodSets`: replicas (1 when unset) x pods per job.
    workload = only(example("jobs", "sample-jobset.yaml"))
    assert shapes(workload) == [("workers", 1, {"cpu": 1000, "memory": 200 * MI}),
                                ("driver", 1, {"cpu": 2000, "memory": 200 * MI})]


def test_mpijob():
    # pkg/controller/jobs/mpijob/mpijob_controller.go `orderedReplicaTypes`: Launcher, then Worker.
    workload = only(example("jobs", "sample-mpijob.yaml"))
    assert shapes(workload) == [("launcher", 1, {"cpu": 1000, "memory": GI}),
                                ("worker", 2, {"cpu": 1000, "memory": GI})]


def test_raycluster():
    # pkg/controller/jobs/raycluster/common.go `BuildPodSets`: head, then a pod set per worker group.
    workload = only(example("jobs", "ray-cluster-sample.yaml"))
    assert shapes(workload) == [("head", 1, {"cpu": 1000, "memory": 2 * 10**9}),
                                ("small-group", 1, {"cpu": 1000, "memory": 10**9})]


def test_rayjob():
    # pkg/controller/jobs/rayjob/rayjob_controller.go: K8sJobMode adds KubeRay's default submitter.
    workload = only(example("jobs", "ray-job-sample.yaml"))
    names = [(name, count) for name, count, _ in shapes(workload)]
    assert names == [("head", 1), ("small-group", 1), ("submitter", 1)]
    assert shapes(workload)[2][2] == {"cpu": 500, "memory": 200 * MI}


def test_pod_and_pod_group():
    # pkg/controller/jobs/pod/pod_controller.go `constructPodSet` and `constructGroupPodSets`.
    assert shapes(only(example("pods-kueue", "kueue-pod.yaml"))) == [("main", 1, {"cpu": 3000})]
    group = only(example("pods-kueue", "kueue-pod-group.yaml"))
    assert group["metadata"]["name"] == "sample-group"
    [(role, count, per_pod)] = shapes(group)
    assert count == 2 and per_pod == {"cpu": 3000}


def test_deployment_and_statefulset():
    # deployment_webhook.go hands each pod to the pod integration; statefulset_reconciler.go `constructWorkload`.
    [deployment] = results(example("serving-workloads", "sample-deployment.yaml"))
    assert [shapes(w) for w in deployment.workloads] == [[("main", 1, {"cpu": 100})]] * 3
    assert shapes(only(example("serving-workloads", "sample-statefulset.yaml"))) == [("main", 3, {"cpu": 100})]


# Kubeflow Training Operator v1 ------------------------------------------------------------------

@pytest.mark.parametrize("file, kind, expected", [
    ("sample-pytorchjob.yaml", "PyTorchJob", [("master", 1, {"cpu": 1000, "memory": 200 * MI}),
                                              ("worker", 1, {"cpu": 1000, "memory": 200 * MI})]),
    ("sample-tfjob.yaml", "TFJob", [("ps", 1, {"cpu": 1000, "memory": 200 * MI}),
                                    ("worker", 2, {"cpu": 1000, "memory": 200 * MI})]),
    ("sample-paddlejob.yaml", "PaddleJob", [("worker", 2, {"cpu": 1000, "memory": 256 * MI})]),
    ("sample-jaxjob.yaml", "JAXJob", [("worker", 2, {"cpu": 1000, "memory": 200 * MI})]),
])
def test_kubeflow_v1_jobs(file, kind, expected):
    # kubeflowjob_controller.go `PodSets`: a pod set per replica type present, in the kind's
    # `OrderedReplicaTypes` (tfjob_controller.go: Chief, Master, PS, Worker, Evaluator), named in
    # lower case, `replicas` pods (1 when unset).
    objects = example("jobs", file)
    workload = only(objects)
    assert shapes(workload) == expected
    assert workload["metadata"]["name"] == workload_name(kind, "kubeflow.org", objects[0]["metadata"]["name"])
    # Not enabled (the chart's default list leaves them out): not managed, and says why.
    [off] = results(objects, JobOptions())
    assert off.outcome is JobOutcome.NOT_MANAGED and f"kubeflow.org/{kind.lower()}" in off.reason


def test_xgboostjob():
    # xgboostjob_controller.go: Master, then Worker. Kueue's sample writes `cpu: 0.5` as a JSON number,
    # which an int-or-string quantity in a CRD schema refuses; quoted, it makes the Workload.
    objects = example("jobs", "sample-xgboostjob.yaml")
    [refused] = results(objects)
    assert {e.field for e in refused.errors} == {"spec.xgbReplicaSpecs[Master].template.spec.containers[0].resources"
                                                 ".requests.cpu", "spec.xgbReplicaSpecs[Worker].template.spec."
                                                 "containers[0].resources.requests.cpu"}
    quoted = copy.deepcopy(objects[0])
    for replica in quoted["spec"]["xgbReplicaSpecs"].values():
        for container in replica["template"]["spec"]["containers"]:
            for kind in ("requests", "limits"):
                if "cpu" in container["resources"].get(kind, {}):
                    container["resources"][kind]["cpu"] = str(container["resources"][kind]["cpu"])
    assert shapes(only([quoted])) == [("master", 1, {"cpu": 500, "memory": 256 * MI}),
                                      ("worker", 2, {"cpu": 500, "memory": 256 * MI})]


def test_kubeflow_run_policy_priority_class_comes_first():
    # kubeflowjob_controller.go `PriorityClass`: runPolicy.schedulingPolicy.priorityClass, then the templates.
    job = example("jobs", "sample-pytorchjob.yaml")[0]
    job["spec"]["runPolicy"] = {"schedulingPolicy": {"priorityClass": "urgent"}}
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["priorityClassName"] = "low"
    classes = [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
               for n, v in (("urgent", 1000), ("low", 10))]
    spec = only([*classes, job])["spec"]
    assert spec["priorityClassRef"]["name"] == "urgent" and spec["priority"] == 1000


def test_a_kubeflow_replica_type_under_another_key_is_not_counted():
    job = example("jobs", "sample-pytorchjob.yaml")[0]
    job["spec"]["pytorchReplicaSpecs"]["worker"] = job["spec"]["pytorchReplicaSpecs"].pop("Worker")
    [result] = results([job])
    assert [name for name, _, _ in shapes(result.workloads[0])] == ["master"]
    assert any("'worker' is not counted" in note for note in result.notes)


# LeaderWorkerSet --------------------------------------------------------------------------------

def test_leaderworkerset():
    # leaderworkerset_reconciler.go `filterWorkloads`: one Workload per replica, named after `<name>-<i>`;
    # `podSets`: leader (1) and worker (size - 1).
    objects = example("serving-workloads", "sample-leaderworkerset.yaml")
    [result] = results(objects)
    assert [w["metadata"]["name"] for w in result.workloads] == [
        workload_name("LeaderWorkerSet", "leaderworkerset.x-k8s.io", f"nginx-leaderworkerset-{i}") for i in range(2)]
    assert [shapes(w) for w in result.workloads] == [[("leader", 1, {"cpu": 100}), ("worker", 2, {"cpu": 200})]] * 2
    annotations = result.workloads[1]["metadata"]["annotations"]
    assert annotations["kueue.x-k8s.io/component-workload-index"] == "1"
    assert annotations["kueue.x-k8s.io/is-group-workload"] == "true"
    template = result.workloads[0]["spec"]["podSets"][1]["template"]
    assert template["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "user-queue"
    assert template["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-serving"] == "true"


def test_leaderworkerset_without_a_leader_template_and_its_replica_bounds():
    lws = example("serving-workloads", "sample-leaderworkerset.yaml")[0]
    del lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]
    lws["spec"]["replicas"] = 1
    assert shapes(only([lws])) == [("main", 3, {"cpu": 200})]
    lws["spec"]["replicas"] = -1
    [refused] = results([lws])
    assert [(e.field, e.message) for e in refused.errors] == [
        ("spec.replicas", "Invalid value: -1: invalid LeaderWorkerSet replicas: must be >= 0, got -1")]


def test_leaderworkerset_with_topology_groups_leader_and_workers():
    # The TAS sample: both templates in podset group lws-group, the worker pod index label kept.
    [result] = results(example("serving-workloads", "sample-leaderworkerset-tas.yaml"))
    pod_sets = result.workloads[0]["spec"]["podSets"]
    assert [p["topologyRequest"].get("podSetGroupName") for p in pod_sets] == ["lws-group", "lws-group"]
    assert pod_sets[1]["topologyRequest"]["podIndexLabel"] == "leaderworkerset.sigs.k8s.io/worker-index"
    assert shapes(result.workloads[0]) == [("leader", 1, {"cpu": 100}),
                                           ("worker", 2, {"cpu": 200, "nvidia.com/gpu": 1})]


# RayService ------------------------------------------------------------------------------------

def test_rayservice():
    # rayservice_controller.go `PodSets`: raycluster.BuildPodSets of spec.rayClusterConfig.
    workload = only(example("jobs", "ray-service-sample.yaml"))
    assert shapes(workload) == [("head", 1, {"cpu": 2000, "memory": 4 * GI}),
                                ("small-group", 1, {"cpu": 1000, "memory": 2 * GI})]
    assert workload["metadata"]["name"] == workload_name("RayService", "ray.io", "test-rayservice")


def test_rayservice_webhook_refuses_autoscaling_outside_an_elastic_job():
    service = example("jobs", "ray-service-sample.yaml")[0]
    service["spec"]["rayClusterConfig"]["enableInTreeAutoscaling"] = True
    [refused] = results([service])
    assert [(e.field, e.message) for e in refused.errors] == [
        ("spec.rayClusterSpec.enableInTreeAutoscaling",
         "Invalid value: true: a kueue managed job should only use autoscaling when workload slicing is enabled")]


# AppWrapper -------------------------------------------------------------------------------------

def test_appwrapper_declared_pod_sets():
    # appwrapper_controller.go `PodSets`: `<name>-<n>` per declared pod set, `replicas` pods each.
    deployment = only(example("appwrapper", "deployment-sample.yaml"))
    assert shapes(deployment) == [("sample-appwrapper-deployment-0", 3, {"cpu": 100})]
    lws = only(example("appwrapper", "leaderworkerset-sample.yaml"))
    assert shapes(lws) == [("sample-appwrapper-lws-0", 2, {"cpu": 100}), ("sample-appwrapper-lws-1", 3, {"cpu": 200})]


def test_appwrapper_infers_pod_sets_of_the_kinds_it_knows():
    # appwrapper utils.go `InferPodSets`: a PyTorchJob's Master and Worker, `replicas` each.
    pytorch = only(example("appwrapper", "pytorch-sample.yaml"))
    assert shapes(pytorch) == [("sample-appwrapper-pytorch-job-0", 1, {"cpu": 1000}),
                               ("sample-appwrapper-pytorch-job-1", 1, {"cpu": 1000})]
    wrapper = example("appwrapper", "pytorch-sample.yaml")[0]
    job = example("jobs", "sample-job.yaml")[0]
    del job["metadata"]
    wrapper["spec"]["components"] = [{"template": job}, {"template": {"apiVersion": "example.com/v1", "kind": "Custom",
                                                                      "spec": {"template": {"spec": {}}}}}]
    # A Job: parallelism capped by completions; an unknown kind without declared pod sets: none.
    assert shapes(only([wrapper])) == [("sample-appwrapper-pytorch-job-0", 3, {"cpu": 1000, "memory": 200 * MI})]


def test_appwrapper_hands_kueue_sidecars_as_plain_init_containers():
    # `copyContainers` copies name, image, command, args and resources, not restartPolicy.
    wrapper = example("appwrapper", "deployment-sample.yaml")[0]
    pod = wrapper["spec"]["components"][0]["template"]["spec"]["template"]["spec"]
    pod["initContainers"] = [{"name": "proxy", "image": "p", "restartPolicy": "Always",
                              "resources": {"requests": {"cpu": "50m"}}}]
    assert shapes(only([wrapper])) == [("sample-appwrapper-deployment-0", 3, {"cpu": 100})]


# SparkApplication --------------------------------------------------------------------------------

def test_sparkapplication():
    # sparkapplication_controller.go `PodSets`: driver (1) and executor (`instances`); sparkapplication_podset.go
    # sets coreRequest and memory (Java units: 1g is 1Gi) on the role's container.
    objects = example("jobs", "sample-sparkapplication.yaml")
    workload = only(objects)
    assert shapes(workload) == [("driver", 1, {"cpu": 1000, "memory": GI}),
                                ("executor", 2, {"cpu": 1000, "memory": GI})]
    # The integration is alpha and its gate is off by default: enabled without the gate, not managed.
    without_gate = JobOptions.from_config(frameworks=["sparkoperator.k8s.io/sparkapplication"])
    [off] = results(objects, without_gate)
    assert off.outcome is JobOutcome.NOT_MANAGED and "needs the feature gate SparkApplicationIntegration" in off.reason


def test_sparkapplication_defaults_limits_gpus_and_webhook():
    app = example("jobs", "sample-sparkapplication.yaml")[0]
    del app["spec"]["executor"]["instances"], app["spec"]["executor"]["memory"]
    app["spec"]["executor"]["memoryLimit"] = "2048m"
    app["spec"]["executor"]["gpu"] = {"name": "nvidia.com/gpu", "quantity": 1}
    # The operator defaults instances to 1 and memory to 1g; the GPU is a limit, which Kueue counts.
    assert shapes(only([app]))[1] == ("executor", 1, {"cpu": 1000, "memory": GI, "nvidia.com/gpu": 1})
    app["spec"]["mode"] = "client"
    app["spec"]["dynamicAllocation"] = {"enabled": True}
    [refused] = results([app])
    assert [e.field for e in refused.errors] == ["spec.mode", "spec.dynamicAllocation.enabled"]


def test_spark_java_memory_units():
    from aks_kueue.kueue.jobs.spark import java_memory

    assert [java_memory(v) for v in ("512m", "2g", "1gb", "4096", "1G")] == ["512Mi", "2Gi", "1Gi", "4096", "1GGi"]


def test_builders_read_bad_shapes_as_errors_not_crashes():
    from aks_kueue.kueue.jobs import appwrapper, kubeflow, leaderworkerset, spark

    bad = {"apiVersion": "x", "kind": "PyTorchJob", "metadata": {"name": "b"}, "spec": {"pytorchReplicaSpecs": {
        "Master": "no"}}}
    read = Reader()
    assert kubeflow.kubeflow_job(bad, ALL, read) == [] and read.errors
    for builder in (appwrapper.app_wrapper, leaderworkerset.pod_sets, spark.spark_application):
        builder({"metadata": {"name": "b"}, "spec": {"components": "x", "leaderWorkerTemplate": [],
                                                     "driver": "x", "executor": {"instances": "two"}}}, ALL, Reader())
