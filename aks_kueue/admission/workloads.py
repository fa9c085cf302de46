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
from datetime import datetime
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from aks_kueue.kueue.transformations import NO_RULES, ResourceRules
from aks_kueue.kueue.units import CPU, amount, to_units
from aks_kueue.kueue.views import PodSet, Workload
from aks_kueue.k8s.pods import pod_requests

FlavorResource = tuple[str, str]


@dataclass(eq=False, slots=True)
class PodSetInfo:
    name: str
    count: int
    min_count: Optional[int]
    per_pod: dict[str, int]
    spec: Mapping[str, Any]
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
    manifest: Mapping[str, Any] = field(default_factory=dict, repr=False)
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


def placement_key(pod_spec: Mapping[str, Any]) -> str:
    affinity = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if not pod_spec.get("tolerations") and not pod_spec.get("nodeSelector") and not required:
        return ""
    return json.dumps([pod_spec.get("tolerations"), pod_spec.get("nodeSelector"), required],
                      sort_keys=True, separators=(",", ":"))


def podset_info(pod_set: PodSet, reclaimable: int = 0, rules: ResourceRules = NO_RULES) -> PodSetInfo:
    spec = pod_set.pod_spec
    requests = pod_requests(spec)
    if rules:
        requests = rules.apply(requests)
    return PodSetInfo(name=pod_set.name, count=max(0, pod_set.count - reclaimable), min_count=pod_set.min_count,
                      per_pod=to_units(requests), spec=spec, placement=placement_key(spec),
                      group=pod_set.topology_request.get("podSetGroupName"))


def workload_info(manifest: Mapping[str, Any], priority_classes: Mapping[str, int] | None = None,
                  order: float = 0.0, rules: ResourceRules = NO_RULES) -> WorkloadInfo:
    """A Workload manifest (v1beta2, validated and defaulted) as the admission core sees it.

    `order` stands in for the creation timestamp when the manifest has none, so
    earlier documents count as older. `rules` are the Configuration's resource
    exclusions and transformations; an admitted Workload's usage is its
    `status.admission`, which Kueue computed with them already.
    """
    workload = Workload.of(manifest)
    metadata = manifest["metadata"]
    status = _status(manifest)
    reclaimable = {r.get("name"): int(r.get("count", 0)) for r in status.get("reclaimablePods") or []}
    info = WorkloadInfo(
        namespace=workload.namespace, name=workload.name, queue_name=workload.queue_name or "",
        priority=workload_priority(workload, priority_classes or {}),
        podsets=[podset_info(ps, reclaimable.get(ps.name, 0), rules) for ps in workload.pod_sets],
        created=_timestamp(metadata.get("creationTimestamp"), order),
        uid=metadata.get("uid") or f"{workload.namespace}/{workload.name}", manifest=manifest)
    admission = status.get("admission")
    if admission:
        info.admission = admission_usage(admission)
        info.reserved = _condition_time(status, "QuotaReserved", order)
        info.evicted = _condition_true(status, "Evicted")
    return info


def holds_quota(manifest: Mapping[str, Any]) -> bool:
    """Whether the Workload's status records an admission (quota reserved)."""
    return bool(_status(manifest).get("admission"))


def _status(manifest: Mapping[str, Any]) -> Mapping[str, Any]:
    # Not the schema's to check: simulate checks it (`validate_workload_status`), Kueue writes it.
    return manifest.get("status") or {}


def workload_priority(workload: Workload, priority_classes: Mapping[str, int]) -> int:
    """Kueue's priority: spec.priority when set, else its WorkloadPriorityClass's value (0 for none)."""
    if workload.priority is not None:
        return workload.priority
    return 0 if workload.priority_class is None else priority_classes.get(workload.priority_class, 0)


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
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return fallback
    return fallback


def _condition_time(status: Mapping[str, Any], kind: str, fallback: float) -> float:
    for condition in status.get("conditions") or []:
        if condition.get("type") == kind and condition.get("status") == "True":
            return _timestamp(condition.get("lastTransitionTime"), fallback)
    return fallback


def _condition_true(status: Mapping[str, Any], kind: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == "True" for c in status.get("conditions") or [])


__all__ = ["PodSetInfo", "WorkloadInfo", "Admission", "workload_info", "podset_info", "CPU"]
