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
      CAPACITY, "ClusterQueue and Cohort quotas", QUOTA_FITS, config=VM_OVERHEAD, severity=ERROR)
@rule(capacity.BORROWING_ABOVE_CAPACITY,
      "What a ClusterQueue can borrow stays within what its flavor's pools allocate.",
      CAPACITY, "ClusterQueue borrowing limits", QUOTA_FITS, config=VM_OVERHEAD, severity=ERROR)
@rule(capacity.FLAVOR_LANDS_NOWHERE, "Every ResourceFlavor selects the nodes of a node pool.", CAPACITY,
      "ResourceFlavors", FLAVORS_MATCH, config=VM_OVERHEAD, severity=ERROR,
      graded="a flavor the managed extension generates, whose placement is assumed, is a warning")
@rule(capacity.FLAVOR_RESOURCE_MISSING, "A flavor's quota names only resources its pools' nodes have.", CAPACITY,
      "ClusterQueue quotas", FLAVORS_MATCH, config=VM_OVERHEAD, severity=ERROR)
@rule(capacity.TAINT_NOT_TOLERATED, "Every pool taint is declared or tolerated by the flavors landing there.",
      CAPACITY, "node pools and ResourceFlavors", FLAVORS_MATCH, config=VM_OVERHEAD, severity=ERROR)
@rule(topology.TOPOLOGY_NEEDS_NODES, "A Topology Aware Scheduling flavor has nodes that exist to place on.", TAS,
      "TAS ResourceFlavors", FLAVORS_MATCH, config=VM_OVERHEAD, severity=ERROR,
      graded="quota above the nodes that always exist is a warning (it is usable while other work keeps nodes up); "
             "no such node at all, or a workload needing more than they hold, is an error")
@rule(capacity.GPUS_NOT_ADVERTISED, "A GPU pool's GPUs are advertised to Kubernetes (a device plugin).",
      "AKS GPU node pools (aks_kueue/aks/device_plugin.py)", "GPU node pools", severity=WARNING)
@rule(workloads.WORKLOAD_NOT_ADMITTED, "Every expected workload is admitted by its ClusterQueue alone on an empty "
      "cluster.", ADMISSION, "expected workloads", WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR)
@rule(workloads.POD_FITS_NO_NODE, "Every pod of an expected workload fits a node of a pool its flavors select.",
      ADMISSION, "expected workloads", WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR)
@rule(workloads.PODSET_EXCEEDS_POOLS, "Every pod set fits the pools its flavors select at their maximum.",
      ADMISSION, "expected workloads", WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR)
@rule(workloads.PODSET_CONFLICTING_FLAVORS, "A pod set's flavors do not ask for nodes no pool has.", ADMISSION,
      "expected workloads", WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR)
@rule(provisioning.PROVISIONING_UNAVAILABLE, "Every ProvisioningRequest admission check can pass on AKS.",
      PROVISIONING_REQUEST, "AdmissionChecks and ProvisioningRequestConfigs", PROVISIONING, severity=ERROR)
@rule(provisioning.PODSET_UNPROVISIONABLE, "A ProvisioningRequest check can provision every pod set it gates.",
      PROVISIONING_REQUEST, "expected workloads", WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR)
@rule(topology.PODSET_EXCEEDS_HOST, "A pod set required on one host fits one node.", TAS, "expected workloads",
      WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR)
@rule(topology.TOPOLOGY_REQUEST_MISMATCH, "A pod set's topology request can be placed.", TAS, "expected workloads",
      WORKLOADS_FIT, config=VM_OVERHEAD, severity=ERROR)
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
