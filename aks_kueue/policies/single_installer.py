"""`kueue-single-installer`: findings installers-conflict, installer-missing (`routing.py`)."""

from __future__ import annotations

from aks_kueue.policies import routing
from aks_kueue.policies.base import judged_policy

POLICY = judged_policy(
    routing.SINGLE_INSTALLER,
    "Kueue is installed exactly once: the AKS managed extension or the Helm chart, never both, and never "
    "missing while Kueue objects exist.")
