"""Kueue's own verdict on the objects and expected workloads found among the resources.

The same validator as the program's queue plan (`aks_kueue/kueue/validate.py`): the CRD
schema, its CEL rules and Kueue's webhooks per object, then duplicate names and
references across them, then the LocalQueue namespaces the way `aks_kueue/queues.py`
checks them, here against the Namespace resources of the stack.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Optional

from aks_kueue.kueue.validate import KueueObject, ReferenceRules, validate_object, validate_set
from aks_kueue.policies.world import World
from aks_kueue.k8s.scheduling import label_selector_matches
from aks_kueue.queues import NAMESPACE_NAME_LABEL, PREEXISTING_NAMESPACES

MANAGED_PREFIX = "aks-"


@dataclass(frozen=True)
class ObjectProblem:
    subject: str   # "ClusterQueue team-a"
    message: str
    urn: Optional[str]

    def __str__(self) -> str:
        return f"{self.subject}: {self.message}"


def object_problems(world: World) -> list[ObjectProblem]:
    """Everything Kueue (or the API server) would refuse among the queue objects."""
    if "objects" not in world.memo:
        world.memo["objects"] = _check_objects(world)
    return world.memo["objects"]


def valid_objects(world: World) -> list[KueueObject]:
    object_problems(world)
    return [r.obj for r in world.kueue if r.obj.defaulted]


def _check_objects(world: World) -> list[ObjectProblem]:
    found = []
    urn_of = {id(r.obj): r.urn for r in world.kueue}
    for resource in world.kueue:
        found += [ObjectProblem(resource.obj.describe(), str(e), resource.urn) for e in validate_object(resource.obj)]
    rules = ReferenceRules(cohorts_must_exist=True, managed=world.managed)
    objects = [r.obj for r in world.kueue]
    found += [ObjectProblem(f.obj.describe(), str(f.error), urn_of.get(id(f.obj))) for f in validate_set(objects, rules)]
    found += _namespace_problems(world, urn_of)
    return found


def _namespace_problems(world: World, urn_of: dict[int, str]) -> list[ObjectProblem]:
    """A LocalQueue needs its namespace, and its ClusterQueue's namespaceSelector must select it."""
    queues = {r.obj.name: r.obj for r in world.kueue if r.obj.kind == "ClusterQueue"}
    found = []
    for resource in world.kueue:
        lq = resource.obj
        if lq.kind != "LocalQueue" or not isinstance(lq.namespace, str):
            continue
        namespace = lq.namespace
        if namespace not in world.namespaces and namespace not in PREEXISTING_NAMESPACES:
            found.append(ObjectProblem(lq.describe(), f"metadata.namespace: namespace {namespace!r} is not created "
                                       "by this stack; the LocalQueue cannot be created", resource.urn))
            continue
        target = lq.spec.get("clusterQueue")
        cq = queues.get(target) if isinstance(target, str) else None
        if cq is None:
            continue  # a dangling reference, reported by the reference check
        selector = cq.spec.get("namespaceSelector")
        labels = {**world.namespaces.get(namespace, {}), NAMESPACE_NAME_LABEL: namespace}
        if not isinstance(selector, dict) or not label_selector_matches(selector, labels):
            why = "is unset, so no namespace is eligible" if selector is None else f"does not select {namespace!r}"
            found.append(ObjectProblem(cq.describe(), f"spec.namespaceSelector {why}, so LocalQueue "
                                       f"{namespace}/{lq.name} can never submit here", urn_of.get(id(cq))))
    return found


def workload_problems(world: World) -> list[ObjectProblem]:
    """Expected workloads Kueue would refuse, or whose queue or priority class is missing."""
    if "workloads" not in world.memo:
        world.memo["workloads"] = _check_workloads(world)
    return world.memo["workloads"]


def valid_workloads(world: World) -> list[KueueObject]:
    refused = {p.subject for p in workload_problems(world)}
    return [obj for obj, _ in world.workloads if obj.describe() not in refused]


def _check_workloads(world: World) -> list[ObjectProblem]:
    local_queues = {(r.obj.namespace, r.obj.name) for r in world.kueue if r.obj.kind == "LocalQueue"}
    classes = {r.obj.name: r.obj.manifest.get("value") for r in world.kueue
               if r.obj.kind == "WorkloadPriorityClass"}
    found = []
    for obj, urn in world.workloads:
        subject = f"expected {obj.describe()}"
        if obj.kind != "Workload":
            found.append(ObjectProblem(obj.describe(), "is not a Kueue Workload", urn))
            continue
        spec = obj.spec
        queue = spec.get("queueName")
        if isinstance(queue, str) and (obj.namespace, queue) not in local_queues:
            found.append(ObjectProblem(obj.describe(), f"spec.queueName: LocalQueue {obj.namespace}/{queue} is not "
                                       f"created by this stack; point {subject} at one that is", urn))
        ref = spec.get("priorityClassRef")
        name = ref.get("name") if isinstance(ref, dict) else None
        managed_class = world.managed and isinstance(name, str) and name.startswith(MANAGED_PREFIX)
        if isinstance(name, str) and name not in classes and not managed_class:
            found.append(ObjectProblem(obj.describe(), f"spec.priorityClassRef: WorkloadPriorityClass {name!r} is "
                                       "not created by this stack; Kueue refuses workloads that name a missing class",
                                       urn))
        found += [ObjectProblem(obj.describe(), str(e), urn) for e in validate_object(_as_created(obj, classes))]
    return found


def _as_created(obj: KueueObject, classes: dict) -> KueueObject:
    """The Workload as Kueue's job controller creates it: the class's value copied into
    spec.priority, which Kueue's schema requires beside a priorityClassRef."""
    manifest = copy.deepcopy(obj.manifest)
    spec = manifest.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("priorityClassRef"), dict) and "priority" not in spec:
        value = classes.get(spec["priorityClassRef"].get("name"))
        spec["priority"] = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return KueueObject(manifest, source=obj.source)
