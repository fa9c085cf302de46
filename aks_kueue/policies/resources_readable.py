"""`aks-kueue-resources-readable`: findings resource-unreadable (`routing.py`)."""

from __future__ import annotations

from aks_kueue.policies import routing
from aks_kueue.policies.base import judged_policy

POLICY = judged_policy(
    routing.READABLE,
    "Every node pool, cluster, Kueue installer, Kueue object and the program's model ConfigMap has the shape "
    "the pack reads; one it cannot read is left out of the other checks, so it is reported here.")
