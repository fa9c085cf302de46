"""Typed views of the Kueue objects the admission core reads (v1beta2 shapes).

Manifests are converted from v1beta1 and defaulted by `aks_kueue.kueue` first; these
classes keep just the fields admission depends on, in Kueue's units and defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from aks_kueue.admission.quota import QuotaNode, fair_weight
from aks_kueue.kueue.units import PODS


@dataclass(frozen=True)
class ResourceFlavorInfo:
    name: str
    node_labels: dict[str, str] = field(default_factory=dict)
    node_taints: tuple[dict, ...] = ()
    tolerations: tuple[dict, ...] = ()

    @classmethod
    def from_manifest(cls, manifest: dict) -> "ResourceFlavorInfo":
        spec = manifest.get("spec") or {}
        return cls((manifest.get("metadata") or {}).get("name", ""), dict(spec.get("nodeLabels") or {}),
                   tuple(spec.get("nodeTaints") or ()), tuple(spec.get("tolerations") or ()))


@dataclass(frozen=True)
class LocalQueueInfo:
    namespace: str
    name: str
    cluster_queue: str
    stopped: bool = False
    # `spec.fairSharing.weight`, which admission fair sharing divides the queue's usage by.
    fair_weight: float = 1.0

    @classmethod
    def from_manifest(cls, manifest: dict) -> "LocalQueueInfo":
        meta, spec = manifest.get("metadata") or {}, manifest.get("spec") or {}
        return cls(meta.get("namespace", "default"), meta.get("name", ""), spec.get("clusterQueue", ""),
                   spec.get("stopPolicy", "None") not in ("None", None), fair_weight(spec.get("fairSharing")))


@dataclass(frozen=True)
class ResourceGroup:
    covered: frozenset[str]
    flavors: tuple[str, ...]


@dataclass(eq=False)
class ClusterQueueInfo:
    name: str
    node: QuotaNode
    groups: list[ResourceGroup]
    group_of: dict[str, ResourceGroup]
    namespace_selector: Optional[dict]
    within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    borrow_within_cohort: Optional[str] = None
    max_priority_threshold: Optional[int] = None
    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: Optional[str] = None
    stopped: bool = False
    missing_flavors: tuple[str, ...] = ()
    in_cohort_cycle: bool = False
    # `admissionScope.admissionMode`: UsageBasedAdmissionFairSharing orders its LocalQueues by usage.
    admission_mode: Optional[str] = None

    @property
    def covers_pods(self) -> bool:
        return PODS in self.group_of

    @property
    def compares_age(self) -> bool:
        """Only this policy looks at the preemptor's creation time."""
        return "LowerOrNewerEqualPriority" in (self.within_cluster_queue, self.reclaim_within_cohort)

    @classmethod
    def from_spec(cls, name: str, spec: dict, node: QuotaNode, known_flavors: set[str]) -> "ClusterQueueInfo":
        """`node` is the queue's place in the quota tree, which Cohorts also build."""
        groups = [ResourceGroup(frozenset(g.get("coveredResources") or []),
                                tuple(f["name"] for f in g.get("flavors") or []))
                  for g in spec.get("resourceGroups") or []]
        preemption = spec.get("preemption") or {}
        borrow = preemption.get("borrowWithinCohort") or {}
        fungibility = spec.get("flavorFungibility") or {}
        return cls(
            name=name, node=node, groups=groups,
            # A resource in two groups (which the webhook refuses) goes to the first, as RGByResource finds it.
            group_of={resource: group for group in reversed(groups) for resource in group.covered},
            namespace_selector=spec.get("namespaceSelector"),
            within_cluster_queue=preemption.get("withinClusterQueue") or "Never",
            reclaim_within_cohort=preemption.get("reclaimWithinCohort") or "Never",
            borrow_within_cohort=borrow.get("policy"),
            max_priority_threshold=borrow.get("maxPriorityThreshold"),
            # v1beta1's Borrow and Preempt both meant "stop here".
            when_can_borrow=_stop_or_try(fungibility.get("whenCanBorrow"), "MayStopSearch"),
            when_can_preempt=_stop_or_try(fungibility.get("whenCanPreempt"), "TryNextFlavor"),
            preference=fungibility.get("preference"),
            stopped=spec.get("stopPolicy", "None") not in ("None", None),
            missing_flavors=tuple(f for g in groups for f in g.flavors if f not in known_flavors),
            admission_mode=(spec.get("admissionScope") or {}).get("admissionMode"),
        )


def _stop_or_try(value: Optional[str], default: str) -> str:
    return "MayStopSearch" if value in ("Borrow", "Preempt") else value or default
