"""`aks-kueue-warnings`: every warning no other policy reports (`routing.py`)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel

from aks_kueue.policies import routing
from aks_kueue.policies.base import judged_policy

POLICY = judged_policy(
    routing.WARNINGS,
    "Every warning of the judge that no other policy reports: placeholders left in the stack, single-member "
    "cohorts, facts nothing offline can verify, and the security baseline in development stacks.",
    level=EnforcementLevel.ADVISORY)
