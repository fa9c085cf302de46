"""Does a ResourceFlavor suit a podset? (`checkFlavorForPodSets`, v0.19.2)

Checks run in Kueue's order and the first failure rejects the flavor:
1. the flavor exists;
2. no NoSchedule/NoExecute taint of the flavor is left untolerated by the pod's
   tolerations plus the flavor's own;
3. the pod's nodeSelector and required node affinity, cut down to the keys this
   flavor declares in nodeLabels, match a node labelled with those nodeLabels.
Kueue never checks that a real node carries the labels; the capacity model does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from aks_kueue.admission.models import ResourceFlavorInfo

SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")


class SelectorError(ValueError):
    """A Gt/Lt requirement whose value is not one integer, as Kubernetes rejects it."""


def tolerates(toleration: dict, taint: dict) -> bool:
    """Kubernetes' Toleration.ToleratesTaint."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    operator = toleration.get("operator") or "Equal"
    if operator == "Exists":
        return True
    if operator == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def untolerated_taint(taints: list[dict], tolerations: list[dict]) -> Optional[dict]:
    for taint in taints:
        if taint.get("effect") not in SCHEDULING_EFFECTS:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def taint_text(taint: dict) -> str:
    """How Go prints a corev1.Taint value with %s: `{key value effect <nil>}`."""
    added = taint.get("timeAdded") or "<nil>"
    return f"{{{taint.get('key', '')} {taint.get('value', '')} {taint.get('effect', '')} {added}}}"


def requirement_matches(requirement: dict, labels: dict[str, str]) -> bool:
    key, operator = requirement.get("key", ""), requirement.get("operator", "")
    values = requirement.get("values") or []
    present = key in labels
    if operator == "In":
        return present and labels[key] in values
    if operator == "NotIn":
        return not present or labels[key] not in values
    if operator == "Exists":
        return present
    if operator == "DoesNotExist":
        return not present
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            raise SelectorError(f"{operator} needs exactly one value for {key!r}")
        try:
            bound = int(values[0])
        except ValueError:
            raise SelectorError(f"{values[0]!r} is not an integer for {operator} on {key!r}") from None
        if not present:
            return False
        try:
            actual = int(labels[key])
        except ValueError:
            return False
        return actual > bound if operator == "Gt" else actual < bound
    raise SelectorError(f"{operator!r} is not a node selector operator")


def selector_matches(pod_spec: dict, labels: dict[str, str]) -> bool:
    """The pod's node constraints, limited to the flavor's label keys, against its labels."""
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if key in labels and labels[key] != value:
            return False
    affinity = (pod_spec.get("affinity") or {}).get("nodeAffinity") or {}
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {}
    terms = []
    for term in required.get("nodeSelectorTerms") or []:
        kept = [e for e in term.get("matchExpressions") or [] if e.get("key") in labels]
        if not kept:
            # Terms are ORed: one that says nothing about this flavor matches it.
            return True
        terms.append(kept)
    if not terms:
        return True
    return any(all(requirement_matches(e, labels) for e in term) for term in terms)


def flavor_mismatch(flavor_name: str, flavor: Optional["ResourceFlavorInfo"], pod_specs: list[dict]) -> Optional[str]:
    """Kueue's reason the flavor does not suit these pods, or None when it does."""
    if flavor is None:
        return f"flavor {flavor_name} not found"
    labels = flavor.node_labels
    for pod_spec in pod_specs:
        taint = untolerated_taint(flavor.node_taints, [*(pod_spec.get("tolerations") or []), *flavor.tolerations])
        if taint is not None:
            return f"untolerated taint {taint_text(taint)} in flavor {flavor_name}"
        if not selector_matches(pod_spec, labels):
            return f"flavor {flavor_name} doesn't match node affinity"
    return None
