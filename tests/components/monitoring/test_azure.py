"""The Azure side of monitoring as prod registers it, and every Azure input checked against the SDK's schema."""

from __future__ import annotations

import collections.abc
import importlib
import typing

import pytest

from aks_kueue.compat import pulumi_types
from aks_kueue.settings.monitoring import CONTAINER_INSIGHTS_STREAMS
from components.monitoring import GRAFANA_ADMIN_ROLE, MONITORING_DATA_READER_ROLE
from components.monitoring.names import MonitoringNames
from tests.components.monitoring.conftest import (AMW_TYPE, CLUSTER, DCE_TYPE, DCR_TYPE, DCRA_TYPE, GRAFANA_TYPE,
                                                  LAW_TYPE, POD_MONITOR, RELEASE, ROLE_TYPE, SERVICE_MONITOR, by_name,
                                                  offline_id, one)
from tests.conftest import edited, run_config, stack_doc

AMW = ("/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/shared/providers/"
       "Microsoft.Monitor/accounts/central")


# --- property names the Azure SDK accepts -------------------------------------------------------

def _shape(tp) -> typing.Optional[tuple]:
    """('object', Args) / ('list', shape) / ('map', shape) for SDK input types; None for scalars."""
    if isinstance(tp, type) and pulumi_types.is_input_type(tp):
        return ("object", tp)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (collections.abc.Sequence, list) and args:
        inner = _shape(args[0])
        return ("list", inner) if inner else None
    if origin in (collections.abc.Mapping, dict) and len(args) == 2:
        inner = _shape(args[1])
        return ("map", inner) if inner else None
    if origin is typing.Union:
        return next((s for s in map(_shape, args) if s), None)
    return None


def unknown_properties(args_class: type, inputs: dict, path: str = "") -> list[str]:
    """Every key of `inputs` (recursively) that `args_class` has no property for."""
    types = pulumi_types.input_type_types(args_class)
    found = []
    for key, value in inputs.items():
        if key not in types:
            found.append(path + key)
        else:
            found += _check(_shape(types[key]), value, f"{path}{key}")
    return found


def _check(shape, value, path: str) -> list[str]:
    if shape is None:
        return []
    kind, inner = shape
    if kind == "object":
        return unknown_properties(inner, value, path + ".") if isinstance(value, dict) else []
    if kind == "list" and isinstance(value, list):
        return [p for i, item in enumerate(value) for p in _check(inner, item, f"{path}[{i}]")]
    if kind == "map" and isinstance(value, dict):
        return [p for k, item in value.items() for p in _check(inner, item, f"{path}.{k}")]
    return []


def sdk_args_class(type_token: str) -> type:
    _, module, kind = type_token.split(":")
    return getattr(importlib.import_module(f"pulumi_azure_native.{module}"), f"{kind}Args")


def test_every_azure_input_of_prod_is_an_sdk_property(prod):
    azure = [r for r in prod.registrations if r.type.startswith("azure-native:")]
    assert {AMW_TYPE, LAW_TYPE, DCE_TYPE, DCR_TYPE, DCRA_TYPE, GRAFANA_TYPE, ROLE_TYPE} <= {r.type for r in azure}
    for resource in azure:
        assert unknown_properties(sdk_args_class(resource.type), resource.inputs) == [], resource.name


def test_the_checker_finds_a_misspelt_property():
    rule = sdk_args_class(DCR_TYPE)
    inputs = {"resourceGroupName": "rg", "dataFlows": [{"streams": ["x"], "destination": ["y"]}],
              "dataSources": {"prometheusForwarder": [{"name": "p", "stream": ["x"]}]}, "tags": {"any": "key"}}
    assert unknown_properties(rule, inputs) == ["dataFlows[0].destination", "dataSources.prometheusForwarder[0].stream"]


# --- what prod registers ---------------------------------------------------------------------------

def rule_with_stream(run, stream_source: str):
    found = [r for r in run.of_type(DCR_TYPE) if stream_source in r.inputs["dataSources"]]
    assert len(found) == 1
    return found[0]


def test_managed_prometheus_is_wired_as_arm_needs_it(prod):
    names = MonitoringNames("aks-batch-prod", "eastus")
    workspace, endpoint, cluster = one(prod, AMW_TYPE), one(prod, DCE_TYPE), one(prod, CLUSTER)
    assert workspace.inputs["azureMonitorWorkspaceName"] == names.azure_monitor_workspace
    assert endpoint.inputs["kind"] == "Linux" and endpoint.inputs["dataCollectionEndpointName"] == "MSProm-eastus-aks-batch-prod"
    rule = rule_with_stream(prod, "prometheusForwarder")
    assert rule.inputs["kind"] == "Linux" and rule.inputs["dataCollectionEndpointId"] == offline_id(endpoint)
    assert rule.inputs["dataSources"]["prometheusForwarder"] == [
        {"name": "PrometheusDataSource", "streams": ["Microsoft-PrometheusMetrics"], "labelIncludeFilter": {}}]
    (account,) = rule.inputs["destinations"]["monitoringAccounts"]
    assert account["accountResourceId"] == offline_id(workspace)
    assert rule.inputs["dataFlows"] == [{"streams": ["Microsoft-PrometheusMetrics"], "destinations": [account["name"]]}]
    association = by_name(prod, "monitoring-prometheus-association")
    assert association.inputs["resourceUri"] == offline_id(cluster)
    assert association.inputs["dataCollectionRuleId"] == offline_id(rule)
    assert cluster.inputs["azureMonitorProfile"]["metrics"]["enabled"] is True


def test_container_insights_is_wired_as_arm_needs_it(prod):
    workspace, cluster = one(prod, LAW_TYPE), one(prod, CLUSTER)
    assert workspace.inputs["sku"] == {"name": "PerGB2018"} and workspace.inputs["retentionInDays"] == 90
    rule = rule_with_stream(prod, "extensions")
    (extension,) = rule.inputs["dataSources"]["extensions"]
    assert extension["extensionName"] == "ContainerInsights"
    assert extension["streams"] == list(CONTAINER_INSIGHTS_STREAMS["logsAndEvents"])
    assert extension["extensionSettings"]["dataCollectionSettings"]["enableContainerLogV2"] is True
    (destination,) = rule.inputs["destinations"]["logAnalytics"]
    assert destination["workspaceResourceId"] == offline_id(workspace)
    assert rule.inputs["dataFlows"] == [{"streams": extension["streams"], "destinations": [destination["name"]]}]
    association = by_name(prod, "monitoring-insights-association")
    assert association.inputs["associationName"] == "ContainerInsightsExtension"
    assert association.inputs["resourceUri"] == offline_id(cluster)
    assert association.inputs["dataCollectionRuleId"] == offline_id(rule)


def test_grafana_reads_the_workspace_and_admins_administer_it(prod):
    grafana, workspace = one(prod, GRAFANA_TYPE), one(prod, AMW_TYPE)
    assert grafana.inputs["sku"] == {"name": "Standard"} and grafana.inputs["identity"] == {"type": "SystemAssigned"}
    integrations = grafana.inputs["properties"]["grafanaIntegrations"]["azureMonitorWorkspaceIntegrations"]
    assert integrations == [{"azureMonitorWorkspaceResourceId": offline_id(workspace)}]
    reader = by_name(prod, "monitoring-grafana-reads-prometheus")
    assert reader.inputs["scope"] == offline_id(workspace) and reader.inputs["principalType"] == "ServicePrincipal"
    assert reader.inputs["roleDefinitionId"].endswith(f"/roleDefinitions/{MONITORING_DATA_READER_ROLE}")
    assert grafana.urn in reader.depends_on
    groups = stack_doc("prod")["aks-kueue:cluster"]["security"]["entraAdminGroupObjectIds"]
    admins = [r for r in prod.of_type(ROLE_TYPE) if r.name.startswith("monitoring-grafana-admins-")]
    assert [(a.inputs["principalId"], a.inputs["scope"]) for a in admins] == [(g, offline_id(grafana)) for g in groups]
    assert all(a.inputs["roleDefinitionId"].endswith(GRAFANA_ADMIN_ROLE) for a in admins)
    summary = prod.outputs["monitoring"]["grafana"]
    assert summary["importDashboard"] == ("az grafana dashboard import -g rg-batch-prod -n aks-batch-prod-graf "
                                          "--definition components/monitoring/dashboards/kueue.json --overwrite true")


def test_azure_resources_carry_the_stack_tags(prod):
    for resource in prod.registrations:
        if resource.type in (AMW_TYPE, LAW_TYPE, DCE_TYPE, DCR_TYPE, GRAFANA_TYPE):
            assert resource.inputs["tags"] == {"managed-by": "aks-kueue", "stack": "prod"}, resource.name


def test_every_monitoring_resource_has_a_monitoring_component_parent(prod):
    components = {r.urn for r in prod.registrations if r.type in ("aksKueue:index:Monitoring",
                                                                  "aksKueue:index:MonitoringWorkspaces")}
    assert len(components) == 2
    ours = [r for r in prod.registrations if r.parent in components]
    assert len(ours) == 15
    for resource in ours:
        assert resource.custom


def test_an_existing_azure_monitor_workspace_is_used_not_created():
    def edit(c):
        c["aks-kueue:monitoring"]["azureMonitorWorkspaceId"] = AMW
    run = run_config(edited("prod", edit))
    assert run.of_type(AMW_TYPE) == []
    rule = rule_with_stream(run, "prometheusForwarder")
    assert rule.inputs["destinations"]["monitoringAccounts"][0]["accountResourceId"] == AMW
    grafana = one(run, GRAFANA_TYPE).inputs["properties"]["grafanaIntegrations"]
    assert grafana["azureMonitorWorkspaceIntegrations"] == [{"azureMonitorWorkspaceResourceId": AMW}]


@pytest.mark.parametrize("switch,gone", [
    ("managedPrometheus", {AMW_TYPE, DCE_TYPE, GRAFANA_TYPE, RELEASE, SERVICE_MONITOR, POD_MONITOR}),
    ("containerInsights", {LAW_TYPE}),
])
def test_turning_a_part_off_removes_its_resources_and_switches_the_cluster_off(switch, gone):
    def edit(c):
        c["aks-kueue:monitoring"] = {switch: False}
    run = run_config(edited("prod", edit))
    types = {r.type for r in run.registrations}
    assert not gone & types
    assert len(run.of_type(DCR_TYPE)) == 1 and len(run.of_type(DCRA_TYPE)) == 1
    cluster = one(run, CLUSTER).inputs
    if switch == "managedPrometheus":
        assert cluster["azureMonitorProfile"] == {"metrics": {"enabled": False}}
        assert "Microsoft-Perf" in run.of_type(DCR_TYPE)[0].inputs["dataFlows"][0]["streams"]
    else:
        assert cluster["addonProfiles"]["omsagent"] == {"enabled": False}


@pytest.mark.parametrize("cluster", ["aks-batch-prod", "a" * 63, "9lives_cluster-x", "x-" * 31 + "y"])
@pytest.mark.parametrize("region", ["eastus", "australiasoutheast"])
def test_azure_names_fit_their_limits(cluster, region):
    names = MonitoringNames(cluster, region)
    limits = {"azure_monitor_workspace": 44, "log_analytics_workspace": 63, "grafana": 23, "prometheus_endpoint": 44,
              "prometheus_rule": 64, "prometheus_association": 64, "container_insights_rule": 64}
    for attribute, limit in limits.items():
        name = getattr(names, attribute)
        assert 2 <= len(name) <= limit and name[-1].isalnum() and name[0].isalnum(), (attribute, name)
        assert set(name) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"), (attribute, name)
    assert names.grafana[0].isalpha()
