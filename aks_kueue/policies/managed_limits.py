"""`kueue-managed-extension-limits`: findings managed-kubernetes-version, managed-node-provisioning
(`routing.py`)."""

from __future__ import annotations

from aks_kueue.policies import routing
from aks_kueue.policies.base import judged_policy

POLICY = judged_policy(
    routing.MANAGED_LIMITS,
    "The AKS managed Kueue extension runs on AKS 1.34 or later, with the cluster autoscaler (no node "
    "auto-provisioning).")
