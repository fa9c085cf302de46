"""`kueue-install-mode`: findings object-not-after-installer, helm-chart-series, unknown-integration,
managed-version-not-held (`routing.py`)."""

from __future__ import annotations

from aks_kueue.policies import routing
from aks_kueue.policies.base import judged_policy

POLICY = judged_policy(
    routing.INSTALL_MODE,
    "Every Kueue object depends on the installer; a Helm install pins the chart series whose API the objects "
    "use and names only known integrations; a pinned extension version has auto-upgrade off.")
