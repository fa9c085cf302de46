"""Observability for the cluster: managed Prometheus, Container Insights, the Kueue and GPU scrapes, Grafana.

Two components, because the cluster sits between them:
- `MonitoringWorkspaces` (workspaces.py), before the cluster: the Azure Monitor and Log Analytics
  workspaces, and the ManagedCluster inputs (`cluster_inputs.py`) that turn the add-ons on.
- `Monitoring` (here), after it: what ARM needs besides the cluster's own properties, and what runs
  in the cluster.

Managed Prometheus, as Microsoft's ARM template sets it up (Azure/prometheus-collector,
`AddonArmTemplate/FullAzureMonitorMetricsProfile.json`): a data collection endpoint (kind Linux), a
data collection rule whose `prometheusForwarder` source sends the `Microsoft-PrometheusMetrics`
stream to the Azure Monitor workspace (`monitoringAccounts`), and that rule's association with the
cluster. Container Insights in its managed-identity (DCR-based) form (microsoft/Docker-Provider,
`scripts/onboarding/aks/onboarding-using-msi-auth/existingClusterOnboarding.json`): a rule whose
`ContainerInsights` extension source sends the preset's streams to the Log Analytics workspace, and
its association named `ContainerInsightsExtension`. Microsoft's templates create the rules before
turning the add-ons on; here the cluster comes first (as the azurerm Terraform path does), and the
agents pick the rules up once associated.

Dashboards: an Azure Managed Grafana (Standard) integrated with the Azure Monitor workspace, whose
identity gets "Monitoring Data Reader" on it (as in Microsoft's template); the cluster's Entra admin
groups get "Grafana Admin". ARM cannot hold a dashboard's content, so `dashboards/kueue.json` is
imported with the command in the `monitoring` output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from aks_kueue.aks import dcgm_exporter
from aks_kueue.settings.monitoring import Monitoring as MonitoringSettings
from aks_kueue.versions import (DCGM_EXPORTER_CHART, DCGM_EXPORTER_CHART_REPOSITORY, DCGM_EXPORTER_CHART_VERSION,
                                KUEUE_NAMESPACE)
from components import Component
from components.azure_object import role_definition
from components.kubernetes_object import KubernetesObject
from components.monitoring import scrape
from components.monitoring.names import CONTAINER_INSIGHTS_ASSOCIATION, MonitoringNames
from components.monitoring.workspaces import MonitoringWorkspaces, MonitoringWorkspacesArgs

__all__ = ["Monitoring", "MonitoringArgs", "MonitoringWorkspaces", "MonitoringWorkspacesArgs"]

PROMETHEUS_STREAM = "Microsoft-PrometheusMetrics"
# Built-in role definitions (Azure RBAC built-in roles reference).
MONITORING_DATA_READER_ROLE = "b0d8363b-8ddd-447d-831f-62ca05bff136"
GRAFANA_ADMIN_ROLE = "22926164-76b3-42b3-bc55-97df8dab3e41"


@dataclass(frozen=True)
class MonitoringArgs:
    monitoring: MonitoringSettings
    location: str
    resource_group_name: pulumi.Input[str]
    cluster_name: str
    cluster_id: pulumi.Input[str]
    workspaces: MonitoringWorkspaces
    provider: k8s.Provider
    # Kueue's installer (Helm release or extension) and its mode; None when Kueue is not installed.
    kueue_installer: Optional[pulumi.Resource] = None
    kueue_install: Optional[str] = None
    # The NVIDIA pools whose driver AKS installs, and their AgentPool resources.
    gpu_pools: Sequence[dcgm_exporter.GpuPool] = ()
    gpu_node_pools: Sequence[pulumi.Resource] = ()
    grafana_admin_group_ids: Sequence[str] = ()
    tags: Mapping[str, str] = field(default_factory=dict)


class Monitoring(Component, kind="Monitoring"):
    summary: dict[str, Any]

    def __init__(self, name: str, args: MonitoringArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        self._prefix = name  # the names of its resources start with its own
        self._args = args
        self._names = MonitoringNames(args.cluster_name, args.location)
        settings = args.monitoring
        self.summary = {}
        # The scrapes go after managed Prometheus's association with the cluster.
        scrape_after = [self._prometheus()] if settings.managed_prometheus else []
        if settings.container_insights:
            self._container_insights()
        if settings.dashboards:
            self._grafana()
        if settings.kueue_metrics and args.kueue_installer is not None:
            self._kueue_scrape(args.kueue_installer, scrape_after)
        if settings.gpu_metrics and args.gpu_pools:
            self._dcgm(scrape_after)
        self.register_outputs({"monitoring": self.summary})

    def _kubernetes(self, depends_on: Sequence[pulumi.Resource]) -> pulumi.ResourceOptions:
        return self.child(provider=self._args.provider, depends_on=list(depends_on))

    def _prometheus(self) -> pulumi.Resource:
        from pulumi_azure_native import monitor

        args, names = self._args, self._names
        endpoint = monitor.DataCollectionEndpoint(
            f"{self._prefix}-prometheus-endpoint", resource_group_name=args.resource_group_name,
            data_collection_endpoint_name=names.prometheus_endpoint, location=args.location, kind="Linux",
            description="Managed Prometheus ingestion for the AKS cluster", tags=dict(args.tags), opts=self.child())
        account = "MonitoringAccount1"
        self.summary["azureMonitorWorkspaceId"] = args.workspaces.azure_monitor_workspace_id
        return self._collection(
            "prometheus", names.prometheus_rule, "Managed Prometheus: the cluster's metrics to its Azure Monitor "
            "workspace", [PROMETHEUS_STREAM], account, names.prometheus_association,
            "Managed Prometheus for this AKS cluster; deleting it stops metric collection",
            data_collection_endpoint_id=endpoint.id,
            data_sources=monitor.DataCollectionRuleDataSourcesArgs(prometheus_forwarder=[
                monitor.PrometheusForwarderDataSourceArgs(
                    name="PrometheusDataSource", streams=[PROMETHEUS_STREAM], label_include_filter={})]),
            destinations=monitor.DataCollectionRuleDestinationsArgs(monitoring_accounts=[
                monitor.MonitoringAccountDestinationArgs(
                    account_resource_id=args.workspaces.azure_monitor_workspace_id, name=account)]))

    def _container_insights(self) -> None:
        from pulumi_azure_native import monitor

        args, settings = self._args, self._args.monitoring
        destination = "ciworkspace"
        streams = list(settings.container_insights_streams)
        self._collection(
            "insights", self._names.container_insights_rule,
            f"Container Insights ({settings.effective_container_insights_preset} preset)", streams, destination,
            CONTAINER_INSIGHTS_ASSOCIATION, "Container Insights for this AKS cluster; deleting it stops log collection",
            data_sources=monitor.DataCollectionRuleDataSourcesArgs(extensions=[monitor.ExtensionDataSourceArgs(
                name="ContainerInsightsExtension", extension_name="ContainerInsights", streams=streams,
                extension_settings={"dataCollectionSettings": {
                    "interval": "1m", "namespaceFilteringMode": "Off", "enableContainerLogV2": True}})]),
            destinations=monitor.DataCollectionRuleDestinationsArgs(log_analytics=[monitor.LogAnalyticsDestinationArgs(
                workspace_resource_id=args.workspaces.log_analytics_workspace_id, name=destination)]))
        self.summary["logAnalyticsWorkspaceId"] = args.workspaces.log_analytics_workspace_id

    def _collection(self, part: str, rule_name: str, description: str, streams: list[str], destination: str,
                    association: str, association_description: str, **sources) -> pulumi.Resource:
        """A data collection rule that sends `streams` to `destination`, and its association with the cluster."""
        from pulumi_azure_native import monitor

        args = self._args
        rule = monitor.DataCollectionRule(
            f"{self._prefix}-{part}-rule", resource_group_name=args.resource_group_name,
            data_collection_rule_name=rule_name, location=args.location, kind="Linux", description=description,
            data_flows=[monitor.DataFlowArgs(streams=streams, destinations=[destination])],
            tags=dict(args.tags), opts=self.child(), **sources)
        return monitor.DataCollectionRuleAssociation(
            f"{self._prefix}-{part}-association", association_name=association, resource_uri=args.cluster_id,
            data_collection_rule_id=rule.id, description=association_description, opts=self.child())

    def _grafana(self) -> None:
        from pulumi_azure_native import authorization, dashboard

        from components.monitoring.dashboard import DASHBOARD_FILE

        args = self._args
        grafana = dashboard.Grafana(
            f"{self._prefix}-grafana", resource_group_name=args.resource_group_name,
            workspace_name=self._names.grafana, location=args.location,
            sku=dashboard.ResourceSkuArgs(name="Standard"),
            identity=dashboard.ManagedServiceIdentityArgs(type="SystemAssigned"),
            properties=dashboard.ManagedGrafanaPropertiesArgs(
                api_key="Disabled", public_network_access="Enabled",
                grafana_integrations=dashboard.GrafanaIntegrationsArgs(azure_monitor_workspace_integrations=[
                    dashboard.AzureMonitorWorkspaceIntegrationArgs(
                        azure_monitor_workspace_resource_id=args.workspaces.azure_monitor_workspace_id)])),
            tags=dict(args.tags), opts=self.child())
        subscription = authorization.get_client_config_output().subscription_id
        authorization.RoleAssignment(
            f"{self._prefix}-grafana-reads-prometheus", scope=args.workspaces.azure_monitor_workspace_id,
            principal_id=grafana.identity.apply(lambda identity: identity.principal_id if identity else None),
            principal_type="ServicePrincipal",
            role_definition_id=role_definition(subscription, MONITORING_DATA_READER_ROLE),
            opts=self.child(depends_on=[grafana]))
        for index, group in enumerate(args.grafana_admin_group_ids):
            authorization.RoleAssignment(
                f"{self._prefix}-grafana-admins-{index}", scope=grafana.id, principal_id=group,
                principal_type="Group", role_definition_id=role_definition(subscription, GRAFANA_ADMIN_ROLE),
                opts=self.child())
        dashboard_file = DASHBOARD_FILE.relative_to(DASHBOARD_FILE.parents[3]).as_posix()
        self.summary["grafana"] = {
            "name": self._names.grafana,
            "endpoint": grafana.properties.apply(lambda p: p.endpoint if p else None),
            "dashboard": dashboard_file,
            "importDashboard": pulumi.Output.concat(
                "az grafana dashboard import -g ", args.resource_group_name, f" -n {self._names.grafana} "
                f"--definition {dashboard_file} --overwrite true"),
        }

    def _kueue_scrape(self, installer: pulumi.Resource, after: Sequence[pulumi.Resource]) -> None:
        reader = KubernetesObject(f"{self._prefix}-kueue-metrics-reader", scrape.kueue_metrics_reader(),
                                  self._kubernetes([]))
        binding = KubernetesObject(f"{self._prefix}-kueue-metrics-reader-binding",
                                   scrape.kueue_metrics_reader_binding(), self._kubernetes([reader]))
        # The ServiceMonitor lives in Kueue's namespace, which the installer creates.
        monitor = scrape.kueue_service_monitor()
        KubernetesObject(f"{self._prefix}-kueue-servicemonitor", monitor,
                         self._kubernetes([installer, binding, *after]))
        self.summary["kueueScrape"] = {
            "serviceMonitor": f"{KUEUE_NAMESPACE}/{monitor['metadata']['name']}",
            "verify": f"kubectl -n {KUEUE_NAMESPACE} get servicemonitors.azmonitoring.coreos.com",
        }
        if self._args.kueue_install == "managed":
            self.summary["kueueScrape"]["note"] = (
                "the managed extension documents no setting for metrics.enableClusterQueueResources, so the "
                "quota and borrowing metrics (and the dashboard's quota panels) may stay empty")

    def _dcgm(self, after: Sequence[pulumi.Resource]) -> None:
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs

        args = self._args
        release = Release(
            f"{self._prefix}-dcgm-exporter", name=dcgm_exporter.RELEASE, chart=DCGM_EXPORTER_CHART,
            version=DCGM_EXPORTER_CHART_VERSION,
            repository_opts=RepositoryOptsArgs(repo=DCGM_EXPORTER_CHART_REPOSITORY),
            namespace=dcgm_exporter.NAMESPACE, values=dcgm_exporter.helm_values(args.gpu_pools), timeout=600,
            opts=self._kubernetes(args.gpu_node_pools))
        monitor = scrape.dcgm_pod_monitor()
        KubernetesObject(f"{self._prefix}-dcgm-podmonitor", monitor, self._kubernetes([release, *after]))
        self.summary["gpuMetrics"] = {
            "pools": [p.name for p in args.gpu_pools], "chart": f"{DCGM_EXPORTER_CHART} {DCGM_EXPORTER_CHART_VERSION}",
            "podMonitor": f"{dcgm_exporter.NAMESPACE}/{monitor['metadata']['name']}",
        }
