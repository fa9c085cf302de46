"""Quota against capacity, per flavor and resource, and the flavor and taint checks.

Kueue admits against quota and never looks at nodes, so a quota above what the pools
can allocate at their autoscaler maximum admits work that then stays Pending.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping, Optional

from aks_kueue.admission.quota import CohortCycleError, QuotaTree
from aks_kueue.kueue.units import amount
from aks_kueue.feasibility.findings import ERROR, Finding, describe, show, where
from aks_kueue.feasibility.flavors import BLOCKING_EFFECTS, FlavorPlacement
from aks_kueue.feasibility.inputs import Manifest, object_key
from aks_kueue.feasibility.pools import PoolCapacity, is_modelled


@dataclass(frozen=True)
class QuotaEntry:
    owner: str           # object key, "ClusterQueue//team-a"
    path: str            # spec.resourceGroups[i].flavors[j].resources[k]
    flavor: str
    resource: str
    nominal: int
    borrowing_limit: Optional[int]


@dataclass(frozen=True)
class CapacityRow:
    flavor: str
    resource: str
    quota: int
    capacity: Optional[int]   # None: not modelled
    verdict: str              # ok | over | missing | nowhere | not modelled

    @property
    def headroom(self) -> Optional[int]:
        return None if self.capacity is None else self.capacity - self.quota

    def to_json(self) -> dict:
        return {"flavor": self.flavor, "resource": self.resource, "quota": show(self.resource, self.quota),
                "capacity": None if self.capacity is None else show(self.resource, self.capacity),
                "headroom": None if self.headroom is None else show(self.resource, self.headroom),
                "verdict": self.verdict}


@lru_cache(maxsize=4096)
def _amount(resource: str, quantity: str | int) -> int:
    """Quotas repeat across queues; parse each spelling once."""
    return amount(resource, quantity)


def quota_entries(manifests: Iterable[Manifest]) -> list[QuotaEntry]:
    entries = []
    for manifest in manifests:
        if manifest.get("kind") not in ("ClusterQueue", "Cohort"):
            continue
        owner = object_key(manifest)
        for g, group in enumerate((manifest.get("spec") or {}).get("resourceGroups") or []):
            for f, flavor in enumerate(group.get("flavors") or []):
                for r, resource in enumerate(flavor.get("resources") or []):
                    name = resource["name"]
                    limit = resource.get("borrowingLimit")
                    entries.append(QuotaEntry(
                        owner, f"spec.resourceGroups[{g}].flavors[{f}].resources[{r}]", flavor["name"], name,
                        _amount(name, resource.get("nominalQuota", 0)),
                        None if limit is None else _amount(name, limit)))
    return entries


def capacity_rows(entries: list[QuotaEntry], placements: Mapping[str, FlavorPlacement],
                  sources: Mapping[str, str]) -> tuple[list[CapacityRow], list[Finding]]:
    by_fr: dict[tuple[str, str], list[QuotaEntry]] = defaultdict(list)
    for entry in entries:
        by_fr[(entry.flavor, entry.resource)].append(entry)
    rows, findings = [], []
    for (flavor, resource), group in by_fr.items():
        total = sum(e.nominal for e in group)
        placement = placements.get(flavor)
        if placement is None or not is_modelled(resource):
            rows.append(CapacityRow(flavor, resource, total, None, "not modelled"))
        elif not placement.pools:
            rows.append(CapacityRow(flavor, resource, total, 0, "nowhere"))
        elif not placement.has(resource):
            rows.append(CapacityRow(flavor, resource, total, 0, "missing" if total else "ok"))
            if total:
                findings.append(_missing_resource(placement, resource, group, sources))
        else:
            capacity = placement.total(resource)
            rows.append(CapacityRow(flavor, resource, total, capacity, "over" if total > capacity else "ok"))
            if total > capacity:
                findings.append(_over_capacity(placement, resource, group, total, capacity, sources))
    return rows, findings


def _pools_text(placement: FlavorPlacement, resource: str) -> str:
    return ", ".join(f"pool {p.name}: {show(resource, p.node.amounts.get(resource, 0))} per node x {n} nodes"
                     for p, n in placement.pools)


def _over_capacity(placement, resource, group, total, capacity, sources) -> Finding:
    shares = sorted(group, key=lambda e: -e.nominal)
    listed = ", ".join(f"{describe(e.owner)} {show(resource, e.nominal)}" for e in shares[:5] if e.nominal)
    more = f" and {len(shares) - 5} more" if len(shares) > 5 else ""
    key = f"ResourceFlavor//{placement.name}"
    return Finding(
        ERROR, "quota-above-capacity", describe(key), where(sources, key),
        f"the nominalQuota for {resource} on flavor {placement.name} adds up to {show(resource, total)} "
        f"({listed}{more}), but its pools can allocate only {show(resource, capacity)} at maxCount "
        f"({_pools_text(placement, resource)}); work Kueue admits beyond that stays Pending",
        f"lower those nominalQuotas by {show(resource, total - capacity)} in all, or raise the pools' maxCount",
        {"flavor": placement.name, "resource": resource, "quota": show(resource, total),
         "capacity": show(resource, capacity), "excess": show(resource, total - capacity)})


def _missing_resource(placement, resource, group, sources) -> Finding:
    entry = next(e for e in group if e.nominal)
    pools = ", ".join(p.name for p, _ in placement.pools)
    return Finding(
        ERROR, "flavor-resource-missing", describe(entry.owner),
        where(sources, entry.owner, f"{entry.path}.nominalQuota"),
        f"{describe(entry.owner)} gives flavor {placement.name} {show(resource, entry.nominal)} {resource}, but "
        f"the nodes of its pools ({pools}) have no {resource}; pods admitted with it can never be scheduled",
        f"set that nominalQuota to 0, or bind flavor {placement.name} to a pool whose nodes have {resource}",
        {"flavor": placement.name, "resource": resource, "quota": show(resource, entry.nominal), "capacity": "0"})


def quota_tree(manifests: list[Manifest]) -> Optional[QuotaTree]:
    try:
        return QuotaTree.from_objects(manifests)
    except CohortCycleError:
        return None  # Kueue disables a cycle's queues; the settings check reports the cycle


def borrowing_findings(tree: Optional[QuotaTree], entries: list[QuotaEntry],
                       placements: Mapping[str, FlavorPlacement], sources: Mapping[str, str]) -> list[Finding]:
    """One ClusterQueue that can reach, with what its cohort lends it, more than the flavor's pools hold.

    The reach is Kueue's potentially-available quota (`tree` without usage), so a
    borrowingLimit larger than what the cohort can ever lend is no alarm.
    """
    if tree is None:
        return []
    findings = []
    for entry in entries:
        kind, _, name = entry.owner.split("/", 2)
        placement = placements.get(entry.flavor)
        if (kind != "ClusterQueue" or placement is None or not is_modelled(entry.resource)
                or not placement.has(entry.resource)):
            continue
        capacity = placement.total(entry.resource)
        reach = tree.potential_available(name, (entry.flavor, entry.resource))
        if entry.nominal <= capacity < reach:
            field = (f"{entry.path}.borrowingLimit" if entry.borrowing_limit is not None else "spec.cohortName")
            limit = ("no borrowingLimit" if entry.borrowing_limit is None
                     else f"borrowingLimit {show(entry.resource, entry.borrowing_limit)}")
            findings.append(Finding(
                ERROR, "borrowing-above-capacity", describe(entry.owner), where(sources, entry.owner, field),
                f"{describe(entry.owner)} has nominalQuota {show(entry.resource, entry.nominal)} {entry.resource} "
                f"on flavor {entry.flavor} and {limit}, so with what its cohort lends it can be admitted up to "
                f"{show(entry.resource, reach)}, above the {show(entry.resource, capacity)} its pools can allocate",
                f"set borrowingLimit to at most {show(entry.resource, capacity - entry.nominal)}, or lower the "
                "cohort's quotas for this flavor",
                {"flavor": entry.flavor, "resource": entry.resource, "nominal": show(entry.resource, entry.nominal),
                 "reach": show(entry.resource, reach), "capacity": show(entry.resource, capacity)}))
    return findings


def flavor_findings(placements: Mapping[str, FlavorPlacement], sources: Mapping[str, str]) -> list[Finding]:
    findings = []
    for placement in placements.values():
        if placement.pools:
            continue
        key = f"ResourceFlavor//{placement.name}"
        labels = ", ".join(f"{k}={v}" for k, v in placement.node_labels.items())
        findings.append(Finding(
            ERROR, "flavor-lands-nowhere", describe(key), where(sources, key, "spec.nodeLabels"),
            f"flavor {placement.name} selects nodes labelled {labels}, and no pool's nodes carry those labels; "
            "Kueue copies them into the pods it admits, which then stay Pending",
            "bind the flavor to a pool with nodePool: <pool>, or use labels a pool's nodes have "
            "(kubernetes.azure.com/agentpool, node.kubernetes.io/instance-type, the pool's labels)",
            {"flavor": placement.name, "nodeLabels": dict(placement.node_labels), "pools": 0}))
    return findings


def taint_findings(pools: list[PoolCapacity], placements: Mapping[str, FlavorPlacement]) -> list[Finding]:
    findings = []
    for pool in pools:
        bound = [p for p in placements.values() if any(q is pool for q, _ in p.pools)]
        if not bound:
            continue  # Kueue sends nothing to this pool
        for taint in pool.spec.taints:
            if taint.get("effect") not in BLOCKING_EFFECTS or any(f.handles(taint) for f in bound):
                continue
            text = f"{taint['key']}={taint.get('value') or ''}:{taint['effect']}"
            names = ", ".join(f.name for f in bound)
            findings.append(Finding(
                ERROR, "taint-not-tolerated", f"node pool {pool.name}",
                f"{pool.spec.source or 'pool ' + pool.name}.taints",
                f"pool {pool.name}'s nodes are tainted {text}, and no flavor that lands there ({names}) declares "
                "it in nodeTaints or tolerates it, so pods Kueue admits to them are not scheduled there",
                f"bind the flavor with nodePool: {pool.name} (it copies the taints into nodeTaints), or add "
                f"{{key: {taint['key']}, operator: Equal, value: {taint.get('value') or ''}, effect: "
                f"{taint['effect']}}} to its spec.tolerations",
                {"pool": pool.name, "taint": text, "flavors": [f.name for f in bound]}))
    return findings
