"""Feasibility: quota against the pools' capacity, flavors against pools, and each expected workload
admitted by the admission core and scheduled on the nodes its flavors select.

One pass over one model; the judge runs it on the stack's own model, and a fleet's manager on each
worker's model with the manager's workloads (`fleet.py`), so a workload is judged on a worker
exactly as it would be on a stack of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Optional

from aks_kueue.admission.quota import CohortCycleError, QuotaTree
from aks_kueue.aks.allocatable import DEFAULT_VM_OVERHEAD
from aks_kueue.aks.managed_extension import RESERVED_PREFIX
from aks_kueue.aks.nodes import PoolCapacity, pool_capacity
from aks_kueue.aks.placement import FlavorPlacement
from aks_kueue.judge import capacity, objects, provisioning, topology, workloads
from aks_kueue.judge.finding import ERROR, WARNING, Finding
from aks_kueue.judge.objects import Valid, of_kind, valid_objects
from aks_kueue.judge.rules import (FLAVORS_MATCH, PROVISIONING, QUOTA_FITS, VM_OVERHEAD, WORKLOADS_FIT, Judging,
                                   rule)
from aks_kueue.kueue.convert import V1BETA2
from aks_kueue.kueue.views import QuotaHolder
from aks_kueue.model.desired import Model

# What the admission core reads; Namespaces carry the labels namespaceSelectors match.
QUEUE_KINDS = ("ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "Topology")
# What a workload's own verdict is made of (the rest is about quotas, flavors and pools).
WORKLOAD_KINDS = (*workloads.KINDS, *provisioning.WORKLOAD_KINDS, *topology.WORKLOAD_KINDS)


@dataclass
class Feasibility:
    findings: list[Finding] = field(default_factory=list)
    pools: list[PoolCapacity] = field(default_factory=list)
    placements: dict[str, FlavorPlacement] = field(default_factory=dict)
    rows: list[capacity.CapacityRow] = field(default_factory=list)


def feasibility(model: Model, vm_overhead: Fraction) -> Feasibility:
    if model.cluster is None:
        return Feasibility()  # no cluster, no pools to place anything on (`judged` does not ask)
    valid = valid_objects(model)
    region = model.cluster.region
    pools = [pool_capacity(p, region, vm_overhead) for p in model.pools]
    placements = capacity.placements(valid, pools, model.managed, _named_flavors(valid))
    entries = capacity.quota_entries(valid)
    rows, found = capacity.capacity_rows(entries, placements, model.resource_rules)
    accepted = objects.valid_workloads(model)
    manifests = [dict(each.manifest) for each in valid if each.item.kind in QUEUE_KINDS]
    manifests += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n.name, "labels": dict(n.labels)}}
                  for n in model.namespaces]
    manifests += generated_stubs(model)
    snapshot, tree = None, None
    try:
        if accepted:
            # Imported here: the admission core is only needed when there are workloads to admit.
            from aks_kueue.admission import Snapshot

            snapshot = Snapshot.from_objects(manifests, model.resource_rules)
            tree = snapshot.tree  # it holds no usage yet, so it serves the borrowing check too
        else:
            tree = QuotaTree.from_objects(manifests)
    except CohortCycleError:
        pass  # Kueue disables a cycle's queues; the object checks report the cycle
    found += capacity.borrowing_findings(tree, entries, placements)
    found += capacity.flavor_findings(valid, placements)
    found += capacity.taint_findings(pools, placements)
    found += capacity.advertising_findings(pools)
    decided = [] if snapshot is None else workloads.decide(accepted, snapshot)
    found += workloads.workload_findings(decided, snapshot, placements)
    found += provisioning.provisioning_findings(model, valid, placements, decided)
    found += topology.topology_findings(model, valid, placements, decided)
    return Feasibility(found, pools, placements, rows)


CAPACITY = "the AKS capacity model (aks_kueue/aks/nodes.py) and Kueue v0.19.2's quota (aks_kueue/admission)"
ADMISSION = "Kueue v0.19.2's flavor assignment and preemption (aks_kueue/admission) and kube-scheduler's fit"
TAS = "Kueue v0.19.2 Topology Aware Scheduling (aks_kueue/kueue/tas.py)"
PROVISIONING_REQUEST = ("Kueue ProvisioningRequest admission checks; the AKS cluster autoscaler "
                        "(aks_kueue/judge/provisioning.py)")


@rule(capacity.QUOTA_ABOVE_CAPACITY, "Nominal quota stays within what the pools its flavor selects can allocate.",
      CAPACITY, "ClusterQueue and Cohort quotas", QUOTA_FITS, config=VM_OVERHEAD, severity=ERROR,
      explanation="Kueue admits work up to the quota, whatever nodes exist: quota above what the flavor's pools can "
      "allocate at their autoscaler maximum (each node's allocatable, as AKS reserves it, times maxCount) admits "
      "pods that then stay Pending, holding quota other work could use. Every ClusterQueue and Cohort giving the "
      "flavor quota is summed; the finding is on the largest.")
@rule(capacity.BORROWING_ABOVE_CAPACITY,
      "What a ClusterQueue can borrow stays within what its flavor's pools allocate.",
      CAPACITY, "ClusterQueue borrowing limits", QUOTA_FITS, config=VM_OVERHEAD, severity=ERROR,
      explanation="A ClusterQueue in a cohort can be admitted up to its nominal quota plus what the cohort lends it "
      "(up to its borrowingLimit, or without one, all the cohort has unused). When that reach is above what the "
      "flavor's pools can allocate, Kueue admits pods that stay Pending. The reach is Kueue's potentially available "
      "quota, so a borrowingLimit larger than the cohort can ever lend is no alarm.")
@rule(capacity.FLAVOR_LANDS_NOWHERE, "Every ResourceFlavor selects the nodes of a node pool.", CAPACITY,
      "ResourceFlavors", FLAVORS_MATCH, config=VM_OVERHEAD, severity=ERROR,
      graded="a flavor the managed extension generates, whose placement is assumed, is a warning",
      explanation="Kueue copies a flavor's nodeLabels into the node selector of the pods it admits with it: when no "
      "pool's nodes carry those labels, the pods stay Pending. A flavor the managed extension generates (aks-*) "
      "with no pool it could match leaves the ClusterQueues that name it inactive.")
@rule(capacity.FLAVOR_RESOURCE_MISSING, "A flavor's quota names only resources its pools' nodes have.", CAPACITY,
      "ClusterQueue quotas", FLAVORS_MATCH, config=VM_OVERHEAD, severity=ERROR,
      explanation="Quota of a resource the flavor's nodes do not have (GPUs on a CPU pool) lets Kueue admit pods "
      "that ask for it, which kube-scheduler can never place.")
@rule(capacity.TAINT_NOT_TOLERATED, "Every pool taint is declared or tolerated by the flavors landing there.",
      CAPACITY, "node pools and ResourceFlavors", FLAVORS_MATCH, config=VM_OVERHEAD, severity=ERROR,
      explanation="Kueue adds a flavor's tolerations to the pods it admits, and checks a flavor's nodeTaints against "
      "the workload's tolerations. A pool taint no flavor landing there declares or tolerates keeps the pods Kueue "
      "admits to that flavor off the pool's nodes, so they stay Pending.")
@rule(topology.TOPOLOGY_NEEDS_NODES, "A Topology Aware Scheduling flavor has nodes that exist to place on.", TAS,
      "TAS ResourceFlavors", FLAVORS_MATCH, config=VM_OVERHEAD, severity=ERROR,
      graded="quota above the nodes that always exist is a warning (it is usable while other work keeps nodes up); "
             "no such node at all, or a workload needing more than they hold, is an error",
      explanation="Topology Aware Scheduling places pods only on nodes that exist and are Ready when Kueue admits "
      "the workload. On pools that scale from zero with no ProvisioningRequest check to add nodes first, Kueue never "
      "places a pod, and the autoscaler, which reacts only to pending pods, never adds a node: nothing is ever "
      "admitted. Quota, or a pod set, above what the nodes that always exist (the pools' minCount) hold is usable "
      "only while other work keeps more nodes up.")
@rule(capacity.GPUS_NOT_ADVERTISED, "A GPU pool's GPUs are advertised to Kubernetes (a device plugin).",
      "AKS GPU node pools (aks_kueue/aks/device_plugin.py)", "GPU node pools", severity=WARNING,
      explanation="A GPU reaches Kubernetes only through a driver and a device plugin on the node: without them, "
      "kube-scheduler never places a pod asking for the GPU resource there, so the capacity model counts 0 of it "
      "(and a quota on those GPUs is reported above capacity). AKS installs the NVIDIA driver unless gpuDriver is "
      "None, installs nothing for AMD, and the program runs NVIDIA's device plugin where AKS installs the driver; "
      "declare a plugin you install yourself with gpuDevicePlugin: external.")
@rule(workloads.WORKLOAD_NOT_ADMITTED, "Every expected workload is admitted by its ClusterQueue alone on an empty "
      "cluster.", ADMISSION, "expected workloads", WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR,
      explanation="An expected workload the admission core (Kueue v0.19.2's flavor assignment) cannot admit on an "
      "empty cluster, with its ClusterQueue's quota alone, waits forever: no other work finishing can make room. "
      "The message is the core's reason, in Kueue's words.")
@rule(workloads.POD_FITS_NO_NODE, "Every pod of an expected workload fits a node of a pool its flavors select.",
      ADMISSION, "expected workloads", WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR,
      explanation="Kueue admits a workload on quota alone; kube-scheduler then needs, for each pod, one node with "
      "room for its requests (each node's allocatable, less the DaemonSets that run there) and whose taints it "
      "tolerates. A pod that fits no node of the pools its flavors select is admitted and stays Pending.")
@rule(workloads.PODSET_EXCEEDS_POOLS, "Every pod set fits the pools its flavors select at their maximum.",
      ADMISSION, "expected workloads", WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR,
      explanation="Each pod may fit a node, yet all of a pod set's pods together may need more nodes than the "
      "pools its flavors select have at maxCount: Kueue admits it and some pods stay Pending.")
@rule(workloads.PODSET_CONFLICTING_FLAVORS, "A pod set's flavors do not ask for nodes no pool has.", ADMISSION,
      "expected workloads", WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR,
      explanation="Kueue may assign one pod set several flavors, one per resource; the pods then carry every "
      "flavor's node labels, and when no pool's nodes carry them all, they stay Pending.")
@rule(provisioning.PROVISIONING_UNAVAILABLE, "Every ProvisioningRequest admission check can pass on AKS.",
      PROVISIONING_REQUEST, "AdmissionChecks and ProvisioningRequestConfigs", PROVISIONING, severity=ERROR,
      explanation="Kueue's ProvisioningRequest check asks the cluster autoscaler for the nodes before admitting: on "
      "AKS that needs the check's ProvisioningRequestConfig, a provisioningClassName AKS's cluster autoscaler "
      "provides (check-capacity.autoscaling.x-k8s.io, best-effort-atomic-scale-up.autoscaling.x-k8s.io), the "
      "cluster autoscaler rather than node auto-provisioning, and Kubernetes 1.33 or later. Otherwise the check "
      "never passes and the ClusterQueue admits nothing.")
@rule(provisioning.PODSET_UNPROVISIONABLE, "A ProvisioningRequest check can provision every pod set it gates.",
      PROVISIONING_REQUEST, "expected workloads", WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR,
      explanation="AKS's cluster autoscaler answers a ProvisioningRequest by growing one node pool, all or nothing, "
      "beyond the nodes that always exist (the other pools stay at minCount): a pod set no one pool can hold when "
      "grown to maxCount, or pod sets that need more than one pool grown, are never provisioned, so the check never "
      "passes and the workload is never admitted.")
@rule(topology.PODSET_EXCEEDS_HOST, "A pod set required on one host fits one node.", TAS, "expected workloads",
      WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR,
      explanation="A pod set whose topology request requires the hostname level must land on one node: when its "
      "pods together need more than one node of its flavor's pools holds, Kueue never finds such a node, and the "
      "ClusterQueue never admits the workload.")
@rule(topology.TOPOLOGY_REQUEST_MISMATCH, "A pod set's topology request can be placed.", TAS, "expected workloads",
      WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR,
      explanation="The admission core may prove a pod set admissible on quota, yet Topology Aware Scheduling refuses "
      "the placement: a topology request names a level its flavor's Topology does not have, asks for a TAS "
      "placement on a flavor that is not a TAS flavor, or a pod set without one lands on a ClusterQueue that mixes "
      "TAS and other flavors. Kueue then tries other flavors or leaves the workload pending.")
def feasibility_findings(model: Model, judging: Judging) -> list[Finding]:
    """The pass's findings; a fleet manager's are only those of its own admission (`manager_admission`)."""
    found = judged(judging)
    if found is not None:
        return found.findings
    return list(manager_admission(model, judging.vm_overhead))


def judged(judging: Judging) -> Optional[Feasibility]:
    """The pass of this run, or None where there is nothing to judge: no cluster, or a fleet manager,
    which runs no jobs (its quota is judged against its workers', `fleet.py`)."""
    model = judging.model
    return judging.shared("feasibility", lambda: None if model.cluster is None or is_manager(model)
                          else feasibility(model, judging.vm_overhead))


def is_manager(model: Model) -> bool:
    return model.fleet is not None and model.fleet.manages


def manager_admission(model: Model, vm_overhead: Fraction = DEFAULT_VM_OVERHEAD) -> Iterable[Finding]:
    """A workload the manager's own quota can never admit is never dispatched at all (its nodes are
    the workers', judged by `fleet.workload_coverage`)."""
    if not is_manager(model) or model.cluster is None:
        return
    yield from (f for f in feasibility(model, vm_overhead).findings if f.kind == workloads.WORKLOAD_NOT_ADMITTED)


def generated_stubs(model: Model) -> list[dict[str, Any]]:
    """The `aks-*` flavors and priority classes the managed extension creates in the cluster, for
    admission: queues may name them without defining them."""
    if not model.managed:
        return []
    from aks_kueue.aks.managed_extension import PRIORITY_CLASSES

    valid = valid_objects(model)
    defined = {(each.item.kind, each.view.name) for each in valid}
    stubs: list[dict[str, Any]] = [
        {"apiVersion": V1BETA2, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": {}}
        for name in _named_flavors(valid) if name.startswith(RESERVED_PREFIX) and ("ResourceFlavor", name) not in defined]
    stubs += [{"apiVersion": V1BETA2, "kind": "WorkloadPriorityClass", "metadata": {"name": name}, "value": value}
              for name, value in PRIORITY_CLASSES.items() if ("WorkloadPriorityClass", name) not in defined]
    return stubs


def _named_flavors(valid: list[Valid[Any]]) -> list[str]:
    """The flavors the ClusterQueues and Cohorts name, sorted."""
    return sorted({name for holder in of_kind(valid, QuotaHolder) for name in holder.view.flavor_names})
