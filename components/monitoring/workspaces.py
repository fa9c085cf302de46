"""Where monitoring data is kept: the Azure Monitor workspace and the Log Analytics workspace.

This part comes before the cluster: the cluster's `omsagent` add-on names the Log Analytics
workspace, so the workspace must exist first. The cluster component creates it right after
the resource group and merges `cluster_inputs` into the ManagedCluster. Existing workspaces
(`azureMonitorWorkspaceId`, `logAnalyticsWorkspaceId`) are used as they are, never changed.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import pulumi

from aks_kueue.settings.monitoring import Monitoring
from components import Component
from components.monitoring.cluster_inputs import cluster_inputs
from components.monitoring.names import MonitoringNames


@dataclass(frozen=True)
class MonitoringWorkspacesArgs:
    monitoring: Monitoring
    resource_group_name: pulumi.Input[str]
    location: str
    cluster_name: str
    tags: Mapping[str, str] = field(default_factory=dict)


class MonitoringWorkspaces(Component, kind="MonitoringWorkspaces"):
    azure_monitor_workspace_id: Optional[pulumi.Output[str]]
    log_analytics_workspace_id: Optional[pulumi.Output[str]]

    def __init__(self, name: str, args: MonitoringWorkspacesArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        settings = args.monitoring
        names = MonitoringNames(args.cluster_name, args.location)

        def workspace(wanted: bool, existing: Optional[str], module: str, kind: str, suffix: str, **inputs):
            """The id of the workspace named in the settings, else of the one created here (`module.kind`)."""
            if not wanted:
                return None
            if existing:
                return pulumi.Output.from_input(existing)
            created = getattr(importlib.import_module(f"pulumi_azure_native.{module}"), kind)(
                f"{name}-{suffix}", resource_group_name=args.resource_group_name, location=args.location,
                tags=dict(args.tags), opts=self.child(), **inputs)
            return created.id

        self.azure_monitor_workspace_id = workspace(
            settings.managed_prometheus, settings.azure_monitor_workspace_id, "monitor", "AzureMonitorWorkspace",
            "prometheus", azure_monitor_workspace_name=names.azure_monitor_workspace)
        self.log_analytics_workspace_id = workspace(
            settings.container_insights, settings.log_analytics_workspace_id, "operationalinsights", "Workspace",
            "logs", workspace_name=names.log_analytics_workspace, sku={"name": "PerGB2018"},
            retention_in_days=settings.log_retention_days)
        self.cluster_inputs: dict[str, Any] = cluster_inputs(settings, self.log_analytics_workspace_id)
        self.register_outputs({
            "azureMonitorWorkspaceId": self.azure_monitor_workspace_id,
            "logAnalyticsWorkspaceId": self.log_analytics_workspace_id,
        })
