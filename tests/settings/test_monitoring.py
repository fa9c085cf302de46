"""`aks-kueue:monitoring`: defaults, what depends on managed Prometheus, and errors that name the key."""

from __future__ import annotations

import pytest

from aks_kueue.settings import SettingsError, parse_settings
from aks_kueue.settings.monitoring import CONTAINER_INSIGHTS_STREAMS
from tests.conftest import edited, flat, stack_doc

AMW = "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/rg-shared/providers/Microsoft.Monitor/accounts/amw-shared"
LAW = ("/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/rg-shared/providers/"
       "Microsoft.OperationalInsights/workspaces/law-shared")


def with_monitoring(value, stack: str = "dev") -> dict:
    def edit(c):
        c["aks-kueue:monitoring"] = value
    return edited(stack, edit)


def monitoring(value):
    return parse_settings(flat(with_monitoring(value))).monitoring


def problems(value) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        parse_settings(flat(with_monitoring(value)))
    return [str(p) for p in caught.value.problems]


def test_absent_key_leaves_monitoring_alone():
    assert "aks-kueue:monitoring" not in stack_doc("dev")
    assert parse_settings(flat(stack_doc("dev"))).monitoring is None


def test_prod_turns_on_the_production_pair_and_the_rest():
    m = parse_settings(flat(stack_doc("prod"))).monitoring
    assert (m.managed_prometheus, m.container_insights, m.kueue_metrics, m.gpu_metrics, m.dashboards) == (True,) * 5
    assert m.log_retention_days == 90


def test_empty_object_turns_everything_on():
    m = monitoring({})
    assert (m.managed_prometheus, m.container_insights, m.kueue_metrics, m.gpu_metrics, m.dashboards) == (True,) * 5
    assert m.effective_container_insights_preset == "logsAndEvents"
    assert m.container_insights_streams == CONTAINER_INSIGHTS_STREAMS["logsAndEvents"]
    assert m.log_retention_days == 30 and m.cluster_queue_resource_metrics


def test_without_prometheus_its_dependents_default_off_and_insights_collect_everything():
    m = monitoring({"managedPrometheus": False})
    assert (m.kueue_metrics, m.gpu_metrics, m.dashboards) == (False, False, False)
    assert m.container_insights and m.effective_container_insights_preset == "standard"
    assert "Microsoft-Perf" in m.container_insights_streams and not m.cluster_queue_resource_metrics


@pytest.mark.parametrize("key", ["kueueMetrics", "gpuMetrics", "dashboards"])
def test_a_dependent_switch_on_without_prometheus_is_an_error(key):
    found = problems({"managedPrometheus": False, key: True})
    assert len(found) == 1 and found[0].startswith(f"aks-kueue:monitoring.{key}: ")
    assert "managedPrometheus: true" in found[0] and f"{key}: false" in found[0]


def test_switches_can_be_turned_off_one_by_one():
    m = monitoring({"gpuMetrics": False, "dashboards": False})
    assert m.managed_prometheus and m.kueue_metrics and not m.gpu_metrics and not m.dashboards


def test_existing_workspaces_are_used_not_created():
    m = monitoring({"azureMonitorWorkspaceId": AMW, "logAnalyticsWorkspaceId": LAW})
    assert m.azure_monitor_workspace_id == AMW and m.log_analytics_workspace_id == LAW


@pytest.mark.parametrize("key,value,words", [
    ("azureMonitorWorkspaceId", LAW, "is not an Azure Monitor workspace resource id"),
    ("azureMonitorWorkspaceId", "amw-shared", "is not an Azure Monitor workspace resource id"),
    ("logAnalyticsWorkspaceId", AMW, "is not a Log Analytics workspace resource id"),
    ("logRetentionDays", 7, "greater than or equal to 30"),
    ("logRetentionDays", 3650, "less than or equal to 730"),
    ("containerInsightsPreset", "everything", "expected 'logsAndEvents' or 'standard'"),
    ("managedPrometheus", "sure", "is not valid"),
])
def test_bad_values_name_their_key(key, value, words):
    found = problems({key: value})
    assert len(found) == 1 and found[0].startswith(f"aks-kueue:monitoring.{key}: "), found
    assert words in found[0]


@pytest.mark.parametrize("value,key", [
    ({"containerInsights": False, "logAnalyticsWorkspaceId": LAW}, "logAnalyticsWorkspaceId"),
    ({"containerInsights": False, "containerInsightsPreset": "standard"}, "containerInsightsPreset"),
    ({"containerInsights": False, "logRetentionDays": 60}, "logRetentionDays"),
    ({"logAnalyticsWorkspaceId": LAW, "logRetentionDays": 60}, "logRetentionDays"),
    ({"managedPrometheus": False, "azureMonitorWorkspaceId": AMW}, "azureMonitorWorkspaceId"),
])
def test_keys_that_would_do_nothing_are_errors(value, key):
    found = problems(value)
    assert len(found) == 1 and found[0].startswith(f"aks-kueue:monitoring.{key}: "), found


def test_unknown_key_suggests_the_right_one():
    assert problems({"managedPromethus": True}) == [
        "aks-kueue:monitoring.managedPromethus: unknown key; did you mean 'managedPrometheus'?"]


@pytest.mark.parametrize("value", [True, 3, ["managedPrometheus"], "on"])
def test_not_an_object_is_one_clear_error(value):
    found = problems(value)
    assert len(found) == 1 and found[0].startswith("aks-kueue:monitoring: ")
