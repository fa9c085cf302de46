"""The day-2 keys: protect, allowReplacement, existingNamespaces, install none, maintenance, upgradeSettings."""

from __future__ import annotations

import pytest

from aks_kueue.settings import SettingsError, parse_settings
from tests.conftest import edited, flat, stack_doc


def problems(config: dict) -> list[str]:
    with pytest.raises(SettingsError) as error:
        parse_settings(flat(config))
    return [str(p) for p in error.value.problems]


def test_protection_follows_the_environment_unless_stated():
    assert parse_settings(flat(stack_doc("prod"))).effective_protect is True
    assert parse_settings(flat(stack_doc("dev"))).effective_protect is False
    assert parse_settings(flat(edited("dev", lambda c: c.update({"aks-kueue:protect": True})))).effective_protect
    assert not parse_settings(flat(edited("prod", lambda c: c.update({"aks-kueue:protect": False})))).effective_protect


@pytest.mark.parametrize("entries,expected", [
    (["nodePools.a100", "clusters"],
     "aks-kueue:allowReplacement[1]: 'clusters' is not an entry; write one of "
     "cluster, systemPool, nodePools.<name>, kueue, resourceGroup, namespaces.<name>, queues.<Kind>/<name> "
     "(Kind: ClusterQueue, Cohort, ResourceFlavor, AdmissionCheck, LocalQueue, Topology), "
     "queues.LocalQueue/<namespace>/<name>, fleet.workers/<name> (a fleet manager's worker) or fleet.manager "
     "(a fleet worker's link to its manager)"),
    (["fleet.workers"], "aks-kueue:allowReplacement[0]: 'fleet.workers' names no worker; write "
     "fleet.workers/<name> with the name aks-kueue:fleet.workers gives it"),
    (["fleet.workers/westus3-a100", "fleet.workers/westus3-a100"],
     "aks-kueue:allowReplacement[1]: fleet.workers/westus3-a100 is listed twice"),
    (["queues.LocalQueue/default"], "aks-kueue:allowReplacement[0]: 'queues.LocalQueue/default': a LocalQueue is "
     "named with its namespace; write queues.LocalQueue/<namespace>/<name>"),
    (["queues.ClusterQueue/team-a", "queues.clusterqueue/team-a"],
     "aks-kueue:allowReplacement[1]: queues.ClusterQueue/team-a is listed twice"),
    (["kueue", "kueue"], "aks-kueue:allowReplacement[1]: kueue is listed twice; list each resource once"),
    (["nodePools.GPU"], "aks-kueue:allowReplacement[0]: 'nodePools.GPU': 'GPU' is not an AKS pool name"),
])
def test_bad_allow_replacement_entries_name_their_index(entries, expected):
    found = problems(edited("prod", lambda c: c.update({"aks-kueue:allowReplacement": entries})))
    assert found[0].startswith(expected)


def test_install_none_takes_no_kueue_settings_and_no_queue_objects():
    def none(c):
        c["aks-kueue:kueue"] = {"install": "none", "version": "0.19.6-aks.0.4.4"}
        del c["aks-kueue:queues"], c["aks-kueue:expectedWorkloads"]
    (problem,) = problems(edited("prod", none))
    assert problem.startswith("aks-kueue:kueue.version: version has nothing to configure with install: none")

    def with_queues(c):
        c["aks-kueue:kueue"] = {"install": "none"}
        del c["aks-kueue:expectedWorkloads"]
    assert problems(edited("prod", with_queues))[0].startswith("aks-kueue:queues: kueue.install is none")

    def bare(c):
        with_queues(c)
        c["aks-kueue:queues"] = {"existingNamespaces": ["default"]}
    assert parse_settings(flat(edited("prod", bare))).kueue.install == "none"


@pytest.mark.parametrize("window,expected", [
    ({"schedule": {}, "durationHours": 8, "startTime": "00:00"},
     "aks-kueue:cluster.maintenance.autoUpgrade.schedule: give exactly one of daily, weekly"),
    ({"schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Caturday"}}, "durationHours": 8, "startTime": "00:00"},
     "aks-kueue:cluster.maintenance.autoUpgrade.schedule.weekly.dayOfWeek: 'Caturday' is not valid"),
    ({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 2, "startTime": "00:00"},
     "aks-kueue:cluster.maintenance.autoUpgrade.durationHours: 2 is not valid"),
    ({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 8, "startTime": "24:00"},
     "aks-kueue:cluster.maintenance.autoUpgrade.startTime: '24:00' is not a time of day"),
    ({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 8, "startTime": "01:00", "utcOffset": "+2"},
     "aks-kueue:cluster.maintenance.autoUpgrade.utcOffset: '+2' is not a UTC offset"),
    ({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 8, "startTime": "01:00",
      "notAllowedDates": [{"start": "2026-12-24", "end": "2026-12-01"}]},
     "aks-kueue:cluster.maintenance.autoUpgrade.notAllowedDates[0].end: end 2026-12-01 is before start 2026-12-24"),
    ({"schedule": {"daily": {"intervalDays": 1}}, "durationHours": 8, "startTime": "01:00", "windowSize": 3},
     "aks-kueue:cluster.maintenance.autoUpgrade.windowSize: unknown key"),
])
def test_maintenance_windows_are_checked_in_the_apis_names(window, expected):
    found = problems(edited("prod", lambda c: c["aks-kueue:cluster"]["maintenance"].update(autoUpgrade=window)))
    assert found[0].startswith(expected), found


@pytest.mark.parametrize("settings,expected", [
    ({"maxSurge": "150%"},
     "aks-kueue:nodePools[0].upgradeSettings.maxSurge: '150%' is not a node count or a percentage"),
    ({"maxSurge": 0, "maxUnavailable": 0}, "aks-kueue:nodePools[0].upgradeSettings.maxUnavailable: with maxSurge 0 "
                                           "and maxUnavailable 0 no node can be upgraded"),
    ({"undrainableNodeBehavior": "Evict"}, "aks-kueue:nodePools[0].upgradeSettings.undrainableNodeBehavior: 'Evict'"),
    ({"drainTimeoutInMinutes": 0}, "aks-kueue:nodePools[0].upgradeSettings.drainTimeoutInMinutes: 0 is not valid"),
])
def test_upgrade_settings_are_checked_in_the_apis_names(settings, expected):
    found = problems(edited("prod", lambda c: c["aks-kueue:nodePools"][0].update(upgradeSettings=settings)))
    assert found[0].startswith(expected), found


def test_existing_namespaces_must_be_namespace_names():
    found = problems(edited("prod", lambda c: c["aks-kueue:queues"].update(existingNamespaces=["Team_A"])))
    assert found[0].startswith("aks-kueue:queues.existingNamespaces: 'Team_A' is not a namespace name")
