"""One judge: every rule about queues, namespaces, pools, the install, security and
feasibility, run on the model (`aks_kueue.model`), returning structured findings.

Who enforces what: the program calls `blocking_findings` on the model of its settings and
stops (nothing registered) on any of them, because the config cannot be used as written.
Everything else, feasibility and the security baseline included, is enforced by the
policy pack on the model of the resources, so that a policy config can still relax it. The
offline preview calls `judge` once and renders its findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from datetime import date
from typing import Any, Optional

from aks_kueue.admission.quota import CohortCycleError, QuotaTree
from aks_kueue.aks.allocatable import DEFAULT_VM_OVERHEAD
from aks_kueue.aks.managed_extension import RESERVED_PREFIX
from aks_kueue.aks.nodes import PoolCapacity, pool_capacity
from aks_kueue.aks.placement import FlavorPlacement
from aks_kueue.judge import capacity, install, objects, provisioning, security, stack, topology, workloads
from aks_kueue.judge.finding import ERROR, WARNING, Amount, Finding, Severity
from aks_kueue.model.desired import Model

RESOURCE_UNREADABLE = "resource-unreadable"
# What the admission core reads; Namespaces carry the labels namespaceSelectors match.
QUEUE_KINDS = ("ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "Topology")


@dataclass
class Judgement:
    findings: list[Finding]
    pools: list[PoolCapacity] = field(default_factory=list)
    flavors: dict[str, FlavorPlacement] = field(default_factory=dict)
    capacity: list[capacity.CapacityRow] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]


def blocking_findings(model: Model) -> list[Finding]:
    """What makes the config unusable as written: objects Kueue or the API server refuse, broken
    references and namespaces, expected workloads Kueue would not create."""
    return objects.object_findings(model) + objects.workload_findings(model)


def judge(model: Model, vm_overhead: Fraction = DEFAULT_VM_OVERHEAD, today: Optional[date] = None) -> Judgement:
    """Every rule. `today` is the day dated facts (the AKS release calendar) are judged on."""
    findings = [Finding(RESOURCE_UNREADABLE, ERROR, u.subject, u.subject, u.message,
                        "give the resource the shape the pack reads, or remove it") for u in model.unreadable]
    findings += blocking_findings(model) + objects.cohort_findings(model) + install.install_findings(model)
    judgement = Judgement(findings)
    if model.cluster is not None:
        _feasibility(model, vm_overhead, judgement)
    judgement.findings += security.security_findings(model) + stack.stack_findings(model, today)
    return judgement


def _feasibility(model: Model, vm_overhead: Fraction, judgement: Judgement) -> None:
    valid = [(item, obj.defaulted or obj.manifest)
             for item, (obj, errors) in zip(model.objects, objects.checked_objects(model)) if not errors]
    region = model.cluster.region
    pools = [pool_capacity(p, region, vm_overhead) for p in model.pools]
    named = {flavor.get("name") for _, manifest in valid if manifest.get("kind") in ("ClusterQueue", "Cohort")
             for group in (manifest.get("spec") or {}).get("resourceGroups") or []
             for flavor in group.get("flavors") or []}
    placements = capacity.placements(valid, pools, model.managed, sorted(n for n in named if isinstance(n, str)))
    entries = capacity.quota_entries(valid)
    rows, found = capacity.capacity_rows(entries, placements)
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

            snapshot = Snapshot.from_objects(manifests)
            tree = snapshot.tree  # it holds no usage yet, so it serves the borrowing check too
        else:
            tree = QuotaTree.from_objects(manifests)
    except CohortCycleError:
        pass  # Kueue disables a cycle's queues; the object checks report the cycle
    found += capacity.borrowing_findings(tree, entries, placements)
    found += capacity.flavor_findings(valid, placements)
    found += capacity.taint_findings(pools, placements)
    if snapshot is not None:
        found += workloads.workload_findings([(w.label, w.key, m) for w, m in accepted], snapshot, placements)
    found += provisioning.provisioning_findings(model, valid, placements, snapshot, accepted)
    found += topology.topology_findings(model, valid, placements, snapshot, accepted)
    judgement.findings += found
    judgement.pools, judgement.flavors, judgement.capacity = pools, placements, rows


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


__all__ = ["Judgement", "Finding", "Severity", "Amount", "ERROR", "WARNING", "RESOURCE_UNREADABLE", "judge",
           "generated_stubs", "blocking_findings"]
