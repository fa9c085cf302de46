"""AppWrapper (`workload.codeflare.dev/v1beta2`): the pod sets of the objects it wraps.

Sources (kubernetes-sigs/kueue, tag v0.19.2): pkg/controller/jobs/appwrapper/appwrapper_controller.go
(`PodSets`), with the AppWrapper code Kueue vendors, vendor/github.com/project-codeflare/appwrapper/
pkg/utils/utils.go (`GetComponentPodSpecs`, `EnsureComponentStatusInitialized`, `InferPodSets`,
`inferRayPodSets`, `templatesForGVK`, `GetPodTemplateSpec`, `copyContainers`, `Replicas`,
`getValueAtPath`) and api/v1beta2/appwrapper_types.go.

Each component's pod sets are the ones it declares (`spec.components[i].podSets`: a `path` into
the wrapped object, starting with `template`, and `replicas`, 1 when unset), else the ones
AppWrapper infers for the wrapped kind (batch/v1 Job, JobSet, PyTorchJob, RayCluster, RayJob,
Pod, Deployment, StatefulSet; none for any other kind). A pod set whose path does not reach a
map with a `spec` is left out. Kueue names them `<appwrapper>-<n>`, numbered across the
components. The template keeps what AppWrapper copies for Kueue: labels and annotations, the
containers' and init containers' name, image, command, args and resources (not their
`restartPolicy`, so a sidecar counts as a plain init container), restartPolicy (Always when
unset), nodeSelector, nodeName, affinity, tolerations, priorityClassName, overhead and
topologySpreadConstraints.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from aks_kueue.k8s.objects import map_at
from aks_kueue.kueue.jobs.model import JobOptions
from aks_kueue.kueue.jobs.podsets import (JOB_COMPLETION_INDEX, JOBSET_JOB_INDEX, PodSet, Reader, lower,
                                          topology_request)
from aks_kueue.kueue.jobs.kubeflow import REPLICA_INDEX as KUBEFLOW_REPLICA_INDEX

TAS_POD_INDEX = "workload.codeflare.dev.appwrapper/tas-pod-index-label"
TAS_SUB_GROUP_INDEX = "workload.codeflare.dev.appwrapper/tas-sub-group-index-label"
TAS_SUB_GROUP_COUNT = "workload.codeflare.dev.appwrapper/tas-sub-group-count"
_STEP = re.compile(r"\[(-?\d+)\]|\.([^.\[]+)")
_POD_SPEC_KEYS = ("nodeSelector", "nodeName", "affinity", "tolerations", "priorityClassName", "overhead",
                  "topologySpreadConstraints")
_CONTAINER_KEYS = ("name", "image", "command", "args")


def value_at(obj: Any, path: str) -> tuple[bool, Any]:
    """`getValueAtPath`: `template` is the wrapped object itself, then `.field` and `[index]` steps."""
    if not path.startswith("template"):
        return False, None
    cursor, rest = obj, path[len("template"):]
    while rest:
        match = _STEP.match(rest)
        if match is None:
            return False, None
        index, key = match.groups()
        if index is not None:
            if not isinstance(cursor, list) or not 0 <= int(index) < len(cursor):
                return False, None
            cursor = cursor[int(index)]
        else:
            if not isinstance(cursor, dict) or key not in cursor:
                return False, None
            cursor = cursor[key]
        rest = rest[match.end():]
    return True, cursor


def _replicas_at(obj: Any, path: str) -> int:
    """`inferReplicas`: the integer at the path, 1 when it is unset."""
    parent, _, key = path.rpartition(".")
    found, holder = value_at(obj, parent)
    value = holder.get(key) if found and isinstance(holder, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _int_at(obj: Any, path: str) -> Optional[int]:
    """`GetReplicas`: an integer at the path, else None."""
    found, value = value_at(obj, path)
    return value if found and isinstance(value, int) and not isinstance(value, bool) else None


def _job_pods(obj: Any, spec: str) -> int:
    """The pods of the Job spec at the path: parallelism (1 when unset) capped by completions, as
    `podsets.job_pod_count` counts them, but with any integer AppWrapper reads (not only int32)."""
    count, completions = _int_at(obj, f"{spec}.parallelism"), _int_at(obj, f"{spec}.completions")
    count = 1 if count is None else count
    return completions if completions is not None and completions < count else count


def infer_pod_sets(wrapped: Any) -> list[dict[str, Any]]:
    """`InferPodSets`: the pod sets AppWrapper finds in a wrapped object of a kind it knows."""
    if not isinstance(wrapped, dict):
        return []
    gv, kind = wrapped.get("apiVersion"), wrapped.get("kind")
    found: list[dict[str, Any]] = []
    if (gv, kind) == ("batch/v1", "Job"):
        found.append({"replicas": _job_pods(wrapped, "template.spec"), "path": "template.spec.template",
                      "annotations": {TAS_POD_INDEX: JOB_COMPLETION_INDEX}})
    elif (gv, kind) == ("jobset.x-k8s.io/v1alpha2", "JobSet"):
        ok, jobs = value_at(wrapped, "template.spec.replicatedJobs")
        for i in range(len(jobs) if ok and isinstance(jobs, list) else 0):
            prefix = f"template.spec.replicatedJobs[{i}]."
            if not value_at(wrapped, prefix + "template")[0]:
                continue
            replicas = _replicas_at(wrapped, prefix + "replicas")
            found.append({"replicas": replicas * _job_pods(wrapped, prefix + "template.spec"),
                          "path": prefix + "template.spec.template",
                          "annotations": {TAS_POD_INDEX: JOB_COMPLETION_INDEX, TAS_SUB_GROUP_INDEX: JOBSET_JOB_INDEX,
                                          TAS_SUB_GROUP_COUNT: str(replicas)}})
    elif (gv, kind) == ("kubeflow.org/v1", "PyTorchJob"):
        for replica in ("Master", "Worker"):
            prefix = f"template.spec.pytorchReplicaSpecs.{replica}."
            if value_at(wrapped, prefix + "template")[0]:
                found.append({"replicas": _replicas_at(wrapped, prefix + "replicas"), "path": prefix + "template",
                              "annotations": {TAS_POD_INDEX: KUBEFLOW_REPLICA_INDEX}})
    elif (gv, kind) in (("ray.io/v1", "RayCluster"), ("ray.io/v1", "RayJob")):
        prefix = "template.spec." if kind == "RayCluster" else "template.spec.rayClusterSpec."
        found.append({"replicas": 1, "path": prefix + "headGroupSpec.template"})
        ok, workers = value_at(wrapped, prefix + "workerGroupSpecs")
        for i in range(len(workers) if ok and isinstance(workers, list) else 0):
            group = f"{prefix}workerGroupSpecs[{i}]."
            if value_at(wrapped, group + "template")[0]:
                found.append({"replicas": _replicas_at(wrapped, group + "replicas"), "path": group + "template"})
    elif (gv, kind) == ("v1", "Pod"):
        found.append({"replicas": 1, "path": "template"})
    elif (gv, kind) in (("apps/v1", "Deployment"), ("apps/v1", "StatefulSet")):
        if value_at(wrapped, "template.spec.template")[0]:
            found.append({"replicas": _replicas_at(wrapped, "template.spec.replicas"),
                          "path": "template.spec.template"})
    return found


def pod_template(wrapped: Any, path: str) -> Optional[dict[str, Any]]:
    """`GetPodTemplateSpec`: the subset of the template at `path` that AppWrapper hands to Kueue,
    or None when the path does not reach a map with a `spec` map."""
    found, candidate = value_at(wrapped, path)
    if not found or not isinstance(candidate, dict) or not isinstance(candidate.get("spec"), dict):
        return None
    source = candidate["spec"]
    metadata: dict[str, Any] = {}
    given = map_at(candidate, "metadata")
    for key in ("labels", "annotations"):
        if isinstance(given.get(key), dict):
            metadata[key] = {k: v for k, v in given[key].items() if isinstance(v, str)}
    spec: dict[str, Any] = {}
    for key in ("initContainers", "containers"):
        containers = source.get(key)
        if isinstance(containers, list) and (containers or key == "containers"):
            spec[key] = [_container(c) for c in containers if isinstance(c, dict)]
    spec["restartPolicy"] = source.get("restartPolicy") or "Always"
    for key in _POD_SPEC_KEYS:
        if source.get(key) not in (None, "", [], {}):
            spec[key] = source[key]
    return {"metadata": metadata, "spec": spec} if metadata else {"spec": spec}


def _container(container: dict[str, Any]) -> dict[str, Any]:
    copied = {k: container[k] for k in _CONTAINER_KEYS if k in container}
    resources = map_at(container, "resources")
    kept = {k: resources[k] for k in ("requests", "limits") if isinstance(resources.get(k), dict)}
    if kept:
        copied["resources"] = kept
    return copied


def app_wrapper(obj: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    spec = read.map(obj, "spec", "")
    name = str((obj.get("metadata") or {}).get("name") or "")
    podsets: list[PodSet] = []
    for path, component in read.items(spec, "components", "spec"):
        wrapped = component.get("template")
        declared = read.list(component, "podSets", path)
        for declared_set in declared or infer_pod_sets(wrapped):
            if not isinstance(declared_set, dict) or not isinstance(declared_set.get("path"), str):
                continue
            template = pod_template(wrapped, declared_set["path"])
            if template is None:
                continue
            replicas = declared_set.get("replicas")
            count = replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 1
            notes = map_at(declared_set, "annotations")
            sub_count = notes.get(TAS_SUB_GROUP_COUNT)
            podsets.append(PodSet(
                lower(f"{name}-{len(podsets)}"), count, template, f"{path}.{declared_set['path']}", None,
                topology_request(template, options, notes.get(TAS_POD_INDEX), notes.get(TAS_SUB_GROUP_INDEX),
                                 int(sub_count) if isinstance(sub_count, str) and sub_count.isdigit() else None)))
    return podsets
