"""Where monitoring data is kept: the Azure Monitor workspace and the Log Analytics workspace.

This part comes before the cluster: the cluster's `omsagent` add-on names the Log Analytics
workspace, so the workspace must exist first. The cluster component creates it right after
the resource group and merges `cluster_inputs` into the ManagedCluster. Existing workspaces
(`azureMonitorWorkspaceId`, `logAnalyticsWorkspaceId`) are used as they are, never changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import pulumi

from aks_kueue.settings.monitoring import Monitoring
from components import token
from components.monitoring.cluster_inputs import cluster_inputs
from components.monitoring.names import MonitoringNames


@dataclass(frozen=True)
class MonitoringWorkspacesArgs:
    monitoring: Monitoring
    resource_group_name: pulumi.Input[str]
    location: str
    cluster_name: str
    tags: Mapping[str, str] = field(default_factory=dict)


class MonitoringWorkspaces(pulumi.ComponentResource):
    azure_monitor_workspace_id: Optional[pulumi.Output[str]]
    log_analytics_workspace_id: Optional[pulumi.Output[str]]

    def __init__(self, name: str, args: MonitoringWorkspacesArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(token("MonitoringWorkspaces"), name, None, opts)
        settings = args.monitoring
        names = MonitoringNames(args.cluster_name, args.location)
        child = pulumi.ResourceOptions(parent=self)
        self.azure_monitor_workspace_id = None
        self.log_analytics_workspace_id = None
        if settings.managed_prometheus:
            if settings.azure_monitor_workspace_id:
                self.azure_monitor_workspace_id = pulumi.Output.from_input(settings.azure_monitor_workspace_id)
            else:
                from pulumi_azure_native import monitor

                workspace = monitor.AzureMonitorWorkspace(
                    f"{name}-prometheus", resource_group_name=args.resource_group_name,
                    azure_monitor_workspace_name=names.azure_monitor_workspace, location=args.location,
                    tags=dict(args.tags), opts=child)
                self.azure_monitor_workspace_id = workspace.id
        if settings.container_insights:
            if settings.log_analytics_workspace_id:
                self.log_analytics_workspace_id = pulumi.Output.from_input(settings.log_analytics_workspace_id)
            else:
                from pulumi_azure_native import operationalinsights

                workspace = operationalinsights.Workspace(
                    f"{name}-logs", resource_group_name=args.resource_group_name,
                    workspace_name=names.log_analytics_workspace, location=args.location,
                    sku=operationalinsights.WorkspaceSkuArgs(name="PerGB2018"),
                    retention_in_days=settings.log_retention_days, tags=dict(args.tags), opts=child)
                self.log_analytics_workspace_id = workspace.id
        self.cluster_inputs: dict[str, Any] = cluster_inputs(settings, self.log_analytics_workspace_id)
        self.register_outputs({
            "azureMonitorWorkspaceId": self.azure_monitor_workspace_id,
            "logAnalyticsWorkspaceId": self.log_analytics_workspace_id,
        })
