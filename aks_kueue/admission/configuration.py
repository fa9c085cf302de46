"""What of Kueue's Configuration the admission core reads to decide as the scheduler does: whether
fair sharing is on (`fairSharing`, with its preemption strategies) and admission fair sharing
(`admissionFairSharing`, with the AdmissionFairSharing gate), and where that Configuration came from.

Without a Configuration, Kueue's v0.19.2 defaults apply: neither is on, so entries are ordered and
preemption targets chosen by the classical algorithm.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Mapping, Optional

from aks_kueue.admission.admission_fair_sharing import AdmissionFairSharing
from aks_kueue.admission.fair_sharing import FairSharing, feature_gates

KUEUE_DEFAULTS = "Kueue v0.19.2's defaults (no Configuration given)"


class AdmissionMode(StrEnum):
    """Which algorithm orders entries and chooses preemption targets."""

    CLASSICAL = "Classical"
    FAIR_SHARING = "FairSharing"


@dataclass(frozen=True)
class SchedulerConfig:
    fair_sharing: Optional[FairSharing] = None
    admission_fair_sharing: Optional[AdmissionFairSharing] = None
    source: str = KUEUE_DEFAULTS
    # PrioritizePreemptorWorkloads (alpha, off by default): a head waiting for its preemptions to
    # complete is taken before every other entry, and always holds capacity when it cannot preempt.
    prioritize_preemptor_workloads: bool = False

    @classmethod
    def from_configuration(cls, configuration: Optional[Mapping[str, Any]], source: str) -> "SchedulerConfig":
        """From an effective (converted, defaulted) Configuration with `featureGates` holding every
        gate's value; `source` says where it came from, for reports."""
        if configuration is None:
            return cls(source=source)
        gates = feature_gates(configuration)
        return cls(FairSharing.from_configuration(configuration),
                   AdmissionFairSharing.from_configuration(configuration), source,
                   gates.get("PrioritizePreemptorWorkloads") is True)

    @property
    def mode(self) -> AdmissionMode:
        return AdmissionMode.CLASSICAL if self.fair_sharing is None else AdmissionMode.FAIR_SHARING

    def as_json(self) -> dict[str, Any]:
        """For reports: the mode, where it comes from, the strategies and admission fair sharing."""
        fair, afs = self.fair_sharing, self.admission_fair_sharing
        return {
            "mode": str(self.mode), "configuration": self.source,
            "preemptionStrategies": None if fair is None else [str(s) for s in fair.strategies],
            "admissionFairSharing": None if afs is None else {
                "usageHalfLifeTime": afs.usage_half_life_time, "usageSamplingInterval": afs.usage_sampling_interval,
                "resourceWeights": dict(afs.resource_weights)},
        }

    def describe(self) -> str:
        """One sentence for a report."""
        text = (f"entries ordered and preemption targets chosen by the {'fair sharing' if self.fair_sharing else 'classical'}"
                f" algorithm ({self.source})")
        if self.fair_sharing is not None:
            text += f", preemption strategies {', '.join(self.fair_sharing.strategies)}"
        afs = self.admission_fair_sharing
        if afs is not None:
            text += (f"; admission fair sharing on (usage half-life {afs.usage_half_life_time:g} s, sampled every "
                     f"{afs.usage_sampling_interval:g} s) for ClusterQueues with admissionScope "
                     "UsageBasedAdmissionFairSharing")
        return text


CLASSICAL = SchedulerConfig()
