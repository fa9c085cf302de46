"""The admission core: a Python model of Kueue v0.19's quota and flavor assignment.

Pure Python, no Pulumi. `Snapshot` is the entry point; see `snapshot` for the questions
it answers, `assigner` for flavor assignment, `preemption` for the Preempt judgement,
`quota` for the quota tree and `workloads` for what a Workload asks for.
"""

from aks_kueue.admission.snapshot import Decision, PodSetDecision, Snapshot
from aks_kueue.admission.workloads import WorkloadInfo, workload_info

__all__ = ["Snapshot", "Decision", "PodSetDecision", "WorkloadInfo", "workload_info"]
