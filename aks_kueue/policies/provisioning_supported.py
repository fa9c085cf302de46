"""`kueue-provisioning-request-supported`: finding provisioning-unavailable (`routing.py`)."""

from __future__ import annotations

from aks_kueue.policies import routing
from aks_kueue.policies.base import judged_policy

POLICY = judged_policy(
    routing.PROVISIONING,
    "Every ProvisioningRequest admission check a ClusterQueue uses can pass on AKS: its ProvisioningRequestConfig "
    "exists and names a class AKS's cluster autoscaler provides, and the cluster runs the cluster autoscaler (not "
    "node auto-provisioning) on Kubernetes 1.33 or later.")
