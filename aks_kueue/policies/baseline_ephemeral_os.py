"""A check of the AKS security baseline (`judge/security.py`): mandatory in production stacks; in
development stacks its finding is a warning of `aks-kueue-warnings`. What a pool is created with AKS
cannot change in place: for a pool the last deployment has (the model carrier's `existingPools.json`)
the finding is a warning in every stack, and so is a VM size the catalog does not know (not checked)."""

from __future__ import annotations

from aks_kueue.judge import security
from aks_kueue.policies.base import baseline_policy

POLICY = baseline_policy(security.EPHEMERAL_OS)
