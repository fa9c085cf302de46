"""`aks-kueue:monitoring`: Azure Monitor managed Prometheus, Container Insights, the Kueue
scrape, GPU metrics and the Grafana dashboards.

Leaving the key out of a production stack turns on what production requires, managed
Prometheus and Container Insights, with the Kueue and GPU scrapes that need nothing else
(`PRODUCTION_MONITORING`); the dashboards, a billed Grafana instance, only when written. Leaving
it out of a development stack leaves monitoring alone: the program neither turns it on nor off.
Writing it, even as `{}`, turns on everything it lists, with these defaults:

- `managedPrometheus: true`: an Azure Monitor workspace, its data collection endpoint,
  rule and association, and the cluster's metrics profile (`azureMonitorProfile.metrics`).
- `containerInsights: true`: a Log Analytics workspace, the Container Insights data
  collection rule and association, and the `omsagent` add-on with managed-identity auth.
- `kueueMetrics`, `gpuMetrics`, `dashboards`: default to `managedPrometheus`, since each
  needs it (the scrape objects' CRDs and the scraper come with the add-on; the dashboards
  query its workspace). Setting one true while `managedPrometheus` is false is an error.
- `containerInsightsPreset`: the portal's cost presets; `logsAndEvents` (ContainerLogV2,
  KubeEvents, KubePodInventory) is Microsoft's recommendation next to managed Prometheus
  and the default then, `standard` (every Container Insights table) otherwise.

`false` turns a part off explicitly (the add-on or profile is disabled on the cluster).
`azureMonitorWorkspaceId` and `logAnalyticsWorkspaceId` name existing workspaces, which must be
in the cluster's region (the data collection rules are created there).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Optional

from pydantic import AfterValidator, Field, model_validator

from aks_kueue.settings.base import ConfigModel, check, matching, problem, snake


def _resource_id(provider: str, kind: str) -> AfterValidator:
    """The check of a field holding an ARM resource id, as `az ... show --query id` prints it; ARM compares them
    case-insensitively."""
    pattern = re.compile(r"/subscriptions/[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}/resourceGroups/[-\w._()]{1,90}"
                         rf"/providers/{re.escape(provider)}/[A-Za-z0-9][-A-Za-z0-9]{{2,62}}", re.IGNORECASE)
    return matching(pattern, f"is not {kind} resource id",
                    f"write it as /subscriptions/<id>/resourceGroups/<group>/providers/{provider}/<name>")


AzureMonitorWorkspaceId = Annotated[str, _resource_id("Microsoft.Monitor/accounts", "an Azure Monitor workspace")]
LogAnalyticsWorkspaceId = Annotated[str, _resource_id("Microsoft.OperationalInsights/workspaces",
                                                      "a Log Analytics workspace")]
_ONLY_WITH_INSIGHTS = "is used only with containerInsights: true"
_TURN_INSIGHTS_ON = "remove it or turn containerInsights on"
# The switches that need managed Prometheus, and what each of them would be missing without it.
_NEEDS_PROMETHEUS = {
    "kueueMetrics": "the Kueue scrape needs managed Prometheus (its ServiceMonitor CRD and the scraper come "
                    "with the add-on)",
    "gpuMetrics": "GPU metrics are scraped by managed Prometheus",
    "dashboards": "the dashboards query the Azure Monitor workspace of managed Prometheus",
}
# Container Insights streams of the portal's cost presets (Microsoft's onboarding template and
# "Configure Container insights data collection"): ContainerLogV2 replaces ContainerLog, and
# RetinaNetworkFlowLogs is left out because it needs the high-scale ingestion endpoint.
CONTAINER_INSIGHTS_STREAMS = {
    "logsAndEvents": ("Microsoft-ContainerLogV2", "Microsoft-KubeEvents", "Microsoft-KubePodInventory"),
    "standard": ("Microsoft-ContainerLogV2", "Microsoft-KubeEvents", "Microsoft-KubePodInventory",
                 "Microsoft-KubeNodeInventory", "Microsoft-KubePVInventory", "Microsoft-KubeServices",
                 "Microsoft-KubeMonAgentEvents", "Microsoft-InsightsMetrics", "Microsoft-ContainerInventory",
                 "Microsoft-ContainerNodeInventory", "Microsoft-Perf"),
}


# What an absent `aks-kueue:monitoring` means in a production stack.
PRODUCTION_MONITORING = {"dashboards": False}


class Monitoring(ConfigModel):
    managed_prometheus: bool = True
    container_insights: bool = True
    kueue_metrics: bool = True
    gpu_metrics: bool = True
    dashboards: bool = True
    azure_monitor_workspace_id: Optional[AzureMonitorWorkspaceId] = None
    log_analytics_workspace_id: Optional[LogAnalyticsWorkspaceId] = None
    log_retention_days: int = Field(30, ge=30, le=730)
    container_insights_preset: Optional[Literal["logsAndEvents", "standard"]] = None

    @model_validator(mode="before")
    @classmethod
    def _defaults_follow_prometheus(cls, data: Any) -> Any:
        """Unset dependent switches take managedPrometheus's value; the checks below see what was written."""
        if not isinstance(data, dict):
            return data
        prometheus = data.get("managedPrometheus", data.get("managed_prometheus", True))
        if not isinstance(prometheus, bool):
            return data
        filled = dict(data)
        for key in _NEEDS_PROMETHEUS:
            if key not in filled and snake(key) not in filled:
                filled[key] = prometheus
        return filled

    @check(first=True)
    def _consistent(self):
        if not self.managed_prometheus:
            for key, why in _NEEDS_PROMETHEUS.items():
                if getattr(self, snake(key)):
                    yield problem(why, fix=f"set managedPrometheus: true or {key}: false", at=key)
            if self.azure_monitor_workspace_id is not None:
                yield problem("is used only with managedPrometheus: true",
                              fix="remove it or turn managedPrometheus on", at="azureMonitorWorkspaceId")
        if not self.container_insights:
            for key in ("logAnalyticsWorkspaceId", "containerInsightsPreset"):
                if getattr(self, snake(key)) is not None:
                    yield problem(_ONLY_WITH_INSIGHTS, fix=_TURN_INSIGHTS_ON, at=key)
        if "log_retention_days" in self.model_fields_set:
            if not self.container_insights:
                yield problem(_ONLY_WITH_INSIGHTS, fix=_TURN_INSIGHTS_ON, at="logRetentionDays")
            if self.log_analytics_workspace_id is not None:
                yield problem("applies to the Log Analytics workspace this program creates; an existing workspace "
                              "(logAnalyticsWorkspaceId) keeps its own retention, so remove it", at="logRetentionDays")

    @property
    def effective_container_insights_preset(self) -> str:
        if self.container_insights_preset is not None:
            return self.container_insights_preset
        return "logsAndEvents" if self.managed_prometheus else "standard"

    @property
    def container_insights_streams(self) -> tuple[str, ...]:
        return CONTAINER_INSIGHTS_STREAMS[self.effective_container_insights_preset]

    @property
    def cluster_queue_resource_metrics(self) -> bool:
        """Kueue's Configuration needs `metrics.enableClusterQueueResources: true` for the quota
        and borrowing metrics the dashboard shows."""
        return self.kueue_metrics
