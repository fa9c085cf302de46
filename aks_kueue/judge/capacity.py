"""Quota against capacity, per flavor and resource, and the flavor and taint checks.

Kueue admits against quota and never looks at nodes, so a quota above what the pools can
allocate at their autoscaler maximum admits work that then stays Pending. A flavor the
managed extension generates is counted on every pool it could land on
(`aks/managed_extension.py`), so only a quota above all of them together is rejected.

A quota on a resource Kueue's resource transformations make (`cpu_credits` from `cpu`) is in
the transformed units: it is compared with what the nodes hold of the inputs, times the
factors, where that is meaningful (every transformation making it turns a node resource into
it by a positive factor, without `multiplyBy`); otherwise the row says that the resource has
no node-side counterpart and is not compared.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
import math
from fractions import Fraction
from typing import Any, Iterable, Mapping, Optional

from aks_kueue.admission.quota import QuotaTree
from aks_kueue.aks.managed_extension import generated_flavor
from aks_kueue.aks.nodes import PoolCapacity, is_modelled
from aks_kueue.aks.placement import FlavorPlacement, place_flavors
from aks_kueue.aks.pools import taint_text
from aks_kueue.judge.finding import ERROR, WARNING, Finding, amount, field_key, show
from aks_kueue.judge.rules import finding
from aks_kueue.k8s.scheduling import SCHEDULING_EFFECTS
from aks_kueue.judge.objects import Valid, of_kind
from aks_kueue.k8s.field import Path
from aks_kueue.kueue.transformations import NO_RULES, ResourceRules
from aks_kueue.kueue.units import CPU
from aks_kueue.kueue.views import QuotaHolder, ResourceFlavor
from aks_kueue.model.desired import KueueItem

QUOTA_ABOVE_CAPACITY = "quota-above-capacity"
BORROWING_ABOVE_CAPACITY = "borrowing-above-capacity"
FLAVOR_LANDS_NOWHERE = "flavor-lands-nowhere"
FLAVOR_RESOURCE_MISSING = "flavor-resource-missing"
TAINT_NOT_TOLERATED = "taint-not-tolerated"
GPUS_NOT_ADVERTISED = "gpus-not-advertised"
RESOURCE_GROUPS = Path("spec", "resourceGroups")


@dataclass(frozen=True)
class QuotaEntry:
    owner: KueueItem
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
    assumption: str = ""      # for a flavor the managed extension generates: what its placement assumes
    transformation: str = ""  # for a resource Kueue's transformations make: how capacity was (not) compared

    @property
    def headroom(self) -> Optional[int]:
        return None if self.capacity is None else self.capacity - self.quota

    def to_json(self) -> dict:
        def number(value: Optional[int]) -> Optional[int | float]:
            return None if value is None else amount(self.resource, value).value

        row = {"flavor": self.flavor, "resource": self.resource, "unit": amount(self.resource, 0).unit,
               "quota": number(self.quota), "capacity": number(self.capacity), "headroom": number(self.headroom),
               "verdict": self.verdict}
        if self.assumption:
            row["assumption"] = self.assumption
        if self.transformation:
            row["transformation"] = self.transformation
        return row

    def shown(self) -> dict[str, str]:
        """The figures as people read them (cores, GiB, counts)."""
        return {"quota": show(self.resource, self.quota),
                "capacity": "-" if self.capacity is None else show(self.resource, self.capacity),
                "headroom": "-" if self.headroom is None else show(self.resource, self.headroom)}


def placements(valid: Iterable[Valid[Any]], pools: list[PoolCapacity], managed: bool,
               generated: Iterable[str] = ()) -> dict[str, FlavorPlacement]:
    """Where each ResourceFlavor lands; in managed mode also the generated flavors queues name."""
    found = place_flavors([each.view for each in of_kind(valid, ResourceFlavor)], pools)
    if managed:
        by_name = {p.name: p for p in pools}
        for name in generated:
            if name in found:
                continue
            flavor = generated_flavor(name, [p.spec for p in pools])
            if flavor is None:
                continue
            placement = FlavorPlacement(name=name, node_labels={}, node_taints=[], tolerations=[],
                                        assumption=flavor.assumption)
            placement.pools.extend((by_name[p.name], p.max_count) for p in flavor.pools)
            found[name] = placement
    return found


def quota_entries(valid: Iterable[Valid[Any]]) -> list[QuotaEntry]:
    """Every resource quota of the ClusterQueues and Cohorts, in order."""
    return [QuotaEntry(holder.item, str(RESOURCE_GROUPS.index(g).child("flavors").index(f).child("resources").index(r)),
                       flavor.name, quota.name, quota.nominal_quota, quota.borrowing_limit)
            for holder in of_kind(valid, QuotaHolder)
            for g, group in enumerate(holder.view.resource_groups)
            for f, flavor in enumerate(group.flavors)
            for r, quota in enumerate(flavor.resources)]


def capacity_rows(entries: list[QuotaEntry], flavors: Mapping[str, FlavorPlacement],
                  rules: ResourceRules = NO_RULES) -> tuple[list[CapacityRow], list[Finding]]:
    by_fr: dict[tuple[str, str], list[QuotaEntry]] = defaultdict(list)
    for entry in entries:
        by_fr[(entry.flavor, entry.resource)].append(entry)
    rows, findings = [], []
    generated = rules.generated()
    for (flavor, resource), group in by_fr.items():
        total = sum(e.nominal for e in group)
        placement = flavors.get(flavor)
        assumption = placement.assumption if placement is not None else ""
        capacity, note = None, ""
        if resource in generated:
            capacity, note = _transformed_capacity(placement, resource, rules)
            verdict = "not modelled" if capacity is None else "over" if total > capacity else "ok"
        elif placement is None or not is_modelled(resource):
            verdict = "not modelled"
        elif not placement.pools:
            capacity, verdict = 0, "nowhere"
        elif not placement.has(resource):
            capacity, verdict = 0, "missing" if total else "ok"
        else:
            capacity = placement.total(resource)
            verdict = "over" if total > capacity else "ok"
        rows.append(CapacityRow(flavor, resource, total, capacity, verdict, assumption, note))
        # Over and missing come only of a placed flavor with a capacity.
        if verdict == "over" and placement is not None and capacity is not None:
            findings.append(_over_capacity(placement, resource, group, total, capacity, note))
        elif verdict == "missing" and placement is not None:
            findings.append(_missing_resource(placement, resource, group))
    return rows, findings


def advertise_first(silent: list[str]) -> str:
    """The first fix where pools have the resource and do not advertise it (`silent`, their names)."""
    return (f"let pool {', '.join(silent)} advertise its GPUs (its gpus-not-advertised warning says how), or "
            if silent else "")


def _assumed(placement: FlavorPlacement) -> str:
    return f" ({placement.assumption})" if placement.assumption else ""


def _transformed_capacity(placement: Optional[FlavorPlacement], resource: str,
                          rules: ResourceRules) -> tuple[Optional[int], str]:
    """What the flavor's pools hold of a transformation's output, in its units, and how that was
    found; None when the nodes have no counterpart of it."""
    sources = [(t, factor) for t in rules.transformations for name, factor in t.outputs if name == resource]
    made = "; ".join(t.describe() for t, _ in sources)
    why = ""
    if any(t.multiply_by for t, _ in sources):
        why = "multiplyBy scales per-device amounts that nodes do not advertise"
    elif any(factor <= 0 for _, factor in sources):
        why = "a negative or zero factor writes an allowance, not a node resource"
    elif not all(is_modelled(t.input) for t, _ in sources):
        why = "its inputs are resources the capacity model has no figures for"
    if why:
        return None, (f"{resource} is made by Kueue's resource transformations ({made}) and has no node-side "
                      f"counterpart ({why}); its quota is not compared with node capacity")
    if placement is None or not placement.pools:
        return None, f"{resource} is made by Kueue's resource transformations ({made})"
    held = Fraction(0)
    for transformation, factor in sources:
        amount_ = placement.total(transformation.input)
        held += (Fraction(amount_, 1000) if transformation.input == CPU else Fraction(amount_)) * factor
    # Whole units only: a quota above what the nodes hold, however little above, is over.
    capacity = math.floor(held * 1000) if resource == CPU else math.floor(held)
    return capacity, (f"{resource} is made by Kueue's resource transformations ({made}); capacity is what the pools "
                      "hold of the inputs, times the factors")


def _over_capacity(placement: FlavorPlacement, resource: str, group: list[QuotaEntry], total: int,
                   capacity: int, transformation: str = "") -> Finding:
    shares = sorted(group, key=lambda e: -e.nominal)
    largest = shares[0]
    listed = ", ".join(f"{e.owner.label} {show(resource, e.nominal)}" for e in shares[:5] if e.nominal)
    more = f" and {len(shares) - 5} more" if len(shares) > 5 else ""
    pools = transformation or ", ".join(f"pool {p.name}: {show(resource, p.node.amounts.get(resource, 0))} per node x "
                                        f"{n} nodes{p.not_advertised(resource)}" for p, n in placement.pools)
    return finding(
        QUOTA_ABOVE_CAPACITY, object=largest.owner.label,
        key=field_key(largest.owner.key, f"{largest.path}.nominalQuota"),
        message=f"the nominalQuota for {resource} on flavor {placement.name} adds up to {show(resource, total)} "
        f"({listed}{more}), but its pools can allocate only {show(resource, capacity)} at maxCount "
        f"({pools}){_assumed(placement)}",
        fix=advertise_first([p.name for p, _ in placement.pools if p.not_advertised(resource)])
        + f"lower those nominalQuotas by {show(resource, total - capacity)} in all (this one is the largest), or "
        "raise the pools' maxCount",
        numbers={"flavor": placement.name, "resource": resource, "quota": amount(resource, total),
                 "capacity": amount(resource, capacity), "excess": amount(resource, total - capacity)})


def _missing_resource(placement: FlavorPlacement, resource: str, group: list[QuotaEntry]) -> Finding:
    entry = next(e for e in group if e.nominal)
    pools = ", ".join(p.name for p, _ in placement.pools)
    return finding(
        FLAVOR_RESOURCE_MISSING, object=entry.owner.label, key=field_key(entry.owner.key, f"{entry.path}.nominalQuota"),
        message=f"{entry.owner.label} gives flavor {placement.name} {show(resource, entry.nominal)} {resource}, but "
        f"the nodes of its pools ({pools}) have no {resource}{_assumed(placement)}",
        fix=f"set that nominalQuota to 0, or bind flavor {placement.name} to a pool whose nodes have {resource}",
        numbers={"flavor": placement.name, "resource": resource, "quota": amount(resource, entry.nominal),
                 "capacity": amount(resource, 0)})


def borrowing_findings(tree: Optional[QuotaTree], entries: list[QuotaEntry],
                       flavors: Mapping[str, FlavorPlacement]) -> list[Finding]:
    """One ClusterQueue that can reach, with what its cohort lends it, more than the flavor's pools hold.

    The reach is Kueue's potentially-available quota (`tree` without usage), so a
    borrowingLimit larger than what the cohort can ever lend is no alarm.
    """
    if tree is None:
        return []
    findings = []
    for entry in entries:
        placement = flavors.get(entry.flavor)
        if (entry.owner.kind != "ClusterQueue" or placement is None or not is_modelled(entry.resource)
                or not placement.has(entry.resource)):
            continue
        capacity = placement.total(entry.resource)
        reach = tree.potential_available(entry.owner.name, (entry.flavor, entry.resource))
        if entry.nominal <= capacity < reach:
            path = f"{entry.path}.borrowingLimit" if entry.borrowing_limit is not None else "spec.cohortName"
            limit = ("no borrowingLimit" if entry.borrowing_limit is None
                     else f"borrowingLimit {show(entry.resource, entry.borrowing_limit)}")
            findings.append(finding(
                BORROWING_ABOVE_CAPACITY, object=entry.owner.label, key=field_key(entry.owner.key, path),
                message=f"{entry.owner.label} has nominalQuota {show(entry.resource, entry.nominal)} {entry.resource} "
                f"on flavor {entry.flavor} and {limit}, so with what its cohort lends it can be admitted up to "
                f"{show(entry.resource, reach)}, above the {show(entry.resource, capacity)} its pools can allocate"
                f"{_assumed(placement)}",
                fix=f"set borrowingLimit to at most {show(entry.resource, capacity - entry.nominal)}, or lower the "
                "cohort's quotas for this flavor",
                numbers={"flavor": entry.flavor, "resource": entry.resource,
                         "nominal": amount(entry.resource, entry.nominal), "reach": amount(entry.resource, reach),
                         "capacity": amount(entry.resource, capacity)}))
    return findings


def flavor_findings(valid: Iterable[Valid[Any]], flavors: Mapping[str, FlavorPlacement]) -> list[Finding]:
    items = {each.view.name: each.item for each in of_kind(valid, ResourceFlavor)}
    findings = []
    for placement in flavors.values():
        if placement.pools:
            continue
        item = items.get(placement.name)
        if item is None:  # a flavor the managed extension generates, with no pool it could land on
            findings.append(finding(
                FLAVOR_LANDS_NOWHERE, severity=WARNING, object=f"ResourceFlavor {placement.name}",
                key="aks-kueue:nodePools",
                message=f"the managed extension generates flavor {placement.name} for matching user pools, and no pool "
                f"of this stack could match it ({placement.assumption})",
                fix="add a user pool it covers, or name another flavor",
                numbers={"flavor": placement.name, "pools": 0}))
            continue
        labels = ", ".join(f"{k}={v}" for k, v in placement.node_labels.items())
        findings.append(finding(
            FLAVOR_LANDS_NOWHERE, severity=ERROR, object=item.label, key=field_key(item.key, "spec.nodeLabels"),
            message=f"flavor {placement.name} selects nodes labelled {labels}, and no pool's nodes carry those labels",
            fix="bind the flavor to a pool with nodePool: <pool>, or use labels a pool's nodes have "
            "(kubernetes.azure.com/agentpool, node.kubernetes.io/instance-type, the pool's labels)",
            numbers={"flavor": placement.name, "nodeLabels": dict(placement.node_labels), "pools": 0}))
    return findings


def taint_findings(pools: list[PoolCapacity], flavors: Mapping[str, FlavorPlacement]) -> list[Finding]:
    findings = []
    for pool in pools:
        bound = [p for p in flavors.values() if any(q is pool for q, _ in p.pools)]
        if not bound or any(p.assumption for p in bound):
            continue  # Kueue sends nothing here, or a generated flavor whose tolerations are not documented
        for taint in pool.spec.taints:
            if taint.get("effect") not in SCHEDULING_EFFECTS or any(f.handles(taint) for f in bound):
                continue
            text = taint_text(taint)
            names = ", ".join(f.name for f in bound)
            findings.append(finding(
                TAINT_NOT_TOLERATED, object=f"node pool {pool.name}", key=field_key(pool.spec.key, "taints"),
                message=f"pool {pool.name}'s nodes are tainted {text}, and no flavor that lands there ({names}) "
                "declares it in nodeTaints or tolerates it",
                fix=f"bind the flavor with nodePool: {pool.name} (it copies the taints into nodeTaints), or add "
                f"{{key: {taint['key']}, operator: Equal, value: {taint.get('value') or ''}, effect: "
                f"{taint['effect']}}} to its spec.tolerations",
                numbers={"pool": pool.name, "taint": text, "flavors": [f.name for f in bound]}))
    return findings


def advertising_findings(pools: list[PoolCapacity]) -> list[Finding]:
    """GPU pools whose GPUs nothing advertises: the model counts none there (a quota on them is
    then above capacity, and a pod asking for them fits no node), and this says why once per pool."""
    findings = []
    for pool in pools:
        missing = pool.node.unadvertised
        if missing is None:
            continue
        findings.append(finding(
            GPUS_NOT_ADVERTISED, object=f"node pool {pool.name}", key=field_key(pool.spec.key, "gpuDevicePlugin"),
            message=f"pool {pool.name}'s nodes have {missing.gpus} {missing.resource} each, but nothing advertises "
            f"them ({missing.why}), so the capacity model counts 0", fix=missing.fix,
            numbers={"pool": pool.name, "resource": missing.resource, "perNode": amount(missing.resource, missing.gpus),
                     "counted": amount(missing.resource, 0)}))
    return findings


def pool_json(pool: PoolCapacity) -> dict[str, Any]:
    """A pool's per-node figures as numbers with units, and how each was derived."""
    return {"name": pool.name, "vmSize": pool.spec.vm_size, "maxCount": pool.spec.max_count,
            "perNode": {r: amount(r, v).to_json() for r, v in pool.node.amounts.items()},
            "explanation": list(pool.node.explanation)}

