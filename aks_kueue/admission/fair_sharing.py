"""Fair sharing's dominant resource share (DRS), as Kueue v0.19.2 computes it
(`pkg/cache/scheduler/fair_sharing.go`), and the part of Kueue's Configuration that turns it on.

A node of the cohort tree (a ClusterQueue or a Cohort) with a parent has a share when it uses
more than its subtree quota on some flavor-resource: per resource name, what it borrows (summed
over flavors) against what its parent's subtree could lend it (the parent's potentially
available amount, summed over the flavors of the root's subtree), in thousandths; the largest
such ratio is its unweighted share, and the share divided by `fairSharing.weight` is what Kueue
compares. A root, or a node within its quota, has share 0. Weight 0 makes any borrowing an
infinite share: such nodes rank above every other and among themselves by unweighted ratio.

`FairSharing` is the Configuration's `fairSharing` (present: fair sharing is on) with the feature
gates that change what it does; `preemptionStrategies` default to LessThanOrEqualToFinalShare
then LessThanInitialShare, as `parseStrategies` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Mapping, Optional

from aks_kueue.admission.quota import FlavorResource, QuotaNode, potential_available

DEFAULT_WEIGHT = 1.0
INT64_MAX = 2**63 - 1


class PreemptionStrategy(StrEnum):
    """`fairSharing.preemptionStrategies` (`apis/config/v1beta2`), rules S2-a and S2-b of KEP 1714."""

    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
    LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"


def feature_gates(configuration: Mapping[str, Any]) -> Mapping[str, Any]:
    """The Configuration's `featureGates` (every gate's value, as the CLI builds it), or none."""
    gates = configuration.get("featureGates")
    return gates if isinstance(gates, Mapping) else {}


DEFAULT_STRATEGIES = (PreemptionStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, PreemptionStrategy.LESS_THAN_INITIAL_SHARE)


@dataclass(frozen=True)
class FairSharing:
    """Fair sharing as the Configuration in force turns it on, with the v0.19.2 feature gates
    that shape it (both beta, on by default)."""

    strategies: tuple[PreemptionStrategy, ...] = DEFAULT_STRATEGIES
    # FairSharingPrioritizeNonBorrowing: in the tournament, a child not borrowing on the
    # flavor-resources its workload asks for wins before shares are compared.
    prioritize_non_borrowing: bool = True
    # FairSharingPreemptWithinNominal: a preemptor within its nominal quota on the contested
    # flavor-resources reclaims from other queues whatever their shares.
    preempt_within_nominal: bool = True

    @classmethod
    def from_configuration(cls, configuration: Optional[Mapping[str, Any]]) -> Optional["FairSharing"]:
        """From the effective (v1beta2, defaulted) Configuration with its `featureGates` (every gate's
        value, as the CLI builds it); None when fair sharing is off (no `fairSharing` section)."""
        if configuration is None or not isinstance(configuration.get("fairSharing"), Mapping):
            return None
        strategies = configuration["fairSharing"].get("preemptionStrategies") or DEFAULT_STRATEGIES
        gates = feature_gates(configuration)
        return cls(tuple(PreemptionStrategy(s) for s in strategies),
                   gates.get("FairSharingPrioritizeNonBorrowing", True) is not False,
                   gates.get("FairSharingPreemptWithinNominal", True) is not False)


@dataclass(frozen=True, slots=True)
class DRS:
    """A node's dominant resource share (upstream's DRS)."""

    fair_weight: float = DEFAULT_WEIGHT
    unweighted_ratio: float = 0.0
    dominant_resource: str = ""
    borrowing: bool = False
    borrowed_frs: tuple[FlavorResource, ...] = field(default=())

    @property
    def is_zero(self) -> bool:
        return self.unweighted_ratio == 0

    def is_borrowing_on(self, requested: Mapping[FlavorResource, int]) -> bool:
        """Does the node borrow on a flavor-resource the workload asks for (IsBorrowingOn)?"""
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed_frs)

    @property
    def zero_weight_borrows(self) -> bool:
        return self.fair_weight == 0 and not self.is_zero

    def precise_weighted_share(self) -> float:
        if self.is_zero:
            return 0.0
        if self.fair_weight == 0:
            return math.inf
        return self.unweighted_ratio / self.fair_weight

    def weighted_share(self) -> int:
        """What Kueue reports in `status.fairSharing.weightedShare` (roundedWeightedShare):
        the share rounded up, int64's maximum for a borrowing node of weight 0."""
        return INT64_MAX if self.zero_weight_borrows else math.ceil(self.precise_weighted_share())


NEGATIVE_DRS = DRS(unweighted_ratio=-1.0)  # NegativeDRS: below every real share, a starting point


def compare_drs(a: DRS, b: DRS) -> int:
    """Kueue's CompareDRS: lower is preferred for admission, higher for preemption."""
    a_inf, b_inf = a.zero_weight_borrows, b.zero_weight_borrows
    if a_inf and b_inf:
        return _cmp(a.unweighted_ratio, b.unweighted_ratio)
    if a_inf:
        return 1
    if b_inf:
        return -1
    return _cmp(a.precise_weighted_share(), b.precise_weighted_share())


def _cmp(a: float, b: float) -> int:
    return (a > b) - (a < b)


def dominant_resource_share(node: QuotaNode, request: Optional[Mapping[FlavorResource, int]] = None) -> DRS:
    """The node's share with its current usage (plus `request`, when given). Without a request
    the answer is kept until the node's usage changes (when its tree counts changes)."""
    version = node.usage_version
    if request is None and version >= 0:  # (-1: its tree does not count usage changes)
        kept = node.__dict__.get("_drs")
        if kept is not None and kept[0] == version:
            return kept[1]
        drs = _dominant_resource_share(node, None)
        node.__dict__["_drs"] = (version, drs)
        return drs
    return _dominant_resource_share(node, request)


def _dominant_resource_share(node: QuotaNode, request: Optional[Mapping[FlavorResource, int]]) -> DRS:
    if node.parent is None:
        return DRS(node.fair_weight)
    usage = node.usage
    borrowing: dict[str, int] = {}
    borrowed: list[FlavorResource] = []
    for fr, quota in node.subtree_quota.items():
        amount = usage.get(fr, 0) - quota
        if request:
            amount += request.get(fr, 0)
        if amount > 0:
            borrowing[fr[1]] = borrowing.get(fr[1], 0) + amount
            borrowed.append(fr)
    if not borrowing:
        return DRS(node.fair_weight)
    lendable = calculate_lendable(node.parent)
    ratio, dominant = 0.0, ""
    for resource, amount in borrowing.items():
        capacity = lendable.get(resource, 0)
        if capacity > 0:
            value = amount * 1000.0 / capacity
            # Ties go to the name first in alphabetical order, as upstream does for determinism.
            if value > ratio or (value == ratio and resource < dominant):
                ratio, dominant = value, resource
    return DRS(node.fair_weight, ratio, dominant, True, tuple(borrowed))


def calculate_lendable(node: QuotaNode) -> dict[str, int]:
    """Per resource name, what `node`'s subtree could ever lend (its potentially available amount,
    summed over every flavor of the root's subtree). Quotas never change within a tree: kept."""
    lendable = node.__dict__.get("_lendable")
    if lendable is None:
        lendable = {}
        for fr in node.root().subtree_quota:
            lendable[fr[1]] = lendable.get(fr[1], 0) + potential_available(node, fr)
        node.__dict__["_lendable"] = lendable
    return lendable


class ShareSeries:
    """Each ClusterQueue's weighted share over time, for reports. A ClusterQueue's share moves only
    with its own usage (what its parent could lend is fixed by quotas), so it is recorded where
    that usage changes."""

    def __init__(self, cluster_queues: Mapping[str, QuotaNode]):
        self.nodes = dict(cluster_queues)
        self.series: dict[str, list[tuple[float, DRS]]] = {name: [(0.0, DRS(node.fair_weight))]
                                                            for name, node in self.nodes.items()}

    def record(self, now: float, cluster_queue: str) -> None:
        node = self.nodes[cluster_queue]
        if node.parent is None:
            return  # a ClusterQueue without a cohort never has a share
        series = self.series[cluster_queue]
        drs = dominant_resource_share(node)
        if series[-1][0] == now:
            series[-1] = (now, drs)
        elif series[-1][1] != drs:
            series.append((now, drs))

    def summary(self, cluster_queue: str, end: float, since: float = 0.0) -> dict[str, Any]:
        """Kueue's weightedShare (`status.fairSharing.weightedShare`: the share in thousandths of
        what the cohort could lend, over the weight, rounded up; int64's maximum when a weight-0
        queue borrows) at the end and at its highest, its time-weighted mean (null when infinite
        for a while), and how long the queue borrowed, over the window from `since` to `end`."""
        series = self.series[cluster_queue]
        before = [d for t, d in series if t <= since]
        points = [(since, before[-1] if before else series[0][1])] + [(t, d) for t, d in series if since < t <= end]
        weighted, borrowed, infinite = 0.0, 0.0, False
        for (t, d), (t_next, _) in zip(points, [*points[1:], (end, points[-1][1])]):
            span = max(0.0, t_next - t)
            share = d.precise_weighted_share()
            if span > 0 and math.isinf(share):
                infinite = True
            elif span > 0:
                weighted += share * span
            if d.borrowing:
                borrowed += span
        highest = max((d for _, d in points), key=lambda d: (d.zero_weight_borrows, d.precise_weighted_share()))
        return {"weight": self.nodes[cluster_queue].fair_weight,
                "weightedShare": {"atEnd": points[-1][1].weighted_share(), "max": highest.weighted_share(),
                                  "mean": None if infinite or end <= since else round(weighted / (end - since), 3)},
                "dominantResourceAtMax": highest.dominant_resource or None,
                "borrowingHours": round(borrowed / 3600, 3)}
