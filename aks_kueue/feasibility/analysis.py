"""The feasibility analysis: one pure function from capacity inputs to findings.

It reads plain values (`inputs.py`), never settings, so the policy pack can rebuild the
same inputs from Pulumi resource inputs and reach the same verdicts.
"""

from __future__ import annotations

from dataclasses import dataclass

from aks_kueue.admission.quota import CohortCycleError
from aks_kueue.feasibility.findings import Finding
from aks_kueue.feasibility.flavors import FlavorPlacement, place_flavors
from aks_kueue.feasibility.inputs import FeasibilityInputs, InstallFacts, Manifest
from aks_kueue.feasibility.install import install_findings
from aks_kueue.feasibility.pools import PoolCapacity, pool_capacity
from aks_kueue.feasibility.quotas import (CapacityRow, borrowing_findings, capacity_rows, flavor_findings,
                                          quota_entries, quota_tree, taint_findings)
from aks_kueue.feasibility.workloads import workload_findings

# What the admission core reads; Namespaces carry the labels namespaceSelectors match.
QUEUE_KINDS = ("ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "Namespace")


@dataclass(frozen=True)
class Analysis:
    pools: list[PoolCapacity]
    flavors: dict[str, FlavorPlacement]
    capacity: list[CapacityRow]
    findings: list[Finding]


def analyse(inputs: FeasibilityInputs) -> Analysis:
    manifests = list(inputs.manifests)
    pools = [pool_capacity(p, inputs.install.region) for p in inputs.pools]
    placements = place_flavors(manifests, pools)
    entries = quota_entries(manifests)
    rows, findings = capacity_rows(entries, placements, inputs.sources)
    snapshot = None
    if inputs.workloads:
        # Imported here: the admission core is only needed when there are workloads to admit.
        from aks_kueue.admission import Snapshot

        queue_objects = [m for m in manifests if m.get("kind") in QUEUE_KINDS]
        try:
            snapshot = Snapshot.from_objects(queue_objects + managed_flavor_stubs(manifests, inputs.install))
        except CohortCycleError:
            pass  # Kueue disables a cycle's queues; the settings check reports the cycle
    # The snapshot's quota tree holds no usage yet, so it serves the borrowing check too.
    tree = snapshot.tree if snapshot is not None else quota_tree(manifests)
    findings += borrowing_findings(tree, entries, placements, inputs.sources)
    findings += flavor_findings(placements, inputs.sources)
    findings += taint_findings(pools, placements)
    if snapshot is not None:
        findings += workload_findings(list(inputs.workloads), snapshot, placements, inputs.sources)
    findings += install_findings(inputs.install, manifests, inputs.sources)
    return Analysis(pools, placements, rows, findings)


def managed_flavor_stubs(manifests: list[Manifest], install: InstallFacts) -> list[Manifest]:
    """The `aks-*` flavors the managed extension generates in the cluster, for admission only.

    Queues may name them without defining them. Their node labels are not documented, so
    they take part in admission while their capacity stays "not modelled".
    """
    if "managed" not in install.installers:
        return []
    defined = {m["metadata"]["name"] for m in manifests if m.get("kind") == "ResourceFlavor"}
    named = {flavor.get("name") for m in manifests if m.get("kind") in ("ClusterQueue", "Cohort")
             for group in (m.get("spec") or {}).get("resourceGroups") or [] for flavor in group.get("flavors") or []}
    return [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": name},
             "spec": {}} for name in sorted(n for n in named - defined if n and n.startswith("aks-"))]
