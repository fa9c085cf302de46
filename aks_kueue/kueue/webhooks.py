"""The rules Kueue v0.19.2's validating webhooks add to the CRD schemas.

Sources: `pkg/webhooks/clusterqueue_webhook.go`, `cohort_webhook.go` and
`resourceflavor_webhook.go`. Each check runs on the defaulted spec; messages are
Kueue's. Rules the CRD's CEL already reports are not repeated here.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional, Union

from aks_kueue.k8s import field
from aks_kueue.k8s.field import FieldError, Path, show
from aks_kueue.k8s.names import label_value_problem, qualified_name_problem
from aks_kueue.k8s.quantity import QuantityError, parse_quantity

MAX_FLAVORS = 256
MAX_RESOURCES = 256
MAX_FLAVOR_RESOURCES_PER_GROUP = 512
SPEC = Path("spec")


def validate_cluster_queue(spec: dict[str, Any], gates: frozenset[str] = frozenset()) -> list[FieldError]:
    """The checks of `ValidateClusterQueue`, in its order. `gates` names alpha gates turned on."""
    errors = _resource_groups(spec, SPEC, has_parent=bool(spec.get("cohortName")),
                              parent_word="cohort", lending_capped=True)
    errors += _label_selector(spec.get("namespaceSelector"), SPEC.child("namespaceSelector"))
    preemption = spec.get("preemption") or {}
    borrow = preemption.get("borrowWithinCohort")
    if preemption.get("reclaimWithinCohort") == "Never" and borrow and borrow.get("policy", "Never") != "Never":
        errors.append(field.invalid(SPEC.child("preemption"), field.OMIT, "reclaimWithinCohort=Never and "
                                                                          "borrowWithinCohort.Policy!=Never"))
    fungibility = spec.get("flavorFungibility") or {}
    if fungibility.get("preference") is not None and (fungibility.get("whenCanBorrow") != "TryNextFlavor"
                                                      or fungibility.get("whenCanPreempt") != "TryNextFlavor"):
        errors.append(field.invalid(SPEC.child("flavorFungibility", "preference"), field.OMIT,
                                    f"preference {show(fungibility['preference'])} requires both whenCanBorrow and "
                                    "whenCanPreempt to be TryNextFlavor"))
    errors += _fair_sharing(spec)
    groups = spec.get("resourceGroups") or []
    flavors = sum(len(g.get("flavors") or []) for g in groups)
    resources = sum(len(g.get("coveredResources") or []) for g in groups)
    if flavors > MAX_FLAVORS:
        errors.append(field.too_many(SPEC.child("resourceGroups"), flavors, MAX_FLAVORS, "flavors"))
    if resources > MAX_RESOURCES:
        errors.append(field.too_many(SPEC.child("resourceGroups"), resources, MAX_RESOURCES, "covered resources"))
    for g, group in enumerate(groups):
        pairs = len(group.get("flavors") or []) * len(group.get("coveredResources") or [])
        if pairs > MAX_FLAVOR_RESOURCES_PER_GROUP:
            errors.append(field.too_many(SPEC.child("resourceGroups").index(g), pairs, MAX_FLAVOR_RESOURCES_PER_GROUP,
                                         "flavor-resource combinations"))
    if "ConcurrentAdmission" in gates:
        errors += _concurrent_admission(spec, groups)
    known = {f.get("name") for g in groups for f in g.get("flavors") or []}
    checks = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []
    for c, check in enumerate(checks):
        for f, flavor in enumerate(check.get("onFlavors") or []):
            if flavor not in known:
                path = SPEC.child("admissionChecksStrategy", "admissionChecks").index(c).child("onFlavors").index(f)
                errors.append(field.invalid(path, flavor, "must be one of the flavors in the ClusterQueue's "
                                                          "resourceGroups"))
    return errors


def _concurrent_admission(spec: dict[str, Any], groups: list) -> list[FieldError]:
    """Only with the alpha gate ConcurrentAdmission, which is off by default."""
    policy = spec.get("concurrentAdmissionPolicy")
    if policy is None:
        return []
    errors = []
    if len(groups) != 1:
        errors.append(field.invalid(SPEC.child("resourceGroups"), len(groups), "must have exactly one ResourceGroup "
                                                                               "when ConcurrentAdmissionPolicy is "
                                                                               "defined"))
    elif len(groups[0].get("flavors") or []) > 16:
        errors.append(field.invalid(SPEC.child("resourceGroups").index(0).child("flavors"), len(groups[0]['flavors']),
                                    "cannot have more than 16 resource flavors in the ResourceGroup when "
                                    "ConcurrentAdmissionPolicy is defined"))
    migration = policy.get("migration") or {}
    constraints = migration.get("constraints")
    if constraints is not None:
        mode = migration.get("mode", "")
        path = SPEC.child("concurrentAdmissionPolicy", "migration", "constraints")
        if mode not in ("", "TryPreferredFlavors"):
            errors.append(field.forbidden(path, "may only be set when migration.mode is \"TryPreferredFlavors\" "
                                                f"(got {show(mode)})"))
        elif constraints.get("lastAcceptableFlavorName") is not None:
            names = [f.get("name") for g in groups for f in g.get("flavors") or []]
            if constraints["lastAcceptableFlavorName"] not in names:
                errors.append(field.invalid(path.child("lastAcceptableFlavorName"), field.OMIT,
                                            f"{show(constraints['lastAcceptableFlavorName'])}: must be one of the "
                                            f"flavors defined in the ClusterQueue: [{' '.join(names)}]"))
    if spec.get("queueingStrategy") == "StrictFIFO":
        errors.append(field.invalid(SPEC.child("queueingStrategy"), "StrictFIFO",
                                    "StrictFIFO queueing strategy cannot be used when ConcurrentAdmissionPolicy is "
                                    "defined"))
    return errors


def validate_cohort(spec: dict[str, Any]) -> list[FieldError]:
    return (_resource_groups(spec, SPEC, has_parent=bool(spec.get("parentName")), parent_word="parent",
                             lending_capped=False)
            + _fair_sharing(spec))


def validate_resource_flavor(spec: dict[str, Any]) -> list[FieldError]:
    errors = field.labels(spec.get("nodeLabels") or {}, SPEC.child("nodeLabels"), _as_given)
    seen = set()
    for t, taint in enumerate(spec.get("nodeTaints") or []):
        path = SPEC.child("nodeTaints").index(t)
        if problem := qualified_name_problem(taint.get("key", "")):
            errors.append(field.invalid(path.child("key"), taint.get('key'), problem))
        if "value" in taint and (problem := label_value_problem(taint["value"])):
            errors.append(field.invalid(path.child("value"), taint['value'], problem))
        identity = (taint.get("key"), taint.get("effect"))
        if identity in seen:
            errors.append(field.duplicate(path, {'key': identity[0], 'effect': identity[1]}))
        seen.add(identity)
    for t, toleration in enumerate(spec.get("tolerations") or []):
        key = toleration.get("key")
        if key and (problem := qualified_name_problem(key)):
            errors.append(field.invalid(SPEC.child("tolerations").index(t).child("key"), key, problem))
    return errors


def _resource_groups(spec: dict[str, Any], path: Path, has_parent: bool, parent_word: str,
                     lending_capped: bool) -> list[FieldError]:
    errors: list[FieldError] = []
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    for g, group in enumerate(spec.get("resourceGroups") or []):
        group_path = path.child("resourceGroups").index(g)
        covered = group.get("coveredResources") or []
        for r, name in enumerate(covered):
            errors += field.unique(group_path.child("coveredResources").index(r), name, seen_resources,
                                   qualified_name_problem(str(name)))
        for f, flavor in enumerate(group.get("flavors") or []):
            flavor_path = group_path.child("flavors").index(f)
            for r, resource in enumerate((flavor.get("resources") or [])[:len(covered)]):
                errors += _resource_quota(resource, flavor_path.child("resources").index(r), covered[r],
                                          has_parent, parent_word, lending_capped)
            errors += field.unique(flavor_path.child("name"), flavor.get("name"), seen_flavors)
    return errors


def _resource_quota(resource: dict[str, Any], path: Path, covered: str, has_parent: bool,
                    parent_word: str, lending_capped: bool) -> list[FieldError]:
    """`validateFlavorQuotas` for one resource, reporting in the webhook's order."""
    errors = []
    if resource.get("name") != covered:
        errors.append(field.invalid(path.child("name"), resource.get('name'),
                                    "must match the name in coveredResources"))
    amounts: dict[str, Optional[Fraction]] = {}
    for limit in ("nominalQuota", "borrowingLimit", "lendingLimit"):
        try:
            amounts[limit] = parse_quantity(resource[limit]) if resource.get(limit) is not None else None
        except QuantityError:
            amounts[limit] = None  # the schema's quantity pattern already reported it

    def negative(limit: str) -> list[FieldError]:
        if (value := amounts[limit]) is not None and value < 0:
            return [field.invalid(path.child(limit), resource[limit], "must be greater than or equal to 0")]
        return []

    def needs_parent(limit: str) -> list[FieldError]:
        if resource.get(limit) is not None and not has_parent:
            return [field.invalid(path.child(limit), resource[limit], f"must be nil when {parent_word} is empty")]
        return []

    errors += negative("nominalQuota")
    errors += needs_parent("borrowingLimit") + negative("borrowingLimit")
    errors += negative("lendingLimit") + needs_parent("lendingLimit")
    lending, nominal = amounts["lendingLimit"], amounts["nominalQuota"]
    if lending_capped and lending is not None and nominal is not None and lending > nominal:
        errors.append(field.invalid(path.child("lendingLimit"), resource['lendingLimit'],
                                    "must be less than or equal to the nominalQuota"))
    return errors


def _fair_sharing(spec: dict[str, Any]) -> list[FieldError]:
    weight = (spec.get("fairSharing") or {}).get("weight")
    if weight is None:
        return []
    try:
        amount = parse_quantity(weight)
    except QuantityError:
        return []
    path = SPEC.child("fairSharing")
    if amount < 0:
        return [field.invalid(path, weight, "must be greater than or equal to 0")]
    if 0 < amount <= Fraction(1, 10**9):
        return [field.invalid(path, weight, "When not 0, weight must be > 10e-9")]
    return []


_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _as_given(key: Any) -> Any:
    """A map key as decoded: one that YAML reads as a number is not a qualified name."""
    return key


def _label_selector(selector: Any, path: Union[Path, str]) -> list[FieldError]:
    """A LabelSelector's errors (`ValidateLabelSelector`); `kueue/configuration_rules.py` runs it too."""
    if not isinstance(selector, dict):
        return []
    path = path if isinstance(path, Path) else Path(path)
    errors = field.labels(selector.get("matchLabels") or {}, path.child("matchLabels"), _as_given)
    for e, expression in enumerate(selector.get("matchExpressions") or []):
        where = path.child("matchExpressions").index(e)
        operator = expression.get("operator")
        values = expression.get("values") or []
        if operator not in _SELECTOR_OPERATORS:
            errors.append(field.invalid(where.child("operator"), operator, "not a valid selector operator"))
        elif operator in ("In", "NotIn") and not values:
            errors.append(field.required(where.child("values"), "must be specified when `operator` is 'In' or "
                                                                "'NotIn'"))
        elif operator not in ("In", "NotIn") and values:
            errors.append(field.forbidden(where.child("values"),
                                          "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        if problem := qualified_name_problem(str(expression.get("key", ""))):
            errors.append(field.invalid(where.child("key"), expression.get('key'), problem))
        for v, value in enumerate(values):
            if problem := label_value_problem(value):
                errors.append(field.invalid(where.child("values").index(v), value, problem))
    return errors
