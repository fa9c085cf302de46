"""Each integration's pod sets, as its `PodSets()` builds them in Kueue v0.19.2.

Sources (kubernetes-sigs/kueue, tag v0.19.2):
- batch/v1 Job: pkg/controller/jobs/job/job_controller.go (`PodSets`, `podsCount`, `minPodsCount`).
- JobSet: pkg/controller/jobs/jobset/jobset_controller.go (`PodSets`, `PodsCountPerReplica`).
- RayCluster, RayJob and RayService: pkg/controller/jobs/raycluster/common.go (`BuildPodSets`,
  `effectiveWorkerCount`, `autoscalerContainer`, the Redis cleanup floor) and
  pkg/controller/jobs/rayjob/rayjob_controller.go (`addSubmitterPodSet`,
  `addSidecarSubmitterToHeadPodSet`, `defaultSubmitterResources`, `getSubmitterTemplate`) and
  pkg/controller/jobs/rayservice/rayservice_controller.go (`PodSets`).
- MPIJob (kubeflow.org/v2beta1): pkg/controller/jobs/mpijob/mpijob_controller.go.
- Pods and pod groups: pkg/controller/jobs/pod/pod_controller.go (`constructPodSet`,
  `constructGroupPodSets`, `constructGroupPodSetsFast`) and pkg/util/pod/pod.go (`GenerateRoleHash`).
- StatefulSet: pkg/controller/jobs/statefulset/statefulset_reconciler.go (`constructWorkload`).
- TrainJob: pkg/controller/jobs/trainjob/trainjob_controller.go (`getChildJobSet`), with the
  Kubeflow Trainer runtime code Kueue vendors (vendor/github.com/kubeflow/trainer/v2/pkg/
  runtime/core/trainingruntime.go `newRuntimeInfo`, plugins/{plainml,torch,mpi}, plugins/jobset/builder.go).
- Topology requests: pkg/controller/jobframework/tas.go (`podSetTopologyRequestBuilder.Build`).
- Kubeflow v1 jobs, LeaderWorkerSet, AppWrapper and SparkApplication: their own modules beside this one.

API-server defaults that Kueue sees on the stored object are applied here too: a JobSet
replicated job's `replicas` (1), a Ray worker group's `replicas` (0) and `numOfHosts` (1),
a RayJob's `submissionMode` (K8sJobMode).
"""

from __future__ import annotations

import builtins
import copy
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from aks_kueue.k8s.objects import map_at
from aks_kueue.k8s import field as k8s_field
from aks_kueue.k8s.field import Path
from aks_kueue.kueue.jobs.model import (DEFAULT_POD_SET, ELASTIC_JOB, MIN_PARALLELISM, ROLE_HASH, JobOptions)
from aks_kueue.k8s.field import FieldError

JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
JOBSET_JOB_INDEX = "jobset.sigs.k8s.io/job-index"
MPI_REPLICA_INDEX = "training.kubeflow.org/replica-index"
POD_GROUP_POD_INDEX = "kueue.x-k8s.io/pod-group-pod-index"
STATEFULSET_POD_INDEX = "apps.kubernetes.io/pod-index"
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED_TOPOLOGY = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
PODSET_GROUP_NAME = "kueue.x-k8s.io/podset-group-name"
# KubeRay's defaults that Kueue mirrors (rayjob_controller.go, raycluster/common.go).
SUBMITTER_CONTAINER = "ray-job-submitter"
SUBMITTER_RESOURCES = {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "500m", "memory": "200Mi"}}
AUTOSCALER_RESOURCES = {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}}
REDIS_CLEANUP_REQUESTS = {"cpu": "200m", "memory": "256Mi"}
RAY_FT_ANNOTATION = "ray.io/ft-enabled"
# Kubeflow Trainer (vendor/github.com/kubeflow/trainer/v2/pkg/constants/constants.go).
TRAINJOB_ANCESTOR = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER_ANCESTOR = "trainer"
TRAINER_NODE = "node"
# Controller-managed pod labels that Kueue drops from a Job's template (job_controller.go `cleanLabels`).
_JOB_MANAGED_LABELS = ("controller-uid", "batch.kubernetes.io/controller-uid")


@dataclass
class PodSet:
    """One pod set, with the job field that holds its pod template (to name errors in the
    job's terms; "" for a pod, whose own metadata and spec are the template)."""

    name: str
    count: int
    template: dict[str, Any]
    path: str
    min_count: Optional[int] = None
    topology: Optional[dict[str, Any]] = None
    # Where the topology annotations are read, when not on `template` (a pod, a StatefulSet).
    annotated: Optional[dict[str, Any]] = None

    def manifest(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "count": self.count}
        if self.min_count is not None:
            out["minCount"] = self.min_count
        out["template"] = self.template
        if self.topology is not None:
            out["topologyRequest"] = self.topology
        return out


@dataclass
class Reader:
    """Typed reads of an unchecked manifest; a wrong type becomes a FieldError, not a crash."""

    errors: list[FieldError] = field(default_factory=list)

    def _read(self, parent: Any, key: str, path: str, kind: type, type_name: str, required: bool = False) -> Any:
        """The value at `key`; None when it is unset or (reported) not of type `kind`."""
        value = parent.get(key) if isinstance(parent, dict) else None
        # The path is built only for an error: every job's every field is read here.
        if value is None:
            if required:
                self.errors.append(k8s_field.required(Path(path).child(key)))
        elif isinstance(value, bool) or not isinstance(value, kind):
            self.errors.append(k8s_field.invalid(Path(path).child(key), value, f"must be of type {type_name}"))
            return None
        return value

    def map(self, parent: Any, key: str, path: str, required: bool = False) -> dict[str, Any]:
        value = self._read(parent, key, path, dict, "object", required)
        return {} if value is None else value

    def list(self, parent: Any, key: str, path: str) -> list[Any]:
        value = self._read(parent, key, path, list, "array")
        return [] if value is None else value

    def int(self, parent: Any, key: str, path: str, default: Optional[int]) -> Optional[int]:
        value = self._read(parent, key, path, int, "integer")
        if value is not None and not -2**31 <= value < 2**31:
            self.errors.append(k8s_field.invalid(Path(path).child(key), value, "must fit in int32"))
            value = None
        return default if value is None else value

    def str(self, parent: Any, key: str, path: str, default: str = "") -> str:
        value = self._read(parent, key, path, str, "string")
        return default if value is None else value

    # `builtins.str`: in this class `str` is the method above.
    def items(self, parent: Any, key: builtins.str,
              path: builtins.str) -> Iterator[tuple[builtins.str, dict[builtins.str, Any]]]:
        """The maps of a list with their paths; an item of another type is reported and skipped."""
        for i, item in enumerate(self.list(parent, key, path)):
            where = Path(path).child(key).index(i)
            if isinstance(item, dict):
                yield str(where), item
            else:
                self.errors.append(k8s_field.invalid(where, k8s_field.OMIT, "must be of type object"))


def annotations_of(obj: Any) -> dict[str, Any]:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    value = metadata.get("annotations") if isinstance(metadata, dict) else None
    return value if isinstance(value, dict) else {}


def labels_of(obj: Any) -> dict[str, Any]:
    metadata = obj.get("metadata") if isinstance(obj, dict) else None
    value = metadata.get("labels") if isinstance(metadata, dict) else None
    return value if isinstance(value, dict) else {}


def topology_request(template: dict[str, Any], options: JobOptions, pod_index_label: Optional[str] = None,
                     sub_group_index_label: Optional[str] = None,
                     sub_group_count: Optional[int] = None) -> Optional[dict[str, Any]]:
    """`podSetTopologyRequestBuilder.Build` (jobframework/tas.go); None without TAS."""
    if not options.enabled("TopologyAwareScheduling"):
        return None
    notes = annotations_of(template)
    request: dict[str, Any] = {}
    if REQUIRED_TOPOLOGY in notes:
        request["required"] = notes[REQUIRED_TOPOLOGY]
    elif PREFERRED_TOPOLOGY in notes:
        request["preferred"] = notes[PREFERRED_TOPOLOGY]
    elif UNCONSTRAINED_TOPOLOGY in notes:
        value = str(notes[UNCONSTRAINED_TOPOLOGY]).lower()
        if value not in ("true", "false", "1", "0", "t", "f"):
            return None  # the webhook refuses it; see webhooks.tas_errors
        request["unconstrained"] = value in ("true", "1", "t")
    else:
        has_slice = SLICE_REQUIRED_TOPOLOGY in notes and SLICE_SIZE in notes
        if not has_slice and pod_index_label is None and sub_group_index_label is None and sub_group_count is None:
            return None
    if SLICE_REQUIRED_TOPOLOGY in notes and SLICE_SIZE in notes:
        try:
            size = int(str(notes[SLICE_SIZE]))
        except ValueError:
            return None  # refused by the webhook
        request["podSetSliceRequiredTopology"] = notes[SLICE_REQUIRED_TOPOLOGY]
        request["podSetSliceSize"] = size
    if pod_index_label is not None:
        request["podIndexLabel"] = pod_index_label
    if sub_group_count is not None:
        request["subGroupCount"] = sub_group_count
    if sub_group_index_label is not None:
        request["subGroupIndexLabel"] = sub_group_index_label
    if PODSET_GROUP_NAME in notes and ("required" in request or "preferred" in request):
        request["podSetGroupName"] = notes[PODSET_GROUP_NAME]
    return request


def _template(value: Any) -> dict[str, Any]:
    return copy.deepcopy(value) if isinstance(value, dict) else {}


def lower(name: str) -> str:
    """`kueue.NewPodSetReference` lowercases the name."""
    return name.lower()


# batch/v1 Job -----------------------------------------------------------------------

def job_pod_count(spec: dict[str, Any], read: Reader, path: str = "spec") -> int:
    """`podsCount`: parallelism (defaulted to 1 by the API server), capped by completions."""
    parallelism = read.int(spec, "parallelism", path, 1)
    completions = read.int(spec, "completions", path, None)
    count = 1 if parallelism is None else parallelism
    return completions if completions is not None and completions < count else count


def batch_job(job: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    spec = read.map(job, "spec", "")
    template = _template(read.map(spec, "template", "spec", required=True))
    pod_labels = labels_of(template)
    for label in _JOB_MANAGED_LABELS:
        pod_labels.pop(label, None)
    min_count = None
    value = annotations_of(job).get(MIN_PARALLELISM)
    if value is not None:
        try:
            min_count = int(str(value))
        except ValueError:
            min_count = None
    return [PodSet(DEFAULT_POD_SET, job_pod_count(spec, read), template, "spec.template", min_count,
                   topology_request(template, options, JOB_COMPLETION_INDEX))]


# JobSet -----------------------------------------------------------------------------

def jobset(obj: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    spec = read.map(obj, "spec", "")
    podsets = []
    for path, replicated in read.items(spec, "replicatedJobs", "spec"):
        replicas = read.int(replicated, "replicas", path, 1)
        job_spec = read.map(read.map(replicated, "template", path), "spec", f"{path}.template")
        per_replica = job_pod_count(job_spec, read, f"{path}.template.spec")
        template = _template(read.map(job_spec, "template", f"{path}.template.spec", required=True))
        podsets.append(PodSet(lower(read.str(replicated, "name", path)), (replicas or 0) * per_replica, template,
                              f"{path}.template.spec.template", None,
                              topology_request(template, options, JOB_COMPLETION_INDEX, JOBSET_JOB_INDEX, replicas)))
    return podsets


# RayCluster and RayJob ----------------------------------------------------------------

def ray_cluster_podsets(cluster: dict[str, Any], path: str, owner_annotations: dict[str, Any],
                        options: JobOptions, read: Reader) -> list[PodSet]:
    """`BuildPodSets`: the head (with the autoscaler sidecar when in-tree autoscaling is on,
    and the Redis cleanup floor with GCS fault tolerance), then one pod set per worker group."""
    head_spec = read.map(cluster, "headGroupSpec", path, required=True)
    head = _template(read.map(head_spec, "template", f"{path}.headGroupSpec", required=True))
    head_pod = head.setdefault("spec", {}) if isinstance(head.get("spec", {}), dict) else {}
    if str(owner_annotations.get(RAY_FT_ANNOTATION, "")).lower() == "true" or cluster.get("gcsFaultToleranceOptions"):
        containers = head_pod.get("containers")
        if isinstance(containers, list) and containers and isinstance(containers[0], dict):
            resources = containers[0].setdefault("resources", {})
            requests = resources.setdefault("requests", {}) if isinstance(resources, dict) else {}
            from aks_kueue.k8s.quantity import parse_quantity
            for resource, floor in REDIS_CLEANUP_REQUESTS.items():
                try:
                    if resource not in requests or parse_quantity(requests[resource]) < parse_quantity(floor):
                        requests[resource] = floor
                except (ValueError, TypeError):
                    pass  # an unreadable quantity is the Workload schema's finding
    if cluster.get("enableInTreeAutoscaling") is True:
        options_ = map_at(cluster, "autoscalerOptions")
        resources = options_.get("resources") if isinstance(options_.get("resources"), dict) else AUTOSCALER_RESOURCES
        head_pod.setdefault("containers", []).append({"name": "autoscaler", "resources": copy.deepcopy(resources)})
    podsets = [PodSet("head", 1, head, f"{path}.headGroupSpec.template", None, topology_request(head, options))]
    for group_path, group in read.items(cluster, "workerGroupSpecs", path):
        replicas = read.int(group, "replicas", group_path, 0)  # the CRD's default is 0
        hosts = read.int(group, "numOfHosts", group_path, 1)
        count = (replicas or 0) * (hosts if hosts and hosts > 1 else 1)
        template = _template(read.map(group, "template", group_path, required=True))
        podsets.append(PodSet(lower(read.str(group, "groupName", group_path)), count, template,
                              f"{group_path}.template", None, topology_request(template, options)))
    return podsets


def ray_cluster(obj: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    return ray_cluster_podsets(read.map(obj, "spec", ""), "spec", annotations_of(obj), options, read)


def ray_service(obj: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    """rayservice_controller.go `PodSets`: `BuildPodSets` of the service's cluster spec, which KubeRay
    stores as `spec.rayClusterConfig`. (`UpdatePodSets` then reads a running cluster's autoscaled
    worker counts, which only the cluster knows.)"""
    return ray_cluster_podsets(read.map(read.map(obj, "spec", ""), "rayClusterConfig", "spec", required=True),
                               "spec.rayClusterConfig", annotations_of(obj), options, read)


def submission_mode(job: dict[str, Any]) -> str:
    spec = map_at(job, "spec")
    mode = spec.get("submissionMode")
    return mode if isinstance(mode, str) and mode else "K8sJobMode"  # the CRD's default


def ray_job(obj: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    spec = read.map(obj, "spec", "")
    cluster = read.map(spec, "rayClusterSpec", "spec")
    podsets = ray_cluster_podsets(cluster, "spec.rayClusterSpec", annotations_of(obj), options, read)
    mode = submission_mode(obj)
    if mode == "K8sJobMode":
        template = spec.get("submitterPodTemplate")
        if isinstance(template, dict):
            submitter = _template(template)
            path = "spec.submitterPodTemplate"
        else:
            head = podsets[0].template.get("spec") or {}
            containers = head.get("containers") if isinstance(head, dict) else None
            image = containers[0].get("image", "") if isinstance(containers, list) and containers and \
                isinstance(containers[0], dict) else ""
            submitter = {"spec": {"containers": [{"name": SUBMITTER_CONTAINER, "image": image,
                                                  "resources": copy.deepcopy(SUBMITTER_RESOURCES)}],
                                  "restartPolicy": "Never"}}
            path = "spec"
        podsets.append(PodSet("submitter", 1, submitter, path, None, topology_request(submitter, options)))
    elif mode == "SidecarMode":
        head_spec = podsets[0].template.setdefault("spec", {})
        if isinstance(head_spec, dict):
            head_spec.setdefault("containers", []).append(
                {"name": SUBMITTER_CONTAINER, "resources": copy.deepcopy(SUBMITTER_RESOURCES)})
    return podsets


# MPIJob -----------------------------------------------------------------------------

def mpi_job(obj: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    spec = read.map(obj, "spec", "")
    replicas = read.map(spec, "mpiReplicaSpecs", "spec", required=True)
    podsets = []
    for kind in ("Launcher", "Worker"):  # `orderedReplicaTypes`
        replica = replicas.get(kind)
        if not isinstance(replica, dict):
            continue
        path = f"spec.mpiReplicaSpecs[{kind}]"  # mpijob_webhook.go names it with Key(kind)
        template = _template(read.map(replica, "template", path, required=True))
        podsets.append(PodSet(lower(kind), read.int(replica, "replicas", path, 1) or 0, template,
                              f"{path}.template", None, topology_request(template, options, MPI_REPLICA_INDEX)))
    return podsets


# Pods, pod groups, StatefulSets and Deployments ---------------------------------------

def single_pod(pod: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    spec = copy.deepcopy(read.map(pod, "spec", "", required=True))
    return [PodSet(DEFAULT_POD_SET, 1, {"spec": spec}, "", None,
                   topology_request(pod, options, POD_GROUP_POD_INDEX), annotated=pod)]


def role_hash(pod: dict[str, Any]) -> str:
    """The role a pod plays in its group: its `kueue.x-k8s.io/role-hash` annotation, or a
    hash of what admission reads, as `GenerateRoleHash` (pkg/util/pod/pod.go) chooses the
    fields. Kueue hashes Go's JSON encoding of them, which differs in form from this one,
    so the 8 characters differ from Kueue's unless the pod carries the annotation; pods
    are grouped into pod sets the same way."""
    given = annotations_of(pod).get(ROLE_HASH)
    if isinstance(given, str) and given:
        return given
    spec = map_at(pod, "spec")

    def containers(key: str) -> list:
        return [{"resources": {"requests": (c.get("resources") or {}).get("requests")}, "ports": c.get("ports")}
                for c in spec.get(key) or [] if isinstance(c, dict)]

    shape = {"initContainers": containers("initContainers"), "containers": containers("containers"),
             **{key: spec.get(key) for key in ("nodeSelector", "affinity", "tolerations", "runtimeClassName",
                                               "priority", "topologySpreadConstraints", "overhead",
                                               "resourceClaims")}}
    if isinstance(spec.get("resources"), dict):
        shape["resources"] = spec["resources"].get("requests")
    text = json.dumps({"spec": shape}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def pod_group(pods: list[dict[str, Any]], total: int, fast: bool, options: JobOptions,
              read: Reader) -> list[PodSet]:
    """`constructGroupPodSets`: one pod set per role, sorted by name; with fast admission,
    one pod set of the group's total count from the first pod."""
    if fast:
        first = pods[0]
        podset = single_pod(first, options, read)[0]
        podset.name, podset.count = lower(role_hash(first)), total
        return [podset]
    by_role: dict[str, PodSet] = {}
    for pod in pods:
        role = lower(role_hash(pod))
        if role in by_role:
            by_role[role].count += 1
        else:
            podset = single_pod(pod, options, read)[0]
            podset.name = role
            by_role[role] = podset
    return [by_role[name] for name in sorted(by_role)]


def stateful_set(obj: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    """One pod set of `replicas` pods; the Workload is a pod group's, named after the StatefulSet."""
    spec = read.map(obj, "spec", "")
    template = read.map(spec, "template", "spec", required=True)
    pod_spec = copy.deepcopy(read.map(template, "spec", "spec.template"))
    return [PodSet(DEFAULT_POD_SET, read.int(spec, "replicas", "spec", 1) or 0, {"spec": pod_spec},
                   "spec.template", None, topology_request(template, options, STATEFULSET_POD_INDEX),
                   annotated=template)]


def deployment_replicas(obj: dict[str, Any], read: Reader) -> tuple[int, dict[str, Any]]:
    spec = read.map(obj, "spec", "")
    return read.int(spec, "replicas", "spec", 1) or 0, read.map(spec, "template", "spec", required=True)


# TrainJob ---------------------------------------------------------------------------

def train_job(obj: dict[str, Any], runtime: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    """The JobSet that Kubeflow Trainer would build from the runtime, then its pod sets.

    The trainer step (`trainer.kubeflow.org/trainjob-ancestor-step: trainer`) runs
    `numNodes` pods (the TrainJob's, else the runtime's `mlPolicy.numNodes`, else 1; with an
    MPI policy that runs the launcher as a node, one fewer on the `node` job), one replica,
    and its `node` container takes the TrainJob's `resourcesPerNode`. Other steps
    (initializers, an MPI launcher) keep their own parallelism. `runtimePatches` are not applied.
    """
    spec = read.map(obj, "spec", "")
    trainer = read.map(spec, "trainer", "spec")
    runtime_spec = map_at(runtime, "spec")
    policy = map_at(runtime_spec, "mlPolicy")
    mpi = policy.get("mpi") if isinstance(policy.get("mpi"), dict) else None
    launcher_as_node = bool(mpi and mpi.get("runLauncherAsNode"))
    nodes = read.int(trainer, "numNodes", "spec.trainer", None)
    runtime_nodes = policy.get("numNodes") if isinstance(policy.get("numNodes"), int) else 1
    template = map_at(runtime_spec, "template")
    jobset_spec = copy.deepcopy(map_at(template, "spec"))
    resources = trainer.get("resourcesPerNode") if isinstance(trainer.get("resourcesPerNode"), dict) else None
    for replicated in jobset_spec.get("replicatedJobs") or []:
        if not isinstance(replicated, dict):
            continue
        job_template = map_at(replicated, "template")
        ancestor = labels_of(job_template).get(TRAINJOB_ANCESTOR)
        job_spec = job_template.setdefault("spec", {}) if isinstance(job_template.get("spec", {}), dict) else {}
        count = job_spec.get("parallelism", 1) if isinstance(job_spec.get("parallelism", 1), int) else 1
        name = replicated.get("name")
        if ancestor == TRAINER_ANCESTOR:
            count = runtime_nodes
            replicated["replicas"] = 1
            if nodes is not None and not mpi:
                count = nodes
        if mpi and name == TRAINER_NODE and nodes is not None:
            count = max(nodes - 1, 1) if launcher_as_node else nodes
        if ancestor == TRAINER_ANCESTOR or (launcher_as_node and name == TRAINER_NODE):
            pod_spec = (job_spec.get("template") or {}).get("spec") if isinstance(job_spec.get("template"), dict) \
                else None
            for container in (pod_spec or {}).get("containers") or []:
                if isinstance(container, dict) and container.get("name") == TRAINER_NODE and resources:
                    container["resources"] = copy.deepcopy(resources)
        job_spec["parallelism"] = job_spec["completions"] = count
    podsets = jobset({"spec": jobset_spec}, options, Reader(read.errors))
    for podset in podsets:
        podset.path = "spec.trainer"  # the TrainJob's own field that shapes these pods
    return podsets


def elastic(obj: dict[str, Any], options: JobOptions) -> bool:
    """`workloadslicing.Enabled`: the gate is on and the object opts in."""
    return options.enabled("ElasticJobsViaWorkloadSlices") and annotations_of(obj).get(ELASTIC_JOB) == "true"
