"""Logical names of queue objects that cannot collide, the aliases that keep old URNs, and
the Kueue fields that cannot change in place.

Before issue 10 a LocalQueue was named `<component>-localqueue-<namespace>-<name>`, so `a-b/c`
and `a/b-c` were one URN. Namespaces are DNS labels (no `/`), so `<namespace>/<name>` is unique;
each LocalQueue carries its old name as an alias, unless two of them would claim the same old
name (then neither can have existed under it).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping, Optional

# Fields Kueue v0.19.2's CRDs declare immutable (x-kubernetes-validations `self == oldSelf`),
# so a change must replace the object; aks_kueue/kueue/data/kueue-crds.json holds the rules.
IMMUTABLE = {
    "LocalQueue": ("spec.clusterQueue",),
    "AdmissionCheck": ("spec.controllerName",),
    "Topology": ("spec.levels",),
}
# ResourceFlavor: nodeLabels, tolerations and topologyName are immutable once topologyName is set.
FLAVOR_WITH_TOPOLOGY = ("spec.nodeLabels", "spec.tolerations", "spec.topologyName")


def immutable_paths(kind: str, spec: Optional[Mapping[str, Any]]) -> list[str]:
    if kind == "ResourceFlavor":
        return list(FLAVOR_WITH_TOPOLOGY) if (spec or {}).get("topologyName") else []
    return list(IMMUTABLE.get(kind, ()))


def logical_name(component: str, kind: str, namespace: Optional[str], name: str) -> str:
    where = f"{namespace}/{name}" if namespace else name
    return f"{component}-{kind.lower()}-{where}"


def legacy_name(component: str, kind: str, namespace: Optional[str], name: str) -> str:
    """The name the program gave before issue 10 (ambiguous for namespaced objects)."""
    where = f"{namespace}-{name}" if namespace else name
    return f"{component}-{kind.lower()}-{where}"


def legacy_aliases(component: str, objects: Iterable[tuple[str, Optional[str], str]]) -> dict[tuple, str]:
    """(kind, namespace, name) -> the old logical name to alias, for objects whose name changed."""
    objects = list(objects)
    olds = {key: legacy_name(component, *key) for key in objects}
    claims = Counter(olds.values())
    return {key: old for key, old in olds.items()
            if old != logical_name(component, *key) and claims[old] == 1}
