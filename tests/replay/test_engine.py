"""Each semantic rule of the replay contract on a trace small enough to work out by hand.

Kueue retries inadmissible workloads one second after capacity is freed in their cohort tree
(`requeueBatchPeriod`), so a workload that waits for another to end is admitted at end + 1.
"""

from __future__ import annotations

from aks_kueue.replay import ReplayOptions
from aks_kueue.replay.engine import State
from tests.replay.builders import (cluster_queue, flavor, local_queue, one_queue, priority_class, quota, run,
                                   workload)


def test_fifo_order_and_the_one_second_requeue_batch(tmp_path):
    # Each needs the whole quota. a runs 0-10; b (t=1) and c (t=2) wait; at 10 the requeue is
    # batched to 11: b (older) goes first, c after b ends at 21 (requeued at 22).
    rows = [workload("a", 0, cpu=4, runtime=10), workload("b", 1, cpu=4, runtime=10),
            workload("c", 2, cpu=4, runtime=10)]
    outcome, runs = run(tmp_path, one_queue(4), rows)
    assert [runs[n].admitted for n in "abc"] == [0.0, 11.0, 22.0]
    assert [runs[n].finished for n in "abc"] == [10.0, 21.0, 32.0]
    assert outcome.end == 32.0


def test_priority_order_before_submission_order(tmp_path):
    rows = [workload("a", 0, cpu=4, runtime=10), workload("low", 1, cpu=4, runtime=10, priority=0),
            workload("high", 2, cpu=4, runtime=10, priority=10)]
    _, runs = run(tmp_path, one_queue(4), rows)
    assert runs["high"].admitted == 11.0  # later, but higher priority
    assert runs["low"].admitted == 22.0


def test_priority_class_is_resolved_in_the_configuration(tmp_path):
    objects = one_queue(4) + [priority_class("urgent", 1000)]
    rows = [workload("a", 0, cpu=4, runtime=10), workload("plain", 1, cpu=4, runtime=10, priority=500),
            workload("classed", 2, cpu=4, runtime=10, priorityClass="urgent")]
    _, runs = run(tmp_path, objects, rows)
    assert runs["classed"].priority == 1000
    assert runs["classed"].admitted == 11.0 and runs["plain"].admitted == 22.0


def test_best_effort_fifo_skips_a_head_that_does_not_fit(tmp_path):
    # a holds 3 of 4 cores until 100. b (2 cores) cannot fit; c (1 core) can, and goes ahead of b.
    rows = [workload("a", 0, cpu=3, runtime=100), workload("b", 1, cpu=2, runtime=10),
            workload("c", 2, cpu=1, runtime=10)]
    _, runs = run(tmp_path, one_queue(4), rows)
    assert runs["c"].admitted == 2.0
    assert runs["b"].admitted == 101.0  # retried one second after a ends


def test_strict_fifo_blocks_the_queue_behind_its_head(tmp_path):
    # The same trace under StrictFIFO: b blocks c until b is admitted. The head is retried every
    # cycle (no inadmissible list), so b gets in the instant a ends, and c right after it.
    rows = [workload("a", 0, cpu=3, runtime=100), workload("b", 1, cpu=2, runtime=10),
            workload("c", 2, cpu=1, runtime=10)]
    _, runs = run(tmp_path, one_queue(4, strategy="StrictFIFO"), rows)
    assert runs["b"].admitted == 100.0
    assert runs["c"].admitted == 100.0


def test_a_new_submission_does_not_retry_the_inadmissible_list(tmp_path):
    # b waits inadmissible; c's submission at 5 changes nothing for b; only a's end does.
    rows = [workload("a", 0, cpu=3, runtime=50), workload("b", 1, cpu=2, runtime=10),
            workload("c", 5, cpu=1, runtime=100)]
    _, runs = run(tmp_path, one_queue(4), rows)
    assert runs["c"].admitted == 5.0
    # a ends at 50: b is retried at 51 and fits (c holds 1, b takes 2).
    assert runs["b"].admitted == 51.0


def _cohort(preemption_b=None, borrowing_a=None, lending_b=None):
    return [flavor("default"),
            cluster_queue("a", {"default": [quota("cpu", 4, borrowing=borrowing_a)]}, cohort="org"),
            cluster_queue("b", {"default": [quota("cpu", 4, lending=lending_b)]}, cohort="org",
                          preemption=preemption_b),
            local_queue("team-a", "a"), local_queue("team-b", "b")]


def test_borrowing_and_reclaim_with_rerun(tmp_path):
    # a1 borrows b's idle 4 cores (8 of the cohort's 8). b1 at 10 reclaims them: a1 is preempted,
    # back in its queue, and runs its whole 100 s again once the cohort has room (b1 ends at 60,
    # retry at 61, done at 161).
    rows = [workload("a1", 0, cpu=8, runtime=100), workload("b1", 10, cpu=4, runtime=50, namespace="team-b")]
    outcome, runs = run(tmp_path, _cohort(preemption_b={"reclaimWithinCohort": "Any"}), rows)
    a1, b1 = runs["a1"], runs["b1"]
    assert b1.admitted == 10.0
    assert a1.preemptions == 1 and a1.evictions == 0
    assert (a1.admitted, a1.started, a1.finished) == (61.0, 61.0, 161.0)
    # Borrowing shows in the report's accounting: a uses 8 of its 4 from 0 to 10 and again from 61 to
    # 161 (b is idle then), so 4 cores for 110 s.
    assert outcome.meters["a"][("default", "cpu")].borrowed == 4000 * 110


def test_without_reclaim_the_borrower_keeps_the_quota(tmp_path):
    rows = [workload("a1", 0, cpu=8, runtime=100), workload("b1", 10, cpu=4, runtime=50, namespace="team-b")]
    _, runs = run(tmp_path, _cohort(), rows)
    assert runs["a1"].preemptions == 0 and runs["a1"].finished == 100.0
    assert runs["b1"].admitted == 101.0


def test_borrowing_limit_caps_what_a_queue_can_take(tmp_path):
    # a may borrow 2: 6 cores fit, 7 never do (the replay reports it pending at the end).
    rows = [workload("six", 0, cpu=6, runtime=10), workload("seven", 20, cpu=7, runtime=10)]
    _, runs = run(tmp_path, _cohort(borrowing_a=2), rows)
    assert runs["six"].admitted == 0.0
    assert runs["seven"].admitted is None and runs["seven"].state is State.PENDING


def test_lending_limit_caps_what_others_can_borrow(tmp_path):
    # b lends at most 1 core: a can reach 5, not 6.
    rows = [workload("five", 0, cpu=5, runtime=10), workload("six", 20, cpu=6, runtime=10)]
    _, runs = run(tmp_path, _cohort(lending_b=1), rows)
    assert runs["five"].admitted == 0.0
    assert runs["six"].admitted is None


def test_preemption_within_the_queue_and_rerun(tmp_path):
    objects = one_queue(4, preemption={"withinClusterQueue": "LowerPriority"})
    rows = [workload("low", 0, cpu=4, runtime=100, priority=0), workload("high", 30, cpu=4, runtime=20, priority=10)]
    _, runs = run(tmp_path, objects, rows)
    high, low = runs["high"], runs["low"]
    assert (high.admitted, high.finished) == (30.0, 50.0)
    # low keeps its creation time, is retried a second after high ends, and runs its whole runtime again.
    assert low.preemptions == 1
    assert (low.admitted, low.finished) == (51.0, 151.0)


def test_equal_priority_is_not_preempted_under_lower_priority(tmp_path):
    objects = one_queue(4, preemption={"withinClusterQueue": "LowerPriority"})
    rows = [workload("first", 0, cpu=4, runtime=100, priority=5), workload("second", 30, cpu=4, runtime=20, priority=5)]
    _, runs = run(tmp_path, objects, rows)
    assert runs["first"].preemptions == 0 and runs["second"].admitted == 101.0


def test_partial_admission_takes_what_fits(tmp_path):
    # 6 pods of 1 core, at least 2: with 4 cores free, Kueue admits 4 of them.
    rows = [workload("wide", 0, cpu=1, count=6, minCount=2, runtime=10)]
    outcome, runs = run(tmp_path, one_queue(4), rows)
    assert runs["wide"].admitted == 0.0
    assert runs["wide"].counts == {"main": 4}
    assert outcome.meters["team-a"][("default", "cpu")].used == 4000 * 10


def test_partial_admission_is_off_when_the_gate_is(tmp_path):
    rows = [workload("wide", 0, cpu=1, count=6, minCount=2, runtime=10)]
    _, runs = run(tmp_path, one_queue(4), rows, kueue={"featureGates": {"PartialAdmission": False}})
    assert runs["wide"].admitted is None


def test_a_second_flavor_when_the_first_is_full(tmp_path):
    objects = [flavor("small"), flavor("big"),
               cluster_queue("team-a", {"small": [quota("cpu", 2)], "big": [quota("cpu", 4)]}),
               local_queue("team-a", "team-a")]
    rows = [workload("a", 0, cpu=2, runtime=100), workload("b", 1, cpu=2, runtime=100)]
    _, runs = run(tmp_path, objects, rows)
    assert runs["a"].flavors == {"main": {"cpu": "small"}}
    assert runs["b"].flavors == {"main": {"cpu": "big"}}
    assert runs["b"].admitted == 1.0


def test_a_missing_local_queue_never_admits(tmp_path):
    _, runs = run(tmp_path, one_queue(4), [workload("lost", 0, queue="nowhere")])
    assert runs["lost"].cq is None and "LocalQueue team-a/nowhere doesn't exist" in runs["lost"].reason


def test_a_workload_without_runtime_runs_to_the_end(tmp_path):
    rows = [workload("forever", 0, cpu=1, runtime=None), workload("short", 5, cpu=1, runtime=10)]
    outcome, runs = run(tmp_path, one_queue(4), rows)
    assert runs["forever"].state is State.RUNNING and runs["forever"].finished is None
    assert outcome.end == 15.0
    assert runs["short"].state is State.FINISHED


def test_until_stops_the_replay(tmp_path):
    rows = [workload("a", 0, cpu=4, runtime=10), workload("b", 1, cpu=4, runtime=10),
            workload("late", 500, cpu=1, runtime=10)]
    outcome, runs = run(tmp_path, one_queue(4), rows, options=ReplayOptions(until=15))
    assert outcome.end == 15.0
    assert runs["b"].admitted == 11.0 and runs["b"].finished is None
    assert runs["late"].queue is None  # never submitted within the replay


def test_ties_are_broken_by_trace_order(tmp_path):
    rows = [workload(n, 0, cpu=4, runtime=10) for n in ("x", "y", "z")]
    _, runs = run(tmp_path, one_queue(4), rows)
    assert [runs[n].admitted for n in "xyz"] == [0.0, 11.0, 22.0]
    reordered = [rows[2], rows[0], rows[1]]
    _, runs = run(tmp_path, one_queue(4), reordered)
    assert [runs[n].admitted for n in "zxy"] == [0.0, 11.0, 22.0]


def test_an_unknown_priority_class_is_never_admitted_with_kueue_s_reason(tmp_path):
    # Kueue's job reconciler creates no Workload for a job whose WorkloadPriorityClass does not exist:
    # never admitted, with that reason, and counted in its ClusterQueue. Never a silent priority 0.
    objects = one_queue(4) + [priority_class("batch-high", 1000)]
    rows = [workload("typo", 0, cpu=1, runtime=10, priorityClass="batch-hihg"),
            workload("known", 0, cpu=1, runtime=10, priorityClass="batch-high")]
    outcome, runs = run(tmp_path, objects, rows)
    typo = runs["typo"]
    assert typo.state is State.PARKED and typo.admitted is None and typo.cq == "team-a"
    assert "WorkloadPriorityClass batch-hihg doesn't exist in this configuration" in typo.reason
    assert "batch-high" in typo.reason  # the likely one
    assert runs["known"].finished == 10.0
