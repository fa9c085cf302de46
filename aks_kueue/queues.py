"""Turn `aks-kueue:queues` and `aks-kueue:queueManifests` into validated Kueue objects.

Everything is checked before anything is registered: each object as Kueue's API
server and webhooks would check it, then the references between them, then that
every LocalQueue's namespace can reach its ClusterQueue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aks_kueue.kueue.convert import V1BETA2, cluster_queue_spec_to_v1beta2
from aks_kueue.kueue.manifests import ManifestError, read_documents
from aks_kueue.kueue.structural import FieldError
from aks_kueue.kueue.validate import KueueObject, ReferenceRules, load_object, validate_object, validate_set
from aks_kueue.k8s.merge import deep_merge
from aks_kueue.k8s.scheduling import label_selector_matches
from aks_kueue.settings.errors import Problem, SettingsError
from aks_kueue.settings.root import SYSTEM_POOL_NAME, Settings

AGENTPOOL_LABEL = "kubernetes.azure.com/agentpool"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
MANAGED_BY = {"app.kubernetes.io/managed-by": "aks-kueue"}
# Creation order: what a kind refers to comes before it.
DEPLOY_ORDER = ("Topology", "ResourceFlavor", "WorkloadPriorityClass", "ProvisioningRequestConfig",
                "AdmissionCheck", "Cohort", "ClusterQueue", "LocalQueue")
CLUSTER_SCOPED = set(DEPLOY_ORDER) - {"LocalQueue"}
PREEXISTING_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease", "kueue-system")


@dataclass
class QueuePlan:
    objects: list[KueueObject] = field(default_factory=list)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    # Namespaces listed in queues.existingNamespaces: labelled, never created, owned or deleted.
    existing: frozenset[str] = frozenset()

    def of_kind(self, kind: str) -> list[KueueObject]:
        return [o for o in self.objects if o.kind == kind]


def plan_queues(settings: Settings, base_dir: Path) -> QueuePlan:
    """The validated plan, or a SettingsError listing every problem."""
    problems: list[Problem] = []
    objects = _from_stack(settings, problems) + _from_manifests(settings, base_dir, problems)
    valid = []
    for obj in objects:
        errors = validate_object(obj)
        problems += [_problem(obj, e) for e in errors]
        if not errors:
            valid.append(obj)
    # References are checked among everything defined, valid or not, so one bad
    # ClusterQueue is reported once rather than again through each of its LocalQueues.
    rules = ReferenceRules(cohorts_must_exist=True, managed=settings.kueue.install == "managed")
    problems += [_problem(found.obj, found.error) for found in validate_set(objects, rules)]
    plan = QueuePlan(objects=sorted(valid, key=lambda o: DEPLOY_ORDER.index(o.kind)),
                     existing=frozenset(settings.queues.existing_namespaces if settings.queues else ()))
    plan.namespaces = _namespaces(plan, problems)
    problems += _expected_workloads(settings, objects)
    if problems:
        raise SettingsError(problems)
    return plan


def _from_stack(settings: Settings, problems: list[Problem]) -> list[KueueObject]:
    queues = settings.queues
    if queues is None:
        return []
    pools = {p.name: p for p in settings.node_pools}
    objects = []
    for i, entry in enumerate(queues.resource_flavors):
        source = f"aks-kueue:queues.resourceFlavors[{i}]"
        spec = entry.spec if entry.spec is not None else {}
        if entry.node_pool is not None:
            pool = pools.get(entry.node_pool)
            if pool is None:
                reason = ("the system pool runs system pods only and never holds Kueue quota"
                          if entry.node_pool == SYSTEM_POOL_NAME else "no such pool")
                problems.append(Problem(f"{source}.nodePool", f"flavor {entry.name!r} names pool "
                                        f"{entry.node_pool!r}: {reason}; pools: {', '.join(pools) or 'none'}"))
                continue
            derived: dict[str, Any] = {"nodeLabels": {AGENTPOOL_LABEL: pool.name}}
            if pool.node_taints:
                derived["nodeTaints"] = pool.node_taint_objects
            spec = deep_merge(derived, spec) if isinstance(spec, dict) else spec
        objects.append(_object("ResourceFlavor", entry.name, source, spec=spec))
    for i, entry in enumerate(queues.cohorts):
        objects.append(_object("Cohort", entry.name, f"aks-kueue:queues.cohorts[{i}]", spec=entry.spec or {}))
    for i, entry in enumerate(queues.cluster_queues):
        objects.append(_object("ClusterQueue", entry.name, f"aks-kueue:queues.clusterQueues[{i}]",
                               spec=cluster_queue_spec_to_v1beta2(entry.spec if entry.spec is not None else {})))
    for i, entry in enumerate(queues.local_queues):
        objects.append(_object("LocalQueue", entry.name, f"aks-kueue:queues.localQueues[{i}]",
                               namespace=entry.namespace, spec=entry.spec if entry.spec is not None else {}))
    for i, entry in enumerate(queues.workload_priority_classes):
        extra = {"value": entry.value}
        if entry.description is not None:
            extra["description"] = entry.description
        objects.append(_object("WorkloadPriorityClass", entry.name,
                               f"aks-kueue:queues.workloadPriorityClasses[{i}]", **extra))
    for i, entry in enumerate(queues.topologies):
        objects.append(_object("Topology", entry.name, f"aks-kueue:queues.topologies[{i}]", spec=entry.spec))
    return objects


def _object(kind: str, name: str, source: str, namespace: str | None = None, **fields: Any) -> KueueObject:
    metadata = {"name": name, **({"namespace": namespace} if namespace is not None else {})}
    body = {k: v for k, v in fields.items() if not (k == "spec" and v is None)}
    return KueueObject({"apiVersion": V1BETA2, "kind": kind, "metadata": metadata, **body}, source=source)


def _from_manifests(settings: Settings, base_dir: Path, problems: list[Problem]) -> list[KueueObject]:
    objects = []
    for i, name in enumerate(settings.queue_manifests):
        key = f"aks-kueue:queueManifests[{i}]"
        path = Path(name) if Path(name).is_absolute() else base_dir / name
        try:
            for index, document in read_documents(path):
                obj = load_object(document, f"{key}: {name} document {index}")
                if obj.kind in CLUSTER_SCOPED and isinstance(obj.manifest.get("metadata"), dict):
                    obj.manifest["metadata"].pop("namespace", None)  # the API server clears it too
                obj.source += f" ({obj.kind} {obj.name})"
                if obj.kind not in DEPLOY_ORDER:
                    problems.append(Problem(obj.source, f"kind {obj.kind} is not deployed by aks-kueue; it deploys "
                                                        f"{', '.join(DEPLOY_ORDER)}"))
                    continue
                objects.append(obj)
        except ManifestError as error:
            problems.append(Problem(key, f"{name}{str(error)[len(str(path)):]}"))
    return objects


def _problem(obj: KueueObject, error: FieldError) -> Problem:
    if obj.source.startswith("aks-kueue:queues."):
        field = {"metadata.name": "name", "metadata.namespace": "namespace"}.get(error.field, error.field)
        return Problem(f"{obj.source}.{field}", error.message)
    return Problem(obj.source, str(error))


def _namespaces(plan: QueuePlan, problems: list[Problem]) -> dict[str, dict[str, str]]:
    """Each LocalQueue namespace, with the labels its ClusterQueue's namespaceSelector needs."""
    queues = {cq.name: cq for cq in plan.of_kind("ClusterQueue")}
    namespaces: dict[str, dict[str, str]] = {}
    for lq in plan.of_kind("LocalQueue"):
        namespace = lq.namespace or ""
        labels = namespaces.setdefault(namespace, dict(MANAGED_BY))
        if namespace in PREEXISTING_NAMESPACES and namespace not in plan.existing:
            problems.append(_problem(lq, FieldError("metadata.namespace", f"Invalid value: {namespace!r}: every "
                                     "cluster already has it, and the program creates the namespaces of its "
                                     "LocalQueues; use a team namespace, or list it in queues.existingNamespaces")))
        cq = queues.get(lq.spec.get("clusterQueue", ""))
        if cq is None:
            continue
        selector = cq.spec.get("namespaceSelector")
        if selector is None:
            problems.append(_problem(cq, FieldError("spec.namespaceSelector", "Required value: unset means no "
                                     f"namespace is eligible, so LocalQueue {namespace}/{lq.name} can never "
                                     "submit here; set {} for every namespace, or a selector")))
            continue
        for key, value in _labels_selected(selector).items():
            if labels.get(key, value) != value:
                problems.append(_problem(lq, FieldError("metadata.namespace", f"Invalid value: namespace "
                                         f"{namespace!r} would need label {key}={labels[key]} and {key}={value} "
                                         "for the ClusterQueues of its LocalQueues; align their namespaceSelectors")))
            labels.setdefault(key, value)
    for lq in plan.of_kind("LocalQueue"):
        cq = queues.get(lq.spec.get("clusterQueue", ""))
        selector = cq.spec.get("namespaceSelector") if cq else None
        namespace = lq.namespace or ""
        if selector is not None and not label_selector_matches(selector, {**namespaces[namespace],
                                                           NAMESPACE_NAME_LABEL: namespace}):
            problems.append(_problem(cq, FieldError("spec.namespaceSelector", f"Invalid value: it does not select "
                                     f"namespace {namespace!r}, so LocalQueue {namespace}/{lq.name} can never "
                                     "submit here; widen the selector or move the LocalQueue")))
    return namespaces


def _labels_selected(selector: dict[str, Any]) -> dict[str, str]:
    wanted = dict(selector.get("matchLabels") or {})
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression.get("key"), expression.get("operator")
        if key == NAMESPACE_NAME_LABEL:
            continue
        if operator == "In" and expression.get("values"):
            wanted.setdefault(key, expression["values"][0])
        elif operator == "Exists":
            wanted.setdefault(key, "true")
    return wanted


def _expected_workloads(settings: Settings, objects: list[KueueObject]) -> list[Problem]:
    local_queues = {(o.namespace, o.name) for o in objects if o.kind == "LocalQueue"}
    classes = {o.name for o in objects if o.kind == "WorkloadPriorityClass"}
    managed = settings.kueue.install == "managed"
    problems = []
    for i, workload in enumerate(settings.expected_workloads):
        path = f"aks-kueue:expectedWorkloads[{i}]"
        if (workload.queue_namespace, workload.queue_name) not in local_queues:
            problems.append(Problem(f"{path}.queue", f"LocalQueue {workload.queue!r} is not defined in "
                                    "queues.localQueues or queueManifests; point it at one that is"))
        pc = workload.priority_class
        if pc is not None and pc not in classes and not (managed and pc.startswith("aks-")):
            problems.append(Problem(f"{path}.priorityClass", f"WorkloadPriorityClass {pc!r} is not defined; "
                                    "Kueue refuses to create workloads that name a missing class"))
        names = [p.name for p in workload.pod_sets]
        if len(set(names)) != len(names):
            problems.append(Problem(f"{path}.podSets", "podSet names must be unique"))
        if sum(1 for p in workload.pod_sets if p.min_count is not None) > 1:
            problems.append(Problem(f"{path}.podSets", "at most one podSet may use minCount"))
        for p, pod_set in enumerate(workload.pod_sets):
            if pod_set.min_count is not None and pod_set.min_count > pod_set.count:
                problems.append(Problem(f"{path}.podSets[{p}].minCount", f"minCount {pod_set.min_count} is above "
                                        f"count {pod_set.count}; it must be <= count"))
            if "pods" in pod_set.requests:
                problems.append(Problem(f"{path}.podSets[{p}].requests.pods", "the resource name pods is "
                                        "reserved for Kueue; remove it"))
    return problems

