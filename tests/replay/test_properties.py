"""Invariants over random traces: no ClusterQueue above what the cohort tree lets it take, no node above
what it can allocate, every workload's times in order, the same output for the same input."""

from __future__ import annotations


from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aks_kueue.admission.quota import potential_available
from aks_kueue.replay import ReplayConfig, ReplayOptions, read_trace, replay
from aks_kueue.replay.report import document, dumps
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
                      min_count=draw(st.integers(0, 1)))]
    return objects, rows, pools


def _check_state(now, snapshot, nodes):
    for name, node in snapshot.tree.cluster_queues.items():
        for fr, used in node.usage.items():
            assert used <= potential_available(node, fr), (now, name, fr, used)
            limit = node.quotas.get(fr)
            if limit is not None and limit.borrowing_limit is not None:
                assert used <= limit.nominal + limit.borrowing_limit, (now, name, fr, used)
    for pool_state in nodes.pools if nodes is not None else []:
        assert len(pool_state.nodes) <= pool_state.max_count
        for node in pool_state.nodes:
            assert all(free >= 0 for free in node.free.values()), (now, pool_state.name, node.free)
            assert node.pods >= 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_invariants_hold_on_random_traces(tmp_path, scenario):
    objects, rows, pools = scenario
    trace = read_trace([str(write_trace(tmp_path / "t.jsonl", rows))])
    config = ReplayConfig("random", validated(objects), pools=pools, node_startup={"nodes": 30.0},
                          scale_down_delay=20.0)
    outcome = replay(config, trace, ReplayOptions(observe=_check_state))
    for run in outcome.runs:
        times = [t for t in (run.trace.submitted, run.admitted, run.started, run.finished) if t is not None]
        assert times == sorted(times), (run.trace.name, times)
        if run.finished is not None:
            assert run.finished == run.started + run.trace.runtime
        if run.started is not None:
            assert run.admitted is not None
    again = replay(config, read_trace([str(tmp_path / "t.jsonl")]), ReplayOptions())
    assert dumps(document([outcome], trace)) == dumps(document([again], trace))
