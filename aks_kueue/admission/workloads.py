"""What a Workload asks for, in Kueue's units (`pkg/workload`, v0.19.2).

Per pod, requests follow Kubernetes' PodRequests: the containers' sum, each sidecar
(an init container with `restartPolicy: Always`) added to it, the largest plain init
container step as a floor, pod-level requests replacing the sum for cpu and memory,
then the pod overhead. As Kueue's AdjustResources does, a container limit stands in
for a missing request. LimitRange defaults and RuntimeClass overheads need the
cluster, so they are not applied. Then the Configuration's `excludeResourcePrefixes`
and `transformations` (`aks_kueue.kueue.transformations`, as `totalRequestsFromPodSets`
applies them). A podset's usage is the per-pod amount (rounded up per pod, as Kueue
converts it) times its count, less its reclaimable pods. This is the one place a
pending Workload's usage is computed: simulate, the pack, sample-job and replay all
come through `workload_info` (or `Snapshot.workload_info`, which passes the snapshot's rules).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

from aks_kueue.kueue.transformations import NO_RULES, ResourceRules
from aks_kueue.kueue.units import CPU, amount, to_units
from aks_kueue.k8s.pods import pod_requests

FlavorResource = tuple[str, str]


@dataclass(eq=False, slots=True)
class PodSetInfo:
    name: str
    count: int
    min_count: Optional[int]
    per_pod: dict[str, int]
    spec: dict
    # Pods with equal tolerations, selectors and affinity match the same flavors.
    placement: str = ""
    # Podsets sharing a topologyRequest.podSetGroupName are given flavors together.
    group: Optional[str] = None

    def total(self, count: Optional[int] = None) -> dict[str, int]:
        n = self.count if count is None else count
        return {resource: value * n for resource, value in self.per_pod.items()}


@dataclass(eq=False, slots=True)
class Admission:
    cluster_queue: str
    usage: dict[FlavorResource, int]
    flavors: list[dict[str, str]]  # per podset: resource -> flavor


@dataclass(eq=False, slots=True)
class WorkloadInfo:
    namespace: str
    name: str
    queue_name: str
    priority: int
    podsets: list[PodSetInfo]
    # Queue-order timestamp and quota-reservation time, as sortable numbers.
    created: float = 0.0
    reserved: float = 0.0
    uid: str = ""
    admission: Optional[Admission] = None
    evicted: bool = False
    manifest: dict = field(default_factory=dict, repr=False)
    _shape: Optional[tuple] = field(default=None, repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def shape(self) -> tuple:
        """Everything about the workload that flavor assignment reads, besides priority and age."""
        if self._shape is None:
            self._shape = tuple((ps.name, ps.count, ps.min_count, ps.placement, ps.group,
                                 tuple(sorted(ps.per_pod.items()))) for ps in self.podsets)
        return self._shape

    def can_be_partially_admitted(self) -> bool:
        return any(ps.min_count is not None and ps.min_count < ps.count for ps in self.podsets)

    def uses(self, frs: set[FlavorResource]) -> bool:
        return self.admission is not None and any(fr in frs for fr in self.admission.usage)

    @property
    def held(self) -> Admission:
        """The admission of a workload that holds quota (one the caller knows is admitted)."""
        admission = self.admission
        if admission is None:
            raise ValueError(f"workload {self.key} holds no quota")
        return admission


def placement_key(pod_spec: dict) -> str:
    affinity = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not pod_spec.get("tolerations") and not pod_spec.get("nodeSelector") and not required:
        return ""
    return json.dumps([pod_spec.get("tolerations"), pod_spec.get("nodeSelector"), required],
                      sort_keys=True, separators=(",", ":"))


def podset_info(podset: dict, reclaimable: int = 0, rules: ResourceRules = NO_RULES) -> PodSetInfo:
    spec = ((podset.get("template") or {}).get("spec")) or {}
    count = int(podset.get("count", 1))
    min_count = podset.get("minCount")
    requests = pod_requests(spec)
    if rules:
        requests = rules.apply(requests)
    return PodSetInfo(name=podset.get("name", "main"), count=max(0, count - reclaimable),
                      min_count=None if min_count is None else int(min_count),
                      per_pod=to_units(requests), spec=spec, placement=placement_key(spec),
                      group=(podset.get("topologyRequest") or {}).get("podSetGroupName"))


def workload_info(manifest: dict, priority_classes: dict[str, int] | None = None,
                  order: float = 0.0, rules: ResourceRules = NO_RULES) -> WorkloadInfo:
    """A Workload manifest (v1beta2) as the admission core sees it.

    `order` stands in for the creation timestamp when the manifest has none, so
    earlier documents count as older. `rules` are the Configuration's resource
    exclusions and transformations; an admitted Workload's usage is its
    `status.admission`, which Kueue computed with them already.
    """
    metadata = manifest.get("metadata") or {}
    spec = manifest.get("spec") or {}
    status = manifest.get("status") or {}
    reclaimable = {r.get("name"): int(r.get("count", 0)) for r in status.get("reclaimablePods") or []}
    podsets = [podset_info(ps, reclaimable.get(ps.get("name", "main"), 0) if reclaimable else 0, rules)
               for ps in spec.get("podSets") or []]
    info = WorkloadInfo(
        namespace=metadata.get("namespace", "default"), name=metadata.get("name", ""),
        queue_name=spec.get("queueName", ""), priority=workload_priority(spec, priority_classes or {}),
        podsets=podsets, created=_timestamp(metadata.get("creationTimestamp"), order),
        uid=metadata.get("uid") or f"{metadata.get('namespace', 'default')}/{metadata.get('name', '')}",
        manifest=manifest)
    admission = status.get("admission")
    if admission:
        info.admission = admission_usage(admission)
        info.reserved = _condition_time(status, "QuotaReserved", order)
        info.evicted = _condition_true(status, "Evicted")
    return info


def workload_priority(spec: dict, priority_classes: dict[str, int]) -> int:
    if spec.get("priority") is not None:
        return int(spec["priority"])
    ref = spec.get("priorityClassRef") or {}
    if ref.get("kind") == "WorkloadPriorityClass":
        return priority_classes.get(ref.get("name", ""), 0)
    return 0


def admission_usage(admission: dict) -> Admission:
    usage: dict[FlavorResource, int] = {}
    flavors = []
    for assignment in admission.get("podSetAssignments") or []:
        assigned = dict(assignment.get("flavors") or {})
        flavors.append(assigned)
        for resource, quantity in (assignment.get("resourceUsage") or {}).items():
            flavor = assigned.get(resource)
            if flavor is None:
                continue
            fr = (flavor, resource)
            usage[fr] = usage.get(fr, 0) + amount(resource, quantity)
    return Admission(cluster_queue=admission.get("clusterQueue", ""), usage=usage, flavors=flavors)


def _timestamp(value: Any, fallback: float) -> float:
    if isinstance(value, str) and value:
        from datetime import datetime
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return fallback
    return fallback


def _condition_time(status: dict, kind: str, fallback: float) -> float:
    for condition in status.get("conditions") or []:
        if condition.get("type") == kind and condition.get("status") == "True":
            return _timestamp(condition.get("lastTransitionTime"), fallback)
    return fallback


def _condition_true(status: dict, kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or [])


__all__ = ["PodSetInfo", "WorkloadInfo", "Admission", "workload_info", "podset_info", "CPU"]
