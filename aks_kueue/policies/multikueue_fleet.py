"""`kueue-multikueue-fleet`: a MultiKueue fleet judged as one (`judge/fleet.py`, `routing.py`)."""

from __future__ import annotations

from aks_kueue.policies import routing
from aks_kueue.policies.base import VM_OVERHEAD, judged_policy

POLICY = judged_policy(
    routing.FLEET,
    "A MultiKueue fleet works as one: every expected workload runs on a worker, the manager's quota is backed by "
    "the workers', each worker has the manager's teams and integrations, and the manager can connect to it with a "
    "kubeconfig Kueue accepts.",
    properties=VM_OVERHEAD)
