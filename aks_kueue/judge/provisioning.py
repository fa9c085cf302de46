"""ProvisioningRequest admission checks: can they pass on AKS at all, and can the cluster
autoscaler ever provision what each expected workload asks of it?

A ClusterQueue with a ProvisioningRequest check (`kueue.x-k8s.io/provisioning-request`) reserves
quota, then Kueue asks the cluster autoscaler for the nodes through a ProvisioningRequest, and
admits only once it is provisioned (`kueue/admission_checks.py`). On AKS (`aks/autoscaler.py`):
- the check passes only with a class the cluster autoscaler provides, a ProvisioningRequestConfig
  that exists, Kubernetes 1.33 or later, and the cluster autoscaler rather than node
  auto-provisioning; otherwise every workload it applies to waits for ever
  (`provisioning-unavailable`);
- with `best-effort-atomic-scale-up`, the pods of a request that do not fit nodes that already
  exist must all fit ONE node pool grown to its maxCount, or nothing is provisioned. Nodes that
  always exist are the pools' minCount; a pod set whose pods the floors plus one grown pool cannot
  hold, or pod sets that need two different pools grown, are never provisioned
  (`podset-unprovisionable`). `check-capacity` grows nothing and is not judged here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from aks_kueue.aks.autoscaler import MIN_PROVISIONING_MINOR, SCALE_UP_CLASSES, class_problem
from aks_kueue.aks.nodes import PoolCapacity
from aks_kueue.aks.placement import FlavorPlacement
from aks_kueue.judge.objects import Valid, of_kind
from aks_kueue.judge.finding import Finding, amount, field_key, show
from aks_kueue.judge.rules import finding
from aks_kueue.judge.workloads import Decided, landing_pools, pods_per_node
from aks_kueue.kueue.admission_checks import PROVISIONING_CONTROLLER, requested_pod_sets
from aks_kueue.kueue.units import pod_units
from aks_kueue.kueue.views import AdmissionCheck, ClusterQueue, PodSet, ProvisioningRequestConfig
from aks_kueue.model.desired import KueueItem, Model

PROVISIONING_UNAVAILABLE = "provisioning-unavailable"
PODSET_UNPROVISIONABLE = "podset-unprovisionable"
WORKLOAD_KINDS = (PODSET_UNPROVISIONABLE,)


@dataclass(frozen=True)
class ProvisioningCheck:
    """A ProvisioningRequest AdmissionCheck and the config it names (None when that is missing)."""

    item: KueueItem
    check: AdmissionCheck
    config: Optional[Valid[ProvisioningRequestConfig]]

    @property
    def provisioning_class(self) -> Optional[str]:
        return self.config.view.provisioning_class if self.config is not None else None

    @property
    def managed_resources(self) -> tuple[str, ...]:
        return self.config.view.managed_resources if self.config is not None else ()

    @property
    def scales_up(self) -> bool:
        return self.provisioning_class in SCALE_UP_CLASSES


def provisioning_checks(valid: list[Valid[Any]]) -> dict[str, ProvisioningCheck]:
    """Every ProvisioningRequest AdmissionCheck by name, with its config."""
    configs = {c.view.name: c for c in of_kind(valid, ProvisioningRequestConfig)}
    found = {}
    for check in of_kind(valid, AdmissionCheck):
        if check.view.controller_name == PROVISIONING_CONTROLLER:
            name = check.view.names("ProvisioningRequestConfig")
            found[check.view.name] = ProvisioningCheck(check.item, check.view, configs.get(name) if name else None)
    return found


def scaled_up_flavors(queue: ClusterQueue, checks: Mapping[str, ProvisioningCheck]) -> set[str]:
    """The flavors of a ClusterQueue on which a ProvisioningRequest check that adds nodes applies."""
    return {flavor for name, flavors in queue.checks.items()
            if name in checks and checks[name].scales_up for flavor in flavors}


def provisioning_findings(model: Model, valid: list[Valid[Any]], placements: Mapping[str, FlavorPlacement],
                          decided: list[Decided]) -> list[Finding]:
    checks = provisioning_checks(valid)
    if not checks:
        return []
    queues = {cq.view.name: cq.view for cq in of_kind(valid, ClusterQueue)}
    used = {name for queue in queues.values() for name in queue.checks if name in checks}
    findings = [f for name in sorted(used) for f in _unavailable(model, checks[name])]
    usable = {name for name in used if not any(f.object == checks[name].item.label for f in findings)}
    for each in decided:
        queue = queues.get(each.cluster_queue) if each.cluster_queue is not None else None
        if queue is None or not any(name in usable for name in queue.checks) or not each.decision.fits:
            continue  # not gated by a usable check, or not admitted (workload-not-admitted reports it)
        assigned = {p.name: p for p in each.decision.pod_sets}
        flavors = {f for p in each.decision.pod_sets for f in p.flavors.values()}
        for name in queue.checks_for(flavors):
            if name in usable and checks[name].scales_up:
                findings += _unprovisionable(each, queue.name, checks[name], assigned, placements)
    return findings


def _unavailable(model: Model, check: ProvisioningCheck) -> list[Finding]:
    item, cluster = check.item, model.cluster
    found = []

    def add(key: str, message: str, fix: str, **numbers: Any) -> None:
        found.append(finding(PROVISIONING_UNAVAILABLE, object=item.label, key=key, message=message, fix=fix,
                             numbers={"admissionCheck": item.name, **numbers}))

    if cluster is not None and (cluster.sku == "Automatic" or cluster.node_provisioning == "Auto"):
        add(item.key, f"AdmissionCheck {item.name} asks the cluster autoscaler for nodes through ProvisioningRequests, "
            f"and the cluster uses node auto-provisioning (nodeProvisioning {cluster.node_provisioning}, sku "
            f"{cluster.sku}), which does not answer them",
            "remove the check, or use nodeProvisioning Manual with autoscaled node pools",
            nodeProvisioning=cluster.node_provisioning)
    minor = re.match(r"1\.(\d+)", cluster.kubernetes_version) if cluster is not None else None
    if cluster is not None and minor is not None and int(minor.group(1)) < MIN_PROVISIONING_MINOR:
        add(item.key, f"AdmissionCheck {item.name} needs Kubernetes 1.{MIN_PROVISIONING_MINOR} or later for AKS's "
            f"cluster autoscaler to answer its ProvisioningRequests, and the cluster runs {cluster.kubernetes_version}",
            f"upgrade the cluster to 1.{MIN_PROVISIONING_MINOR} or later",
            kubernetesVersion=cluster.kubernetes_version)
    name = check.check.names("ProvisioningRequestConfig")
    if check.config is None:
        add(field_key(item.key, "spec.parameters"),
            f"AdmissionCheck {item.name} names ProvisioningRequestConfig {name or '(none)'}, which is not defined",
            "define the ProvisioningRequestConfig, or fix spec.parameters (apiGroup kueue.x-k8s.io, kind "
            "ProvisioningRequestConfig, name)", provisioningRequestConfig=name)
    elif (problem := class_problem(check.provisioning_class)) is not None:
        config = check.config.item
        add(field_key(config.key, "spec.provisioningClassName"),
            f"ProvisioningRequestConfig {config.name}: {problem.message}", problem.fix,
            provisioningClassName=check.provisioning_class)
    return found


def floor_nodes(pool: PoolCapacity, nodes: int) -> int:
    """The nodes of a pool that always exist (minCount), in the share of it (`nodes` of maxCount) a
    flavor reaches."""
    return pool.spec.min_count * nodes // pool.spec.max_count if pool.spec.max_count else 0


def _unprovisionable(decided: Decided, cluster_queue: str, check: ProvisioningCheck, assigned: Mapping[str, Any],
                     placements: Mapping[str, FlavorPlacement]) -> list[Finding]:
    """Each pod set of the request: the floors of its pools plus one pool grown to maxCount must hold it;
    and the pod sets that need a pool grown must all need the same one."""
    workload = decided.item
    pod_sets = [p for p in requested_pod_sets(decided.workload.pod_sets, check.managed_resources) if p.name in assigned]
    index = {p.name: i for i, p in enumerate(decided.workload.pod_sets)}
    findings: list[Finding] = []
    growing: dict[str, set[str]] = {}
    for pod_set in pod_sets:
        decision = assigned[pod_set.name]
        landing = landing_pools(pod_set, decision.flavors, placements)
        if not isinstance(landing, list) or not landing:
            continue  # reported by the workload checks
        requests = pod_units(pod_set.pod_spec)
        packing = [(pool, nodes, pods_per_node(pool, requests)[0]) for pool, nodes in landing]
        if all(per_node == 0 for _, _, per_node in packing) or \
                sum(per_node * nodes for _, nodes, per_node in packing) < decision.count:
            continue  # pod-fits-no-node or podset-exceeds-pools reports it
        floors = {pool.name: per_node * floor_nodes(pool, nodes) for pool, nodes, per_node in packing}
        if sum(floors.values()) >= decision.count:
            continue  # the nodes that always exist hold it: nothing to grow
        reach = {pool.name: per_node * nodes + sum(v for k, v in floors.items() if k != pool.name)
                 for pool, nodes, per_node in packing}
        growing[pod_set.name] = {name for name, room in reach.items() if room >= decision.count}
        if growing[pod_set.name]:
            continue
        findings.append(_no_pool_grows_enough(workload, cluster_queue, check, pod_set, index, decision.count,
                                              requests, packing, reach))
    needing = {name: pools for name, pools in growing.items() if pools}
    if len(needing) > 1 and not set.intersection(*needing.values()):
        listed = "; ".join(f"podset {name}: pool {' or '.join(sorted(pools))}" for name, pools in needing.items())
        findings.append(finding(
            PODSET_UNPROVISIONABLE, object=workload.label, key=workload.key,
            message=f"{workload.label}'s ProvisioningRequest (AdmissionCheck {check.item.name} of ClusterQueue "
            f"{cluster_queue}, {check.provisioning_class}) needs more than one node pool grown ({listed})",
            fix="keep a minCount on one of those pools that holds its pod set, limit the check to the pod sets of one "
            "pool (a ProvisioningRequestConfig with managedResources, in queueManifests), or run the pod sets on one "
            "pool",
            numbers={"clusterQueue": cluster_queue, "admissionCheck": check.item.name,
                     "podSets": {name: sorted(pools) for name, pools in needing.items()}}))
    return findings


def _no_pool_grows_enough(workload, cluster_queue: str, check: ProvisioningCheck, pod_set: PodSet,
                          index: Mapping[Any, int], count: int, requests: Mapping[str, Any],
                          packing: list[tuple[Any, int, int]], reach: Mapping[str, int]) -> Finding:
    """A pod set that no one pool grown to maxCount holds (with the others at their floors)."""
    best = max(packing, key=lambda p: reach[p[0].name])
    detail = "; ".join(f"pool {pool.name}: {per_node} per node x maxCount {nodes}, minCount {pool.spec.min_count}"
                       for pool, nodes, per_node in packing)
    wanted = ", ".join(f"{r} {show(r, v)}" for r, v in requests.items() if v)
    return finding(
        PODSET_UNPROVISIONABLE, object=workload.label,
        key=field_key(workload.key, f"podSets[{index.get(pod_set.name, 0)}]"),
        message=f"{workload.label} podset {pod_set.name} needs {count} pods of {wanted} through AdmissionCheck "
        f"{check.item.name} of ClusterQueue {cluster_queue} ({check.provisioning_class}), and one pool grown holds at "
        f"best {reach[best[0].name]} (pool {best[0].name} grown to maxCount, the other pools at minCount: {detail})",
        fix=f"raise pool {best[0].name}'s maxCount so one pool holds {count} such pods, raise the other pools' "
        "minCount, or lower the podset's count",
        numbers={"clusterQueue": cluster_queue, "admissionCheck": check.item.name, "podSet": pod_set.name,
                 "count": count, "fit": reach[best[0].name],
                 "requests": {r: amount(r, v) for r, v in requests.items()}})
