"""Kueue v0.19.2's Workload webhook (`pkg/webhooks/workload_webhook.go`, `vworkload.kb.io`).

`validate_workload` is what a create goes through, with the beta gates at their
defaults (WorkloadValidationForPodSetMetadata, WorkloadValidateResourcesAreNonNegative,
TASValidateWorkloadSliceSize, AdmissionGatedBy, ElasticJobsViaWorkloadSlices all on).
A create drops `status`, so the status rules are apart, in `validate_workload_status`:
`simulate` reads `status.admission` and `status.reclaimablePods` as input and holds
them to the same rules Kueue applies when they are written.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from aks_kueue.k8s import field, names
from aks_kueue.k8s.field import FieldError, Path
from aks_kueue.kueue.units import amount
from aks_kueue.k8s.quantity import QuantityError, parse_quantity
from aks_kueue.k8s.names import qualified_name_problem

ELASTIC_JOB = "kueue.x-k8s.io/elastic-job"
ADMISSION_GATED_BY = "kueue.x-k8s.io/admission-gated-by"
MAX_GATE_NAME = 63
TOTAL_ANNOTATION_BYTES = 256 * 1024
_HTTP_PATH = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
POD_SETS = Path("spec", "podSets")
STATUS = Path("status")


def validate_workload(manifest: dict[str, Any]) -> list[FieldError]:
    metadata = manifest.get("metadata") or {}
    spec = manifest.get("spec") or {}
    annotations = metadata.get("annotations") or {}
    errors: list[FieldError] = []
    pod_sets = [p for p in spec.get("podSets") or [] if isinstance(p, dict)]
    for index, pod_set in enumerate(pod_sets):
        errors += _pod_set(pod_set, POD_SETS.index(index))
    variable = sum(1 for p in pod_sets if p.get("minCount") is not None)
    if variable > 1:
        errors.append(field.invalid(POD_SETS, variable, "at most one podSet can use minCount"))
    if variable and annotations.get(ELASTIC_JOB) == "true":
        errors.append(field.invalid(POD_SETS, variable, "partial admission and elastic job cannot be used together"))
    errors += _admission_gated_by(annotations.get(ADMISSION_GATED_BY, ""))
    return errors


def validate_workload_status(manifest: dict[str, Any]) -> list[FieldError]:
    """Run on a Workload whose spec already passed `validate_workload` and the schema.
    Any shape of status gets sentences, never an exception."""
    spec = manifest.get("spec") or {}
    status = manifest.get("status") or {}
    if not isinstance(status, dict):
        return [field.invalid(STATUS, status, "must be of type object")]
    counts = {p.get("name"): _count(p.get("count", 1)) for p in spec.get("podSets") or [] if isinstance(p, dict)}
    admission = status.get("admission") or {}
    if not isinstance(admission, dict):
        return [field.invalid(STATUS.child("admission"), admission, "must be of type object")]
    errors = []
    assignments = admission.get("podSetAssignments") or []
    if not isinstance(assignments, list):
        return [field.invalid(STATUS.child("admission", "podSetAssignments"), assignments, "must be of type array")]
    for i, assignment in enumerate(assignments):
        path = STATUS.child("admission", "podSetAssignments").index(i)
        if not isinstance(assignment, dict):
            errors.append(field.invalid(path, assignment, "must be of type object"))
            continue
        if not isinstance(assignment.get("name"), str) or assignment.get("name") not in counts:
            errors.append(field.not_found(path.child("name"), assignment.get("name")))
        count = _count(assignment.get("count") or 0)
        if count is None:
            errors.append(field.invalid(path.child("count"), assignment.get('count'), "must be of type integer"))
            count = 0
        for key in ("flavors", "resourceUsage"):
            if not isinstance(assignment.get(key) or {}, dict):
                errors.append(field.invalid(path.child(key), assignment.get(key), "must be of type object"))
        usage = assignment.get("resourceUsage") or {}
        for resource, quantity in (usage.items() if isinstance(usage, dict) else ()):
            try:
                value = amount(resource, quantity)
            except QuantityError:
                errors.append(field.invalid(path.child("resourceUsage").key(resource), quantity,
                                            "must be a quantity"))
                continue
            if count > 0 and value % count:
                errors.append(field.invalid(path.child("resourceUsage").key(resource), quantity,
                                            f"is not a multiple of {count}"))
    reclaimables = status.get("reclaimablePods") or []
    if not isinstance(reclaimables, list):
        return errors + [field.invalid(STATUS.child("reclaimablePods"), reclaimables, "must be of type array")]
    for reclaimable in reclaimables:
        if not isinstance(reclaimable, dict):
            errors.append(field.invalid(STATUS.child("reclaimablePods"), reclaimable, "must be of type object"))
            continue
        name = reclaimable.get("name")
        path = STATUS.child("reclaimablePods").key(name)
        reclaimed = _count(reclaimable.get("count", 0))
        if not isinstance(name, str) or name not in counts:
            errors.append(field.not_supported(path.child("name"), name, counts))
        elif reclaimed is None:
            errors.append(field.invalid(path.child("count"), reclaimable.get('count'), "must be of type integer"))
        elif (most := counts[name]) is not None and reclaimed > most:
            errors.append(field.invalid(path.child("count"), reclaimable.get("count"),
                                        f"should be less or equal to {most}"))
    return errors


def _count(value: Any) -> int | None:
    """A count as the API would hold it (an integer, 2.0 included), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _pod_set(pod_set: dict, path: Path) -> list[FieldError]:
    template, where = pod_set.get("template") or {}, path.child("template")
    metadata = template.get("metadata") or {}
    errors = field.labels(metadata.get("labels") or {}, where.child("metadata", "labels"))
    errors += _annotations(metadata.get("annotations") or {}, where.child("metadata", "annotations"))
    pod = template.get("spec") or {}
    holders = [(where.child("spec", group).index(c), container or {})
               for group in ("initContainers", "containers") for c, container in enumerate(pod.get(group) or [])]
    for holder_path, holder in [*holders, (where.child("spec"), pod)]:
        for kind in ("requests", "limits"):
            errors += _amounts((holder.get("resources") or {}).get(kind) or {}, holder_path, kind)
    return errors + _slice_size(pod_set.get("topologyRequest"), path.child("topologyRequest"))


def _amounts(amounts: dict[str, Any], holder: Path, kind: str) -> list[FieldError]:
    """The `resources.<kind>` of a container or pod; its path is built only for an error (every workload
    has several such maps)."""
    errors = []
    for name, quantity in amounts.items():
        if name == "pods":
            errors.append(field.invalid(holder.child("resources", kind).key(name), "pods",
                                        "the key is reserved for internal kueue use"))
        # The same few values recur in every workload: remember the answer for strings and ints.
        problem = _known_problem(quantity) if type(quantity) in (str, int) else _quantity_problem(quantity)
        if problem:
            errors.append(field.invalid(holder.child("resources", kind).key(name), quantity, problem))
    return errors


def _quantity_problem(quantity: Any) -> str | None:
    """What is wrong with a request or limit, or None."""
    try:
        if parse_quantity(quantity) < 0:
            return "must be greater than or equal to 0"
    except QuantityError:
        return "must be a quantity"
    return None


_known_problem = lru_cache(maxsize=4096)(_quantity_problem)


def _annotations(annotations: dict, path: Path) -> list[FieldError]:
    errors = []
    size = 0
    for key, value in annotations.items():
        if problem := qualified_name_problem(str(key).lower()):
            errors.append(field.invalid(path, key, problem))
        size += len(str(key)) + len(str(value))
    if size > TOTAL_ANNOTATION_BYTES:
        errors.append(field.too_long(path, TOTAL_ANNOTATION_BYTES))
    return errors


def _slice_size(request: Any, path: Path) -> list[FieldError]:
    if not isinstance(request, dict):
        return []
    errors = []
    size = request.get("podSetSliceSize")
    if request.get("podSetSliceRequiredTopology") is not None:
        if size is None:
            errors.append(field.required(path.child("podSetSliceSize"),
                                         "must be set when podSetSliceRequiredTopology is specified"))
        elif size <= 0:
            errors.append(field.invalid(path.child("podSetSliceSize"), size, "must be greater than 0"))
    elif size is not None:
        errors.append(field.forbidden(path.child("podSetSliceSize"),
                                      "may not be set when podSetSliceRequiredTopology is not specified"))
    for i, constraint in enumerate(request.get("podsetSliceRequiredTopologyConstraints") or []):
        if (constraint or {}).get("size", 0) <= 0:
            errors.append(field.invalid(path.child("podsetSliceRequiredTopologyConstraints").index(i).child("size"),
                                        (constraint or {}).get("size"), "must be greater than 0"))
    return errors


def _admission_gated_by(value: str) -> list[FieldError]:
    path = Path("metadata", "annotations").key(ADMISSION_GATED_BY)
    if not isinstance(value, str) or not value.strip():
        return []
    errors, seen = [], set()
    for gate in (part.strip() for part in value.split(",")):
        if not gate:
            errors.append(field.invalid(path, value, "cannot contain empty gate names"))
            continue
        if gate in seen:
            errors.append(field.invalid(path, value, f"duplicate gate name: {gate}"))
            continue
        seen.add(gate)
        errors += _domain_prefixed_path(gate, path)
        if len(gate) > MAX_GATE_NAME:
            errors.append(field.too_long(path, MAX_GATE_NAME))
    return errors


def _domain_prefixed_path(gate: str, path: Path) -> list[FieldError]:
    host, slash, rest = gate.partition("/")
    if not slash or not host or not rest:
        return [field.invalid(path, gate, "must be a domain-prefixed path (such as \"acme.io/foo\")")]
    errors = []
    if problem := names.dns1123_subdomain_problem(host):
        errors.append(field.invalid(path, host, problem))
    if not re.fullmatch(_HTTP_PATH, rest):
        errors.append(field.invalid(path, rest, f"Invalid path (regex used for validation is '{_HTTP_PATH}')"))
    return errors
