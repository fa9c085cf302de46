"""Azure names of the monitoring resources, derived from the cluster's name and region.

The data collection names follow Microsoft's onboarding templates, so the portal and `az aks`
recognise them: `MSProm-<region>-<cluster>` for managed Prometheus (endpoint cut to 44 characters,
rule to 64; Azure/prometheus-collector `AddonArmTemplate/FullAzureMonitorMetricsProfile.json`) and
`MSCI-<region>-<cluster>` for Container Insights (64; microsoft/Docker-Provider onboarding template),
whose association must be named `ContainerInsightsExtension`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CONTAINER_INSIGHTS_ASSOCIATION = "ContainerInsightsExtension"


def _fit(text: str, limit: int) -> str:
    """Letters, digits and '-' only, at most `limit` characters, never ending in '-'."""
    return re.sub(r"[^A-Za-z0-9-]", "-", text)[:limit].rstrip("-")


@dataclass(frozen=True)
class MonitoringNames:
    cluster: str
    region: str

    @property
    def azure_monitor_workspace(self) -> str:
        return _fit(self.cluster, 40) + "-amw"

    @property
    def log_analytics_workspace(self) -> str:
        return _fit(self.cluster, 59) + "-law"

    @property
    def grafana(self) -> str:
        """Azure Managed Grafana: 2-23 characters, starting with a letter."""
        prefix = "" if self.cluster[:1].isalpha() else "g"
        return prefix + _fit(self.cluster, 18 - len(prefix)) + "-graf"

    @property
    def prometheus_endpoint(self) -> str:
        return _fit(f"MSProm-{self.region}-{self.cluster}", 44)

    @property
    def prometheus_rule(self) -> str:
        return _fit(f"MSProm-{self.region}-{self.cluster}", 64)

    prometheus_association = prometheus_rule  # the rule and its association share the name

    @property
    def container_insights_rule(self) -> str:
        return _fit(f"MSCI-{self.region}-{self.cluster}", 64)
