"""Every workload accounted for (issue 30): each one's state at the end and counts that add up, never
admitted and never started with a reason on each, censored waits as lower bounds, preemption events beside
the workloads preempted, work done again, the quota Cohorts hold, and a window that starts from its past.
Worked out by hand; cycles take no time here (the engine's default) unless a test says otherwise."""

from __future__ import annotations

from aks_kueue.replay import ReplayOptions
from aks_kueue.replay.engine import BYPASSED, PENDING_EVALUATION
from aks_kueue.replay.report import configuration
from tests.replay.builders import V1B2, cluster_queue, flavor, local_queue, one_queue, pool, quota, run, workload


def _rows(outcome) -> dict[str, dict]:
    return {w["name"]: w for w in configuration(outcome)["workloads"]}


def test_states_add_up_and_a_preempted_workload_waiting_again_has_no_admission(tmp_path):
    # 5 cores. quick (1 core) runs 0-5. low (4) is admitted at 0; high (4, priority 10) at 20 needs 4 of the 1
    # free: it preempts low (20 s of 4 cores done for nothing) and is admitted at 20. mid (2) at 30 finds 1 free.
    # At --until 40: quick finished, high running, low and mid pending; low has been admitted once.
    objects = one_queue(5, preemption={"withinClusterQueue": "LowerPriority"})
    rows = [workload("quick", 0, cpu=1, runtime=5), workload("low", 0, cpu=4, runtime=100, priority=0),
            workload("high", 20, cpu=4, runtime=50, priority=10), workload("mid", 30, cpu=2, runtime=10)]
    outcome, _ = run(tmp_path, objects, rows, options=ReplayOptions(until=40))
    part = configuration(outcome)
    (queue,) = part["clusterQueues"]
    assert (queue["submitted"], queue["finished"], queue["running"], queue["admittedAtEnd"],
            queue["pendingAtEnd"]) == (4, 1, 1, 0, 2)
    assert queue["submitted"] == queue["finished"] + queue["running"] + queue["admittedAtEnd"] + queue["pendingAtEnd"]
    assert (queue["admitted"], queue["neverAdmitted"], queue["neverStarted"]) == (3, 1, 0)
    assert (queue["preemptions"], queue["preemptedWorkloads"]) == (1, 1)
    assert queue["rerunHours"] == {"cpu": round(4 * 20 / 3600, 3)}
    # Waits to admission: quick 0, high 0, low cut at 40 (40 so far), mid cut at 40 (10 so far). Nearest rank of
    # [0, 0, 10, 40]: the p50 (0) lies below every cut wait, so it is exact; the p95 and max (40) are lower bounds.
    assert queue["waitToAdmit"] == {"p50": 0.0, "p95": 40.0, "max": 40.0, "censored": 2, "lowerBounds": ["p95", "max"]}
    rows_ = _rows(outcome)
    low = rows_["low"]
    assert (low["state"], low["admitted"], low["started"], low["admissions"], low["preemptions"]) == \
        ("pending", None, None, 1, 1)
    assert low["reason"].startswith("preempted for team-a/high of ClusterQueue team-a")
    assert "; since then: " in low["reason"]
    assert (rows_["mid"]["state"], rows_["mid"]["neverAdmitted"]) == ("pending", True)
    assert rows_["mid"]["reason"].startswith("couldn't assign flavors to pod set main: insufficient unused quota "
                                             "for cpu in flavor default, 1 more needed")
    assert (rows_["high"]["state"], rows_["quick"]["state"]) == ("running", "finished")


def test_bypassed_equivalents_and_never_evaluated_workloads_have_kueue_s_reasons(tmp_path):
    # BestEffortFIFO: big (8 cores of 4) is found inadmissible; big-2, the same shape and priority, is moved to the
    # inadmissible list with it and never evaluated: Kueue's "Bypassed scheduling evaluation ..." with big's reason.
    rows = [workload("big", 0, cpu=8, runtime=10), workload("big-2", 1, cpu=8, runtime=10)]
    outcome, _ = run(tmp_path, one_queue(4), rows)
    found = _rows(outcome)
    assert "maximum capacity" in found["big"]["reason"]
    assert found["big-2"]["reason"] == f"{BYPASSED}: {found['big']['reason']}"
    # StrictFIFO: big blocks its queue; the two behind it never reach the head.
    rows = [workload("big", 0, cpu=8, runtime=10), workload("w1", 1, cpu=1, runtime=10),
            workload("w2", 2, cpu=1, runtime=10)]
    outcome, _ = run(tmp_path, one_queue(4, strategy="StrictFIFO"), rows)
    found = _rows(outcome)
    assert found["w1"]["reason"] == (f"{PENDING_EVALUATION}: it never reached the head of ClusterQueue team-a "
                                     "(1 workload ahead of it at the end; Kueue takes one head per ClusterQueue per "
                                     "cycle)")
    assert "(2 workloads ahead of it" in found["w2"]["reason"]
    (queue,) = configuration(outcome)["clusterQueues"]
    assert queue["neverAdmitted"] == 3 and queue["pendingAtEnd"] == 3
    assert all(w["reason"] for w in found.values())


def test_a_deep_queue_under_a_cycle_time_says_why_each_waits(tmp_path):
    # One head a cycle of 10 s: of six submitted at 0, the replay stopped at 25 has admitted two (10, 20); the
    # third is in the cycle that ends at 30 (its quota reserved), the other three never reached the head.
    from aks_kueue.replay.pace import given

    rows = [workload(f"w{i}", 0, cpu=1, runtime=1000) for i in range(6)]
    outcome, _ = run(tmp_path, one_queue(100), rows, cycle=given(10.0), options=ReplayOptions(until=25))
    found = _rows(outcome)
    assert [found[f"w{i}"]["admitted"] for i in range(2)] == [10.0, 20.0]
    assert found["w2"]["reason"] == "its quota was reserved in a scheduling cycle that ends after the replay"
    assert [found[f"w{i}"]["reason"].split("(")[1].split(" ahead")[0] for i in (3, 4, 5)] == \
        ["0 workloads", "1 workload", "2 workloads"]


def _cohort(own: int, b_nominal: int) -> list[dict]:
    cohort = {"apiVersion": V1B2, "kind": "Cohort", "metadata": {"name": "org"},
              "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                  {"name": "default", "resources": [{"name": "cpu", "nominalQuota": str(own)}]}]}]}}
    return [flavor("default"), cohort, cluster_queue("a", {"default": [quota("cpu", 0)]}, cohort="org"),
            cluster_queue("b", {"default": [quota("cpu", b_nominal)]}, cohort="org"),
            local_queue("team-a", "a"), local_queue("team-b", "b")]


def test_quota_a_cohort_holds_gets_its_own_usage_row(tmp_path):
    # a holds no quota: its 4 cores (0-100) are borrowed. Alone with the cohort's 4, they all sit on the cohort's
    # own quota; with b lending 2 as well, at least 2 do (the other 2 may be b's).
    rows = [workload("w", 0, cpu=4, runtime=100)]
    for b_nominal, own_used in ((0, 4.0), (2, 2.0)):
        outcome, _ = run(tmp_path, _cohort(4, b_nominal), rows)
        part = configuration(outcome)
        (cohort,) = part["cohorts"]
        (row,) = cohort["usage"]
        assert cohort["name"] == "org"
        assert row == {"flavor": "default", "resource": "cpu", "nominal": 4.0, "meanUsed": own_used,
                       "utilisation": own_used / 4, "borrowedHours": 0.0, "unit": "cores",
                       "subtreeQuota": 4.0 + b_nominal, "subtreeMeanUsed": 4.0}
        a = next(q for q in part["clusterQueues"] if q["name"] == "a")
        assert a["usage"][0]["utilisation"] is None and a["usage"][0]["borrowedHours"] == round(4 * 100 / 3600, 3)
    # Without quota of their own, cohorts have no rows.
    outcome, _ = run(tmp_path, one_queue(4), rows)
    assert configuration(outcome)["cohorts"] == []


def test_the_window_starts_from_the_state_its_past_left(tmp_path):
    # warm (4 of 4 cores) runs 0-100, before the window opens at 50. w (at 60) waits for it: requeued at 101.
    # The window reports w alone, and the usage from 50 to the end (111): warm's 50 s and w's 10 s of 4 cores.
    rows = [workload("warm", 0, cpu=4, runtime=100), workload("w", 60, cpu=4, runtime=10)]
    outcome, _ = run(tmp_path, one_queue(4), rows, options=ReplayOptions(since=50))
    part = configuration(outcome)
    (queue,) = part["clusterQueues"]
    assert [w["name"] for w in part["workloads"]] == ["w"]
    assert queue["submitted"] == 1 and queue["waitToAdmit"]["max"] == 41.0
    assert queue["usage"][0]["meanUsed"] == round(4 * 60 / 61, 3)
    # A slice that started from an empty cluster would have admitted w at once.
    outcome, _ = run(tmp_path, one_queue(4), rows[1:])
    assert configuration(outcome)["clusterQueues"][0]["waitToAdmit"]["max"] == 0.0


def test_the_window_covers_the_pools_from_its_opening(tmp_path):
    # A node is asked for at 0 and Ready at 100 (warm starts); w shares it 500-600; warm ends at 1100. From 400:
    # one node for 700 s; allocated 2 cores for 100 s, 4 for 100 s, 2 for 500 s of the node's 4 x 700.
    rows = [workload("warm", 0, cpu=2, runtime=1000), workload("w", 500, cpu=2, runtime=100)]
    outcome, runs = run(tmp_path, one_queue(16), rows, pools=[pool("cpu")], node_startup={"cpu": 100.0},
                        options=ReplayOptions(since=400))
    assert (runs["warm"].started, runs["w"].started, outcome.end) == (100.0, 500.0, 1100.0)
    (entry,) = configuration(outcome)["pools"]
    assert (entry["nodeHours"], entry["peakNodes"]) == (round(700 / 3600, 3), 1)
    assert entry["meanAllocated"] == round((2 * 100 + 4 * 100 + 2 * 500) / (4 * 700), 4)
    outcome, _ = run(tmp_path, one_queue(16), rows, pools=[pool("cpu")], node_startup={"cpu": 100.0})
    assert configuration(outcome)["pools"][0]["nodeHours"] == round(1100 / 3600, 3)
