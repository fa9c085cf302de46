"""Logical names of queue objects that cannot collide, the aliases that keep old URNs, and
the Kueue fields that cannot change in place.

Stacks deployed by earlier releases named a LocalQueue `<component>-localqueue-<namespace>-<name>`,
so `a-b/c` and `a/b-c` shared one URN. Namespaces are DNS labels (no `/`), so `<namespace>/<name>` is unique;
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


# How long pulumi-kubernetes waits for a Kueue object to be gone after it asked for the delete
# (its own default is 10 minutes: provider/pkg/await/await.go `Deletion`). Kueue's resource-in-use
# finalizer holds a ClusterQueue while workloads reserve quota in it, and a ResourceFlavor,
# AdmissionCheck or Topology while something names it: such a delete then fails after this
# long with the object left Terminating, and the next `pulumi up` tries it again.
DELETE_TIMEOUT = "5m"
# What Kueue's resource-in-use finalizer waits for, by kind (kueue v0.19.2 pkg/controller/core
# clusterqueue_controller.go, resourceflavor_controller.go, admissioncheck_controller.go and
# pkg/controller/tas/topology_controller.go). Cohorts and LocalQueues have none.
FINALIZER_WAITS_FOR = {
    "ClusterQueue": "no workload holds a quota reservation in it",
    "ResourceFlavor": "no ClusterQueue names it",
    "AdmissionCheck": "no ClusterQueue names it",
    "Topology": "no ResourceFlavor names it",
}


def immutable_paths(kind: str, spec: Optional[Mapping[str, Any]]) -> list[str]:
    """What the program declares `replaceOnChanges` for one object, from the spec it sends.

    Kueue's flavor rules key on the old object (`has(oldSelf.topologyName)`), which a Pulumi
    program cannot read when it registers; deciding from the new spec replaces a flavor that gains
    a topologyName (Kueue would have updated it) and updates one that drops it (which Kueue refuses:
    the guard refuses that change before the update, `guard.py`)."""
    if kind == "ResourceFlavor":
        return list(FLAVOR_WITH_TOPOLOGY) if (spec or {}).get("topologyName") else []
    return list(IMMUTABLE.get(kind, ()))


def tracked_paths(kind: str) -> tuple[str, ...]:
    """The fields of one kind the day-2 record keeps: every field that may be immutable."""
    return FLAVOR_WITH_TOPOLOGY if kind == "ResourceFlavor" else IMMUTABLE.get(kind, ())


def spec_of(facts: Mapping[str, Any]) -> dict[str, Any]:
    """A record's flat `spec.x` facts as the spec they came from (enough for `immutable_paths`)."""
    return {path.split(".", 1)[1]: value for path, value in facts.items() if path.startswith("spec.")}


def logical_name(component: str, kind: str, namespace: Optional[str], name: str, joiner: str = "/") -> str:
    """`joiner` "-" gives the name earlier releases gave (ambiguous for namespaced objects), kept as an
    alias so their URNs carry over."""
    where = f"{namespace}{joiner}{name}" if namespace else name
    return f"{component}-{kind.lower()}-{where}"


def legacy_aliases(component: str, objects: Iterable[tuple[str, Optional[str], str]]) -> dict[tuple, str]:
    """(kind, namespace, name) -> the old logical name to alias, for objects whose name changed."""
    objects = list(objects)
    olds = {key: logical_name(component, *key, joiner="-") for key in objects}
    claims = Counter(olds.values())
    return {key: old for key, old in olds.items()
            if old != logical_name(component, *key) and claims[old] == 1}
