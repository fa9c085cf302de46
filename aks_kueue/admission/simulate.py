"""`aks-kueue simulate`: pending Workloads through the admission core, in file order.

A Workload with `status.admission` is already admitted and its usage counts. Every
other Workload is pending: it reaches its ClusterQueue through its namespace's
LocalQueue; a Fit admits it (its usage counts for the ones after it); Preempt and
NoFit leave it pending. Nothing is evicted.
"""

from __future__ import annotations

from typing import Any, Iterable

from aks_kueue.admission.checks import with_admission_checks
from aks_kueue.admission.snapshot import Snapshot
from aks_kueue.admission.workloads import workload_info


def simulate(manifests: Iterable[dict]) -> list[dict[str, Any]]:
    """One decision per pending Workload, shaped as the CLI contract's `workloads` items."""
    manifests = list(manifests)
    snapshot = Snapshot.from_objects(manifests)
    workloads = [m for m in manifests if m.get("kind") == "Workload"]
    decisions = []
    for order, manifest in enumerate(workloads):
        if (manifest.get("status") or {}).get("admission"):
            continue
        workload = workload_info(manifest, snapshot.priority_classes, order)
        decision = snapshot.assign(workload)
        if decision.fits:
            snapshot.admit(workload, decision)
        decisions.append({
            "namespace": workload.namespace, "name": workload.name,
            "clusterQueue": decision.cluster_queue, "mode": decision.mode,
            "borrowing": decision.borrowing,
            "podSets": [{"name": ps.name, "count": ps.count, "flavors": ps.flavors} for ps in decision.pod_sets],
            "message": decision.message,
        })
    return with_admission_checks(manifests, decisions)
