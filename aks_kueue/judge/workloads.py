"""Can each expected workload be admitted, and then scheduled on the nodes it is sent to?

Admission is the admission core's verdict (alone on an empty cluster, borrowing as the
cohort allows). Scheduling is ours: Kueue gives every pod of a podset the nodeLabels of
the flavors it assigned, so each pod must fit one node of a pool those labels select,
and the podset at its count must fit the pools at maxCount. Identical pods on identical
nodes pack exactly floor(node / pod) per node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from aks_kueue.aks.nodes import PoolCapacity, is_modelled
from aks_kueue.aks.placement import FlavorPlacement
from aks_kueue.judge.capacity import advertise_first
from aks_kueue.judge.finding import Finding, amount, field_key, show
from aks_kueue.judge.rules import finding
from aks_kueue.k8s.scheduling import SCHEDULING_EFFECTS, tolerates, untolerated_taint
from aks_kueue.kueue.units import pod_units
from aks_kueue.kueue.views import PodSet, Workload
from aks_kueue.model.desired import ExpectedWorkload

WORKLOAD_NOT_ADMITTED = "workload-not-admitted"
POD_FITS_NO_NODE = "pod-fits-no-node"
PODSET_EXCEEDS_POOLS = "podset-exceeds-pools"
PODSET_CONFLICTING_FLAVORS = "podset-conflicting-flavors"
KINDS = (WORKLOAD_NOT_ADMITTED, POD_FITS_NO_NODE, PODSET_EXCEEDS_POOLS, PODSET_CONFLICTING_FLAVORS)


def pods_per_node(pool: PoolCapacity, requests: Mapping[str, int]) -> tuple[int, str]:
    """How many such pods one node holds, and the resource that limits it."""
    fits, limit = pool.node.amounts.get("pods", 0), "pods"
    for resource, wanted in requests.items():
        if wanted <= 0 or not is_modelled(resource):
            continue
        here = pool.node.amounts.get(resource, 0) // wanted
        if here < fits:
            fits, limit = here, resource
    return fits, limit


@dataclass(frozen=True)
class Decided:
    """An expected workload, its Workload as Kueue creates it (the manifest the admission core reads, and its
    view), the ClusterQueue its LocalQueue reaches (None where none does) and the admission core's decision for it
    alone on an empty cluster (None without a ClusterQueue)."""

    item: ExpectedWorkload
    manifest: Mapping[str, Any]
    workload: Workload
    cluster_queue: Optional[str]
    decision: Any


def decide(accepted: Sequence[tuple[ExpectedWorkload, Mapping[str, Any]]], snapshot) -> list[Decided]:
    found = []
    for item, manifest in accepted:
        workload = Workload.of(manifest)
        cluster_queue = snapshot.cluster_queue_for(workload.namespace, workload.queue_name)
        found.append(Decided(item, manifest, workload, cluster_queue,
                             None if cluster_queue is None else snapshot.can_ever_admit(cluster_queue, manifest)))
    return found


def workload_findings(decided: list[Decided], snapshot, placements: Mapping[str, FlavorPlacement]) -> list[Finding]:
    """For each workload: admitted alone on an empty cluster, and its pods scheduled on the pools its
    flavors select."""
    return [f for each in decided for f in _check(each, snapshot, placements)]


def _check(decided: Decided, snapshot, placements) -> list[Finding]:
    label, key, workload = decided.item.label, decided.item.key, decided.workload
    cluster_queue, decision = decided.cluster_queue, decided.decision
    if cluster_queue is None:
        queue = f"{workload.namespace}/{workload.queue_name}"
        return [finding(WORKLOAD_NOT_ADMITTED, object=label, key=field_key(key, "queue"),
                        message=f"{label} names LocalQueue {queue}, which reaches no ClusterQueue",
                        fix="point it at a LocalQueue whose ClusterQueue exists", numbers={"queue": queue})]
    if not decision.fits:
        message = (f"{label} can never be admitted by ClusterQueue {cluster_queue}, even alone on an empty cluster "
                   f"with borrowing: {decision.mode}: {decision.message}")
        numbers = {"clusterQueue": cluster_queue, "mode": str(decision.mode)}
        missing = missing_tolerations(decided.manifest, workload, snapshot, cluster_queue)
        if missing:
            index = missing[0][0]
            where = field_key(key, f"podSets[{index}].tolerations") if key.startswith("aks-kueue:expectedWorkloads") \
                else key
            adds = "; ".join(
                f"the toleration of flavor {flavor}'s taint{'s' if len(taints) != 1 else ''} "
                f"{', '.join(taint_name(t) for t in taints)} to podset {pod_set}: tolerations: "
                f"[{', '.join(toleration_text(t) for t in taints)}]" for _, pod_set, flavor, taints in missing)
            return [finding(WORKLOAD_NOT_ADMITTED, object=label, key=where, message=message,
                            fix=f"add {adds} (or give the flavor that toleration in spec.tolerations, which Kueue adds "
                            "to the pods it admits)",
                            numbers={**numbers, "tolerations": {
                                p: {"flavor": f, "tolerations": [toleration(t) for t in ts]}
                                for _, p, f, ts in missing}})]
        return [finding(WORKLOAD_NOT_ADMITTED, object=label, key=key, message=message,
                        fix=f"raise {cluster_queue}'s quotas (or what its cohort lends) to cover the workload, or "
                        "shrink the workload", numbers=numbers)]
    assigned = {p.name: p for p in decision.pod_sets}
    findings = []
    for index, pod_set in enumerate(workload.pod_sets):
        assignment = assigned.get(pod_set.name)
        if assignment is not None and (problem := _schedule(label, pod_set, assignment.flavors, placements)):
            kind, message, fix, numbers = problem
            findings.append(finding(kind, object=label, key=field_key(key, f"podSets[{index}]"), message=message,
                                    fix=fix,
                                    numbers={"clusterQueue": cluster_queue, **numbers}))
    return findings


def missing_tolerations(manifest: Mapping[str, Any], workload: Workload, snapshot,
                        cluster_queue: str) -> list[tuple[int, str, str, list]]:
    """The tolerations that get a refused workload (its manifest and view) admitted, when its pods tolerate the
    taints of none of the flavors that could hold them: (pod set index, pod set name, flavor, the taints to
    tolerate) for each pod set that needs them; empty when tolerating taints does not help. Each pod set takes, in
    its resource groups' order, the next flavor whose taints it does not tolerate, until the admission core admits
    the workload."""
    import copy

    queue = snapshot.cluster_queues.get(cluster_queue)
    if queue is None:
        return []
    candidates: dict[int, list[tuple[str, list]]] = {}
    for index, pod_set in enumerate(workload.pod_sets):
        pod_spec = pod_set.pod_spec
        tolerations = pod_spec.get("tolerations", [])
        groups = {id(queue.group_of[r]): queue.group_of[r] for r in pod_units(pod_spec) if r in queue.group_of}
        for group in groups.values():
            for name in group.flavors:
                flavor = snapshot.flavors.get(name)
                if flavor is None or untolerated_taint(flavor.node_taints, [*tolerations, *flavor.tolerations]) is None:
                    continue
                taints = [t for t in flavor.node_taints if t.get("effect") in SCHEDULING_EFFECTS
                          and not any(tolerates(tol, t) for tol in [*tolerations, *flavor.tolerations])]
                candidates.setdefault(index, []).append((name, taints))
    for attempt in range(max((len(c) for c in candidates.values()), default=0)):
        tried = copy.deepcopy(dict(manifest))
        chosen = []
        for index, options in candidates.items():
            name, taints = options[min(attempt, len(options) - 1)]
            pod_set = tried["spec"]["podSets"][index]
            pod_spec = pod_set.setdefault("template", {}).setdefault("spec", {})
            pod_spec["tolerations"] = [*(pod_spec.get("tolerations") or []), *(toleration(t) for t in taints)]
            chosen.append((index, pod_set.get("name"), name, taints))
        if snapshot.can_ever_admit(cluster_queue, tried).fits:
            return chosen
    return []


def toleration(taint: Mapping[str, Any]) -> dict[str, str]:
    """The toleration that tolerates exactly this taint: Equal to its value, or Exists when it has none."""
    if taint.get("value"):
        return {"key": taint.get("key", ""), "operator": "Equal", "value": taint["value"], "effect": taint["effect"]}
    return {"key": taint.get("key", ""), "operator": "Exists", "effect": taint["effect"]}


def toleration_text(taint: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in toleration(taint).items()) + "}"


def taint_name(taint: Mapping[str, Any]) -> str:
    """`key=value:Effect`, as kubectl and the AKS pool's nodeTaints write it."""
    value = f"={taint['value']}" if taint.get("value") else ""
    return f"{taint.get('key', '')}{value}:{taint.get('effect', '')}"


@dataclass(frozen=True)
class Conflict:
    """Flavors of one pod set whose nodeLabels disagree on a key."""

    flavors: tuple[str, ...]
    key: str
    values: tuple[str, str]


def landing_pools(pod_set: PodSet, flavors: Mapping[str, str], placements: Mapping[str, FlavorPlacement]
                  ) -> "Optional[list[tuple[PoolCapacity, int]]] | Conflict":
    """The pools the pod set's pods can run on with the flavors assigned to it (Kueue adds every
    flavor's nodeLabels to the pods, then the pod's own nodeSelector and tolerations apply), each
    with the nodes of it they reach at maxCount. None when a flavor is placed nowhere."""
    if any(f not in placements for f in flavors.values()):
        return None
    used = [placements[f] for f in dict.fromkeys(flavors.values())]
    pod_spec = pod_set.pod_spec
    selector: dict[str, str] = {}
    for flavor in used:
        for key, value in flavor.node_labels.items():
            if selector.setdefault(key, value) != value:
                return Conflict(tuple(f.name for f in used), key, (selector[key], value))
    for key, value in pod_spec.get("nodeSelector", {}).items():
        selector.setdefault(key, value)
    tolerations = [*pod_spec.get("tolerations", []), *(t for f in used for t in f.tolerations)]
    # A generated flavor's tolerations are not documented: its pools' taints are not held against it.
    assumed = any(f.assumption for f in used)
    candidates: list[tuple[PoolCapacity, int]] = []
    for flavor in used:
        for pool, _ in flavor.pools:
            nodes = pool.nodes_matching(selector)
            blocked = [] if assumed else [t for t in pool.spec.taints if t.get("effect") in SCHEDULING_EFFECTS
                                          and not any(tolerates(tol, t) for tol in tolerations)]
            if nodes and not blocked and all(pool is not c for c, _ in candidates):
                candidates.append((pool, nodes))
    return candidates


def _schedule(label: str, pod_set: PodSet, flavors: Mapping[str, str],
              placements: Mapping[str, FlavorPlacement]) -> Optional[tuple[str, str, str, dict]]:
    name, count = pod_set.name, pod_set.count
    landing = landing_pools(pod_set, flavors, placements)
    if isinstance(landing, Conflict):
        return ("podset-conflicting-flavors",
                f"{label} podset {name} gets flavors {', '.join(landing.flavors)}, whose nodeLabels "
                f"disagree on {landing.key} ({landing.values[0]} vs {landing.values[1]})",
                "give those resources one flavor (list them in one resourceGroup's flavor), or make the "
                "flavors' nodeLabels compatible", {"podSet": name, "flavors": list(landing.flavors)})
    if landing is None:
        return None  # a flavor nothing places: the flavor checks report it
    requests = pod_units(pod_set.pod_spec)
    wanted = ", ".join(f"{r} {show(r, v)}" for r, v in requests.items() if is_modelled(r))
    numbers = {"podSet": name, "count": count, "requests": {r: amount(r, v) for r, v in requests.items()}}
    if not landing:
        return ("pod-fits-no-node",
                f"{label} podset {name} is admitted to flavors {', '.join(dict.fromkeys(flavors.values()))}, but no "
                "pool matches their nodeLabels plus the podset's nodeSelector with every taint tolerated",
                "add the missing tolerations or nodeSelector, or bind the flavor to a matching pool", numbers)
    packing = [(pool, nodes, *pods_per_node(pool, requests)) for pool, nodes in landing]
    if all(per_node == 0 for _, _, per_node, _ in packing):
        short = "; ".join(f"a node of pool {p.name} allocates {limit} {show(limit, p.node.amounts.get(limit, 0))}"
                          f"{p.not_advertised(limit)}" for p, _, _, limit in packing)
        return ("pod-fits-no-node",
                f"{label} podset {name}: one pod requests {wanted}, more than any node it can land on ({short})",
                advertise_first([p.name for p, _, _, limit in packing if p.not_advertised(limit)])
                + "shrink the pod's requests, or use a larger VM size for the pool", numbers)
    room = sum(per_node * nodes for _, nodes, per_node, _ in packing)
    if room < count:
        detail = "; ".join(f"pool {p.name}: {per_node} per node x {nodes} nodes (maxCount)"
                           for p, nodes, per_node, _ in packing)
        return ("podset-exceeds-pools",
                f"{label} podset {name} needs {count} pods of {wanted}, but its pools hold only {room} ({detail})",
                f"raise maxCount so the pools hold {count} such pods, or lower the podset's count",
                {**numbers, "fit": room})
    return None
