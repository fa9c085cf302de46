"""Validate Kueue objects the way a Kueue v0.19.2 installation would accept them.

Per object: metadata, the CRD schema with its CEL rules, then Kueue's validating
webhook (the server runs webhooks only on objects the schema accepted). Per set of
objects: duplicate names and every cross-reference between them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Callable, Iterable

from aks_kueue.k8s.objects import map_at
from aks_kueue.k8s import field as fe
from aks_kueue.k8s import names
from aks_kueue.k8s.field import FieldError, Path, show
from aks_kueue.k8s.merge import json_copy
from aks_kueue.k8s.spelling import suggest
from aks_kueue.kueue import webhooks
from aks_kueue.kueue.cohorts import cohort_cycles
from aks_kueue.kueue.convert import V1BETA1, V1BETA2, to_v1beta2
from aks_kueue.kueue.schemas import all_kinds, kind_schema
from aks_kueue.kueue.structural import validate_structural
from aks_kueue.kueue.workload_webhook import validate_workload

SPEC_WEBHOOKS: dict[str, Callable[[dict[str, Any]], list[FieldError]]] = {
    "ClusterQueue": webhooks.validate_cluster_queue,
    "Cohort": webhooks.validate_cohort,
    "ResourceFlavor": webhooks.validate_resource_flavor,
}
# Webhooks that read more than the spec (metadata annotations, for the Workload).
OBJECT_WEBHOOKS: dict[str, Callable[[dict[str, Any]], list[FieldError]]] = {
    "Workload": validate_workload,
}
MANAGED_PREFIX = "aks-"
LABEL_VALUE_MAX = 63  # Kubernetes: a label value is at most 63 characters
METADATA, SPEC = Path("metadata"), Path("spec")
_OBJECT_META_FIELDS = {
    "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
    "ownerReferences", "finalizers", "managedFields",
}


@dataclass
class KueueObject:
    """One object, converted to v1beta2, with where it came from for error messages."""

    manifest: dict[str, Any]
    source: str = ""
    defaulted: dict[str, Any] = field(default_factory=dict)
    # The object as written, when it was v1beta1: the server validates that version's schema.
    original: dict[str, Any] | None = None

    @property
    def kind(self) -> str:
        return self.manifest.get("kind", "")

    @property
    def metadata(self) -> dict[str, Any]:
        metadata = self.manifest.get("metadata")
        return metadata if isinstance(metadata, dict) else {}  # the schema reports another type

    @property
    def name(self) -> str:
        name = self.metadata.get("name", "")
        return name if isinstance(name, str) else ""

    @property
    def namespace(self) -> str | None:
        namespace = self.metadata.get("namespace")
        return namespace if isinstance(namespace, str) else None

    @property
    def spec(self) -> dict[str, Any]:
        spec = (self.defaulted or self.manifest).get("spec")
        return spec if isinstance(spec, dict) else {}

    def describe(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"


# How a field of an object written under `aks-kueue:queues.*` is named in that stack key: the entry's own
# `name` and `namespace` stand for the metadata's.
_STACK_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace"}


def stack_key(entry_key: str, field: str) -> str:
    """The stack key of an error's field in an object of the stack file (`aks-kueue:queues.cohorts[0].spec...`)."""
    field = _STACK_FIELDS.get(field, field)
    return f"{entry_key}.{field}" if field else entry_key


def validate_object(obj: KueueObject) -> list[FieldError]:
    """Validate one object; on success `obj.defaulted` holds it as the server would store it."""
    manifest = obj.manifest
    if manifest.get("apiVersion") != V1BETA2:
        return [fe.not_supported("apiVersion", manifest.get("apiVersion"), (V1BETA2, V1BETA1))]
    schema = kind_schema(obj.kind)
    if schema is None:
        return [fe.not_supported("kind", obj.kind, detail="not a Kueue kind")]
    errors = _metadata(manifest.get("metadata"), schema.namespaced)
    note = _integer_note(obj.kind)
    if obj.original is not None:
        _, as_written = validate_structural(_body_schema(obj.kind, V1BETA1), _body(obj.original), integer_note=note)
        if as_written:
            return errors + as_written
    defaulted, schema_errors = validate_structural(_body_schema(obj.kind, V1BETA2), _body(manifest),
                                                   integer_note=note)
    errors += schema_errors
    if not errors and obj.kind in SPEC_WEBHOOKS:
        errors += SPEC_WEBHOOKS[obj.kind]((defaulted or {}).get("spec") or {})
    if not errors and obj.kind in OBJECT_WEBHOOKS:
        errors += OBJECT_WEBHOOKS[obj.kind]({**(defaulted or {}), "metadata": manifest.get("metadata") or {}})
    if not errors:
        obj.defaulted = {**(defaulted or {}), "metadata": json_copy(manifest.get("metadata"))}
    return errors


# The kinds Kueue v0.19.2's admission webhooks decode into its Go types (config/components/
# webhook/manifests.yaml: mclusterqueue, vclusterqueue, vcohort, mresourceflavor,
# vresourceflavor, mworkload, vworkload); a value its types cannot hold fails there.
DECODED_ON_ADMISSION = frozenset({"ClusterQueue", "Cohort", "ResourceFlavor", "Workload"})


def _integer_note(kind: str) -> str:
    """Who refuses an integer past its format: the API server does not check `format`."""
    if kind in DECODED_ON_ADMISSION:
        return (f": Kueue's webhook decodes this field as {{format}} and cannot read the {kind}, so the API "
                "server refuses it")
    return (f": Kueue reads this field as {{format}} and could not decode the {kind} at all, although the API "
            f"server would store it (no Kueue webhook checks a {kind})")


def _body(manifest: dict[str, Any]) -> dict[str, Any]:
    """`status` is a subresource the server ignores on create; metadata is checked apart."""
    return {k: v for k, v in manifest.items() if k not in ("metadata", "status")}


@lru_cache(maxsize=None)
def _body_schema(kind: str, version: str) -> dict[str, Any]:
    """The kind's schema without metadata (checked apart), one dict per kind and version,
    so the structural validator compiles it once."""
    kind_schema = all_kinds()[kind]
    schema = kind_schema.schema if version == V1BETA2 else kind_schema.v1beta1
    return {**schema, "properties": {k: v for k, v in schema["properties"].items() if k != "metadata"}}


def _metadata(metadata: Any, namespaced: bool) -> list[FieldError]:
    if metadata is None:
        return [fe.required(METADATA.child("name"), "name is required")]
    if not isinstance(metadata, dict):
        return [fe.invalid(METADATA, metadata, "must be of type object")]
    errors = []
    name = metadata.get("name")
    if not name:
        errors.append(fe.required(METADATA.child("name"), "name is required"))
    elif problem := names.dns1123_subdomain_problem(name):
        errors.append(fe.invalid(METADATA.child("name"), name, problem))
    namespace = metadata.get("namespace")
    if namespaced and not namespace:
        errors.append(fe.required(METADATA.child("namespace"), "a LocalQueue lives in a namespace"))
    elif namespaced and (problem := names.dns1123_label_problem(namespace)):
        errors.append(fe.invalid(METADATA.child("namespace"), namespace, problem))
    # A namespace on a cluster-scoped kind is cleared by the server, not refused.
    for key in metadata:
        if key not in _OBJECT_META_FIELDS:
            hint = suggest(key, _OBJECT_META_FIELDS) if isinstance(key, str) else ""
            errors.append(fe.unknown(METADATA.child(key), fix=f"it is not part of ObjectMeta{hint}"))
    for key in ("labels", "annotations"):
        if key in metadata and not isinstance(metadata[key], dict):
            errors.append(fe.invalid(METADATA.child(key), fe.OMIT, "must be a map of strings"))
    errors += fe.labels(metadata["labels"] if isinstance(metadata.get("labels"), dict) else {},
                        METADATA.child("labels"))
    annotations = map_at(metadata, "annotations")
    for key, value in annotations.items():
        if problem := names.qualified_name_problem(str(key)):
            errors.append(fe.invalid(METADATA.child("annotations"), key, problem))
        if not isinstance(value, str):
            errors.append(fe.invalid(METADATA.child("annotations", key), fe.OMIT, "must be a string"))
    return errors


@dataclass
class ReferenceRules:
    """How strict the cross-reference checks are.

    Kueue itself accepts a ClusterQueue whose cohort has no Cohort object (an implicit
    cohort); a deployment that declares its cohorts wants those names to exist.
    """

    cohorts_must_exist: bool = True
    managed: bool = False


def validate_set(objects: Iterable[KueueObject], rules: ReferenceRules) -> list[FieldError]:
    """Duplicate names and cross-references, each error about its object (`FieldError.object`); run on
    objects that passed `validate_object`."""
    objects = list(objects)
    found: list[FieldError] = duplicates(objects)
    by_kind: dict[str, dict[tuple, KueueObject]] = {}
    for obj in objects:
        by_kind.setdefault(obj.kind, {}).setdefault((obj.namespace, obj.name), obj)
        if obj.kind == "LocalQueue" and len(obj.name) > LABEL_VALUE_MAX:
            # Kueue itself accepts the name (up to 253): this is this program's rule.
            found.append(replace(fe.invalid(METADATA.child("name"), obj.name,
                                            f"a LocalQueue name may be at most {LABEL_VALUE_MAX} characters here (it "
                                            f"has {len(obj.name)}), since jobs name their queue in the "
                                            f"kueue.x-k8s.io/queue-name label, whose values are at most "
                                            f"{LABEL_VALUE_MAX} characters"),
                                 fix="shorten the name (Kueue itself accepts up to 253 characters, but no job could "
                                     "use this queue)").of(obj))
        if rules.managed and obj.name.startswith(MANAGED_PREFIX):
            found.append(replace(fe.invalid(METADATA.child("name"), obj.name,
                                            "the AKS managed Kueue extension owns every object named aks-*"),
                                 fix="rename it, or use the extension's object instead of replacing it").of(obj))

    def exists(kind: str, name: Any, namespace: str | None = None) -> bool:
        if not isinstance(name, str):
            return True  # a wrongly typed reference is the schema's finding, not a dangling one
        return (namespace, name) in by_kind.get(kind, {}) or (rules.managed and name.startswith(MANAGED_PREFIX))

    for obj in objects:
        spec = obj.spec
        if obj.kind == "LocalQueue" and spec.get("clusterQueue") and not exists("ClusterQueue", spec["clusterQueue"]):
            found.append(_dangling(obj, SPEC.child("clusterQueue"), "ClusterQueue", spec["clusterQueue"]))
        if obj.kind == "ResourceFlavor" and spec.get("topologyName") and not exists("Topology", spec["topologyName"]):
            found.append(_dangling(obj, SPEC.child("topologyName"), "Topology", spec["topologyName"]))
        if obj.kind in ("ClusterQueue", "Cohort"):
            for g, group in enumerate(_dicts(spec.get("resourceGroups"))):
                for f, flavor in enumerate(_dicts(group.get("flavors"))):
                    if not exists("ResourceFlavor", flavor.get("name", "")):
                        path = SPEC.child("resourceGroups").index(g).child("flavors").index(f).child("name")
                        found.append(_dangling(obj, path, "ResourceFlavor", flavor.get("name")))
            parent_field = "cohortName" if obj.kind == "ClusterQueue" else "parentName"
            parent = spec.get(parent_field)
            if parent and rules.cohorts_must_exist and not exists("Cohort", parent):
                found.append(fe.not_found(SPEC.child(parent_field), detail=(
                    f"Cohort {show(parent)} is not defined. Kueue would create it implicitly, with no quota of its "
                    "own; this program asks for every cohort to be declared, so that a misspelt name cannot split "
                    "queues into separate cohorts. Declare the Cohort or fix the name")).of(obj))
        if obj.kind == "ClusterQueue":
            strategy = spec.get("admissionChecksStrategy")
            checks = strategy.get("admissionChecks") if isinstance(strategy, dict) else None
            for c, check in enumerate(_dicts(checks)):
                if not exists("AdmissionCheck", check.get("name", "")):
                    path = SPEC.child("admissionChecksStrategy", "admissionChecks").index(c).child("name")
                    found.append(_dangling(obj, path, "AdmissionCheck", check.get("name")))
    found += _cohort_cycles(by_kind.get("Cohort", {}))
    return found


def duplicates(objects: Iterable[KueueObject], consequence: str = "") -> list[FieldError]:
    """Each object of a kind, namespace and name an earlier one already has (the error is about the later one):
    the API server holds one object per name, so the second replaces the first (kubectl apply) or is refused as
    AlreadyExists (kubectl create)."""
    seen: dict[tuple, KueueObject] = {}
    found = []
    for obj in objects:
        key = (obj.kind, obj.namespace, obj.name)
        if key in seen:
            found.append(fe.duplicate(METADATA.child("name"), obj.name, f"{seen[key].source or 'another object'} "
                                      f"already defines {obj.describe()}{consequence}").of(obj))
        seen.setdefault(key, obj)
    return found


def _dicts(value: Any) -> list[dict[str, Any]]:
    """The maps in a list, or none when the value is not a list (the schema reports that)."""
    return [v if isinstance(v, dict) else {} for v in value] if isinstance(value, list) else []


def _dangling(obj: KueueObject, path: Path, kind: str, name: Any) -> FieldError:
    # Kueue keeps an object whose reference dangles inactive: it admits nothing through it.
    return replace(fe.not_found(path, detail=f"{kind} {show(name)} is not defined, so Kueue keeps this {obj.kind} "
                                             "inactive"), fix=f"define the {kind} or fix the name").of(obj)


def _cohort_cycles(cohorts: dict[tuple, KueueObject]) -> list[FieldError]:
    parent = {name: up for (_, name), obj in cohorts.items() if isinstance(up := obj.spec.get("parentName"), str)}
    found = []
    for cycle in cohort_cycles(parent):
        obj = cohorts[(None, cycle[0])]
        loop = " -> ".join([*cycle, cycle[0]])
        found.append(replace(fe.invalid(SPEC.child("parentName"), fe.OMIT, f"cohort cycle {loop}, which disables "
                                                                           "every cohort and ClusterQueue in it"),
                             fix="break the cycle").of(obj))
    return found


def load_object(manifest: Any, source: str = "") -> KueueObject:
    """Wrap a parsed manifest, converting v1beta1 to v1beta2 first."""
    if not isinstance(manifest, dict):
        return KueueObject(manifest={}, source=source)
    converted = to_v1beta2(manifest)
    return KueueObject(manifest=converted, source=source, original=manifest if converted is not manifest else None)
