"""The node labels AKS gives every node that Kueue's Topology Aware Scheduling can use as levels.

Source: learn.microsoft.com/azure/aks/use-labels (`../shared/reference/aks.md` section c.1):
every node carries `topology.kubernetes.io/zone` and `kubernetes.io/hostname`. A node of a pool
without availability zones carries zone `0`; a zonal pool's nodes carry `<region>-<zone>`
(`aks/nodes.py` labels the capacity model's nodes the same way). No AKS page defines a rack or
InfiniBand placement label, so those two are the levels AKS offers: a broad one (zone) and the
node itself (hostname), in that order, as Kueue requires hostname to be the last level.
"""

from __future__ import annotations

from aks_kueue.aks.nodes import ZONE
from aks_kueue.k8s.field import FieldError

HOSTNAME = "kubernetes.io/hostname"
# `queues.topologies[].fromAks` names, broadest first, and the node label each stands for.
AKS_LEVELS = {"zone": ZONE, "hostname": HOSTNAME}
NON_ZONAL_ZONE = "0"


def levels_from_aks(names: list[str]) -> list[dict[str, str]]:
    """A Topology's `spec.levels` for `fromAks` names (already checked to be known, unique and ordered)."""
    return [{"nodeLabel": AKS_LEVELS[name]} for name in names]


def from_aks_problem(names: list[str]) -> FieldError | None:
    """What is wrong with a `fromAks` list, or None."""
    if not names:
        return FieldError("", f"give at least one level: {', '.join(AKS_LEVELS)}")
    unknown = [n for n in names if n not in AKS_LEVELS]
    if unknown:
        levels = ", ".join(f"{k}: {v}" for k, v in AKS_LEVELS.items())
        return FieldError("", f"{', '.join(repr(n) for n in unknown)} "
                              f"{'is not a level' if len(unknown) == 1 else 'are not levels'} AKS labels nodes with",
                          f"use {' and '.join(AKS_LEVELS)} ({levels}), or give spec.levels with your own node labels")
    if len(set(names)) != len(names):
        return FieldError("", "each level may appear once")
    order = list(AKS_LEVELS)
    if [order.index(n) for n in names] != sorted(order.index(n) for n in names):
        return FieldError("", f"levels go from the broadest to the node: write {[n for n in order if n in names]}")
    return None
