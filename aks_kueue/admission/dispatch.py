"""MultiKueue's AllAtOnce dispatch, over the admission core: pending Workloads in file order, first
on the manager, then raced on every worker.

As Kueue v0.19.2 dispatches (`site/content/en/docs/concepts/multikueue.md`, "Job Flow" and
"AllAtOnce"): a Workload that reserves quota on the manager's ClusterQueue (its MultiKueue check
then pending) is copied to every worker of the MultiKueueConfig at once, into the LocalQueue of
the same namespace and name; each worker's own Kueue decides it against its own queues; the first
worker to admit it runs it, and the copies on the others are deleted. A Workload the manager does
not reserve quota for is dispatched nowhere.

Which worker wins a race cannot be known before it happens. Each decision lists every worker and
what it would decide; for the Workloads after it, the winner is taken to be the first worker of
the MultiKueueConfig's order that admits it, and its usage counts there.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from aks_kueue.admission.configuration import CLASSICAL, SchedulerConfig
from aks_kueue.admission.simulate import _collector_paused, decision_record, simulate
from aks_kueue.admission.snapshot import Snapshot
from aks_kueue.kueue.transformations import NO_RULES, ResourceRules

ALL_AT_ONCE = "AllAtOnce"


def dispatch(manager: Iterable[dict], workers: Sequence[tuple[str, Iterable[dict]]],
             resource_rules: ResourceRules = NO_RULES, scheduler: SchedulerConfig = CLASSICAL) -> list[dict[str, Any]]:
    """One decision per pending Workload of `manager` (the manager's objects and the Workloads, in
    order), as `simulate` makes it, with `workers`: what each worker, by its MultiKueueCluster name
    and objects, would decide of its copy, and `dispatchedTo`, the worker taken to win the race.
    `resource_rules`: the manager's Kueue Configuration's exclusions and transformations (a worker's
    own Configuration is not in its outputs, so its copies are charged as the manager charges them, and
    decided with the manager's fair sharing settings, `scheduler`)."""
    manager = list(manager)
    with _collector_paused():
        # The manager's objects are read first, so that its errors come before any worker's.
        snapshot = Snapshot.from_objects(manager, resource_rules, scheduler)
        remotes = [(name, Snapshot.from_objects(objects, resource_rules, scheduler)) for name, objects in workers]

        def race(record: dict[str, Any], manifest: dict, order: int, reserved: bool) -> None:
            raced, winner = [], None
            if reserved:
                for name, remote in remotes:
                    copy = remote.workload_info(manifest, order)
                    verdict = remote.assign(copy)
                    if verdict.fits and winner is None:
                        remote.admit(copy, verdict)
                        winner = name
                    entry = decision_record(copy, verdict)
                    raced.append({"name": name, **{k: entry[k] for k in ("clusterQueue", "mode", "borrowing",
                                                                         "podSets", "message")}})
            record.update(workers=raced, dispatchedTo=winner, dispatch=ALL_AT_ONCE)

        return simulate(manager, resource_rules, race, snapshot)
