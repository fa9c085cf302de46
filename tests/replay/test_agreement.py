"""Replay and `simulate` agree: equal-priority workloads submitted at t=0 into queues without borrowing
or preemption get, in the replay's first instant, exactly the decisions `simulate` makes for them."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aks_kueue.admission.simulate import simulate
from aks_kueue.replay import ReplayConfig, read_trace, replay
from tests.replay.builders import V1B2, cluster_queue, flavor, local_queue, quota, validated, workload, write_trace


@st.composite
def backlogs(draw):
    objects = [flavor("small"), flavor("big")]
    for name in ("a", "b", "c"):
        objects.append(cluster_queue(name, {"small": [quota("cpu", draw(st.integers(0, 6)))],
                                            "big": [quota("cpu", draw(st.integers(0, 10)))]}))
        objects.append(local_queue(f"team-{name}", name))
    rows = []
    for i in range(draw(st.integers(1, 15))):
        rows.append(workload(f"w{i}", 0, cpu=draw(st.integers(1, 6)), count=draw(st.integers(1, 2)), runtime=10,
                             namespace=f"team-{draw(st.sampled_from('abc'))}"))
    return objects, rows


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(backlogs())
def test_the_first_instant_decides_as_simulate_does(tmp_path, backlog):
    objects, rows = backlog
    manifests = validated(objects)
    trace = read_trace([str(write_trace(tmp_path / "t.jsonl", rows))])
    outcome = replay(ReplayConfig("q", manifests), trace)
    workloads = [{"apiVersion": V1B2, "kind": "Workload", "metadata": {"name": w.name, "namespace": w.namespace},
                  "spec": {"queueName": w.queue, "priority": 0, "podSets": w.shape.pod_sets}}
                 for w in trace.workloads]
    decided = {(d["namespace"], d["name"]): d for d in simulate(manifests + workloads)}
    for run in outcome.runs:
        decision = decided[(run.trace.namespace, run.trace.name)]
        admitted_first = run.admitted == 0.0
        assert admitted_first == (decision["mode"] == "Fit"), (run.trace.name, decision["message"])
        if admitted_first:
            assert run.flavors == {ps["name"]: ps["flavors"] for ps in decision["podSets"]}
