"""The admission checks each simulated workload waits for (`admissionChecks` of `simulate --json`).

Which checks a Workload gets is Kueue's rule (`kueue/admission_checks.py`): a workload that
reserves quota (mode Fit) gets the checks of its ClusterQueue whose flavors meet the flavors
assigned to it; one that does not (Preempt, NoFit) gets the checks that apply to every flavor
of its ClusterQueue. Offline every check is `Pending`: only its controller (for a
ProvisioningRequest check, the cluster autoscaler's answer) makes it `Ready` or `Rejected`, so
a Fit here means quota reserved, and Kueue admits the workload once each check is Ready.
"""

from __future__ import annotations

from typing import Any, Iterable

from aks_kueue.kueue.admission_checks import PENDING, checks_for


def with_admission_checks(manifests: Iterable[dict], decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The decisions, each with `admissionChecks: [{name, state}]`."""
    queues = {(m.get("metadata") or {}).get("name"): m.get("spec") or {}
              for m in manifests if m.get("kind") == "ClusterQueue"}
    for decision in decisions:
        spec = queues.get(decision.get("clusterQueue"))
        if not isinstance(spec, dict):
            decision["admissionChecks"] = []
            continue
        reserved = str(decision.get("mode")) == "Fit"
        assigned = {f for pod_set in decision.get("podSets") or [] for f in pod_set["flavors"].values()}
        decision["admissionChecks"] = [{"name": name, "state": PENDING}
                                       for name in checks_for(spec, assigned if reserved else None)]
    return decisions
