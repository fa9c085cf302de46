"""`kueue-managed-extension-region`: the warning managed-region (`routing.py`)."""

from __future__ import annotations

from pulumi_policy import EnforcementLevel

from aks_kueue.policies import routing
from aks_kueue.policies.base import judged_policy

POLICY = judged_policy(
    routing.MANAGED_REGION,
    "The AKS managed Kueue extension is documented only in some regions. Advisory like every warning: make it "
    "mandatory in the policy config, or list a region in additionalRegions if you know the extension is offered"
    " there.",
    level=EnforcementLevel.ADVISORY,
    properties={"additionalRegions": {
        "type": "array", "items": {"type": "string"}, "default": [],
        "description": "regions where you know the extension is offered beyond the documented ones"}},
    keep=lambda finding, reading, config: (finding.numbers.get("region")
                                           not in set(config.get("additionalRegions") or [])))
