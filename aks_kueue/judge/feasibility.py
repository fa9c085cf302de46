"""Feasibility: quota against the pools' capacity, flavors against pools, and each expected workload
admitted by the admission core and scheduled on the nodes its flavors select.

One pass over one model; the judge runs it on the stack's own model, and a fleet's manager on each
worker's model with the manager's workloads (`fleet.py`), so a workload is judged on a worker
exactly as it would be on a stack of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from aks_kueue.admission.quota import CohortCycleError, QuotaTree
from aks_kueue.aks.managed_extension import RESERVED_PREFIX
from aks_kueue.aks.nodes import PoolCapacity, pool_capacity
from aks_kueue.aks.placement import FlavorPlacement
from aks_kueue.judge import capacity, objects, provisioning, topology, workloads
from aks_kueue.judge.finding import Finding
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
    valid = [(item, obj.defaulted or obj.manifest)
             for item, (obj, errors) in zip(model.objects, objects.checked_objects(model)) if not errors]
    region = model.cluster.region
    pools = [pool_capacity(p, region, vm_overhead) for p in model.pools]
    named = {flavor.get("name") for _, manifest in valid if manifest.get("kind") in ("ClusterQueue", "Cohort")
             for group in (manifest.get("spec") or {}).get("resourceGroups") or []
             for flavor in group.get("flavors") or []}
    placements = capacity.placements(valid, pools, model.managed, sorted(n for n in named if isinstance(n, str)))
    entries = capacity.quota_entries(valid)
    rows, found = capacity.capacity_rows(entries, placements, model.resource_rules)
    accepted = objects.valid_workloads(model)
    manifests = [manifest for _, manifest in valid if manifest.get("kind") in QUEUE_KINDS]
    manifests += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n.name, "labels": dict(n.labels)}}
                  for n in model.namespaces]
    manifests += generated_stubs(valid, model)
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
    if snapshot is not None:
        found += workloads.workload_findings([(w.label, w.key, m) for w, m in accepted], snapshot, placements)
    found += provisioning.provisioning_findings(model, valid, placements, snapshot, accepted)
    found += topology.topology_findings(model, valid, placements, snapshot, accepted)
    return Feasibility(found, pools, placements, rows)


def generated_stubs(valid, model: Model) -> list[dict[str, Any]]:
    """The `aks-*` flavors and priority classes the managed extension creates in the cluster, for
    admission: queues may name them without defining them."""
    if not model.managed:
        return []
    from aks_kueue.aks.managed_extension import PRIORITY_CLASSES

    defined = {(m.get("kind"), (m.get("metadata") or {}).get("name")) for _, m in valid}
    named = {flavor.get("name") for _, m in valid if m.get("kind") in ("ClusterQueue", "Cohort")
             for group in (m.get("spec") or {}).get("resourceGroups") or [] for flavor in group.get("flavors") or []}
    stubs = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": {}}
             for name in sorted(n for n in named if isinstance(n, str) and n.startswith(RESERVED_PREFIX)
                                and ("ResourceFlavor", n) not in defined)]
    stubs += [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass", "metadata": {"name": name},
               "value": value} for name, value in PRIORITY_CLASSES.items() if ("WorkloadPriorityClass", name) not in defined]
    return stubs
