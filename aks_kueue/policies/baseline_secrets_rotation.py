"""A check of the AKS security baseline (`judge/security.py`): mandatory in production stacks; in
development stacks its finding is a warning of `aks-kueue-warnings`."""

from __future__ import annotations

from aks_kueue.judge import security
from aks_kueue.policies.base import baseline_policy

POLICY = baseline_policy(security.SECRETS_ROTATION)
