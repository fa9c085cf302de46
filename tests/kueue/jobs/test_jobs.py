"""Jobs become Workloads as Kueue v0.19.2's integrations make them.

The objects are written here from the integrations' documented behaviour (Kueue's
pkg/controller/jobs/*, KubeRay's and Kubeflow's CRD defaults); each test names the rule.
"""

from __future__ import annotations

import pytest

from aks_kueue.kueue.jobs import JobOptions, JobOutcome, derive_workloads, workload_name

Q = {"kueue.x-k8s.io/queue-name": "team"}


def pod_spec(cpu: str = "1", **extra) -> dict:
    return {"containers": [{"name": "main", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
            "restartPolicy": "Never", **extra}


def job(name="train", labels=Q, annotations=None, namespace="ml", **spec) -> dict:
    metadata = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
            "spec": {"template": {"spec": pod_spec()}, **spec}}


def one(objects, options=None):
    [result] = [r for r in derive_workloads(objects, options or JobOptions()) if r.source.name == objects[-1]["metadata"]["name"]]
    return result


def shape(result) -> list[tuple[str, int]]:
    [workload] = result.workloads
    return [(ps["name"], ps["count"]) for ps in workload["spec"]["podSets"]]


# Names ---------------------------------------------------------------------------------

def test_workload_names_follow_kueues_hash():
    # Kueue's own expectations (pkg/controller/jobframework/workload_names_test.go, v0.19.2).
    assert workload_name("Job", "batch", "name", "uid") == "job-name-ef3a1"
    assert workload_name("Job", "batch", "name", "uid", extra="1") == "job-name-2514c"
    long = "x" * 300
    assert len(workload_name("Job", "batch", long, "uid")) == 253
    assert len(workload_name("Job", "batch", long, "uid", short=True)) == 63


def test_a_job_gets_its_workload_name_namespace_and_queue():
    result = one([job(uid_free := "train")])
    [workload] = result.workloads
    assert result.outcome is JobOutcome.WORKLOAD and uid_free == "train"
    assert workload["metadata"]["name"] == workload_name("Job", "batch", "train")
    assert workload["metadata"]["namespace"] == "ml"
    assert workload["spec"]["queueName"] == "team"
    assert workload["spec"]["priority"] == 0 and "priorityClassRef" not in workload["spec"]


def test_the_job_uid_names_the_workload_and_labels_it():
    manifest = job()
    manifest["metadata"]["uid"] = "0c8d7e3b-1111-2222-3333-444455556666"
    [workload] = one([manifest]).workloads
    assert workload["metadata"]["name"] == workload_name("Job", "batch", "train", manifest["metadata"]["uid"])
    assert workload["metadata"]["labels"] == {"kueue.x-k8s.io/job-uid": manifest["metadata"]["uid"]}


# batch/v1 Job ----------------------------------------------------------------------------

@pytest.mark.parametrize("spec, count", [
    ({}, 1),                                      # parallelism defaults to 1
    ({"parallelism": 4}, 4),                      # no completions: parallelism
    ({"parallelism": 4, "completions": 10}, 4),   # more completions than parallel pods
    ({"parallelism": 4, "completions": 2}, 2),    # fewer completions cap the pods
])
def test_job_pod_count_is_parallelism_capped_by_completions(spec, count):
    assert shape(one([job(**spec)])) == [("main", count)]


def test_partial_admission_annotation_sets_min_count():
    result = one([job(annotations={"kueue.x-k8s.io/job-min-parallelism": "2"}, parallelism=5)])
    assert result.workloads[0]["spec"]["podSets"][0]["minCount"] == 2
    off = JobOptions.from_config(feature_gates={"PartialAdmission": False})
    result = one([job(annotations={"kueue.x-k8s.io/job-min-parallelism": "2"}, parallelism=5)], off)
    assert "minCount" not in result.workloads[0]["spec"]["podSets"][0]


@pytest.mark.parametrize("value, message", [
    ("5", "Invalid value: 5: should be between 0 and 4"),
    ("0", "Invalid value: 0: should be between 0 and 4"),
    ("two", 'Invalid value: "two": strconv.Atoi: parsing "two": invalid syntax'),
])
def test_partial_admission_annotation_bounds_are_the_webhooks(value, message):
    result = one([job(annotations={"kueue.x-k8s.io/job-min-parallelism": value}, parallelism=5)])
    assert [(e.field, e.message) for e in result.errors] == [
        ("metadata.annotations[kueue.x-k8s.io/job-min-parallelism]", message)]
    assert result.workloads == []


def test_the_job_webhook_judges_jobs_without_a_queue_too():
    result = one([job(labels={}, annotations={"kueue.x-k8s.io/job-min-parallelism": "9"}, parallelism=2)])
    assert result.outcome is JobOutcome.NOT_MANAGED
    assert [e.message for e in result.errors] == ["Invalid value: 9: should be between 0 and 1"]


def test_common_job_rules():
    bad = job(labels={"kueue.x-k8s.io/queue-name": "Team_A", "kueue.x-k8s.io/max-exec-time-seconds": "0"})
    fields = [e.field for e in one([bad]).errors]
    assert fields == ["metadata.labels[kueue.x-k8s.io/queue-name]",
                      "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]"]
    timed = job(labels={**Q, "kueue.x-k8s.io/max-exec-time-seconds": "600"})
    assert one([timed]).workloads[0]["spec"]["maximumExecutionTimeSeconds"] == 600


def test_pod_template_requests_limits_and_placement_are_carried():
    template = {"metadata": {"labels": {"app": "x"}}, "spec": pod_spec(
        "2", nodeSelector={"agentpool": "gpu"}, overhead={"cpu": "100m"},
        tolerations=[{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
        affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["1"]}]}]}}})}
    template["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    manifest = job()
    manifest["spec"]["template"] = template
    [podset] = one([manifest]).workloads[0]["spec"]["podSets"]
    spec = podset["template"]["spec"]
    assert spec["containers"][0]["resources"] == {"requests": {"cpu": "2"}, "limits": {"nvidia.com/gpu": "1"}}
    assert spec["nodeSelector"] == {"agentpool": "gpu"} and spec["overhead"] == {"cpu": "100m"}
    assert spec["tolerations"][0]["key"] == "sku" and "nodeAffinity" in spec["affinity"]
    assert podset["template"]["metadata"]["labels"] == {"app": "x"}


def test_a_mistyped_pod_template_field_is_named_in_the_jobs_terms():
    manifest = job()
    manifest["spec"]["template"]["spec"]["containers"][0]["resource"] = {"requests": {"cpu": "1"}}
    result = one([manifest])
    assert result.workloads == []
    assert [e.field for e in result.errors] == ["spec.template.spec.containers[0].resource"]


# Queues and who manages what ---------------------------------------------------------------

DEFAULT_QUEUE = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                 "metadata": {"name": "default", "namespace": "ml"}, "spec": {"clusterQueue": "cq"}}


def test_a_job_without_a_queue_gets_the_namespaces_default_local_queue():
    result = one([DEFAULT_QUEUE, job(labels={})])
    assert result.workloads[0]["spec"]["queueName"] == "default"
    assert any("LocalQueue 'default'" in n for n in result.notes)


def test_no_default_queue_elsewhere_and_no_label_means_not_managed():
    result = one([DEFAULT_QUEUE, job(labels={}, namespace="other")])
    assert result.outcome is JobOutcome.NOT_MANAGED and result.workloads == []
    assert result.reason.startswith("Kueue would not manage this object: it has no kueue.x-k8s.io/queue-name label")


def test_a_job_owned_by_a_managed_jobset_gets_no_default_queue_and_no_workload_of_its_own():
    child = job(labels={})
    child["metadata"]["ownerReferences"] = [{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
                                             "name": "parent", "uid": "u", "controller": True}]
    result = one([DEFAULT_QUEUE, child])
    assert result.outcome is JobOutcome.NOT_MANAGED and "its owner, JobSet parent," in result.reason


def test_manage_jobs_without_queue_name_manages_every_job():
    options = JobOptions.from_config(manage_jobs_without_queue_name=True)
    result = one([job(labels={})], options)
    assert result.outcome is JobOutcome.WORKLOAD and "queueName" not in result.workloads[0]["spec"]


def test_a_framework_not_enabled_is_not_managed():
    options = JobOptions.from_config(frameworks=["pod"])
    result = one([job()], options)
    assert result.outcome is JobOutcome.NOT_MANAGED
    assert result.reason.startswith("Kueue would not manage this object: the integration batch/job is not enabled")


def test_kube_system_is_outside_the_managed_namespaces():
    assert one([job(namespace="kube-system")]).outcome is JobOutcome.NOT_MANAGED


def test_every_integration_of_kueue_is_modelled():
    # The 18 names pkg/controller/jobs/*/*_controller.go register (`FrameworkName`), each with a builder.
    from aks_kueue.kueue.catalog import FRAMEWORKS
    from aks_kueue.kueue.jobs import INTEGRATIONS

    assert sorted(i.framework for i in INTEGRATIONS.values()) == sorted(FRAMEWORKS)
    assert all(i.builder is not None for i in INTEGRATIONS.values())


def test_a_kubeflow_job_without_replica_specs_gets_no_workload():
    pytorch = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "p", "namespace": "ml",
                                                                                  "labels": Q}, "spec": {}}
    result = one([pytorch], JobOptions.from_config(frameworks=["kubeflow.org/pytorchjob"]))
    assert result.workloads == [] and [(e.field, e.message) for e in result.errors] == [
        ("spec.pytorchReplicaSpecs", "Required value")]


# Priority ---------------------------------------------------------------------------------

def test_priority_class_label_names_a_workload_priority_class():
    wpc = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass", "metadata": {"name": "high"},
           "value": 1000}
    labelled = job(labels={**Q, "kueue.x-k8s.io/priority-class": "high"})
    spec = one([wpc, labelled]).workloads[0]["spec"]
    assert spec["priorityClassRef"] == {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}
    assert spec["priority"] == 1000
    missing = one([labelled])
    assert missing.outcome is JobOutcome.BLOCKED and "WorkloadPriorityClass 'high'" in missing.reason


def test_pod_priority_class_and_global_default():
    pc = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "batch-low"},
          "value": 50, "globalDefault": True}
    named = job()
    named["spec"]["template"]["spec"]["priorityClassName"] = "batch-low"
    assert one([pc, named]).workloads[0]["spec"]["priorityClassRef"]["kind"] == "PriorityClass"
    assert one([pc, job()]).workloads[0]["spec"]["priority"] == 50  # the globalDefault class


# JobSet ----------------------------------------------------------------------------------

def test_jobset_has_one_pod_set_per_replicated_job():
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
              "metadata": {"name": "js", "namespace": "ml", "labels": Q},
              "spec": {"replicatedJobs": [
                  {"name": "Driver", "template": {"spec": {"template": {"spec": pod_spec()}}}},
                  {"name": "workers", "replicas": 3, "template": {"spec": {
                      "parallelism": 4, "completions": 2, "template": {"spec": pod_spec()}}}}]}}
    # replicas (default 1) x min(parallelism, completions); names lower-cased
    assert shape(one([jobset])) == [("driver", 1), ("workers", 6)]


# Ray ---------------------------------------------------------------------------------------

def ray_cluster_spec(**extra) -> dict:
    return {"headGroupSpec": {"template": {"spec": {"containers": [
        {"name": "ray-head", "image": "rayproject/ray:2.9", "resources": {"requests": {"cpu": "2"}}}]}}},
        "workerGroupSpecs": [{"groupName": "GPU", "replicas": 2, "numOfHosts": 2, "template": {"spec": pod_spec()}},
                             {"groupName": "cpu", "template": {"spec": pod_spec()}}], **extra}


def rayjob(**spec) -> dict:
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "rj", "namespace": "ml", "labels": Q},
            "spec": {"shutdownAfterJobFinishes": True, "rayClusterSpec": ray_cluster_spec(), **spec}}


def test_rayjob_head_workers_and_the_default_submitter():
    result = one([rayjob()])
    # Worker count is replicas x numOfHosts; replicas defaults to 0 (KubeRay's CRD).
    assert shape(result) == [("head", 1), ("gpu", 4), ("cpu", 0), ("submitter", 1)]
    submitter = result.workloads[0]["spec"]["podSets"][3]["template"]["spec"]["containers"][0]
    assert submitter["resources"] == {"limits": {"cpu": "1", "memory": "1Gi"},
                                      "requests": {"cpu": "500m", "memory": "200Mi"}}
    assert submitter["image"] == "rayproject/ray:2.9"  # the head's image


def test_rayjob_sidecar_mode_puts_the_submitter_in_the_head_pod():
    result = one([rayjob(submissionMode="SidecarMode")])
    podsets = result.workloads[0]["spec"]["podSets"]
    assert [p["name"] for p in podsets] == ["head", "gpu", "cpu"]
    assert [c["name"] for c in podsets[0]["template"]["spec"]["containers"]] == ["ray-head", "ray-job-submitter"]
    http = one([rayjob(submissionMode="HTTPMode")])
    assert [p["name"] for p in http.workloads[0]["spec"]["podSets"]] == ["head", "gpu", "cpu"]


def test_raycluster_autoscaler_sidecar_only_as_an_elastic_job():
    cluster = {"apiVersion": "ray.io/v1", "kind": "RayCluster",
               "metadata": {"name": "rc", "namespace": "ml", "labels": Q},
               "spec": ray_cluster_spec(enableInTreeAutoscaling=True)}
    refused = one([cluster])
    assert [e.field for e in refused.errors] == ["spec.enableInTreeAutoscaling"]
    gate = [{"name": "kueue.x-k8s.io/elastic-job"}]
    cluster["metadata"]["annotations"] = {"kueue.x-k8s.io/elastic-job": "true"}
    cluster["spec"]["headGroupSpec"]["template"]["spec"]["schedulingGates"] = gate
    for group in cluster["spec"]["workerGroupSpecs"]:
        group["template"]["spec"]["schedulingGates"] = gate
    elastic = one([cluster])
    head = elastic.workloads[0]["spec"]["podSets"][0]["template"]["spec"]["containers"]
    assert [c["name"] for c in head] == ["ray-head", "autoscaler"]
    assert head[1]["resources"]["requests"] == {"cpu": "500m", "memory": "512Mi"}


def test_rayjob_webhook_rules():
    assert [e.field for e in one([rayjob(shutdownAfterJobFinishes=False)]).errors] == [
        "spec.shutdownAfterJobFinishes"]
    existing = rayjob(clusterSelector={"ray.io/cluster": "shared"})
    del existing["spec"]["rayClusterSpec"]
    assert one([existing]).outcome is JobOutcome.NOT_MANAGED


# MPIJob ------------------------------------------------------------------------------------

def test_mpijob_launcher_then_workers():
    mpijob = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
              "metadata": {"name": "m", "namespace": "ml", "labels": Q},
              "spec": {"mpiReplicaSpecs": {"Worker": {"replicas": 8, "template": {"spec": pod_spec()}},
                                           "Launcher": {"template": {"spec": pod_spec()}}}}}
    assert shape(one([mpijob])) == [("launcher", 1), ("worker", 8)]


# Pods, groups, Deployments, StatefulSets ------------------------------------------------------

def pod(name, group=None, total=None, cpu="1", **annotations) -> dict:
    labels = dict(Q)
    if group:
        labels["kueue.x-k8s.io/pod-group-name"] = group
    notes = dict(annotations)
    if total is not None:
        notes["kueue.x-k8s.io/pod-group-total-count"] = str(total)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml", "labels": labels,
                                                           "annotations": notes}, "spec": pod_spec(cpu)}


def test_a_plain_pod_is_one_pod_set_of_one():
    assert shape(one([pod("p")])) == [("main", 1)]


def test_a_pod_group_is_one_workload_named_after_the_group_with_a_pod_set_per_role():
    pods = [pod("driver", "g", 3, cpu="2"), pod("w0", "g", 3), pod("w1", "g", 3)]
    results = derive_workloads(pods, JobOptions())
    assert [r.outcome for r in results] == [JobOutcome.WORKLOAD, JobOutcome.MEMBER, JobOutcome.MEMBER]
    [workload] = results[0].workloads
    assert workload["metadata"]["name"] == "g"
    assert sorted(p["count"] for p in workload["spec"]["podSets"]) == [1, 2]
    assert workload["metadata"]["annotations"]["kueue.x-k8s.io/is-group-workload"] == "true"


def test_an_incomplete_pod_group_waits_unless_fast_admission():
    results = derive_workloads([pod("a", "g", 3), pod("b", "g", 3)], JobOptions())
    assert results[0].outcome is JobOutcome.BLOCKED and "2 of its 3 pods" in results[0].reason
    fast = derive_workloads([pod("a", "g", 3, **{"kueue.x-k8s.io/pod-group-fast-admission": "true"})], JobOptions())
    assert [(p["count"]) for p in fast[0].workloads[0]["spec"]["podSets"]] == [3]


def test_pod_group_metadata_rules():
    result = one([pod("a", "g")])  # a group name without a total count
    assert [e.field for e in result.errors] == ["metadata.annotations[kueue.x-k8s.io/pod-group-total-count]"]


def test_statefulset_is_one_group_workload_of_its_replicas():
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": "ml",
                                                                       "labels": Q},
           "spec": {"replicas": 3, "template": {"spec": pod_spec()}}}
    result = one([sts])
    assert shape(result) == [("main", 3)]
    assert result.workloads[0]["metadata"]["name"] == workload_name("StatefulSet", "apps", "db")


def test_deployment_pods_each_get_a_workload():
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ml",
                                                                             "labels": Q},
                  "spec": {"replicas": 3, "template": {"spec": pod_spec()}}}
    result = one([deployment])
    assert len(result.workloads) == 3
    assert all([(p["name"], p["count"]) for p in w["spec"]["podSets"]] == [("main", 1)] for w in result.workloads)


# TrainJob ----------------------------------------------------------------------------------

RUNTIME = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
           "metadata": {"name": "torch-distributed"},
           "spec": {"mlPolicy": {"numNodes": 1, "torch": {"numProcPerNode": "auto"}},
                    "template": {"spec": {"replicatedJobs": [
                        {"name": "dataset-initializer",
                         "template": {"metadata": {"labels": {
                             "trainer.kubeflow.org/trainjob-ancestor-step": "dataset-initializer"}},
                             "spec": {"template": {"spec": pod_spec("500m")}}}},
                        {"name": "node",
                         "template": {"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                                      "spec": {"template": {"spec": {"containers": [
                                          {"name": "node", "image": "pytorch"}]}}}}}]}}}}


def trainjob(**trainer) -> dict:
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "tj", "namespace": "ml", "labels": Q},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": trainer}}


def test_trainjob_is_derived_from_its_runtime():
    result = one([RUNTIME, trainjob(numNodes=4, resourcesPerNode={"requests": {"nvidia.com/gpu": "2"}})])
    assert shape(result) == [("dataset-initializer", 1), ("node", 4)]
    node = result.workloads[0]["spec"]["podSets"][1]["template"]["spec"]["containers"][0]
    assert node["resources"] == {"requests": {"nvidia.com/gpu": "2"}}
    assert shape(one([RUNTIME, trainjob()])) == [("dataset-initializer", 1), ("node", 1)]  # the runtime's numNodes


def test_trainjob_without_its_runtime_says_it_is_needed():
    result = one([trainjob(numNodes=2)])
    assert result.outcome is JobOutcome.BLOCKED and result.workloads == []
    assert "ClusterTrainingRuntime 'torch-distributed'" in result.reason and "not in the input" in result.reason


# Topology -------------------------------------------------------------------------------------

def test_topology_annotations_become_topology_requests_and_are_checked():
    manifest = job(parallelism=4)
    manifest["spec"]["template"]["metadata"] = {"annotations": {
        "kueue.x-k8s.io/podset-required-topology": "topology.kubernetes.io/zone"}}
    [podset] = one([manifest]).workloads[0]["spec"]["podSets"]
    assert podset["topologyRequest"] == {"required": "topology.kubernetes.io/zone",
                                         "podIndexLabel": "batch.kubernetes.io/job-completion-index"}
    manifest["spec"]["template"]["metadata"]["annotations"]["kueue.x-k8s.io/podset-slice-size"] = "2"
    fields = [e.field for e in one([manifest]).errors]
    assert fields == ["spec.template.metadata.annotations[kueue.x-k8s.io/podset-slice-size]"]


def test_odd_shapes_are_errors_not_crashes():
    odd = job(parallelism="four")
    odd["spec"]["template"]["spec"]["containers"] = "none"
    result = one([odd])
    assert result.errors and result.workloads == []
    assert any(e.field == "spec.parallelism" for e in result.errors)
