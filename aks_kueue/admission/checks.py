"""The admission checks each simulated workload waits for (`admissionChecks` of `simulate --json`).

Which checks a Workload gets is Kueue's rule (`kueue/admission_checks.py`): a workload that
reserves quota (mode Fit) gets the checks of its ClusterQueue whose flavors meet the flavors
assigned to it; one that does not (Preempt, NoFit) gets the checks that apply to every flavor
of its ClusterQueue. Offline every check is `Pending`: only its controller (for a
ProvisioningRequest check, the cluster autoscaler's answer) makes it `Ready` or `Rejected`, so
a Fit here means quota reserved, and Kueue admits the workload once each check is Ready.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from aks_kueue.kueue.admission_checks import PENDING
from aks_kueue.kueue.views import ClusterQueue


def with_admission_checks(manifests: Iterable[Mapping[str, Any]], decisions: list[dict[str, Any]]
                          ) -> list[dict[str, Any]]:
    """The decisions, each with `admissionChecks: [{name, state}]`."""
    queues = {queue.name: queue for queue in (ClusterQueue.of(m) for m in manifests if m.get("kind") == "ClusterQueue")}
    for decision in decisions:
        queue = queues.get(decision.get("clusterQueue") or "")
        if queue is None:
            decision["admissionChecks"] = []
            continue
        reserved = str(decision.get("mode")) == "Fit"
        assigned = {f for pod_set in decision.get("podSets") or [] for f in pod_set["flavors"].values()}
        decision["admissionChecks"] = [{"name": name, "state": PENDING}
                                       for name in queue.checks_for(assigned if reserved else None)]
    return decisions
