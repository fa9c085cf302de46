"""The admission core's state of each queue, built once from the typed views (`kueue/views.py`).

`ClusterQueueInfo` is Kueue's ClusterQueueSnapshot: the view's settings, flattened for the flavor
assigner and the preemptor, with what admission adds (its node of the quota tree, whether it is
active, each resource's group). `ResourceGroupInfo` is the cache's ResourceGroup: covered resources
as a set and flavor names, where the API's `views.ResourceGroup` carries each flavor's quotas.
ResourceFlavors and LocalQueues need nothing beyond their views, which the core uses as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from aks_kueue.admission.quota import QuotaNode
from aks_kueue.kueue.units import PODS
from aks_kueue.kueue.views import ClusterQueue, ResourceGroup


@dataclass(frozen=True)
class ResourceGroupInfo:
    covered: frozenset[str]
    flavors: tuple[str, ...]

    @classmethod
    def of(cls, group: ResourceGroup) -> "ResourceGroupInfo":
        return cls(frozenset(group.covered_resources), group.flavor_names)


@dataclass(eq=False)
class ClusterQueueInfo:
    name: str
    queue: ClusterQueue       # what it was built from, for what admission does not flatten (its checks, ...)
    node: QuotaNode
    groups: list[ResourceGroupInfo]
    group_of: dict[str, ResourceGroupInfo]
    namespace_selector: Optional[Mapping[str, Any]]
    within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    borrow_within_cohort: str = "Never"
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
    def of(cls, queue: ClusterQueue, node: QuotaNode, known_flavors: set[str]) -> "ClusterQueueInfo":
        """`node` is the queue's place in the quota tree, which Cohorts also build."""
        groups = [ResourceGroupInfo.of(group) for group in queue.resource_groups]
        preemption, fungibility = queue.preemption, queue.flavor_fungibility
        borrow = preemption.borrow_within_cohort
        return cls(
            name=queue.name, queue=queue, node=node, groups=groups,
            # A resource in two groups (which the webhook refuses) goes to the first, as RGByResource finds it.
            group_of={resource: group for group in reversed(groups) for resource in group.covered},
            namespace_selector=queue.namespace_selector,
            within_cluster_queue=preemption.within_cluster_queue,
            reclaim_within_cohort=preemption.reclaim_within_cohort,
            borrow_within_cohort=borrow.policy,
            max_priority_threshold=borrow.max_priority_threshold,
            when_can_borrow=fungibility.when_can_borrow,
            when_can_preempt=fungibility.when_can_preempt,
            preference=fungibility.preference,
            stopped=queue.stopped,
            missing_flavors=tuple(f for g in groups for f in g.flavors if f not in known_flavors),
            admission_mode=queue.admission_mode,
        )
