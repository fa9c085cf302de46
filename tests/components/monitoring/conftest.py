"""Shared helpers for the monitoring tests: type tokens and lookups in a program run."""

from __future__ import annotations

import pytest

from tests.conftest import run_stack

CLUSTER = "azure-native:containerservice:ManagedCluster"
AMW_TYPE = "azure-native:monitor:AzureMonitorWorkspace"
LAW_TYPE = "azure-native:operationalinsights:Workspace"
DCE_TYPE = "azure-native:monitor:DataCollectionEndpoint"
DCR_TYPE = "azure-native:monitor:DataCollectionRule"
DCRA_TYPE = "azure-native:monitor:DataCollectionRuleAssociation"
GRAFANA_TYPE = "azure-native:dashboard:Grafana"
ROLE_TYPE = "azure-native:authorization:RoleAssignment"
RELEASE = "kubernetes:helm.sh/v3:Release"
SERVICE_MONITOR = "kubernetes:azmonitoring.coreos.com/v1:ServiceMonitor"
POD_MONITOR = "kubernetes:azmonitoring.coreos.com/v1:PodMonitor"


def one(run, type_token):
    found = run.of_type(type_token)
    assert len(found) == 1, [r.name for r in found]
    return found[0]


def by_name(run, name):
    found = [r for r in run.registrations if r.name == name]
    assert len(found) == 1, name
    return found[0]


def offline_id(resource) -> str:
    """The id the offline mocks give a resource in update mode."""
    return f"/offline/{resource.type}/{resource.name}"


@pytest.fixture(scope="module")
def prod():
    """prod as `pulumi up` would send it: ids are known, so references between resources can be checked."""
    return run_stack("prod", preview=False)
