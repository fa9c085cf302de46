"""Where a pod may run: taints and tolerations, node selector requirements, label selectors.

Kubernetes' own rules, used alike by the admission core (does a flavor suit a pod?), the
capacity model (which pools does a flavor or a DaemonSet land on?) and the queue checks
(does a ClusterQueue's namespaceSelector select a namespace?).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")
# The label Kubernetes puts on every namespace, with the namespace's name.
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


class SelectorError(ValueError):
    """A requirement Kubernetes rejects: values that are not a list of strings, a Gt/Lt value that
    is not one integer, an unknown operator."""


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
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


def untolerated_taint(taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]]) -> Optional[Mapping[str, Any]]:
    for taint in taints:
        if taint.get("effect") not in SCHEDULING_EFFECTS:
            continue
        if not any(tolerates(t, taint) for t in tolerations):
            return taint
    return None


def requirement_matches(requirement: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator = requirement.get("key", ""), requirement.get("operator", "")
    if not isinstance(key, str):
        raise SelectorError(f"the key {key!r} must be a string, as the API server requires")
    values = requirement.get("values") or []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise SelectorError(f"values of {key!r} must be a list of strings, as the API server requires")
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


def label_selector_matches(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A metav1.LabelSelector: every matchLabels pair and every matchExpression hold; `{}`
    selects everything. (A nil selector is the caller's to judge: Kueue's selects nothing.)"""
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    return all(requirement_matches(e, labels) for e in selector.get("matchExpressions") or [])


def tolerating(taints, always: Sequence[dict] = ()) -> list[dict]:
    """Tolerations that let a pod onto nodes carrying exactly these taints ({key, value, effect}):
    `always` first, then one `Equal` toleration per distinct taint."""
    found = [dict(t) for t in always]
    for taint in taints:
        toleration = {"key": taint["key"], "operator": "Equal", "value": taint.get("value") or "",
                      "effect": taint["effect"]}
        if toleration not in found:
            found.append(toleration)
    return found
