"""`aks-kueue:fleet`: each mistake reported by its key path, with what would be right."""

from __future__ import annotations

import pytest

from aks_kueue.settings import SettingsError, parse_settings
from tests.conftest import flat
from tests.fleet_stacks import MANAGER, WEST, config


def problems(cfg: dict) -> list[str]:
    try:
        parse_settings(flat(cfg))
    except SettingsError as error:
        return [str(p) for p in error.problems]
    return []


def fleet_edit(stack: str, **changes):
    def edit(c):
        fleet = c["aks-kueue:fleet"]
        for key, value in changes.items():
            if value is None:
                fleet.pop(key, None)
            else:
                fleet[key] = value
    return config(stack, edit)


def test_the_example_fleet_reads_clean():
    for stack in (MANAGER, WEST):
        assert problems(config(stack)) == []
    fleet = parse_settings(flat(config(MANAGER))).fleet
    assert [w.name for w in fleet.workers] == ["westus3-a100", "swedencentral-h100"]
    assert parse_settings(flat(config(WEST))).fleet.generations == [1]


@pytest.mark.parametrize("stack,changes,expected", [
    (MANAGER, {"worker": [], "workers": None}, "aks-kueue:fleet.worker: unknown key; did you mean 'workers'?"),
    (MANAGER, {"role": "master"}, "aks-kueue:fleet.role: 'master' is not valid: expected 'manager' or 'worker'"),
    (MANAGER, {"workers": None}, "aks-kueue:fleet.workers: is required for a manager"),
    (MANAGER, {"manager": "acme/aks-kueue/other"}, "aks-kueue:fleet.manager: is a key of a fleet worker, and this "
                                                    "stack's role is manager; remove it"),
    (MANAGER, {"workers": [{"name": "West_A100", "stack": "acme/aks-kueue/w"}]},
     "aks-kueue:fleet.workers[0].name: 'West_A100' is not a DNS label"),
    (MANAGER, {"workers": [{"name": "w", "stack": "fleet-westus3"}]},
     "aks-kueue:fleet.workers[0].stack: 'fleet-westus3' is not a fully qualified stack name; write org/project/stack"),
    (MANAGER, {"workers": [{"name": "w", "stack": "a/b/c"}, {"name": "w", "stack": "a/b/c"}]},
     "aks-kueue:fleet.workers[1].name: 'w' is also workers[0]'s name"),
    (MANAGER, {"workers": [{"name": "w", "stak": "a/b/c"}]}, "aks-kueue:fleet.workers[0].stak: unknown key; did you "
                                                             "mean 'stack'?"),
    (MANAGER, {"egressIpRanges": ["203.0.113.300/32"]}, "aks-kueue:fleet.egressIpRanges[0]: '203.0.113.300/32' is not "
                                                        "an IP address or CIDR range"),
    (MANAGER, {"quotaManagement": "Automated"}, "aks-kueue:fleet.quotaManagement: Automated needs Kueue's alpha "
                                                "feature gate MultiKueueManagerQuotaAutomation"),
    (WEST, {"manager": None}, "aks-kueue:fleet.manager: is required for a worker"),
    (WEST, {"workers": []}, "aks-kueue:fleet.workers: is a key of a fleet manager"),
    (WEST, {"tokenGenerations": [2, 2]}, "aks-kueue:fleet.tokenGenerations[1]: generation 2 is listed twice"),
    (WEST, {"tokenGenerations": [0]}, "aks-kueue:fleet.tokenGenerations[0]: 0 is not a generation"),
    (WEST, {"tokenGenerations": []}, "aks-kueue:fleet.tokenGenerations: must list at least one token generation"),
])
def test_a_mistake_names_its_key(stack, changes, expected):
    found = problems(fleet_edit(stack, **changes))
    assert any(line.startswith(expected) for line in found), found


def test_a_worker_leaves_its_teams_to_the_manager():
    def edit(c):
        c["aks-kueue:queues"]["localQueues"] = [{"name": "default", "namespace": "team-a",
                                                 "spec": {"clusterQueue": "team-a"}}]
    found = problems(config(WEST, edit))
    assert any(p.startswith("aks-kueue:queues.localQueues: a fleet worker mirrors its localQueues from the manager's "
                            "stack (acme/aks-kueue/fleet-manager)") for p in found), found


def test_a_fleet_member_runs_kueue():
    def edit(c):
        c["aks-kueue:kueue"] = {"install": "none"}
        del c["aks-kueue:queues"]
    found = problems(config(WEST, edit))
    assert any(p.startswith("aks-kueue:fleet: a fleet worker runs Kueue") for p in found), found


def test_all_mistakes_are_reported_together():
    cfg = fleet_edit(WEST, tokenGenerations=[0], manager="fleet-manager")
    cfg["aks-kueue:nodePools"][0]["maxCount"] = -1
    found = problems(cfg)
    assert {p.split(": ")[0] for p in found} >= {"aks-kueue:fleet.manager", "aks-kueue:fleet.tokenGenerations[0]",
                                                  "aks-kueue:nodePools[0].maxCount"}, found
