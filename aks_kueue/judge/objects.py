"""Would Kueue and the API server accept the queue objects, the namespaces and the expected
workloads at all? Every finding here makes the config unusable (blocking).

Per object: Kueue v0.19.2's CRD schema, CEL rules and webhooks (`aks_kueue.kueue.validate`).
Across objects: duplicate names, references, cohort cycles, the `aks-` names the managed
extension owns. Namespaces: each LocalQueue's namespace is created or declared existing,
and its ClusterQueue's namespaceSelector selects it. Expected workloads: a defined queue and
priority class, and a Workload Kueue accepts.
"""

from __future__ import annotations

import copy
import json
import weakref
from collections import Counter
from functools import lru_cache
from dataclasses import dataclass
from typing import Any, Generic, Iterable, Mapping, Optional, TypeVar

from aks_kueue.aks.managed_extension import RESERVED_PREFIX
from aks_kueue.judge.finding import ERROR, WARNING, Finding, field_key
from aks_kueue.judge.rules import OBJECTS_VALID, VM_OVERHEAD, WORKLOADS_FIT, finding, rule
from aks_kueue.k8s.objects import map_at, maps_at
from aks_kueue.k8s.scheduling import NAMESPACE_NAME_LABEL, label_selector_matches
from aks_kueue.k8s import field
from aks_kueue.k8s.field import FieldError, Path
from aks_kueue.kueue.validate import KueueObject, ReferenceRules, stack_key, validate_object, validate_set
from aks_kueue.kueue.views import ClusterQueue, Cohort, KueueView, LocalQueue, view
from aks_kueue.model.conventions import PREEXISTING_NAMESPACES
from aks_kueue.model.desired import ExpectedWorkload, KueueItem, Model

OBJECT_INVALID = "kueue-object-invalid"
NAMESPACE_UNUSABLE = "namespace-unusable"
WORKLOAD_INVALID = "expected-workload-invalid"
COHORT_SINGLE_MEMBER = "cohort-single-member"
KUEUE_RULES = "Kueue v0.19.2's CRDs, CEL rules and webhooks (aks_kueue/kueue/validate.py)"
SELECTOR = Path("spec", "namespaceSelector")


@rule(OBJECT_INVALID, "Every Kueue object passes Kueue's schema, CEL rules and webhooks, and its references resolve.",
      KUEUE_RULES, "Kueue objects", OBJECTS_VALID, blocking=True, severity=ERROR,
      explanation="The API server refuses an object that fails its CRD's schema or CEL rules, and Kueue's webhooks "
      "refuse one that breaks Kueue's own rules: pulumi up then fails half-way, so the program refuses the config "
      "before it registers anything. An object whose reference does not resolve (a ResourceFlavor, a ClusterQueue, "
      "an AdmissionCheck, a Topology) is accepted but kept inactive by Kueue, which admits nothing through it; a "
      "cohort cycle disables every cohort and ClusterQueue in it. The messages are the API server's and Kueue's own "
      "words where they have them.")
def object_findings(model: Model) -> list[Finding]:
    findings = []
    checked = list(zip(model.objects, checked_objects(model)))
    for item, (obj, errors) in checked:
        findings += [_finding(item, error) for error in errors]
    # References are checked among everything defined, valid or not, so one bad ClusterQueue
    # is reported once rather than again through each of its LocalQueues.
    rules = ReferenceRules(cohorts_must_exist=False, managed=model.managed)
    items = {id(obj): item for item, (obj, _) in checked}
    findings += [_finding(items[id(error.object)], error)
                 for error in validate_set([obj for _, (obj, _) in checked], rules)]
    return findings


@dataclass
class _Checked:
    model: "weakref.ref[Model]"
    checked: list[tuple[KueueObject, list[FieldError]]]
    valid: Optional[list["Valid[KueueView]"]] = None


# The checked objects of the models being judged (a fleet manager judges its workers' models too), and, once
# asked for, their valid ones: one judgement asks for them from several rules. An entry goes with its model (the
# weak reference's callback), and is replaced whole, so a concurrent reader never mixes two; at most _MODELS are
# kept, the oldest dropped first.
_checked: dict[int, _Checked] = {}
_MODELS = 64


def _entry(model: Model) -> _Checked:
    key = id(model)
    entry = _checked.get(key)
    if entry is None or entry.model() is not model:
        def forget(_: Any) -> None:
            if _checked.get(key) is entry:
                _checked.pop(key, None)

        entry = _Checked(weakref.ref(model, forget), [checked_object(item) for item in model.objects])
        while len(_checked) >= _MODELS:
            _checked.pop(next(iter(_checked)))
        _checked[key] = entry
    return entry


def checked_objects(model: Model) -> list[tuple[KueueObject, list[FieldError]]]:
    """`checked_object` of each of the model's objects, in order, computed once per model (the
    objects are the judge's to read, not to change)."""
    return _entry(model).checked


V = TypeVar("V")


@dataclass(frozen=True)
class Valid(Generic[V]):
    """An object of the model that Kueue accepts: the model's item (its key, its label), its manifest as the API
    server stores it (defaults filled), and its typed view (`kueue/views.py`), which is what rules read."""

    item: KueueItem
    manifest: Mapping[str, Any]
    view: V


def valid_objects(model: Model) -> list[Valid[KueueView]]:
    """The model's objects that Kueue accepts, in order, computed once per model."""
    entry = _entry(model)
    if entry.valid is None:
        entry.valid = [Valid(item, obj.defaulted or obj.manifest, view(obj.defaulted or obj.manifest))
                       for item, (obj, errors) in zip(model.objects, entry.checked) if not errors]
    return entry.valid


def of_kind(valid: Iterable[Valid[Any]], kind: type[V]) -> list[Valid[V]]:
    """The valid objects whose view is a `kind` (`views.ClusterQueue`, ...)."""
    return [each for each in valid if isinstance(each.view, kind)]


def checked_object(item: KueueItem) -> tuple[KueueObject, list[FieldError]]:
    """The object validated once per content: the program and the pack judge the same objects
    in one offline preview, and Kueue's schema and CEL checks are the costly part."""
    text = json.dumps([item.manifest, item.original], sort_keys=True, default=str)
    defaulted, errors = _validated(text)
    obj = KueueObject(copy.deepcopy(dict(item.manifest)), source=item.key,
                      original=copy.deepcopy(dict(item.original)) if item.original is not None else None)
    obj.defaulted = copy.deepcopy(defaulted) if defaulted else {}
    return obj, list(errors)


@lru_cache(maxsize=4096)
def _validated(text: str) -> tuple[Optional[dict], tuple[FieldError, ...]]:
    manifest, original = json.loads(text)
    obj = KueueObject(manifest, original=original)
    errors = validate_object(obj)
    return obj.defaulted or None, tuple(errors)


def _finding(item: KueueItem, error: FieldError, kind: str = OBJECT_INVALID) -> Finding:
    """`aks-kueue:queues.clusterQueues[0].spec...: message` for an object of the stack file;
    `aks-kueue:queueManifests[0]: file document 0 (Kind name): field: message` for one of a file."""
    if item.key.startswith("aks-kueue:queues."):
        key, message = stack_key(item.key, error.field), error.message
    else:
        key, message = item.key, f"{error.field}: {error.message}" if error.field else error.message
    return finding(kind, object=item.label, key=key, message=message, fix=error.fix)


@rule(NAMESPACE_UNUSABLE, "Every LocalQueue's namespace is created or declared existing, and its ClusterQueue's "
      "namespaceSelector selects it.", "Kueue LocalQueue and ClusterQueue namespaceSelector", "LocalQueues and "
      "Namespaces", OBJECTS_VALID, blocking=True, severity=ERROR,
      explanation="A LocalQueue is created in its namespace, so the namespace must exist: created by this stack or "
      "declared existing (queues.existingNamespaces), never one every cluster already has (default, kube-system), "
      "which the program would otherwise try to create. And a ClusterQueue admits work only from the namespaces its "
      "namespaceSelector selects: unset selects none, so a LocalQueue in a namespace it does not select can never "
      "submit there.")
def namespace_findings(model: Model) -> list[Finding]:
    """A LocalQueue needs its namespace, and its ClusterQueue's namespaceSelector must select it."""
    namespaces = {n.name: n for n in model.namespaces}
    # Objects Kueue refuses are reported as such; their selectors are not read.
    valid = valid_objects(model)
    queues = {cq.view.name: cq for cq in of_kind(valid, ClusterQueue)}
    findings = []
    for namespace in model.namespaces:
        if namespace.name in PREEXISTING_NAMESPACES and not namespace.existing:
            user = next((o for o in model.of_kind("LocalQueue") if o.namespace == namespace.name), None)
            error = field.invalid("namespace", field.OMIT, f"{namespace.name!r}: every cluster already has it, and "
                                                           "the program creates the namespaces of its LocalQueues")
            findings.append(finding(
                NAMESPACE_UNUSABLE, object=f"Namespace {namespace.name}",
                key=field_key(user.key, error.field) if user else f"Namespace {namespace.name}", message=error.message,
                fix="use a team namespace, or list it in queues.existingNamespaces so that it is only labelled"))
    for valid_lq in of_kind(valid, LocalQueue):
        lq, item = valid_lq.view, valid_lq.item
        found = namespaces.get(lq.namespace)
        if found is None:
            findings.append(finding(
                NAMESPACE_UNUSABLE, object=item.label, key=field_key(item.key, "namespace"),
                message=f"namespace {lq.namespace!r} is neither created by this stack nor declared existing", fix="create the namespace with this stack, or list it in "
                "queues.existingNamespaces"))
            continue
        cq = queues.get(lq.cluster_queue)
        if cq is None:
            continue  # a dangling reference, reported by the reference check
        namespace, selector = found, cq.view.namespace_selector
        if selector is None:
            error = field.required(SELECTOR, f"unset means no namespace is eligible, so LocalQueue "
                                             f"{lq.namespace}/{lq.name} can never submit here")
            findings.append(finding(NAMESPACE_UNUSABLE, object=cq.item.label, key=field_key(cq.item.key, error.field),
                                    message=error.message, fix="set {} for every namespace, or a selector"))
        elif not label_selector_matches(selector, {**namespace.labels, NAMESPACE_NAME_LABEL: namespace.name}):
            error = field.invalid(SELECTOR, field.OMIT, f"it does not select namespace {namespace.name!r}, so "
                                                        f"LocalQueue {lq.namespace}/{lq.name} can never submit here")
            findings.append(finding(NAMESPACE_UNUSABLE, object=cq.item.label, key=field_key(cq.item.key, error.field),
                                    message=error.message, fix="widen the selector or move the LocalQueue"))
    return _once(findings)


def _once(findings: list[Finding]) -> list[Finding]:
    """A ClusterQueue several LocalQueues reach is reported once per namespace message."""
    seen: dict[tuple[str, str, str], Finding] = {}
    for each in findings:
        seen.setdefault((each.kind, each.key, each.message), each)
    return list(seen.values())


@rule(WORKLOAD_INVALID, "Every expected workload is a Workload Kueue accepts, on a defined queue and priority class.",
      KUEUE_RULES, "expected workloads (the model ConfigMap)", WORKLOADS_FIT, blocking=True, config=VM_OVERHEAD,
      severity=ERROR,
      explanation="An expected workload is the Workload Kueue would create for a team's job: Kueue refuses to create "
      "one that fails its schema or webhooks, names a LocalQueue that does not exist, or a WorkloadPriorityClass "
      "that is not defined, so the job would never be queued.")
def workload_findings(model: Model) -> list[Finding]:
    """Expected workloads Kueue would refuse, or whose queue or priority class is missing."""
    local_queues = {(o.namespace, o.name) for o in model.of_kind("LocalQueue")}
    classes = {o.name: o.manifest.get("value") for o in model.of_kind("WorkloadPriorityClass")}
    findings = []
    for workload in model.workloads:
        findings += _workload(workload, local_queues, classes, model.managed)
    return findings


def _workload(workload: ExpectedWorkload, local_queues, classes, managed: bool) -> list[Finding]:
    # Not yet validated (this rule is what validates it): every part is read as possibly absent or mistyped.
    manifest = workload.manifest
    metadata, spec = map_at(manifest, "metadata"), map_at(manifest, "spec")
    namespace = metadata.get("namespace")
    found = []

    def add(field: str, message: str, fix: str = "") -> None:
        found.append(finding(WORKLOAD_INVALID, object=workload.label, key=field_key(workload.key, field),
                             message=message, fix=fix))

    if manifest.get("kind") != "Workload":
        add("", "is not a Kueue Workload")
        return found
    queue = spec.get("queueName")
    if isinstance(queue, str) and (namespace, queue) not in local_queues:
        add("queue", f"LocalQueue '{namespace}/{queue}' is not defined by this stack (queues.localQueues or "
            "queueManifests)", "point it at one that is")
    name = map_at(spec, "priorityClassRef").get("name")
    if isinstance(name, str) and name not in classes and not (managed and name.startswith(RESERVED_PREFIX)):
        add("priorityClass", f"WorkloadPriorityClass {name!r} is not defined", "define it or name another")
    raw = spec.get("podSets")
    pod_sets = [(i, p) for i, p in enumerate(raw) if isinstance(p, dict)] if isinstance(raw, list) else []
    names = [p.get("name") for _, p in pod_sets]
    if len(set(names)) != len(names):
        add("podSets", "podSet names must be unique")
    if sum(1 for _, p in pod_sets if p.get("minCount") is not None) > 1:
        add("podSets", "at most one podSet may use minCount")
    for index, pod_set in pod_sets:
        count, minimum = pod_set.get("count", 1), pod_set.get("minCount")
        if isinstance(minimum, int) and isinstance(count, int) and minimum > count:
            add(f"podSets[{index}].minCount", f"minCount {minimum} is above count {count}", "it must be <= count")
        for container in maps_at(map_at(map_at(pod_set, "template"), "spec"), "containers"):
            if "pods" in map_at(map_at(container, "resources"), "requests"):
                add(f"podSets[{index}].requests.pods", "the resource name pods is reserved for Kueue", "remove it")
    if not found:
        obj = as_created(manifest, classes, workload.key)
        found += [finding(WORKLOAD_INVALID, object=workload.label, key=workload.key,
                          message=f"{error.field}: {error.message}" if error.field else error.message, fix=error.fix)
                  for error in validate_object(obj)]
    return found


def as_created(manifest: Any, classes: dict, key: str = "") -> KueueObject:
    """The Workload as Kueue's job controller creates it: the class's value copied into
    spec.priority, which Kueue's schema requires beside a priorityClassRef."""
    manifest = copy.deepcopy(manifest)
    spec = manifest.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("priorityClassRef"), dict) and "priority" not in spec:
        value = classes.get(spec["priorityClassRef"].get("name"))
        spec["priority"] = value if isinstance(value, int) and not isinstance(value, bool) else 0
    return KueueObject(manifest, source=key)


def valid_workloads(model: Model) -> list[tuple[ExpectedWorkload, dict]]:
    """The expected workloads Kueue accepts, each with its Workload as Kueue creates it."""
    classes = {o.name: o.manifest.get("value") for o in model.of_kind("WorkloadPriorityClass")}
    refused = {f.object for f in workload_findings(model)}
    kept = []
    for workload in model.workloads:
        if workload.label in refused:
            continue
        obj = as_created(workload.manifest, classes, workload.key)
        if not validate_object(obj):
            kept.append((workload, obj.defaulted or obj.manifest))
    return kept


@rule(COHORT_SINGLE_MEMBER, "A cohort has a Cohort object or more than one member.", "Kueue cohorts (a cohortName "
      "creates its cohort)", "ClusterQueues", severity=WARNING,
      explanation="Kueue creates a cohort for any cohortName; a ClusterQueue alone in a cohort no Cohort object "
      "declares borrows from and lends to nobody, and is most likely a misspelling of another cohort's name. "
      "Declare the Cohort to say one member is meant.")
def cohort_findings(model: Model) -> list[Finding]:
    """Kueue creates a cohort for any cohortName; one that only a single ClusterQueue names, and
    that no Cohort object declares, is most likely a misspelling of another."""
    valid = valid_objects(model)
    cohorts = [each.view for each in of_kind(valid, Cohort)]
    declared = {cohort.name for cohort in cohorts}
    parents = {cohort.parent for cohort in cohorts}
    members: Counter[str] = Counter()
    first: dict[str, KueueItem] = {}
    for cq in of_kind(valid, ClusterQueue):
        if cq.view.cohort is not None:
            members[cq.view.cohort] += 1
            first.setdefault(cq.view.cohort, cq.item)
    findings = []
    for name, count in members.items():
        if count == 1 and name not in declared and name not in parents:
            member = first[name]
            others = sorted(n for n in members if n != name) + sorted(declared)
            hint = f" (the other cohorts are {', '.join(others)})" if others else ""
            findings.append(finding(
                COHORT_SINGLE_MEMBER, object=member.label, key=field_key(member.key, "spec.cohortName"),
                message=f"cohort {name!r} has no Cohort object and no other ClusterQueue names it{hint}",
                fix="fix the name if it is a typo, or declare the Cohort to say it is meant"))
    return findings

