"""`kueue-no-preview-train-in-prod`: finding managed-preview-train-in-production (`routing.py`)."""

from __future__ import annotations

from aks_kueue.policies import routing
from aks_kueue.policies.base import judged_policy

POLICY = judged_policy(
    routing.PREVIEW_TRAIN,
    "A production stack does not let the managed Kueue extension auto-upgrade on the preview release train "
    "unless it opts in with allowPreviewReleaseTrain.",
    properties={"allowPreviewReleaseTrain": {
        "type": "boolean", "default": False, "description": "accept the preview train in production stacks"}},
    keep=lambda finding, reading, config: not config.get("allowPreviewReleaseTrain"))
