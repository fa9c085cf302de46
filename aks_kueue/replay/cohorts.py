"""Usage of the Cohorts that hold quota of their own, over virtual time.

A Cohort with `resourceGroups` holds quota that none of its ClusterQueues holds: they reach it only
by borrowing. Its usage is Kueue's: what its children use beyond the quota they keep for themselves
(their local quota, with a lendingLimit) moves up to it (`pkg/cache/scheduler/resource_node.go`),
as Kueue's `kueue_cohort_subtree_resource_reservations` reports it against `kueue_cohort_subtree_quota`.

Per Cohort and flavor-resource the replay integrates three step functions:
- the subtree's usage at the Cohort (`subtree`), against its subtree quota (its own nominal quota
  plus what its children lend);
- the part of it on the Cohort's **own** quota (`own`): the usage its children's lent quota cannot
  cover, `min(nominal, max(0, usage - (subtreeQuota - nominal)))`. Kueue does not say whose quota a
  borrowed unit sits on; this is the least that must sit on the Cohort's, so its utilisation is a
  lower bound, exact when the children's quota is fully used;
- the part above its subtree quota (`borrowed`): what the Cohort itself borrows from its parent.

The usage comes from a second quota tree (`shadow`) fed with the ClusterQueues' metered usage (the
same admissions and releases as the meters), so it changes when they do and never reads the admission
core's tree in the middle of a decision.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Optional

from aks_kueue.admission.quota import FlavorResource, QuotaNode, QuotaTree


@dataclass(slots=True)
class CohortMeter:
    """One Cohort's usage of one flavor-resource, integrated over time."""

    nominal: int            # the Cohort's own nominal quota
    subtree_quota: int
    current: int = 0        # the subtree's usage at the Cohort
    last: float = 0.0
    subtree: float = 0.0    # integrals over time
    own: float = 0.0
    borrowed: float = 0.0
    base: tuple[float, float, float] = (0.0, 0.0, 0.0)   # the integrals when the window opened
    times: array = field(default_factory=lambda: array("d", [0.0]))    # `current` over time, for the chart
    values: array = field(default_factory=lambda: array("q", [0]))

    def to(self, now: float, value: int) -> None:
        span = now - self.last
        if span > 0:
            lent = self.subtree_quota - self.nominal
            self.subtree += self.current * span
            self.own += min(self.nominal, max(0, self.current - lent)) * span
            self.borrowed += max(0, self.current - self.subtree_quota) * span
        self.last = now
        if value != self.current:
            self.current = value
            if self.times[-1] == now:
                self.values[-1] = value
            else:
                self.times.append(now)
                self.values.append(value)

    def opened(self, now: float) -> None:
        self.to(now, self.current)
        self.base = (self.subtree, self.own, self.borrowed)

    def since_opened(self) -> tuple[float, float, float]:
        """(subtree, own, borrowed) usage-seconds since the window opened."""
        return self.subtree - self.base[0], self.own - self.base[1], self.borrowed - self.base[2]


class CohortUsage:
    """The Cohorts with quota of their own, and their meters, fed by the ClusterQueues' usage."""

    def __init__(self, tree: QuotaTree):
        self.shadow = tree.without_usage()
        self.watched: dict[str, QuotaNode] = {name: node for name, node in sorted(self.shadow.cohorts.items())
                                              if node.quotas}
        self.meters: dict[str, dict[FlavorResource, CohortMeter]] = {
            name: {fr: CohortMeter(quota.nominal, node.subtree_quota.get(fr, 0))
                   for fr, quota in sorted(node.quotas.items())} for name, node in self.watched.items()}
        # Per ClusterQueue, the watched Cohorts above it.
        self.above: dict[str, list[QuotaNode]] = {
            name: [a for a in cq.ancestors() if a.name in self.watched] for name, cq in self.shadow.cluster_queues.items()}

    @classmethod
    def of(cls, tree: QuotaTree) -> Optional["CohortUsage"]:
        """None when no Cohort holds quota (nothing to meter, nothing to pay for it)."""
        return cls(tree) if any(node.quotas for node in tree.cohorts.values()) else None

    def change(self, now: float, cluster_queue: str, usage: dict[FlavorResource, int], sign: int) -> None:
        above = self.above.get(cluster_queue)
        if not above:
            return
        if sign > 0:
            self.shadow.add_usage(cluster_queue, usage)
        else:
            self.shadow.remove_usage(cluster_queue, usage)
        for node in above:
            meters = self.meters[node.name]
            for fr in usage:
                meter = meters.get(fr)
                if meter is not None:
                    meter.to(now, node.usage.get(fr, 0))

    def opened(self, now: float) -> None:
        for meters in self.meters.values():
            for meter in meters.values():
                meter.opened(now)

    def close(self, now: float) -> None:
        for meters in self.meters.values():
            for meter in meters.values():
                meter.to(now, meter.current)


__all__ = ["CohortUsage", "CohortMeter"]
