"""`kueue-quota-fits-capacity`: findings quota-above-capacity, borrowing-above-capacity (`routing.py`)."""

from __future__ import annotations

from aks_kueue.policies import routing
from aks_kueue.policies.base import VM_OVERHEAD, judged_policy

POLICY = judged_policy(
    routing.QUOTA_FITS,
    "Kueue quota (nominal, and what a ClusterQueue can borrow) stays within what the node pools its flavors "
    "select can allocate at their autoscaler maximum.",
    properties=VM_OVERHEAD)
