"""From job-like objects to the Workloads Kueue v0.19.2 would create for them.

Sources (kubernetes-sigs/kueue, tag v0.19.2): pkg/controller/jobframework/reconciler.go
(`ReconcileGenericJob`: namespace selector, owners, queue name; `ConstructWorkload`,
`PrepareWorkloadPriority`, `ExtractPriority`, `clearMinCountsIfFeatureDisabled`),
jobframework/defaults.go (`ApplyDefaultLocalQueue...`: the `default` LocalQueue),
jobframework/utils.go (`NewWorkload`, `MaximumExecutionTimeSecondsForObject`),
jobframework/integrationmanager.go (`IsOwnerManagedByKueueForObject`), the integrations'
controllers and webhooks under pkg/controller/jobs/, and pkg/util/priority/priority.go.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from aks_kueue.k8s.objects import map_at
from aks_kueue.k8s import field as k8s_field
from aks_kueue.kueue.jobs import appwrapper, kubeflow, spark
from aks_kueue.kueue.jobs import leaderworkerset as lws
from aks_kueue.kueue.jobs import podsets as ps
from aks_kueue.kueue.jobs import webhooks
from aks_kueue.kueue.jobs.model import (ADMISSION_GATED_BY, DEFAULT_LOCAL_QUEUE, IS_GROUP_WORKLOAD, JOB_UID_LABEL,
                                        MAX_EXEC_TIME_LABEL, POD_GROUP_FAST_ADMISSION, POD_GROUP_NAME,
                                        POD_GROUP_TOTAL_COUNT, PREBUILT_WORKLOAD, PRIORITY_CLASS_LABEL, PROVREQ_PREFIX,
                                        QUEUE_LABEL, JobOptions, JobRef, JobResult, JobOutcome)
from aks_kueue.kueue.jobs.names import workload_name
from aks_kueue.k8s.field import FieldError

KUEUE_GROUP = "kueue.x-k8s.io"
WORKLOAD_API = "kueue.x-k8s.io/v1beta2"
TRAINER_GROUP = "trainer.kubeflow.org"
NOT_MANAGED = "Kueue would not manage this object: "
JOB_OWNER_GVK = "kueue.x-k8s.io/job-owner-gvk"
JOB_OWNER_NAME = "kueue.x-k8s.io/job-owner-name"


@dataclass(frozen=True)
class Integration:
    """A kind Kueue manages through one of its integrations (`FrameworkName`)."""

    framework: str
    versions: tuple[str, ...] = ()
    builder: Optional[Callable[..., list[ps.PodSet]]] = None  # None: not modelled here
    # A feature gate Kueue needs on to set the integration up (`CanSupportIntegration`).
    gate: Optional[str] = None


INTEGRATIONS: dict[tuple[str, str], Integration] = {
    ("batch", "Job"): Integration("batch/job", ("v1",), ps.batch_job),
    ("jobset.x-k8s.io", "JobSet"): Integration("jobset.x-k8s.io/jobset", ("v1alpha2",), ps.jobset),
    ("ray.io", "RayJob"): Integration("ray.io/rayjob", ("v1",), ps.ray_job),
    ("ray.io", "RayCluster"): Integration("ray.io/raycluster", ("v1",), ps.ray_cluster),
    ("ray.io", "RayService"): Integration("ray.io/rayservice", ("v1",), ps.ray_service),
    ("kubeflow.org", "MPIJob"): Integration("kubeflow.org/mpijob", ("v2beta1",), ps.mpi_job),
    ("kubeflow.org", "PyTorchJob"): Integration("kubeflow.org/pytorchjob", ("v1",), kubeflow.kubeflow_job),
    ("kubeflow.org", "TFJob"): Integration("kubeflow.org/tfjob", ("v1",), kubeflow.kubeflow_job),
    ("kubeflow.org", "PaddleJob"): Integration("kubeflow.org/paddlejob", ("v1",), kubeflow.kubeflow_job),
    ("kubeflow.org", "XGBoostJob"): Integration("kubeflow.org/xgboostjob", ("v1",), kubeflow.kubeflow_job),
    ("kubeflow.org", "JAXJob"): Integration("kubeflow.org/jaxjob", ("v1",), kubeflow.kubeflow_job),
    (TRAINER_GROUP, "TrainJob"): Integration("trainer.kubeflow.org/trainjob", ("v1alpha1",), ps.train_job),
    ("", "Pod"): Integration("pod", ("v1",), ps.single_pod),
    # Each replica's pod, through the pod integration (`_deployment` builds them).
    ("apps", "Deployment"): Integration("deployment", ("v1",), ps.single_pod),
    ("apps", "StatefulSet"): Integration("statefulset", ("v1",), ps.stateful_set),
    (lws.GROUP, "LeaderWorkerSet"): Integration("leaderworkerset.x-k8s.io/leaderworkerset", ("v1",), lws.pod_sets),
    ("workload.codeflare.dev", "AppWrapper"): Integration("workload.codeflare.dev/appwrapper", ("v1beta2",),
                                                          appwrapper.app_wrapper),
    ("sparkoperator.k8s.io", "SparkApplication"): Integration("sparkoperator.k8s.io/sparkapplication", ("v1beta2",),
                                                              spark.spark_application, gate=spark.GATE),
}
# Objects read for what jobs refer to, not judged themselves.
CONTEXT_KINDS = {(TRAINER_GROUP, "TrainingRuntime"), (TRAINER_GROUP, "ClusterTrainingRuntime"),
                 ("scheduling.k8s.io", "PriorityClass")}


def group_version(manifest: dict[str, Any]) -> tuple[str, str]:
    api_version = manifest.get("apiVersion")
    if not isinstance(api_version, str):
        return "", ""
    group, _, version = api_version.rpartition("/")
    return group, version


def integration_of(manifest: Any) -> Optional[Integration]:
    """The integration that manages this kind of object, or None when it is not a job."""
    if not isinstance(manifest, dict):
        return None
    kind = manifest.get("kind")
    return INTEGRATIONS.get((group_version(manifest)[0], kind)) if isinstance(kind, str) else None


def is_job(manifest: Any) -> bool:
    return integration_of(manifest) is not None


def is_context(manifest: Any) -> bool:
    return isinstance(manifest, dict) and (group_version(manifest)[0], manifest.get("kind")) in CONTEXT_KINDS


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def _name(obj: dict[str, Any]) -> str:
    name = _meta(obj).get("name")
    return name if isinstance(name, str) else ""


def _namespace(obj: dict[str, Any]) -> str:
    namespace = _meta(obj).get("namespace")
    return namespace if isinstance(namespace, str) and namespace else "default"


@dataclass
class _Context:
    """What the input holds besides the jobs: queues, priority classes, runtimes, owners, pods."""

    default_queues: set[str] = field(default_factory=set)
    workload_priority: dict[str, int] = field(default_factory=dict)
    pod_priority: dict[str, int] = field(default_factory=dict)
    global_default: Optional[tuple[str, int]] = None
    runtimes: dict[tuple[str, Optional[str], str], dict[str, Any]] = field(default_factory=dict)
    jobs: dict[tuple[str, str, str, str], dict[str, Any]] = field(default_factory=dict)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def of(cls, objects: list[dict[str, Any]]) -> "_Context":
        ctx = cls()
        for obj in objects:
            group, _ = group_version(obj)
            kind = obj.get("kind")
            if group == KUEUE_GROUP and kind == "LocalQueue" and _name(obj) == DEFAULT_LOCAL_QUEUE:
                ctx.default_queues.add(_namespace(obj))
            elif group == KUEUE_GROUP and kind == "WorkloadPriorityClass" and isinstance(obj.get("value"), int):
                ctx.workload_priority[_name(obj)] = obj["value"]
            elif group == "scheduling.k8s.io" and kind == "PriorityClass" and isinstance(obj.get("value"), int):
                ctx.pod_priority[_name(obj)] = obj["value"]
                if obj.get("globalDefault") is True and (ctx.global_default is None
                                                         or obj["value"] < ctx.global_default[1]):
                    ctx.global_default = (_name(obj), obj["value"])
            elif group == TRAINER_GROUP and kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
                namespace = _namespace(obj) if kind == "TrainingRuntime" else None
                ctx.runtimes[(kind, namespace, _name(obj))] = obj
            elif (group, kind) in INTEGRATIONS:
                ctx.jobs[(group, str(kind), _namespace(obj), _name(obj))] = obj
                if kind == "Pod" and group == "":
                    name = _group_name(obj)
                    if name:
                        ctx.groups.setdefault((_namespace(obj), name), []).append(obj)
        return ctx


def _group_name(pod: dict[str, Any]) -> str:
    """`GetPodGroupName`: the annotation (WorkloadIdentifierAnnotations, on) or the label."""
    value = ps.annotations_of(pod).get(POD_GROUP_NAME) or ps.labels_of(pod).get(POD_GROUP_NAME)
    return value if isinstance(value, str) else ""


DEFAULT_OPTIONS = JobOptions()


def derive_workloads(objects: Iterable[Any], options: JobOptions = DEFAULT_OPTIONS) -> list[JobResult]:
    """One result per job-like object of `objects`, in order. `objects` is the whole input:
    LocalQueues, WorkloadPriorityClasses, PriorityClasses, training runtimes and the other
    jobs are read from it. A namespaced object without a namespace counts as in `default`."""
    objects = [o for o in objects if isinstance(o, dict)]
    ctx = _Context.of(objects)
    return [_derive(obj, ctx, options) for obj in objects if is_job(obj)]


def _derive(obj: dict[str, Any], ctx: _Context, options: JobOptions) -> JobResult:
    """`ReconcileGenericJob` for one object, step by step: is it Kueue's, would the webhooks take it,
    which LocalQueue, is it its owner's, and the Workloads `ConstructWorkload` makes of it."""
    group, version = group_version(obj)
    kind = str(obj.get("kind"))
    integration = INTEGRATIONS[(group, kind)]
    namespace = _namespace(obj)
    ref = JobRef(str(obj.get("apiVersion")), kind, _name(obj), namespace)
    result = JobResult(ref, integration.framework, JobOutcome.NOT_MANAGED)
    if (why := _not_set_up(integration, ref, group, version, options)) is not None:
        return _not_managed(result, why)
    result.errors += _on_create(obj, ref, group, options)
    owner = _managed_owner(obj, options)
    queue = _queue_name(obj, ref, owner, ctx, result)
    managed = bool(queue) or options.manage_jobs_without_queue_name
    result.errors += _managed_webhooks(obj, group, kind, managed and owner is None, options)
    if owner is not None:
        return _not_managed(result, f"on its own: its owner, {owner}, is a kind Kueue manages, and the owner's "
                                    "Workload accounts for these pods")
    if not managed:
        _not_managed(result, f"it has no {QUEUE_LABEL} label, and namespace {namespace} has no LocalQueue named "
                             "'default' to give it one")
        return _with_job_webhooks(result, obj, kind, options)
    if integration.builder is None:
        result.outcome = JobOutcome.UNSUPPORTED
        result.reason = (f"Kueue manages {kind} through its {integration.framework} integration, which this tool "
                         "does not model yet; it is not simulated")
        return result
    if kind == "RayJob":
        spec = map_at(obj, "spec")
        if spec.get("clusterSelector") and spec.get("rayClusterSpec") is None:
            return _not_managed(result, "it runs on an existing RayCluster (spec.clusterSelector)")
    prebuilt = ps.annotations_of(obj).get(PREBUILT_WORKLOAD) or ps.labels_of(obj).get(PREBUILT_WORKLOAD)
    if prebuilt:
        result.outcome = JobOutcome.MEMBER
        result.reason = (f"Kueue runs it under the prebuilt Workload {namespace}/{prebuilt} "
                         f"({PREBUILT_WORKLOAD}); that Workload is decided, not one made from this object")
        return _with_job_webhooks(result, obj, kind, options)
    result.outcome = JobOutcome.WORKLOAD
    read = ps.Reader()
    made = _construct(obj, ref, group, integration.builder, ctx, options, read, result)
    result.errors += read.errors + _constructed_errors(obj, ref, group, made, options, result)
    if result.outcome is not JobOutcome.WORKLOAD or result.errors:
        return result
    for name, podsets, extra in made:
        workload = _workload(obj, name, namespace, queue, podsets, extra, ctx, options, result)
        if workload is not None:
            result.workloads.append(workload)
    if result.outcome is JobOutcome.WORKLOAD and not result.workloads and not result.errors:
        result.reason = result.reason or f"{ref.describe()} asks for no pods, so Kueue creates no Workload"
    return result


def _not_set_up(integration: Integration, ref: JobRef, group: str, version: str, options: JobOptions
                ) -> Optional[str]:
    """Why Kueue would not reconcile this kind here at all (its version, the integration or its gate
    off, the namespace outside the selector), or None."""
    if integration.versions and version not in integration.versions:
        wanted = " or ".join(f"{group + '/' if group else ''}{v}" for v in integration.versions)
        return f"Kueue's {integration.framework} integration manages {ref.kind} {wanted}, not {ref.api_version}"
    if integration.framework not in options.frameworks:
        return (f"the integration {integration.framework} is not enabled in the Kueue configuration in force "
                "(integrations.frameworks, or --integrations)")
    if integration.gate is not None and not options.enabled(integration.gate):
        return (f"the integration {integration.framework} needs the feature gate {integration.gate} (alpha, off by "
                "default), and Kueue does not set it up without it")
    if ref.namespace in options.unmanaged_namespaces:
        return (f"namespace {ref.namespace} is outside Kueue's managedJobsNamespaceSelector (it leaves "
                f"{', '.join(sorted(options.unmanaged_namespaces))} alone)")
    return None


def _on_create(obj: dict[str, Any], ref: JobRef, group: str, options: JobOptions) -> list[FieldError]:
    """What the API server and Kueue's webhook refuse on create, whatever the queue."""
    errors = [] if ref.name else [k8s_field.required("metadata.name", "name or generateName is required")]
    if ref.kind == "LeaderWorkerSet":  # leaderworkerset_webhook.go `validateCreate`, not the base webhook's
        return errors + webhooks.queue_name(obj) + webhooks.elastic_annotation(obj, group, ref.kind, options) \
            + lws.webhook_errors(obj)
    return errors + webhooks.job_on_create(obj, group, ref.kind, options)


def _queue_name(obj: dict[str, Any], ref: JobRef, owner: Optional[str], ctx: _Context, result: JobResult) -> str:
    """The job's LocalQueue: its label, else the namespace's `default` one (`ApplyDefaultLocalQueue`)."""
    queue = ps.labels_of(obj).get(QUEUE_LABEL)
    queue = queue if isinstance(queue, str) and queue else ""
    if not queue and owner is None and ref.namespace in ctx.default_queues:
        result.notes.append(f"{ref.describe()} has no {QUEUE_LABEL} label; Kueue gives it the LocalQueue "
                            f"'default' of namespace {ref.namespace}")
        return DEFAULT_LOCAL_QUEUE
    return queue


def _managed_webhooks(obj: dict[str, Any], group: str, kind: str, suspends: bool, options: JobOptions
                      ) -> list[FieldError]:
    """The webhooks whose checks depend on whether Kueue manages the object on its own (`suspends`)."""
    if kind in ("RayJob", "RayCluster", "RayService"):
        return webhooks.ray(obj, kind, suspends, options)
    if kind == "SparkApplication":
        return spark.webhook_errors(obj, suspends, options)
    if kind == "Pod" and group == "":
        return webhooks.pod(obj)
    return []


def _construct(obj: dict[str, Any], ref: JobRef, group: str, builder: Callable[..., list[ps.PodSet]],
               ctx: _Context, options: JobOptions, read: ps.Reader, result: JobResult) -> Made:
    """`ConstructWorkload`: each Workload's name, pod sets and extra labels (most kinds make one)."""
    kind = ref.kind
    if kind == "Pod" and group == "" and _group_name(obj):
        return _pod_group(obj, ctx, options, read, result)
    if kind == "Deployment":
        return _deployment(obj, options, read, result)
    if kind == "LeaderWorkerSet":
        return _leader_worker_set(obj, options, read)
    if kind == "TrainJob":
        return _train_job(obj, ctx, options, read, result)
    podsets = builder(obj, options, read)
    extra = {}
    if kind == "StatefulSet":  # statefulset_reconciler.go `constructWorkload`: a pod group's Workload
        extra = {IS_GROUP_WORKLOAD: "true", JOB_OWNER_GVK: "apps/v1, Kind=StatefulSet", JOB_OWNER_NAME: ref.name}
        if podsets and podsets[0].count == 0:
            podsets = []
    return [(workload_name(kind, group, ref.name, str(_meta(obj).get("uid") or ""), _elastic_extra(obj, options),
                           options.enabled("ShortWorkloadNames")), podsets, extra)] if podsets else []


def _constructed_errors(obj: dict[str, Any], ref: JobRef, group: str, made: Made, options: JobOptions,
                        result: JobResult) -> list[FieldError]:
    """The checks on what was constructed: the Job's pod count, each pod set's topology request (and
    a note for each Kubeflow replica type Kueue does not read)."""
    errors: list[FieldError] = []
    if ref.kind in kubeflow.REPLICA_TYPES and group == "kubeflow.org":
        field_name, ordered = kubeflow.REPLICA_TYPES[ref.kind]
        for ignored in kubeflow.ignored_replica_types(obj):
            result.notes.append(f"{ref.describe()}: Kueue reads only the replica types {', '.join(ordered)} of "
                                f"spec.{field_name}; {ignored!r} is not counted")
    if ref.kind == "Job" and group == "batch":
        count = made[0][1][0].count if made and made[0][1] else 1
        errors += webhooks.batch_job(obj, count, options)
    for _, podsets, _ in made:
        errors += webhooks.topology(podsets, options)
    return errors


def _not_managed(result: JobResult, why: str) -> JobResult:
    result.reason = NOT_MANAGED + why
    return result


def _with_job_webhooks(result: JobResult, obj: dict[str, Any], kind: str, options: JobOptions) -> JobResult:
    """The batch/v1 Job webhook also judges Jobs Kueue does not manage."""
    if kind == "Job" and group_version(obj)[0] == "batch":
        read = ps.Reader()
        spec = read.map(obj, "spec", "")
        result.errors += webhooks.batch_job(obj, ps.job_pod_count(spec, read), options)
    return result


def _managed_owner(obj: dict[str, Any], options: JobOptions) -> Optional[str]:
    """`IsOwnerManagedByKueueForObject`: the controller owner is a kind of an enabled integration, or
    one `integrations.externalFrameworks` lists."""
    for reference in _meta(obj).get("ownerReferences") or []:
        if not isinstance(reference, dict) or reference.get("controller") is not True:
            continue
        owner = integration_of({"apiVersion": reference.get("apiVersion"), "kind": reference.get("kind")})
        if owner is not None and owner.framework in options.frameworks \
                or options.external(reference.get("apiVersion"), reference.get("kind")):
            return f"{reference.get('kind')} {reference.get('name')}"
    return None


def _elastic_extra(obj: dict[str, Any], options: JobOptions) -> str:
    """Elastic jobs name each Workload slice after the job's generation (1 on create)."""
    if not ps.elastic(obj, options):
        return ""
    generation = _meta(obj).get("generation")
    return str(generation if isinstance(generation, int) else 1)


Made = list[tuple[str, list[ps.PodSet], dict[str, str]]]


def _pod_group(pod: dict[str, Any], ctx: _Context, options: JobOptions, read: ps.Reader, result: JobResult) -> Made:
    """`ConstructComposableWorkload`: a pod group's one Workload, named after the group,
    once all its pods exist (or at once with fast admission)."""
    name, namespace = _group_name(pod), _namespace(pod)
    members = ctx.groups.get((namespace, name), [pod])
    if members[0] is not pod:
        result.outcome = JobOutcome.MEMBER
        result.reason = f"a pod of group {name}, whose Workload is reported with pod {_name(members[0])}"
        return []
    total_text = str(ps.annotations_of(pod).get(POD_GROUP_TOTAL_COUNT, ""))
    if not total_text.isdigit() or int(total_text) < 1:
        return []  # the pod webhook reports it
    total = int(total_text)
    queue = ps.labels_of(pod).get(QUEUE_LABEL)
    for other in members[1:]:
        if ps.labels_of(other).get(QUEUE_LABEL) != queue:
            result.outcome = JobOutcome.BLOCKED
            result.reason = (f"Kueue cannot build the Workload of pod group {name}: pods {_name(pod)} and "
                             f"{_name(other)} name different queues")
            return []
        if str(ps.annotations_of(other).get(POD_GROUP_TOTAL_COUNT, "")) != total_text:
            result.outcome = JobOutcome.BLOCKED
            result.reason = (f"Kueue cannot build the Workload of pod group {name}: pods {_name(pod)} and "
                             f"{_name(other)} give different {POD_GROUP_TOTAL_COUNT}")
            return []
    fast = ps.annotations_of(pod).get(POD_GROUP_FAST_ADMISSION) == "true"
    if not fast and len(members) < total:
        result.outcome = JobOutcome.BLOCKED
        result.reason = (f"pod group {name} has {len(members)} of its {total} pods in the input; Kueue creates its "
                         f"Workload only when all of them exist (or with {POD_GROUP_FAST_ADMISSION}: \"true\")")
        return []
    if len(members) > total:
        result.notes.append(f"pod group {name} has {len(members)} pods but a total count of {total}; Kueue "
                            "removes the extra pods")
        members = members[:total]
    return [(name, ps.pod_group(members, total, fast, options, read), {IS_GROUP_WORKLOAD: "true"})]


def _deployment(obj: dict[str, Any], options: JobOptions, read: ps.Reader, result: JobResult) -> Made:
    """A Deployment's pods each get their own Workload through the pod integration
    (deployment_webhook.go passes the queue to the pod template). Kueue names each after
    its pod, whose name the ReplicaSet makes up; `<deployment>-<i>` stands in for it."""
    replicas, template = ps.deployment_replicas(obj, read)
    name = _name(obj)
    if replicas:
        stand_ins = f"{name}-0" if replicas == 1 else f"{name}-0 .. {name}-{replicas - 1}"
        result.notes.append(f"Kueue names each pod's Workload after the pod, whose name the ReplicaSet makes up; "
                            f"{stand_ins} stand in for them")
    made: Made = []
    for i in range(replicas):
        pod = {"metadata": template.get("metadata") or {}, "spec": template.get("spec") or {}}
        podsets = ps.single_pod(pod, options, read)
        podsets[0].path = "spec.template"
        made.append((workload_name("Pod", "", f"{name}-{i}", short=options.enabled("ShortWorkloadNames")),
                     podsets, {}))
    return made


def _leader_worker_set(obj: dict[str, Any], options: JobOptions, read: ps.Reader) -> Made:
    """`filterWorkloads` and `constructWorkload`: `spec.replicas` pod-group Workloads, the i-th
    named after `<name>-<i>` (with the LeaderWorkerSet's UID, when the manifest carries one)."""
    name, uid = _name(obj), str(_meta(obj).get("uid") or "")
    count = lws.replicas(obj, read)
    podsets = lws.pod_sets(obj, options, read)
    made = []
    for i in range(count):
        extra = {IS_GROUP_WORKLOAD: "true", JOB_OWNER_GVK: lws.GVK, JOB_OWNER_NAME: name, lws.COMPONENT_INDEX: str(i)}
        made.append((workload_name("LeaderWorkerSet", lws.GROUP, f"{name}-{i}", uid,
                                   short=options.enabled("ShortWorkloadNames")), copy.deepcopy(podsets), extra))
    return made


def _train_job(obj: dict[str, Any], ctx: _Context, options: JobOptions, read: ps.Reader, result: JobResult) -> Made:
    spec = map_at(obj, "spec")
    ref = map_at(spec, "runtimeRef")
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    name = ref.get("name") or ""
    namespace = _namespace(obj) if kind == "TrainingRuntime" else None
    runtime = ctx.runtimes.get((kind, namespace, name))
    if runtime is None:
        result.outcome = JobOutcome.BLOCKED
        where = f" in namespace {namespace}" if namespace else ""
        result.reason = (f"Kueue builds this TrainJob's Workload from its training runtime, {kind} '{name}'{where}, "
                         "which is not in the input; add it to derive the pod sets")
        return []
    podsets = ps.train_job(obj, runtime, options, read)
    return [(workload_name("TrainJob", TRAINER_GROUP, _name(obj), str(_meta(obj).get("uid") or ""),
                           short=options.enabled("ShortWorkloadNames")), podsets, {})]


def _workload(obj: dict[str, Any], name: str, namespace: str, queue: str, podsets: list[ps.PodSet],
              extra_annotations: dict[str, str], ctx: _Context, options: JobOptions,
              result: JobResult) -> Optional[dict[str, Any]]:
    """`NewWorkload` + `PrepareWorkloadPriority`, then the Workload as the API server would
    store it (defaults, schema and Kueue's Workload webhook applied)."""
    from aks_kueue.kueue.validate import load_object, validate_object

    if not options.enabled("PartialAdmission"):
        for podset in podsets:
            podset.min_count = None
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    uid = _meta(obj).get("uid")
    if isinstance(uid, str) and uid and len(uid) <= 63:
        metadata["labels"] = {JOB_UID_LABEL: uid}
    annotations = {k: v for k, v in ps.annotations_of(obj).items() if str(k).startswith(PROVREQ_PREFIX)}
    if options.enabled("AdmissionGatedBy") and ADMISSION_GATED_BY in ps.annotations_of(obj):
        annotations[ADMISSION_GATED_BY] = ps.annotations_of(obj)[ADMISSION_GATED_BY]
    annotations.update(extra_annotations)
    if annotations:
        metadata["annotations"] = annotations
    spec: dict[str, Any] = {}
    if queue:
        spec["queueName"] = queue
    spec["podSets"] = [p.manifest() for p in podsets]
    priority = _priority(obj, podsets, ctx, result)
    if priority is None:
        return None
    ref, value = priority
    if ref is not None:
        spec["priorityClassRef"] = ref
    spec["priority"] = value
    max_exec = str(ps.labels_of(obj).get(MAX_EXEC_TIME_LABEL, ""))
    if max_exec.isdigit() and 0 < int(max_exec) < 2**31:
        spec["maximumExecutionTimeSeconds"] = int(max_exec)
    workload = {"apiVersion": WORKLOAD_API, "kind": "Workload", "metadata": metadata, "spec": spec}
    made = load_object(workload)
    errors = validate_object(made)
    if errors:
        result.errors += [_job_error(e, podsets) for e in errors]
        return None
    return made.defaulted


def _priority(obj: dict[str, Any], podsets: list[ps.PodSet], ctx: _Context,
              result: JobResult) -> Optional[tuple[Optional[dict[str, str]], int]]:
    """`ExtractPriority`: the WorkloadPriorityClass label, then the job's own priority class
    (MPIJob's run policy), then the first pod template's priorityClassName, then the
    globalDefault PriorityClass, then 0. None when Kueue could not create the Workload."""
    wpc = ps.labels_of(obj).get(PRIORITY_CLASS_LABEL)
    if isinstance(wpc, str) and wpc:
        if wpc not in ctx.workload_priority:
            result.outcome = JobOutcome.BLOCKED
            result.reason = (f"Kueue could not create its Workload: the WorkloadPriorityClass '{wpc}' named by "
                             f"{PRIORITY_CLASS_LABEL} is not in the input (Kueue fails when it does not exist)")
            return None
        return {"group": KUEUE_GROUP, "kind": "WorkloadPriorityClass", "name": wpc}, ctx.workload_priority[wpc]
    name = _custom_priority_class(obj) or next(
        (p.template["spec"]["priorityClassName"] for p in podsets
         if isinstance(p.template.get("spec"), dict) and p.template["spec"].get("priorityClassName")), "")
    if name:
        if name not in ctx.pod_priority:
            result.notes.append(f"PriorityClass '{name}' is not in the input; its value is unknown here, 0 is used")
        return {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": name}, ctx.pod_priority.get(name, 0)
    if ctx.global_default is not None:
        default_name, value = ctx.global_default
        return {"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": default_name}, value
    return None, 0


def _custom_priority_class(obj: dict[str, Any]) -> str:
    """MPIJob's and the Kubeflow v1 jobs' `PriorityClass()`: runPolicy.schedulingPolicy.priorityClass
    first (then the replica templates in order, as for every job)."""
    if obj.get("kind") in (*kubeflow.REPLICA_TYPES, "MPIJob") and group_version(obj)[0] == "kubeflow.org":
        return kubeflow.priority_class(obj)
    return ""


def _job_error(error: FieldError, podsets: list[ps.PodSet]) -> FieldError:
    """A problem of the Workload, named in the job's terms where it is in a pod template."""
    prefix = "spec.podSets["
    if error.field.startswith(prefix):
        index_text, _, rest = error.field[len(prefix):].partition("]")
        if index_text.isdigit() and int(index_text) < len(podsets) and rest.startswith(".template"):
            path = podsets[int(index_text)].path
            tail = rest[len(".template"):]
            return FieldError(f"{path}{tail}" if path else tail.lstrip("."), error.message, error.fix)
    return FieldError(f"(its Workload) {error.field}" if error.field else "(its Workload)",
                      f"Kueue could not create the Workload for this job: {error.message}", error.fix)
