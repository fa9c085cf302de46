"""The ManagedCluster inputs monitoring needs, for the cluster component to merge into its own.

Both are ManagedCluster properties, so they cannot be separate resources:
- managed Prometheus: `azureMonitorProfile.metrics.enabled` deploys the `ama-metrics` add-on and
  its `azmonitoring.coreos.com` CRDs (Microsoft's ARM template in Azure/prometheus-collector,
  `AddonArmTemplate/FullAzureMonitorMetricsProfile.json`, sets exactly this on the cluster);
- Container Insights: the `omsagent` add-on with `logAnalyticsWorkspaceResourceID` and
  `useAADAuth: "true"`, the managed-identity (DCR-based) mode (microsoft/Docker-Provider,
  `scripts/onboarding/aks/onboarding-using-msi-auth/existingClusterOnboarding.json`).
  The workspace must exist before the cluster is created or updated with this add-on.

Without `aks-kueue:monitoring` nothing is returned, so a stack that does not use the key sends
the cluster exactly what it sent before; `false` switches send an explicit off.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

import pulumi
from pulumi_azure_native import containerservice as cs

from aks_kueue.settings.monitoring import Monitoring

CONTAINER_INSIGHTS_ADDON = "omsagent"


def cluster_inputs(monitoring: Optional[Monitoring],
                   log_analytics_workspace_id: Optional[pulumi.Input[str]] = None) -> dict[str, Any]:
    """`azure_monitor_profile` and `addon_profiles` keyword arguments of `containerservice.ManagedCluster`."""
    if monitoring is None:
        return {}
    if monitoring.container_insights and log_analytics_workspace_id is None:
        raise ValueError("Container Insights needs the Log Analytics workspace id (MonitoringWorkspaces)")
    config: dict[str, Any] = {"logAnalyticsWorkspaceResourceID": log_analytics_workspace_id, "useAADAuth": "true"}
    omsagent = (cs.ManagedClusterAddonProfileArgs(enabled=True, config=config)
                if monitoring.container_insights else cs.ManagedClusterAddonProfileArgs(enabled=False))
    return {
        "azure_monitor_profile": cs.ManagedClusterAzureMonitorProfileArgs(
            metrics=cs.ManagedClusterAzureMonitorProfileMetricsArgs(enabled=monitoring.managed_prometheus)),
        "addon_profiles": {CONTAINER_INSIGHTS_ADDON: omsagent},
    }


def merge_cluster_inputs(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `extra` added; add-on profiles are merged by add-on name, any other clash is a bug."""
    merged = dict(base)
    for key, value in extra.items():
        if key == "addon_profiles" and merged.get(key):
            clash = set(merged[key]) & set(value)
            if clash:
                raise ValueError(f"add-on profile(s) {', '.join(sorted(clash))} set twice")
            merged[key] = {**merged[key], **value}
        elif key in merged and merged[key] is not None:
            raise ValueError(f"cluster input {key} set twice")
        else:
            merged[key] = value
    return merged
