"""The ManagedCluster inputs monitoring adds, alone and as the cluster registers them."""

from __future__ import annotations

import pytest
from pulumi_azure_native import containerservice as cs

from aks_kueue.settings.monitoring import Monitoring
from components.monitoring.cluster_inputs import cluster_inputs, merge_cluster_inputs
from tests.components.monitoring.conftest import CLUSTER, LAW_TYPE, by_name, one
from tests.conftest import edited, run_config, run_stack

LAW_ID = "/subscriptions/0/resourceGroups/rg/providers/Microsoft.OperationalInsights/workspaces/law"


def test_no_monitoring_key_adds_nothing():
    assert cluster_inputs(None) == {}


def test_everything_on():
    inputs = cluster_inputs(Monitoring(), LAW_ID)
    assert inputs["azure_monitor_profile"].metrics.enabled is True
    omsagent = inputs["addon_profiles"]["omsagent"]
    assert omsagent.enabled is True
    assert omsagent.config == {"logAnalyticsWorkspaceResourceID": LAW_ID, "useAADAuth": "true"}


def test_switches_off_are_sent_as_off():
    inputs = cluster_inputs(Monitoring(managed_prometheus=False, container_insights=False))
    assert inputs["azure_monitor_profile"].metrics.enabled is False
    assert inputs["addon_profiles"]["omsagent"].enabled is False and inputs["addon_profiles"]["omsagent"].config is None


def test_container_insights_needs_its_workspace():
    with pytest.raises(ValueError, match="Log Analytics workspace"):
        cluster_inputs(Monitoring())


def test_merge_keeps_other_add_ons_and_refuses_clashes():
    policy = {"azurepolicy": cs.ManagedClusterAddonProfileArgs(enabled=True)}
    merged = merge_cluster_inputs({"addon_profiles": policy, "tags": {"a": "b"}}, cluster_inputs(Monitoring(), LAW_ID))
    assert set(merged["addon_profiles"]) == {"azurepolicy", "omsagent"} and merged["tags"] == {"a": "b"}
    assert "azure_monitor_profile" in merged
    with pytest.raises(ValueError, match="omsagent"):
        merge_cluster_inputs({"addon_profiles": merged["addon_profiles"]}, cluster_inputs(Monitoring(), LAW_ID))
    with pytest.raises(ValueError, match="azure_monitor_profile"):
        merge_cluster_inputs(merged, {"azure_monitor_profile": merged["azure_monitor_profile"]})
    with pytest.raises(ValueError, match="tags"):
        merge_cluster_inputs({"tags": {"a": "b"}}, {"tags": {}})


def test_dev_cluster_is_registered_as_before():
    cluster = one(run_stack("dev"), CLUSTER).inputs
    # Monitoring's inputs are not sent; the add-ons of the security baseline are (the Azure Policy add-on).
    assert "azureMonitorProfile" not in cluster and set(cluster["addonProfiles"]) == {"azurepolicy"}


def test_prod_cluster_turns_both_add_ons_on_with_its_own_workspace():
    run = run_stack("prod", preview=False)
    cluster = one(run, CLUSTER)
    law = one(run, LAW_TYPE)
    assert cluster.inputs["azureMonitorProfile"] == {"metrics": {"enabled": True}}
    assert cluster.inputs["addonProfiles"]["omsagent"] == {"enabled": True, "config": {
        "logAnalyticsWorkspaceResourceID": f"/offline/{LAW_TYPE}/{law.name}", "useAADAuth": "true"}}
    # The add-on names the workspace, so ARM must have it before the cluster.
    assert law.urn in cluster.depends_on


def test_existing_log_analytics_workspace_is_named_directly():
    law = ("/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/shared/providers/"
           "Microsoft.OperationalInsights/workspaces/central")

    def edit(c):
        c["aks-kueue:monitoring"]["logAnalyticsWorkspaceId"] = law
        del c["aks-kueue:monitoring"]["logRetentionDays"]
    run = run_config(edited("prod", edit))
    assert run.of_type(LAW_TYPE) == []
    config = one(run, CLUSTER).inputs["addonProfiles"]["omsagent"]["config"]
    assert config["logAnalyticsWorkspaceResourceID"] == law
    assert by_name(run, "main-monitoring").parent == one(run, "aksKueue:index:AksCluster").urn
