"""`aks-kueue simulate`: pending Workloads through the admission core, in file order.

A Workload with `status.admission` is already admitted and its usage counts. Every
other Workload is pending: it reaches its ClusterQueue through its namespace's
LocalQueue; a Fit admits it (its usage counts for the ones after it); Preempt and
NoFit leave it pending. Nothing is evicted: a Preempt names the admitted workloads
Kueue would preempt for it (`preemptionTargets`), or says that nothing can be.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

from aks_kueue.admission.snapshot import Snapshot
from aks_kueue.admission.workloads import workload_info


def simulate(manifests: Iterable[dict]) -> list[dict[str, Any]]:
    """One decision per pending Workload, shaped as the CLI contract's `workloads` items."""
    manifests = list(manifests)
    with _collector_skips_existing_objects():
        return _simulate(manifests)


@contextmanager
def _collector_skips_existing_objects() -> Iterator[None]:
    """Left alone, Python's cyclic garbage collector walks the caller's parsed manifests
    (most of the process's objects) on each full collection the decisions' allocations
    set off: a quarter of the time on a 10,000-workload backlog. They are frozen for the
    run (gc.freeze: kept out of collections, nothing is freed or kept longer than it
    would be), unless the caller froze objects itself or turned the collector off."""
    if not gc.isenabled() or gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _simulate(manifests: list[dict]) -> list[dict[str, Any]]:
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
            "clusterQueue": decision.cluster_queue, "mode": str(decision.mode),
            "borrowing": decision.borrowing,
            "podSets": [{"name": ps.name, "count": ps.count, "flavors": ps.flavors} for ps in decision.pod_sets],
            "message": decision.message,
            "preemptionTargets": [{"namespace": t.namespace, "name": t.name, "clusterQueue": t.cluster_queue}
                                  for t in decision.targets],
        })
    return decisions
