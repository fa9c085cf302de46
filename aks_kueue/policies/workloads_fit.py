"""`kueue-expected-workloads-fit`: findings expected-workload-invalid, workload-not-admitted, pod-fits-no-
node, podset-exceeds-pools, podset-conflicting-flavors, podset-unprovisionable, podset-exceeds-host,
topology-request-mismatch (`routing.py`)."""

from __future__ import annotations

from aks_kueue.policies import routing
from aks_kueue.policies.base import VM_OVERHEAD, judged_policy

POLICY = judged_policy(
    routing.WORKLOADS_FIT,
    "Every expected workload is a valid Kueue Workload on an existing queue, is admitted by its ClusterQueue "
    "alone on an empty cluster, its pods fit the nodes of the pools its flavors select, a ProvisioningRequest "
    "check can provision them, and its topology request can be placed.",
    properties=VM_OVERHEAD)
