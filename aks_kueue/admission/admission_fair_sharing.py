"""Admission fair sharing (AFS), as Kueue v0.19.2 keeps it (`pkg/util/admissionfairsharing`,
`pkg/cache/queue/afs`, the LocalQueue and Workload controllers), over virtual time.

Within a ClusterQueue whose `admissionScope.admissionMode` is UsageBasedAdmissionFairSharing, the
pending workloads of the LocalQueue that has used the least lately come first, whatever their
priority. A LocalQueue's usage is its decayed consumed resources plus the entry penalties not yet
settled, each resource weighted by `resourceWeights` (1 by default), divided by the LocalQueue's
`fairSharing.weight`:

- consumed resources decay towards what the LocalQueue's admitted workloads use now: after
  `elapsed` seconds, `old * (1 - a) + live * a` with `a = 1 - 0.5 ** (elapsed / usageHalfLifeTime)`;
  the LocalQueue controller samples every `usageSamplingInterval` (5 minutes by default) after its
  last update, and a workload's admission samples its LocalQueue at once;
- a workload that reserves quota adds an entry penalty at once, its requests times
  `1 - 0.5 ** (usageSamplingInterval / usageHalfLifeTime)`, so a burst of submissions from one
  LocalQueue cannot all win before the next sample; when the workload is admitted the penalty is
  folded into the consumed resources (`updateAfsConsumedUsage`), and it is dropped when the
  workload finishes or leaves before that;
- a half-life of 0 resets the consumed resources to 0 at every sample.

Quantities are kept as floats in Kubernetes' units (cpu in cores, memory in bytes); Kueue keeps
them as decimals rounded down to 10^-9, which no ordering here can tell apart. The ledger is fed
by whoever moves time (`replay`): `advance` samples what is due, `reserved`, `admitted` and
`released` are the workload events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

from aks_kueue.kueue.config_api import seconds
from aks_kueue.kueue.units import CPU

USAGE_BASED = "UsageBasedAdmissionFairSharing"
DEFAULT_SAMPLING_INTERVAL = 300.0
LocalQueueKey = tuple[str, str]  # namespace, name
Resources = dict[str, float]


@dataclass(frozen=True)
class AdmissionFairSharing:
    """The Configuration's `admissionFairSharing` (present, with the AdmissionFairSharing gate on)."""

    usage_half_life_time: float
    usage_sampling_interval: float = DEFAULT_SAMPLING_INTERVAL
    resource_weights: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def from_configuration(cls, configuration: Optional[Mapping[str, Any]]) -> Optional["AdmissionFairSharing"]:
        """From the effective Configuration and its `featureGates`; None when AFS is off."""
        if configuration is None or not isinstance(configuration.get("admissionFairSharing"), Mapping):
            return None
        from aks_kueue.admission.fair_sharing import feature_gates

        if feature_gates(configuration).get("AdmissionFairSharing", True) is False:
            return None
        section = configuration["admissionFairSharing"]
        return cls(float(seconds(section.get("usageHalfLifeTime"))),
                   float(seconds(section.get("usageSamplingInterval"))) or DEFAULT_SAMPLING_INTERVAL,
                   {str(k): float(v) for k, v in (section.get("resourceWeights") or {}).items()})

    def alpha(self, elapsed: float) -> float:
        return calculate_alpha_rate(elapsed, self.usage_half_life_time)

    def entry_penalty(self, requests: Mapping[str, float]) -> Resources:
        """CalculateEntryPenalty: the requests times the decay of one sampling interval."""
        alpha = self.alpha(self.usage_sampling_interval)
        return {r: v * alpha for r, v in requests.items()}


def should_apply_entry_penalty(config: Optional[AdmissionFairSharing], admission_mode: Optional[str],
                               holds_reservation: bool) -> bool:
    """shouldApplyEntryPenalty: AFS on, the ClusterQueue usage-based, and the workload reserving quota
    for the first time (a second pass books nothing new)."""
    return config is not None and admission_mode == USAGE_BASED and not holds_reservation


def calculate_alpha_rate(sampling: float, half_life: float) -> float:
    return 0.0 if half_life == 0 else 1.0 - 0.5 ** (sampling / half_life)


def calculate_decayed_consumed(old: Mapping[str, float], new: Mapping[str, float], elapsed: float,
                               half_life: float) -> Resources:
    alpha = calculate_alpha_rate(elapsed, half_life)
    merged = {r: v * (1 - alpha) for r, v in old.items()}
    for r, v in new.items():
        merged[r] = merged.get(r, 0.0) + v * alpha
    return merged


def calculate_usage(consumed: Mapping[str, float], penalty: Mapping[str, float], lq_weight: float,
                    resource_weights: Mapping[str, float]) -> float:
    """CalculateUsage: weighted consumed plus pending penalty, over the LocalQueue's weight
    (a weight of 0 or less is an infinite usage: such a LocalQueue comes last)."""
    total = 0.0
    for resource in sorted({*consumed, *penalty}):
        total += resource_weights.get(resource, 1.0) * (consumed.get(resource, 0.0) + penalty.get(resource, 0.0))
    if lq_weight <= 0:
        return float("inf")
    return total / lq_weight


def as_quantities(usage: Mapping[tuple[str, str], int]) -> Resources:
    """A workload's usage per flavor-resource in Kueue's integers, as Kubernetes quantities per
    resource (flavors flattened, cpu in cores), as the ledger keeps them."""
    flat: Resources = {}
    for (_, resource), value in usage.items():
        flat[resource] = flat.get(resource, 0.0) + (value / 1000 if resource == CPU else float(value))
    return flat


@dataclass
class UsageLedgerEntry:
    resources: Resources = field(default_factory=dict)
    penalties: dict[str, Resources] = field(default_factory=dict)  # per workload, until settled
    last_update: float = 0.0

    def pending_penalty(self) -> Resources:
        total: Resources = {}
        for penalty in self.penalties.values():
            for r, v in penalty.items():
                total[r] = total.get(r, 0.0) + v
        return total


class AfsUsageLedger:
    """Per LocalQueue: the decayed consumed resources, the penalties awaiting settlement and the
    live usage of its admitted workloads, advanced in virtual time."""

    def __init__(self, config: AdmissionFairSharing, weights: Mapping[LocalQueueKey, float],
                 start: float = 0.0):
        self.config = config
        self.weights = dict(weights)
        self.start = start
        self.entries: dict[LocalQueueKey, UsageLedgerEntry] = {}
        self.live: dict[LocalQueueKey, Resources] = {}
        self.version = 0  # bumped whenever a usage may have changed: orderings read it

    def entry(self, lq: LocalQueueKey) -> UsageLedgerEntry:
        found = self.entries.get(lq)
        if found is None:
            found = self.entries[lq] = UsageLedgerEntry(last_update=self.start)
        return found

    def seed(self, lq: LocalQueueKey, resources: Mapping[str, float], now: float) -> None:
        """Consumed resources known at `now` (a LocalQueue's status, or a test's initial usage)."""
        self.entries[lq] = UsageLedgerEntry(dict(resources), last_update=now)
        self.version += 1

    def usage(self, lq: LocalQueueKey) -> float:
        entry = self.entries.get(lq)
        consumed, penalty = (entry.resources, entry.pending_penalty()) if entry is not None else ({}, {})
        return calculate_usage(consumed, penalty, self.weights.get(lq, 1.0), self.config.resource_weights)

    def advance(self, now: float, queues: Optional[Iterable[LocalQueueKey]] = None) -> None:
        """Take the samples the LocalQueue controller takes up to `now` (one every sampling interval
        after the last update), with the live usage of the time between: n samples of the same live
        usage at once, in closed form."""
        interval, half_life = self.config.usage_sampling_interval, self.config.usage_half_life_time
        for lq in list(self.entries) if queues is None else queues:
            entry = self.entry(lq)
            due = int((now - entry.last_update) // interval)
            if due <= 0:
                continue
            live = self.live.get(lq, {})
            if half_life == 0:
                entry.resources = {}
            else:
                # `due` samples of alpha(interval) each: the old part keeps (1 - alpha) ** due.
                keep = 0.5 ** (due * interval / half_life)
                merged = {r: v * keep for r, v in entry.resources.items()}
                for r, v in live.items():
                    merged[r] = merged.get(r, 0.0) + v * (1 - keep)
                entry.resources = merged
            entry.last_update += due * interval
            self.version += 1

    def reserved(self, lq: LocalQueueKey, workload: str, requests: Mapping[str, float], now: float) -> None:
        """A workload of the LocalQueue reserved quota: its entry penalty (replacing an earlier one of
        the same workload), and the LocalQueue reconciled at once (the scheduler notifies it)."""
        self.advance(now, (lq,))
        self._reconcile(lq, now)
        self.entry(lq).penalties[workload] = self.config.entry_penalty(requests)
        self.version += 1

    def admitted(self, lq: LocalQueueKey, workload: str, usage: Mapping[str, float], now: float) -> None:
        """The workload is admitted: its usage counts as live, and its penalty settles into the
        consumed resources (updateAfsConsumedUsage)."""
        self.advance(now, (lq,))
        live = self.live.setdefault(lq, {})
        for r, v in usage.items():
            live[r] = live.get(r, 0.0) + v
        entry = self.entry(lq)
        half_life = self.config.usage_half_life_time
        entry.resources = calculate_decayed_consumed(entry.resources, live, max(0.0, now - entry.last_update),
                                                     half_life)
        for r, v in entry.penalties.pop(workload, {}).items():
            entry.resources[r] = entry.resources.get(r, 0.0) + v
        entry.last_update = max(entry.last_update, now)
        self.version += 1

    def released(self, lq: LocalQueueKey, workload: str, usage: Optional[Mapping[str, float]], now: float,
                 finished: bool) -> None:
        """The workload gave its quota back (`usage`: what it counted as live, None when it was never
        admitted). A finished one's unsettled penalty is dropped; an evicted one keeps it, to be
        replaced when it reserves quota again."""
        self.advance(now, (lq,))
        if usage:
            live = self.live.setdefault(lq, {})
            for r, v in usage.items():
                live[r] = max(0.0, live.get(r, 0.0) - v)
        if finished:
            self.entry(lq).penalties.pop(workload, None)
        self.version += 1

    def _reconcile(self, lq: LocalQueueKey, now: float) -> None:
        """reconcileConsumedUsage: decay towards the live usage over the time since the last update."""
        entry = self.entry(lq)
        half_life = self.config.usage_half_life_time
        if half_life == 0:
            entry.resources = {}
        else:
            entry.resources = calculate_decayed_consumed(entry.resources, self.live.get(lq, {}),
                                                         max(0.0, now - entry.last_update), half_life)
        entry.last_update = max(entry.last_update, now)
