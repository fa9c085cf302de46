"""One scheduling cycle over the admission core, as upstream's scheduler unit tests run one
(`scheduler.go` `schedule`: heads, `nominate`, the entry iterator, `processEntry`, requeue), for
the transcribed scheduler tests. It drives the same core calls the replay engine makes: a
decision per head (`Snapshot.assign`), the order (`make_iterator`), the fit re-check
(`Snapshot.fits`), the reservation and admission."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from aks_kueue.admission.fair_sharing_iterator import Entry, make_iterator
from aks_kueue.admission.modes import FlavorAssignmentMode
from aks_kueue.admission.snapshot import Snapshot
from aks_kueue.admission.workloads import WorkloadInfo

FIT, PREEMPT, NO_FIT = FlavorAssignmentMode.FIT, FlavorAssignmentMode.PREEMPT, FlavorAssignmentMode.NO_FIT


@dataclass
class CycleResult:
    admitted: dict[str, dict] = field(default_factory=dict)
    preempted: dict[str, str] = field(default_factory=dict)
    left: dict[str, list[str]] = field(default_factory=dict)
    inadmissible: dict[str, list[str]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # the entries in the order the cycle took them


def queue_key(snapshot: Snapshot, workload: WorkloadInfo) -> tuple:
    """The heap order: admission fair sharing's LocalQueue usage first where it applies, then
    priority, queue-order timestamp, UID."""
    cq = snapshot.cluster_queue_for(workload.namespace, workload.queue_name)
    usage = 0.0
    if cq is not None and snapshot.uses_admission_fair_sharing(cq) and snapshot.afs is not None:
        usage = snapshot.afs.usage((workload.namespace, workload.queue_name))
    return usage, -workload.priority, workload.created, workload.uid


def one_cycle(snapshot: Snapshot, pending: list[WorkloadInfo], strategies: Optional[dict[str, str]] = None) -> CycleResult:
    """`strategies`: the queueing strategy per ClusterQueue (BestEffortFIFO when absent)."""
    strategies = strategies or {}
    result = CycleResult()
    queues: dict[str, list[WorkloadInfo]] = {}
    for workload in pending:
        cq = snapshot.cluster_queue_for(workload.namespace, workload.queue_name)
        if cq is not None:
            queues.setdefault(cq, []).append(workload)
    heads = {}
    for cq, workloads in sorted(queues.items()):
        workloads.sort(key=lambda w: queue_key(snapshot, w))
        heads[cq] = workloads.pop(0)
        result.left.update({cq: [w.key for w in workloads]} if workloads else {})
    entries, outcomes = [], {}
    for cq, workload in heads.items():
        decision = snapshot.assign(workload, cq)
        if decision.assignment is None:  # refused before flavor assignment (nominate's checks)
            outcomes[cq] = "inadmissible"
            continue
        entries.append(Entry(cq, decision, queue_key(snapshot, workload)[1:], workload))
    preempted: dict[str, WorkloadInfo] = {}
    reserved = []
    for entry in make_iterator(snapshot.tree, entries, snapshot.scheduler):
        workload, decision, cq = entry.payload, entry.decision, entry.cluster_queue
        result.order.append(workload.key)
        usage = entry.usage
        if decision.mode is NO_FIT or (decision.mode is PREEMPT and not decision.targets):
            outcomes[cq] = "inadmissible"
            if decision.mode is PREEMPT and snapshot.cluster_queues[cq].reclaim_within_cohort != "Any":
                hold = reserve_for_unreclaimable(snapshot, cq, usage, decision.assignment.borrowing > 0)
                snapshot.reserve(cq, hold)
                reserved.append((cq, hold))
            continue
        if decision.mode is PREEMPT:
            targets = [t.workload for t in decision.targets]
            if any(t.uid in preempted for t in targets) or not snapshot.fits(cq, usage, [*preempted.values(), *targets]):
                outcomes[cq] = "skipped"
                continue
            for target in decision.targets:
                preempted[target.workload.uid] = target.workload
                result.preempted[target.workload.key] = str(target.reason)
            snapshot.reserve(cq, usage)
            reserved.append((cq, usage))
            outcomes[cq] = "preempting"
            continue
        if not snapshot.fits(cq, usage, list(preempted.values())):
            outcomes[cq] = "skipped"
            continue
        snapshot.admit(workload, decision)
        outcomes[cq] = "admitted"
        result.admitted[workload.key] = {"cq": cq, "count": decision.pod_sets[0].count,
                                         "flavors": dict(decision.pod_sets[0].flavors)}
    for cq, usage in reserved:
        snapshot.unreserve(cq, usage)
    for cq, outcome in outcomes.items():
        if outcome == "admitted":
            continue
        strict = strategies.get(cq) == "StrictFIFO"
        into = result.left if strict or outcome in ("skipped", "preempting") else result.inadmissible
        into.setdefault(cq, []).append(heads[cq].key)
    return result


def reserve_for_unreclaimable(snapshot: Snapshot, cq: str, usage: dict, borrowing: bool) -> dict:
    """Kueue's quotaResourcesToReserve for a Preempt without candidates."""
    node = snapshot.tree.cluster_queues[cq]
    hold = {}
    for fr, value in usage.items():
        quota = node.quotas.get(fr)
        if borrowing and (quota is None or quota.borrowing_limit is None):
            hold[fr] = value
        elif borrowing:
            hold[fr] = min(value, node.nominal(fr) + quota.borrowing_limit - node.usage.get(fr, 0))
        else:
            hold[fr] = max(0, min(value, node.nominal(fr) - node.usage.get(fr, 0)))
    return {fr: v for fr, v in hold.items() if v > 0}
