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
from typing import Any, Callable, Iterable, Iterator, Optional

from aks_kueue.admission.checks import with_admission_checks
from aks_kueue.admission.configuration import CLASSICAL, SchedulerConfig
from aks_kueue.admission.snapshot import Snapshot
from aks_kueue.admission.workloads import holds_quota
from aks_kueue.kueue.transformations import NO_RULES, ResourceRules


def simulate(manifests: Iterable[dict], resource_rules: ResourceRules = NO_RULES,
             then: Optional[Callable[[dict[str, Any], dict, int, bool], None]] = None,
             snapshot: Optional[Snapshot] = None, scheduler: SchedulerConfig = CLASSICAL) -> list[dict[str, Any]]:
    """One decision per pending Workload, in order, shaped as the CLI contract's `workloads` items; a Fit
    is admitted. `resource_rules`: the Kueue Configuration's resource exclusions and transformations;
    `then` adds to each record (given it, the manifest, its order and whether it fits); `snapshot`: the
    manifests' own, when the caller has built it already; `scheduler`: fair sharing and admission fair
    sharing as the Configuration sets them (for a snapshot built here)."""
    manifests = list(manifests)
    decisions = []
    with _collector_paused():
        snapshot = snapshot or Snapshot.from_objects(manifests, resource_rules, scheduler)
        for order, manifest in enumerate(m for m in manifests if m.get("kind") == "Workload"):
            if holds_quota(manifest):
                continue
            workload = snapshot.workload_info(manifest, order)
            decision = snapshot.assign(workload)
            if decision.fits:
                snapshot.admit(workload, decision)
                if snapshot.afs is not None:
                    snapshot.reserved_by(workload, 0.0)  # admission fair sharing's entry penalty
            record = decision_record(workload, decision)
            if then is not None:
                then(record, manifest, order, decision.fits)
            decisions.append(record)
        return with_admission_checks(manifests, decisions)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector rests during a run and is enabled again after it.

    Left on, its full collections walk the caller's parsed manifests and every record the
    run builds, over and over on a large backlog, and find nothing: the loop makes no reference
    cycles (a test collects in the middle of a run and checks that), so pausing it frees everything
    just as early. A caller that turned the
    collector off keeps it off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():
            # What the run made and keeps joins the oldest generation at once (freeze, then
            # unfreeze), instead of being walked by the first young collection after it.
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def cluster_queue_shares(snapshot: Snapshot) -> list[dict[str, Any]]:
    """Each ClusterQueue's share as Kueue's status reports it (`status.fairSharing.weightedShare`: per
    mille of what its cohort could lend, over its weight, rounded up; int64's maximum for a queue of
    weight 0 that borrows), with its weight, dominant resource and whether it borrows."""
    found = []
    for name in sorted(snapshot.cluster_queues):
        drs = snapshot.dominant_resource_share(name)
        found.append({"name": name, "weight": drs.fair_weight, "weightedShare": drs.weighted_share(),
                      "dominantResource": drs.dominant_resource or None, "borrowing": drs.borrowing})
    return found


def decision_record(workload, decision) -> dict[str, Any]:
    """One decision as the CLI contract's `workloads` item."""
    return {
        "namespace": workload.namespace, "name": workload.name,
        "clusterQueue": decision.cluster_queue, "mode": str(decision.mode),
        "borrowing": decision.borrowing,
        "podSets": [{"name": ps.name, "count": ps.count, "flavors": ps.flavors} for ps in decision.pod_sets],
        "message": decision.message,
        "preemptionTargets": [{"namespace": t.namespace, "name": t.name, "clusterQueue": t.cluster_queue}
                              for t in decision.targets],
    }
