"""Topology Aware Scheduling on AKS: can Kueue ever place what the TAS flavors are given?

Kueue's TAS places pods only on nodes that exist, are schedulable and Ready (`kueue/tas.py`). It
never creates a pod before it has placed it, so a pool that scales from zero never grows for TAS
work: the cluster autoscaler only reacts to pending pods. Two things make TAS work on
autoscaled AKS pools:
- a ProvisioningRequest check (a class that adds nodes) on the flavor: Kueue reserves quota,
  the autoscaler adds the nodes, and only then does TAS place the pods;
- a `minCount` floor: the nodes that always exist, which is all TAS can count on.
Which applies is said per ClusterQueue and TAS flavor (`topology-needs-nodes`):
- no check and no floor (every pool of the flavor at minCount 0): an error, since nothing is
  ever admitted on the flavor;
- a floor only: an expected workload larger than the floor is an error (it waits until
  something else happens to keep more nodes up), and quota above the floor is a warning.
A pod set whose topology request Kueue would refuse on the flavors it was given
(`topology-request-mismatch`), and a pod set required on one node (`required` or a slice at
`kubernetes.io/hostname`) that one node cannot hold (`podset-exceeds-host`), are errors too.
The zone level is not judged: how Azure spreads a zonal pool's nodes over zones is best effort.
"""

from __future__ import annotations

from math import ceil
from typing import Any, Mapping, Sequence

from aks_kueue.aks.nodes import PoolCapacity, is_modelled
from aks_kueue.aks.placement import FlavorPlacement
from aks_kueue.aks.topology import HOSTNAME
from aks_kueue.judge.capacity import quota_entries
from aks_kueue.judge.finding import ERROR, WARNING, Finding, amount, field_key, show
from aks_kueue.judge.objects import Valid, of_kind
from aks_kueue.judge.rules import finding
from aks_kueue.judge.provisioning import floor_nodes, provisioning_checks, scaled_up_flavors
from aks_kueue.judge.workloads import Decided, landing_pools, pods_per_node
from aks_kueue.kueue.tas import ClusterQueueTopology, explicitly_requests, slice_constraints
from aks_kueue.kueue.units import pod_units
from aks_kueue.kueue.views import ClusterQueue, PodSet, ResourceFlavor, Topology
from aks_kueue.model.desired import KueueItem, Model

TOPOLOGY_NEEDS_NODES = "topology-needs-nodes"
PODSET_EXCEEDS_HOST = "podset-exceeds-host"
TOPOLOGY_REQUEST_MISMATCH = "topology-request-mismatch"
WORKLOAD_KINDS = (PODSET_EXCEEDS_HOST, TOPOLOGY_REQUEST_MISMATCH)


def topology_findings(model: Model, valid: list[Valid[Any]], placements: Mapping[str, FlavorPlacement],
                      decided: list[Decided]) -> list[Finding]:
    levels = {t.view.name: t.view.levels for t in of_kind(valid, Topology)}
    flavor_topology = {f.view.name: f.view.topology_name for f in of_kind(valid, ResourceFlavor)}
    explicit = {id(each) for each in decided
                if any(explicitly_requests(p.topology_request) for p in each.workload.pod_sets)}
    if not any(flavor_topology.values()) and not explicit:
        return []
    checks = provisioning_checks(valid)
    queues = {cq.view.name: cq for cq in of_kind(valid, ClusterQueue)}
    findings: list[Finding] = []
    floors: dict[tuple[str, str], int] = {}  # (ClusterQueue, TAS flavor) without a check that adds nodes -> floor
    for name, queue in queues.items():
        tas = ClusterQueueTopology.of(queue.view, flavor_topology)
        grown = scaled_up_flavors(queue.view, checks)
        for flavor in tas.tas_flavors:
            placement = placements.get(flavor)
            if flavor in grown or placement is None or not placement.pools:
                continue  # provisioned, or placed nowhere (flavor-lands-nowhere reports it)
            floor = sum(floor_nodes(pool, nodes) for pool, nodes in placement.pools)
            floors[(name, flavor)] = floor
            findings += _floor(queue, flavor, placement, floor)
    for each in decided:
        target = queues.get(each.cluster_queue) if each.cluster_queue is not None else None
        if target is None or not each.decision.fits:
            continue
        tas = ClusterQueueTopology.of(target.view, flavor_topology)
        if tas.tas_flavors or id(each) in explicit:
            findings += _workload(each, target.view.name, tas, levels, placements, floors)
    return findings


def _cq_key(item: KueueItem) -> str:
    """Where a check that adds nodes goes: `provisioning` of a stack ClusterQueue, or its admissionChecksStrategy."""
    stack = item.key.startswith("aks-kueue:queues.") and ": " not in item.key
    return field_key(item.key, "provisioning" if stack else "spec.admissionChecksStrategy")


def _floor(queue: Valid[ClusterQueue], flavor: str, placement: FlavorPlacement, floor: int) -> list[Finding]:
    item = queue.item
    pools = {pool.name: pool.spec.min_count for pool, _ in placement.pools}
    listed = ", ".join(f"{name} minCount {count}" for name, count in pools.items())
    fix = (f"give ClusterQueue {item.name} a ProvisioningRequest check on {flavor} (provisioning: {{class: "
           f"best-effort-atomic-scale-up.autoscaling.x-k8s.io, onFlavors: [{flavor}]}}), so the nodes are added before "
           "TAS places the pods")
    if floor == 0:
        return [finding(
            TOPOLOGY_NEEDS_NODES, severity=ERROR, object=item.label, key=_cq_key(item),
            message=f"{item.label} gives TAS flavor {flavor} quota, and its pools scale from zero ({listed}) with no "
            "ProvisioningRequest check to add nodes first",
            fix=f"{fix}, or set a minCount on the pool that holds the work",
            numbers={"clusterQueue": item.name, "flavor": flavor, "minCount": pools, "floorNodes": 0})]
    held = {r: sum(pool.node.amounts.get(r, 0) * floor_nodes(pool, nodes) for pool, nodes in placement.pools)
            for r in {r for pool, _ in placement.pools for r in pool.node.amounts}}
    over = [(e.resource, e.nominal) for e in quota_entries([queue]) if e.flavor == flavor
            and is_modelled(e.resource) and e.resource in held and e.nominal > held[e.resource]]
    if not over:
        return []
    text = ", ".join(f"{r} {show(r, q)} (the floor holds {show(r, held[r])})" for r, q in over)
    return [finding(
        TOPOLOGY_NEEDS_NODES, severity=WARNING, object=item.label, key=_cq_key(item),
        message=f"{item.label}'s quota on TAS flavor {flavor} is above what the {floor} nodes that always exist "
        f"({listed}) hold: {text}",
        fix=f"{fix}, or raise the pools' minCount, or lower the quota to the floor",
        numbers={"clusterQueue": item.name, "flavor": flavor, "floorNodes": floor,
                 "quota": {r: amount(r, q) for r, q in over}, "floor": {r: amount(r, held[r]) for r, _ in over}})]


def _workload(decided: Decided, cluster_queue: str, tas: ClusterQueueTopology, levels: Mapping[str, Sequence[str]],
              placements: Mapping[str, FlavorPlacement], floors: Mapping[tuple[str, str], int]) -> list[Finding]:
    workload = decided.item
    pod_sets = decided.workload.pod_sets
    assigned = {p.name: p for p in decided.decision.pod_sets}
    findings: list[Finding] = []
    reported_groups: set[str] = set()
    for index, pod_set in enumerate(pod_sets):
        assignment = assigned.get(pod_set.name)
        if assignment is None or assignment.count == 0:
            continue
        key = field_key(workload.key, f"podSets[{index}]")
        requests = pod_units(pod_set.pod_spec)
        request = pod_set.topology_request
        reasons = [r for f in dict.fromkeys(assignment.flavors.values())
                   if (r := tas.mismatch(request, f, levels, requests)) is not None]
        if reasons:
            findings.append(finding(
                TOPOLOGY_REQUEST_MISMATCH, object=workload.label, key=key,
                message=f"{workload.label} podset {pod_set.name} is proven admissible by ClusterQueue "
                f"{cluster_queue} on flavors {', '.join(dict.fromkeys(assignment.flavors.values()))}, but Topology "
                f"Aware Scheduling refuses that ({'; '.join(reasons)})",
                fix="give the podset a topologyRequest whose levels the flavor's Topology has (e.g. unconstrained: "
                "true) and make its flavor a TAS flavor, or, for a podset without one, give the ClusterQueue only TAS "
                "flavors (TAS is then implied) or none",
                numbers={"clusterQueue": cluster_queue, "podSet": pod_set.name, "reasons": reasons}))
            continue
        flavor = next((f for f in assignment.flavors.values() if f in tas.tas_flavors), None)
        if flavor is None:
            continue
        landing = landing_pools(pod_set, assignment.flavors, placements)
        if not isinstance(landing, list) or not landing:
            continue  # the workload checks report it
        group = request.get("podSetGroupName")
        if request.get("required") == HOSTNAME and group:
            if group not in reported_groups:
                reported_groups.add(group)
                members = [(p, assigned[p.name].count) for p in pod_sets
                           if p.topology_request.get("podSetGroupName") == group
                           and p.topology_request.get("required") == HOSTNAME and p.name in assigned]
                findings += _host(workload, key, cluster_queue, members, landing, f"pod set group {group}")
        elif request.get("required") == HOSTNAME:
            findings += _host(workload, key, cluster_queue, [(pod_set, assignment.count)], landing,
                              f"podset {pod_set.name}")
        for level, size in slice_constraints(request):
            if level == HOSTNAME and size > 0:
                findings += _host(workload, key, cluster_queue, [(pod_set, size)], landing,
                                  f"each slice of {size} pods of podset {pod_set.name}")
        floor = floors.get((cluster_queue, flavor))
        if floor:
            findings += _above_floor(workload, key, cluster_queue, flavor, pod_set, assignment.count, requests,
                                     landing)
    return findings


def _host(workload, key: str, cluster_queue: str, members: list[tuple[PodSet, int]],
          landing: list[tuple[PoolCapacity, int]], what: str) -> list[Finding]:
    """Everything `members` (pod sets and their pod counts) asks for must fit one node of a pool they share."""
    total: dict[str, int] = {}
    for pod_set, count in members:
        for resource, value in pod_units(pod_set.pod_spec).items():
            total[resource] = total.get(resource, 0) + value * count
    total["pods"] = total.get("pods", 0) + sum(count for _, count in members)
    modelled = {r: v for r, v in total.items() if is_modelled(r) and v > 0}

    def short(pool: PoolCapacity) -> list[str]:
        return [r for r, v in modelled.items() if pool.node.amounts.get(r, 0) < v]

    if any(not short(pool) for pool, _ in landing):
        return []
    detail = "; ".join(f"a node of pool {pool.name} allocates " + ", ".join(
        f"{r} {show(r, pool.node.amounts.get(r, 0))}" for r in short(pool)) for pool, _ in landing)
    wanted = ", ".join(f"{r} {show(r, v)}" for r, v in modelled.items())
    return [finding(
        PODSET_EXCEEDS_HOST, object=workload.label, key=key,
        message=f"{workload.label}: {what} must run on one node (topology level {HOSTNAME}), and together asks for "
        f"{wanted}, more than one node holds ({detail})",
        fix=f"lower the pod count or the requests so they fit one node, use a larger VM size, or require a broader "
        f"level than {HOSTNAME} (or a slice per node)",
        numbers={"clusterQueue": cluster_queue, "needs": {r: amount(r, v) for r, v in modelled.items()},
                 "node": {pool.name: {r: amount(r, pool.node.amounts.get(r, 0)) for r in modelled}
                          for pool, _ in landing}})]


def _above_floor(workload, key: str, cluster_queue: str, flavor: str, pod_set: PodSet, count: int,
                 requests: Mapping[str, int], landing: list[tuple[PoolCapacity, int]]) -> list[Finding]:
    packing = [(pool, nodes, pods_per_node(pool, requests)[0]) for pool, nodes in landing]
    room = sum(per_node * floor_nodes(pool, nodes) for pool, nodes, per_node in packing)
    if room >= count or all(per_node == 0 for *_, per_node in packing):
        return []
    pool, nodes, per_node = max(packing, key=lambda p: p[2])
    needed = ceil(count / per_node)
    detail = "; ".join(f"pool {p.name}: {k} per node x minCount {p.spec.min_count}" for p, _, k in packing)
    return [finding(
        TOPOLOGY_NEEDS_NODES, severity=ERROR, object=workload.label, key=key,
        message=f"{workload.label} podset {pod_set.name} needs {count} pods on TAS flavor {flavor} of "
        f"ClusterQueue {cluster_queue}, and without a ProvisioningRequest check the nodes that always exist hold {room} "
        f"({detail})",
        fix=f"give ClusterQueue {cluster_queue} a ProvisioningRequest check on {flavor}, or raise pool {pool.name}'s "
        f"minCount to {needed}",
        numbers={"clusterQueue": cluster_queue, "flavor": flavor, "podSet": pod_set.name, "count": count,
                 "fit": room, "minCountNeeded": needed})]
