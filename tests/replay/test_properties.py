"""Invariants over random traces: no ClusterQueue above what the cohort tree lets it take, no node above
what it can allocate, every workload's times in order, the same output for the same input."""

from __future__ import annotations


from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import aks_kueue.admission.snapshot as snapshot_module
from aks_kueue.admission.quota import potential_available
from aks_kueue.replay import ReplayConfig, ReplayOptions, read_trace, replay
from aks_kueue.replay.engine import MAX_ADMISSIONS, State, event_bound
from aks_kueue.replay.report import document, dumps
from aks_kueue.replay.spot import SpotRate, SpotRates
from tests.replay.builders import cluster_queue, flavor, local_queue, pool, quota, validated, workload, write_trace

POLICIES = ("Never", "LowerPriority", "LowerOrNewerEqualPriority", "Any")


@st.composite
def scenarios(draw):
    flavors = draw(st.sampled_from([["default"], ["small", "big"]]))
    queues = []
    for name in ("a", "b"):
        quotas = {}
        for f in flavors:
            nominal = draw(st.integers(0, 8))
            borrowing = draw(st.one_of(st.none(), st.integers(0, 4)))
            lending = draw(st.one_of(st.none(), st.integers(0, nominal)))
            quotas[f] = [quota("cpu", nominal, borrowing=borrowing, lending=lending)]
        preemption = {"withinClusterQueue": draw(st.sampled_from(POLICIES[:3])),
                      "reclaimWithinCohort": draw(st.sampled_from(("Never", "LowerPriority", "Any")))}
        queues.append(cluster_queue(name, quotas, cohort="org", preemption=preemption,
                                    strategy=draw(st.sampled_from(["BestEffortFIFO", "StrictFIFO"]))))
    objects = [flavor(f) for f in flavors] + queues + [local_queue("team-a", "a"), local_queue("team-b", "b")]
    rows = []
    for i in range(draw(st.integers(1, 12))):
        count = draw(st.integers(1, 3))
        extra = {}
        if count > 1 and draw(st.booleans()):
            extra["minCount"] = draw(st.integers(1, count))
        rows.append(workload(f"w{i}", draw(st.integers(0, 60)), cpu=draw(st.integers(1, 5)), count=count,
                             runtime=draw(st.integers(1, 40)), namespace=draw(st.sampled_from(["team-a", "team-b"])),
                             priority=draw(st.integers(0, 2)), **extra))
    pools = None
    if draw(st.booleans()):
        pools = [pool("nodes", cpu=draw(st.integers(2, 6)), max_count=draw(st.integers(1, 3)),
                      min_count=draw(st.integers(0, 1)), spot=draw(st.booleans()))]
    return objects, rows, pools, draw(st.sampled_from(ADMISSION)) or None


# The Configuration's algorithm: classical (Kueue's defaults), fair sharing, and fair sharing with admission
# fair sharing (for ClusterQueues whose admissionScope asks for it: `_configured` adds it to each).
AFS_SCOPE = {"admissionMode": "UsageBasedAdmissionFairSharing"}
ADMISSION = ({}, {"fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}},
             {"fairSharing": {}, "admissionFairSharing": {"usageHalfLifeTime": "30s", "usageSamplingInterval": "5s"}})


def _configured(tmp_path, objects, rows, pools, kueue=None):
    """A scenario's trace, and its configuration (nodes Ready 30 s after they are asked for, empty ones
    gone 20 s later; a spot pool's nodes live a minute on average, about as long as a run)."""
    trace = read_trace([str(write_trace(tmp_path / "t.jsonl", rows))])
    if kueue is not None and "admissionFairSharing" in kueue:
        objects = [{**o, "spec": {**o["spec"], "admissionScope": AFS_SCOPE}} if o["kind"] == "ClusterQueue" else o
                   for o in objects]
    return trace, ReplayConfig("random", validated(objects), kueue=kueue, pools=pools, node_startup={"nodes": 30.0},
                               scale_down_delay=20.0, spot_rates=SpotRates(SpotRate(60.0, "given")))


def _check_quota(now, snapshot, nodes):
    for name, node in snapshot.tree.cluster_queues.items():
        for fr, used in node.usage.items():
            assert used <= potential_available(node, fr), (now, name, fr, used)
            limit = node.quotas.get(fr)
            if limit is not None and limit.borrowing_limit is not None:
                assert used <= limit.nominal + limit.borrowing_limit, (now, name, fr, used)


def _check_state(now, snapshot, nodes):
    _check_quota(now, snapshot, nodes)
    for pool_state in nodes.pools if nodes is not None else []:
        assert len(pool_state.nodes) <= pool_state.max_count
        for node in pool_state.nodes:
            assert all(free >= 0 for free in node.free.values()), (now, pool_state.name, node.free)
            assert node.pods >= 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_invariants_hold_on_random_traces(tmp_path, scenario):
    trace, config = _configured(tmp_path, *scenario)
    outcome = replay(config, trace, ReplayOptions(observe=_check_state))
    for run in outcome.runs:
        times = [t for t in (run.trace.submitted, run.admitted, run.started, run.finished) if t is not None]
        assert times == sorted(times), (run.trace.name, times)
        if run.finished is not None:
            # the event queue keeps instants to the microsecond (a spot eviction's drawn time is not)
            assert abs(run.finished - (run.started + run.trace.runtime)) <= 1e-6, (run.trace.name, run.finished)
        if run.started is not None:
            assert run.admitted is not None
    again = replay(config, read_trace([str(tmp_path / "t.jsonl")]), ReplayOptions())
    assert dumps(document([outcome], trace)) == dumps(document([again], trace))
    _check_accounted(outcome)


def _check_accounted(outcome):
    """Every workload accounted for: states that add up per ClusterQueue, and a reason on each one never
    admitted or never started, and on each one not running or finished at the end."""
    from aks_kueue.replay.report import configuration

    part = configuration(outcome)
    for queue in part["clusterQueues"]:
        assert queue["submitted"] == (queue["finished"] + queue["running"] + queue["admittedAtEnd"]
                                      + queue["pendingAtEnd"]), queue
        assert queue["neverAdmitted"] + queue["admitted"] == queue["submitted"]
    for row in part["workloads"]:
        if row["neverAdmitted"] or row["neverStarted"] or row["state"] in ("pending", "admitted"):
            assert row["reason"], row
        if row["state"] == "pending":
            assert row["admitted"] is None and row["started"] is None


@st.composite
def cycling(draw):
    """Small configurations where a workload can cycle: pods larger than any node, pools at maxCount 0
    or held by workloads that never end, short waitForPodsReady timeouts and backoffs (0 too), a
    backoff limit or none, preemption in the queue and across the cohort."""
    queues = []
    for name in ("a", "b"):
        preemption = {"withinClusterQueue": draw(st.sampled_from(POLICIES[:3])),
                      "reclaimWithinCohort": draw(st.sampled_from(("Never", "LowerPriority", "Any")))}
        if preemption["reclaimWithinCohort"] != "Never" and draw(st.booleans()):  # Kueue requires both
            preemption["borrowWithinCohort"] = {"policy": "LowerPriority"}
        queues.append(cluster_queue(name, {"default": [quota("cpu", draw(st.integers(0, 8)),
                                                             borrowing=draw(st.one_of(st.none(), st.integers(0, 4))))]},
                                    cohort="org", preemption=preemption))
    objects = [flavor("default")] + queues + [local_queue("team-a", "a"), local_queue("team-b", "b")]
    strategy = {"timestamp": draw(st.sampled_from(("Eviction", "Creation"))),
                "backoffBaseSeconds": draw(st.integers(0, 30)), "backoffMaxSeconds": draw(st.integers(0, 120))}
    if draw(st.booleans()):
        strategy["backoffLimitCount"] = draw(st.integers(0, 3))
    kueue = {"waitForPodsReady": {"timeout": f"{draw(st.integers(1, 600))}s", "requeuingStrategy": strategy,
                                  "blockAdmission": draw(st.booleans())}}
    rows = [workload(f"w{i}", draw(st.integers(0, 60)), cpu=draw(st.integers(1, 8)), count=draw(st.integers(1, 3)),
                     runtime=draw(st.one_of(st.none(), st.integers(1, 200))),
                     namespace=draw(st.sampled_from(["team-a", "team-b"])), priority=draw(st.integers(0, 3)))
            for i in range(draw(st.integers(1, 10)))]
    pools = [pool("nodes", cpu=draw(st.integers(2, 6)), max_count=draw(st.integers(0, 2)),
                  min_count=draw(st.integers(0, 1)), spot=draw(st.booleans()))]
    if draw(st.booleans()):
        kueue["waitForPodsReady"]["recoveryTimeout"] = f"{draw(st.integers(0, 600))}s"
    return objects, rows, pools, kueue


@settings(max_examples=int(__import__("os").environ.get("REPLAY_EXAMPLES", 60)), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cycling())
def test_every_replay_ends_within_a_bounded_number_of_events(tmp_path, scenario):
    trace, config = _configured(tmp_path, *scenario)
    outcome = replay(config, trace, ReplayOptions(max_cycles_per_instant=10_000))
    # It ended (this line is reached), by its own rules, not by a safety valve.
    assert not any("scheduling stopped" in note for note in outcome.notes)
    assert outcome.events <= event_bound(outcome), (outcome.events, event_bound(outcome))
    for run in outcome.runs:
        assert run.admissions <= MAX_ADMISSIONS
        if run.state is State.UNPLACEABLE:
            assert run.evictions == 1 and run.reason  # out at its first waitForPodsReady eviction
    _check_accounted(outcome)


@settings(max_examples=int(__import__("os").environ.get("REPLAY_EXAMPLES", 60)), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(scenarios(), cycling()))
def test_a_remembered_decision_gives_the_same_replay_as_deciding_again(tmp_path, scenario):
    # The admission core keeps a decision while what it read of the cohort tree is unchanged (`_still_fits`,
    # `_unchanged`); deciding every head again with the flavor assigner must replay the same, byte for byte.
    from aks_kueue.admission.snapshot import Snapshot

    trace, config = _configured(tmp_path, *scenario)
    remembered = dumps(document([replay(config, trace)], trace))
    still_fits, unchanged = snapshot_module._still_fits, Snapshot._unchanged
    snapshot_module._still_fits = lambda *_: False
    Snapshot._unchanged = lambda *_: False  # type: ignore[method-assign]
    try:
        again = dumps(document([replay(config, trace)], trace))
    finally:
        snapshot_module._still_fits, Snapshot._unchanged = still_fits, unchanged
    assert remembered == again


@settings(max_examples=int(__import__("os").environ.get("REPLAY_EXAMPLES", 60)), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(scenarios(), cycling()), st.sampled_from([0.5, 2.4, 7.0]))
def test_a_paced_replay_keeps_the_invariants_and_ends(tmp_path, scenario, seconds):
    # Cycles that take time (`--cycle-time`): the same invariants, times in order, a bounded number of events,
    # and what was decided in a cycle took effect at a cycle's end (every admission on the cycle grid of its
    # queue is not checkable, but none is earlier than its submission plus one cycle).
    from aks_kueue.replay.pace import given as cycle_time

    trace, config = _configured(tmp_path, *scenario)
    config.cycle = cycle_time(seconds)
    outcome = replay(config, trace, ReplayOptions(observe=_check_quota))  # cycling()'s pools may start above max
    for run in outcome.runs:
        times = [t for t in (run.trace.submitted, run.admitted, run.started, run.finished) if t is not None]
        assert times == sorted(times), (run.trace.name, times)
        if run.admitted is not None:
            assert run.admitted >= run.trace.submitted + seconds - 1e-6
    assert outcome.events <= event_bound(outcome), (outcome.events, event_bound(outcome))
    again = replay(config, read_trace([str(tmp_path / "t.jsonl")]), ReplayOptions())
    assert dumps(document([outcome], trace)) == dumps(document([again], trace))
    _check_accounted(outcome)
