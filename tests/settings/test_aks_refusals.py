"""Values AKS refuses outright are settings errors (issue 17, "Slips"): each case as it was
reported first, then the edges of its range, then through the program and the CLI (exit 2).

The ranges are the AKS API's (2025-09-01, the version pulumi-azure-native 3.29 speaks), kept
with their citations in `aks_kueue/aks/limits.py`.
"""

from __future__ import annotations

import pytest

from aks_kueue.aks import limits
from aks_kueue.preview.run import ProgramError
from aks_kueue.settings import SettingsError, parse_settings
from tests.conftest import edited, flat, run_config
from tests.settings import test_preflight_checks
from tests.settings.test_preflight_checks import DAY, cli_preview

pinned_clock = test_preflight_checks.pinned_clock  # a fixture, found by its name here


def problems(config: dict) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        parse_settings(flat(config), today=DAY)
    return [str(p) for p in caught.value.problems]


def parses(config: dict) -> bool:
    return parse_settings(flat(config), today=DAY) is not None


def window(schedule: dict, **values):
    """The prod stack's auto-upgrade window with another schedule (and other fields)."""
    def edit(c):
        c["aks-kueue:cluster"]["maintenance"]["autoUpgrade"] = {"schedule": schedule, "durationHours": 8,
                                                                "startTime": "00:00", **values}
    return edit


def upgrade(**values):
    def edit(c):
        c["aks-kueue:nodePools"][0]["upgradeSettings"] = values
    return edit


def network(**values):
    def edit(c):
        c["aks-kueue:cluster"]["network"] = values
    return edit


def pool(index: int, **values):
    def edit(c):
        c["aks-kueue:nodePools"][index].update(values)
    return edit


WINDOW = "aks-kueue:cluster.maintenance.autoUpgrade"


# --- Maintenance windows ---------------------------------------------------------------------

@pytest.mark.parametrize("schedule,key,bad", [
    ({"weekly": {"intervalWeeks": 6, "dayOfWeek": "Saturday"}}, "schedule.weekly.intervalWeeks", 6),
    ({"daily": {"intervalDays": 10}}, "schedule.daily.intervalDays", 10),
    ({"absoluteMonthly": {"intervalMonths": 12, "dayOfMonth": 1}}, "schedule.absoluteMonthly.intervalMonths", 12),
    ({"relativeMonthly": {"intervalMonths": 7, "weekIndex": "First", "dayOfWeek": "Monday"}},
     "schedule.relativeMonthly.intervalMonths", 7),
])
def test_a_reported_window_interval_outside_the_api_range_is_refused(schedule, key, bad):
    (problem,) = problems(edited("prod", window(schedule)))
    assert problem.startswith(f"{WINDOW}.{key}: {bad} is not valid: the AKS API takes ")
    assert "(managedClusters.json, AKS API 2025-09-01); write a value in that range" in problem


@pytest.mark.parametrize("limit,schedule", [
    (limits.INTERVAL_DAYS, lambda n: {"daily": {"intervalDays": n}}),
    (limits.INTERVAL_WEEKS, lambda n: {"weekly": {"intervalWeeks": n, "dayOfWeek": "Sunday"}}),
    (limits.ABSOLUTE_INTERVAL_MONTHS, lambda n: {"absoluteMonthly": {"intervalMonths": n, "dayOfMonth": 15}}),
    (limits.RELATIVE_INTERVAL_MONTHS,
     lambda n: {"relativeMonthly": {"intervalMonths": n, "weekIndex": "Last", "dayOfWeek": "Friday"}}),
    (limits.DAY_OF_MONTH, lambda n: {"absoluteMonthly": {"intervalMonths": 1, "dayOfMonth": n}}),
])
def test_window_schedules_take_exactly_the_api_range(limit, schedule):
    assert parses(edited("prod", window(schedule(limit.minimum))))
    assert parses(edited("prod", window(schedule(limit.maximum))))
    for outside in (limit.minimum - 1, limit.maximum + 1):
        (problem,) = problems(edited("prod", window(schedule(outside))))
        assert f"{outside} is not valid: the AKS API takes {limit.field} from {limit.minimum} to {limit.maximum}" \
            in problem


def test_window_length_takes_4_to_24_hours():
    weekly = {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}}
    for hours in (4, 24):
        assert parses(edited("prod", window(weekly, durationHours=hours)))
    (problem,) = problems(edited("prod", window(weekly, durationHours=25)))
    assert problem == (f"{WINDOW}.durationHours: 25 is not valid: the AKS API takes durationHours from 4 to 24 "
                       "hours (managedClusters.json, AKS API 2025-09-01); write a value in that range")


# --- Upgrade settings ------------------------------------------------------------------------

@pytest.mark.parametrize("values,key,bad", [
    ({"drainTimeoutInMinutes": 1441}, "drainTimeoutInMinutes", 1441),
    ({"nodeSoakDurationInMinutes": 31}, "nodeSoakDurationInMinutes", 31),
    ({"nodeSoakDurationInMinutes": -1}, "nodeSoakDurationInMinutes", -1),
])
def test_reported_upgrade_settings_outside_the_api_range_are_refused(values, key, bad):
    (problem,) = problems(edited("prod", upgrade(**values)))
    assert problem.startswith(f"aks-kueue:nodePools[0].upgradeSettings.{key}: {bad} is not valid: the AKS API "
                              f"takes {key} from ")


def test_upgrade_settings_take_exactly_the_api_range():
    for limit in (limits.DRAIN_TIMEOUT_MINUTES, limits.NODE_SOAK_MINUTES):
        for inside in (limit.minimum, limit.maximum):
            assert parses(edited("prod", upgrade(**{limit.field: inside})))
        for outside in (limit.minimum - 1, limit.maximum + 1):
            (problem,) = problems(edited("prod", upgrade(**{limit.field: outside})))
            assert f"takes {limit.field} from {limit.minimum} to {limit.maximum} minutes" in problem


# --- The Cilium dataplane and another policy engine -------------------------------------------

@pytest.mark.parametrize("engine", ["calico", "azure"])
def test_cilium_dataplane_with_another_policy_engine_is_refused(engine):
    (problem,) = problems(edited("prod", network(plugin="azure", pluginMode="overlay", dataplane="cilium",
                                                 policy=engine)))
    assert problem == (
        f"aks-kueue:cluster.network.policy: network policy {engine} cannot run with the Cilium dataplane, which "
        "enforces network policy itself: AKS refuses the pair (CiliumDataplaneRequiresNetworkPolicyCilium: "
        "\"Cilium dataplane requires network policy cilium\"); set policy: cilium (or remove it), or dataplane: "
        f"azure to keep {engine}")


def test_calico_without_a_dataplane_gets_the_azure_one():
    """The program's default dataplane is Cilium; a stack that asks for Calico (or Azure NPM) and names no
    dataplane gets the Azure dataplane, the one AKS runs them with."""
    for engine in ("calico", "azure"):
        net = parse_settings(flat(edited("prod", network(policy=engine))), today=DAY).cluster.network
        assert (net.plugin, net.plugin_mode, net.dataplane, net.policy) == ("azure", "overlay", "azure", engine)
    net = parse_settings(flat(edited("prod", network())), today=DAY).cluster.network
    assert (net.dataplane, net.policy) == ("cilium", "cilium")
    assert parses(edited("prod", network(dataplane="cilium", policy="none")))


# --- The 30-pod floor of every pool ------------------------------------------------------------

def test_a_reported_user_pool_without_space_for_30_pods_is_refused():
    (problem,) = problems(edited("prod", pool(1, maxPods=10, minCount=1)))
    assert problem == (
        "aks-kueue:nodePools[1].maxPods: maxPods 10 x minCount 1 = 10 pods; AKS refuses a node pool without space "
        "for at least 30 pods (concepts-network-ip-address-planning), judged on the nodes it is created with (this "
        "program creates an autoscaled pool with minCount nodes); set maxPods to 30 or more, or minCount to 3 or "
        "more")


def test_the_pod_floor_counts_minCount_and_passes_a_pool_whose_node_holds_30():
    assert parses(edited("prod", pool(1, maxPods=10, minCount=3, maxCount=4)))
    assert parses(edited("prod", pool(1, maxPods=30, minCount=0)))
    # maxCount is not what AKS judges: a pool created with no node of 10 pods is refused however far it scales.
    (problem,) = problems(edited("prod", pool(1, maxPods=29, minCount=0, maxCount=100)))
    assert problem.startswith("aks-kueue:nodePools[1].maxPods: maxPods 29 x minCount 0 = 0 pods;")
    assert problem.endswith("set maxPods to 30 or more, or minCount to 2 or more")


def test_every_pool_below_the_floor_is_reported_together():
    def edit(c):
        for p in c["aks-kueue:nodePools"]:
            p.update(maxPods=10, minCount=0)
    keys = [p.split(": ", 1)[0] for p in problems(edited("prod", edit))]
    assert keys == [f"aks-kueue:nodePools[{i}].maxPods" for i in range(3)]


def test_the_system_pool_floor_says_the_same():
    def edit(c):
        c["aks-kueue:cluster"]["systemPool"].update(maxPods=10, count=2)
    (problem,) = problems(edited("prod", edit))
    assert problem == (
        "aks-kueue:cluster.systemPool.maxPods: maxPods 10 x count 2 = 20 pods; AKS refuses a node pool without "
        "space for at least 30 pods (concepts-network-ip-address-planning), judged on the nodes it is created "
        "with; set maxPods to 15 or more, or count to 3 or more")


# --- Through the program and the CLI ----------------------------------------------------------

CASES = [
    (window({"weekly": {"intervalWeeks": 6, "dayOfWeek": "Saturday"}}),
     f"{WINDOW}.schedule.weekly.intervalWeeks: 6 is not valid"),
    (upgrade(drainTimeoutInMinutes=2000), "aks-kueue:nodePools[0].upgradeSettings.drainTimeoutInMinutes: 2000"),
    (network(dataplane="cilium", policy="calico"), "aks-kueue:cluster.network.policy: network policy calico"),
    (pool(1, maxPods=10, minCount=1), "aks-kueue:nodePools[1].maxPods: maxPods 10 x minCount 1"),
]


@pytest.mark.parametrize("edit,line", CASES)
def test_the_program_registers_nothing(pinned_clock, edit, line):
    with pytest.raises(ProgramError) as caught:
        run_config(edited("prod", edit))
    assert str(caught.value).startswith("invalid stack config:\n") and line in str(caught.value)


@pytest.mark.parametrize("edit,line", CASES)
def test_the_preview_exits_2_naming_the_key(pinned_clock, tmp_path, edit, line):
    result = cli_preview(tmp_path, edited("prod", edit))
    assert result.exit_code == 2 and line in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
