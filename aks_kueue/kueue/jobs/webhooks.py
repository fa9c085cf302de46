"""What Kueue v0.19.2's validating webhooks refuse when a job is created.

Sources (kubernetes-sigs/kueue, tag v0.19.2):
- every integration: pkg/controller/jobframework/validation.go `ValidateJobOnCreate`
  (queue-name label, prebuilt workload name, max-exec-time label, elastic-job annotation);
- batch/v1 Job: pkg/controller/jobs/job/job_webhook.go (`validatePartialAdmissionCreate`,
  `validateSyncCompletionCreate`);
- RayJob and RayCluster: pkg/controller/jobs/rayjob/rayjob_webhook.go, raycluster_webhook.go
  and raycluster/common.go `ValidateCreate`;
- pods: pkg/controller/jobs/pod/pod_webhook.go (`validateManagedLabel`, `validatePodGroupMetadata`);
- topology annotations: pkg/controller/jobframework/tas_validation.go `ValidateTASPodSetRequest`.

The admission-gated-by annotation is checked on the Workload the job would create
(`aks_kueue.kueue.workload_webhook`), which carries it.
"""

from __future__ import annotations

import re
from typing import Any

from aks_kueue.k8s import field, names
from aks_kueue.k8s.field import Path
from aks_kueue.kueue.jobs.model import (COMPLETIONS_EQUAL_PARALLELISM, ELASTIC_JOB, MANAGED_LABEL, MAX_EXEC_TIME_LABEL,
                                        MAX_POD_SETS, MIN_PARALLELISM, POD_GROUP_NAME, POD_GROUP_TOTAL_COUNT,
                                        PREBUILT_WORKLOAD, QUEUE_LABEL, JobOptions)
from aks_kueue.kueue.jobs.podsets import (PODSET_GROUP_NAME, PREFERRED_TOPOLOGY, REQUIRED_TOPOLOGY,
                                          SLICE_REQUIRED_TOPOLOGY, SLICE_SIZE, UNCONSTRAINED_TOPOLOGY, PodSet,
                                          annotations_of, elastic, labels_of)
from aks_kueue.k8s.field import FieldError, show
from aks_kueue.k8s.names import qualified_name_problem

_INT = re.compile(r"^[+-]?\d+$")
# validation.go `supportedElasticJobGVKs`.
ELASTIC_KINDS = {("batch", "Job"), ("ray.io", "RayCluster"), ("ray.io", "RayJob"), ("ray.io", "RayService")}
# validation.go `supportedPrebuiltWlJobGVKs`.
PREBUILT_KINDS = {("batch", "Job"), ("jobset.x-k8s.io", "JobSet"), ("kubeflow.org", "TFJob"),
                  ("kubeflow.org", "PaddleJob"), ("kubeflow.org", "PyTorchJob"), ("kubeflow.org", "XGBoostJob"),
                  ("trainer.kubeflow.org", "TrainJob"), ("kubeflow.org", "MPIJob"), ("ray.io", "RayJob"), ("", "Pod"),
                  ("ray.io", "RayCluster"), ("ray.io", "RayService"), ("workload.codeflare.dev", "AppWrapper")}

_LABELS, _ANNOTATIONS = Path("metadata", "labels"), Path("metadata", "annotations")


def _not_an_int(path: Path, text: str) -> FieldError:
    """Go's `strconv.Atoi` error, as the webhooks report a label or annotation that is not an integer."""
    return field.invalid(path, text, f"strconv.Atoi: parsing {show(text)}: invalid syntax")


def gvk_string(obj: dict[str, Any]) -> str:
    """Go's `GroupVersionKind.String()`: `batch/v1, Kind=Job`, `/v1, Kind=Pod`."""
    api_version = str(obj.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={obj.get('kind')}"


def queue_name(obj: dict[str, Any]) -> list[FieldError]:
    """`ValidateQueueName`: the queue-name label is a DNS subdomain."""
    queue = labels_of(obj).get(QUEUE_LABEL)
    if queue is not None and (problem := names.dns1123_subdomain_problem(str(queue))):
        return [field.invalid(_LABELS.key(QUEUE_LABEL), queue, problem)]
    return []


def elastic_annotation(obj: dict[str, Any], group: str, kind: str, options: JobOptions) -> list[FieldError]:
    """`ValidateElasticJobAnnotation`: only some kinds may be elastic."""
    if elastic(obj, options) and (group, kind) not in ELASTIC_KINDS:
        return [field.forbidden(_ANNOTATIONS.key(ELASTIC_JOB), f'elastic job is not supported for "{gvk_string(obj)}"')]
    return []


def job_on_create(obj: dict[str, Any], group: str, kind: str, options: JobOptions) -> list[FieldError]:
    """`ValidateJobOnCreate`, shared by every integration's base webhook."""
    errors = queue_name(obj)
    job_labels = labels_of(obj)
    for where, source in ((_ANNOTATIONS, annotations_of(obj)), (_LABELS, job_labels)):
        if name := source.get(PREBUILT_WORKLOAD):
            if problem := names.dns1123_subdomain_problem(str(name)):
                errors.append(field.invalid(where.key(PREBUILT_WORKLOAD), name, problem))
            if (group, kind) not in PREBUILT_KINDS:  # validateCreateForPrebuiltWorkload
                errors.append(field.forbidden(where.key(PREBUILT_WORKLOAD),
                                              f'Is not supported for "{gvk_string(obj)}"'))
            break
    if MAX_EXEC_TIME_LABEL in job_labels:
        value, path = str(job_labels[MAX_EXEC_TIME_LABEL]), _LABELS.key(MAX_EXEC_TIME_LABEL)
        if not _INT.fullmatch(value):
            errors.append(_not_an_int(path, value))
        elif int(value) <= 0:
            errors.append(field.invalid(path, int(value), "should be greater than 0"))
    return errors + elastic_annotation(obj, group, kind, options)


def batch_job(job: dict[str, Any], pod_count: int, options: JobOptions) -> list[FieldError]:
    """job_webhook.go: the partial-admission and completions-equal-parallelism annotations."""
    errors = []
    notes = annotations_of(job)
    spec = _map(job.get("spec"))
    if MIN_PARALLELISM in notes:
        value, path = str(notes[MIN_PARALLELISM]), _ANNOTATIONS.key(MIN_PARALLELISM)
        if not _INT.fullmatch(value):
            errors.append(_not_an_int(path, value))
        elif not 0 < int(value) < pod_count:
            errors.append(field.invalid(path, int(value), f"should be between 0 and {pod_count - 1}"))
        if elastic(job, options):
            errors.append(field.invalid(path, value, "partial admission and elastic job cannot be used together"))
    if COMPLETIONS_EQUAL_PARALLELISM in notes:
        value, path = str(notes[COMPLETIONS_EQUAL_PARALLELISM]), _ANNOTATIONS.key(COMPLETIONS_EQUAL_PARALLELISM)
        enabled = _parse_bool(value)
        if enabled is None:
            errors.append(field.invalid(path, value, f"strconv.ParseBool: parsing {show(value)}: invalid syntax"))
        if enabled and spec.get("completionMode", "NonIndexed") == "NonIndexed":
            errors.append(field.invalid(path, value, "should not be enabled for NonIndexed jobs"))
        if enabled and spec.get("parallelism", 1) != spec.get("completions", 1):
            errors.append(field.invalid("spec.completions", spec.get("completions"), "should be equal to parallelism "
                                        f"when {COMPLETIONS_EQUAL_PARALLELISM} annotation is true"))
    return errors


def ray(obj: dict[str, Any], kind: str, managed: bool, options: JobOptions) -> list[FieldError]:
    """rayjob_webhook.go, raycluster_webhook.go and rayservice_webhook.go, for objects Kueue manages."""
    if not managed:
        return []
    spec = _map(obj.get("spec"))
    errors = []
    if kind == "RayJob":
        selector, cluster = spec.get("clusterSelector"), spec.get("rayClusterSpec")
        if selector and cluster is not None:
            return [field.invalid("spec.clusterSelector", selector,
                                  "a kueue managed job should not use an existing cluster")]
        if selector:
            return []
        if cluster is None:
            return [field.required("spec.rayClusterSpec",
                                   "rayClusterSpec is required for Kueue-managed jobs that don't use clusterSelector")]
        if spec.get("shutdownAfterJobFinishes") is not True:
            errors.append(field.invalid("spec.shutdownAfterJobFinishes", spec.get("shutdownAfterJobFinishes", False),
                                        "a kueue managed job should delete the cluster after finishing"))
    if kind == "RayCluster":
        path, cluster_spec = Path("spec"), spec
        if elastic(obj, options):
            groups = [(path.child("workerGroupSpecs").index(i), group)
                      for i, group in enumerate(cluster_spec.get("workerGroupSpecs") or [])]
            for where, group in [*groups, (path.child("headGroupSpec"), _map(cluster_spec.get("headGroupSpec")))]:
                if isinstance(group, dict) and not _gated(group.get("template")):
                    errors.append(field.invalid(where.child("template", "spec", "schedulingGates"), field.OMIT,
                                                "an elastic job must have the ElasticJobSchedulingGate"))
        elif cluster_spec.get("enableInTreeAutoscaling") is True:
            errors.append(field.invalid("spec.enableInTreeAutoscaling", True,
                                        "a kueue-managed RayCluster can use autoscaling only as an elastic job: enable "
                                        "the ElasticJobsViaWorkloadSlices feature gate and set the "
                                        f'"{ELASTIC_JOB}": "true" annotation'))
    else:  # RayJob and RayService: the cluster spec they carry
        # rayjob_webhook.go checks spec.rayClusterSpec; rayservice_webhook.go runs raycluster.ValidateCreate on
        # spec.rayClusterConfig, which Kueue's messages also name spec.rayClusterSpec.
        path = Path("spec", "rayClusterSpec")
        cluster_spec = _map(spec.get("rayClusterSpec" if kind == "RayJob" else "rayClusterConfig"))
        if cluster_spec.get("enableInTreeAutoscaling") is True and not elastic(obj, options):
            errors.append(field.invalid(path.child("enableInTreeAutoscaling"), True, "a kueue managed job should "
                                        "only use autoscaling when workload slicing is enabled"))
    listed = cluster_spec.get("workerGroupSpecs")
    workers = listed if isinstance(listed, list) else []
    if len(workers) + 1 > MAX_POD_SETS:
        errors.append(field.too_many(path.child("workerGroupSpecs"), len(workers) + 1, MAX_POD_SETS))
    for i, group in enumerate(workers):
        if isinstance(group, dict) and group.get("groupName") == "head":
            errors.append(field.forbidden(path.child("workerGroupSpecs").index(i).child("groupName"),
                                          '"head" is reserved for the head group'))
    return errors


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _gated(template: Any) -> bool:
    spec = _map(template.get("spec")) if isinstance(template, dict) else {}
    return any(isinstance(g, dict) and g.get("name") == "kueue.x-k8s.io/elastic-job"
               for g in spec.get("schedulingGates") or [])


def pod(obj: dict[str, Any]) -> list[FieldError]:
    """pod_webhook.go `validateCommon`: the managed label and the pod group's metadata."""
    errors = []
    pod_labels, notes = labels_of(obj), annotations_of(obj)
    managed = pod_labels.get(MANAGED_LABEL)
    if managed is not None and managed != "true":
        errors.append(field.forbidden(_LABELS.key(MANAGED_LABEL), "managed label value can only be 'true'"))
    group = notes.get(POD_GROUP_NAME) or pod_labels.get(POD_GROUP_NAME)
    detail = f"both the '{POD_GROUP_TOTAL_COUNT}' annotation and the '{POD_GROUP_NAME}' label should be set"
    where = (_ANNOTATIONS if notes.get(POD_GROUP_NAME) else _LABELS).key(POD_GROUP_NAME)
    total_path = _ANNOTATIONS.key(POD_GROUP_TOTAL_COUNT)
    if not group:
        return errors + [field.required(where, detail)] if POD_GROUP_TOTAL_COUNT in notes else errors
    if problem := names.dns1123_subdomain_problem(str(group)):
        errors.append(field.invalid(where, group, problem))
    if POD_GROUP_TOTAL_COUNT not in notes:
        return errors + [field.required(total_path, detail)]
    total = str(notes[POD_GROUP_TOTAL_COUNT])
    if not _INT.fullmatch(total):
        errors.append(_not_an_int(total_path, total))
    elif int(total) < 1:
        errors.append(field.invalid(total_path, total, f"incorrect annotation value '{POD_GROUP_TOTAL_COUNT}="
                                    f"{total}': group total count should be greater than zero"))
    return errors


def topology(podsets: list[PodSet], options: JobOptions) -> list[FieldError]:
    """`ValidateTASPodSetRequest` on each pod template's annotations."""
    if not options.enabled("TopologyAwareScheduling"):
        return []
    errors = []
    for podset in podsets:
        notes = annotations_of(podset.annotated if podset.annotated is not None else podset.template)
        path = Path(podset.path, "metadata", "annotations")
        found = [a for a in (REQUIRED_TOPOLOGY, PREFERRED_TOPOLOGY, UNCONSTRAINED_TOPOLOGY) if a in notes]
        if len(found) > 1:
            errors.append(field.invalid(path, field.OMIT, "must not contain more than one topology annotation: "
                                        f'["{REQUIRED_TOPOLOGY}", "{PREFERRED_TOPOLOGY}", "{UNCONSTRAINED_TOPOLOGY}"]'))
        for key in (REQUIRED_TOPOLOGY, PREFERRED_TOPOLOGY, SLICE_REQUIRED_TOPOLOGY):
            if key in notes and (problem := qualified_name_problem(str(notes[key]))):
                errors.append(field.invalid(path.key(key), notes[key], problem))
        if PODSET_GROUP_NAME in notes:
            group_rules = ((SLICE_SIZE in notes, f"'{SLICE_SIZE}' is specified"),
                           (SLICE_REQUIRED_TOPOLOGY in notes, f"'{SLICE_REQUIRED_TOPOLOGY}' is specified"),
                           (REQUIRED_TOPOLOGY not in notes and PREFERRED_TOPOLOGY not in notes,
                            f"neither '{PREFERRED_TOPOLOGY}' nor '{REQUIRED_TOPOLOGY}' is specified"))
            errors += [field.forbidden(path.key(PODSET_GROUP_NAME), f"may not be set when {when}")
                       for broken, when in group_rules if broken]
        if UNCONSTRAINED_TOPOLOGY in notes and _parse_bool(str(notes[UNCONSTRAINED_TOPOLOGY])) is None:
            errors.append(field.invalid(path.key(UNCONSTRAINED_TOPOLOGY), notes[UNCONSTRAINED_TOPOLOGY],
                                        "must be a boolean value"))
        size_path, size = path.key(SLICE_SIZE), str(notes.get(SLICE_SIZE))
        if SLICE_SIZE in notes:
            problem = ("must be a numeric value" if not _INT.fullmatch(size)
                       else "must be greater than or equal to 1" if int(size) < 1
                       else f"must not be greater than pod set count {podset.count}" if int(size) > podset.count
                       else None)
            if problem:
                errors.append(field.invalid(size_path, size, problem))
        if SLICE_REQUIRED_TOPOLOGY in notes and SLICE_SIZE not in notes:
            errors.append(field.required(size_path, f"must be set when '{SLICE_REQUIRED_TOPOLOGY}' is specified"))
        if SLICE_SIZE in notes and SLICE_REQUIRED_TOPOLOGY not in notes:
            errors.append(field.forbidden(size_path, f"may not be set when '{SLICE_REQUIRED_TOPOLOGY}' is not "
                                                     "specified"))
    return errors


def _parse_bool(value: str) -> bool | None:
    """Go's strconv.ParseBool."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None
