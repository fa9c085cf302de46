"""Nodes in the loop, on hand-worked traces: startup delay, the autoscaler up to maxCount, scale-down,
workloads that never start, waitForPodsReady's eviction and backoff, ProvisioningRequest checks."""

from __future__ import annotations

from aks_kueue.replay import ReplayOptions
from aks_kueue.replay.engine import State
from aks_kueue.replay.report import configuration
from tests.replay.builders import (cluster_queue, flavor, local_queue, one_queue, pool, provisioning_check, quota,
                                   run, workload)

STARTUP = {"cpu": 300.0}


def _run(tmp_path, rows, objects=None, pools=None, **config):
    config.setdefault("node_startup", dict(STARTUP))
    return run(tmp_path, objects or one_queue(16), rows, pools=pools or [pool("cpu")], **config)


def test_a_workload_starts_when_a_new_node_is_ready(tmp_path):
    outcome, runs = _run(tmp_path, [workload("a", 0, cpu=2, runtime=100)])
    a = runs["a"]
    assert (a.admitted, a.started, a.finished) == (0.0, 300.0, 400.0)
    report = configuration(outcome)
    assert report["clusterQueues"][0]["waitToStart"]["max"] == 300.0
    assert report["pools"][0]["peakNodes"] == 1


def test_min_count_nodes_are_there_from_the_start(tmp_path):
    _, runs = _run(tmp_path, [workload("a", 0, cpu=2, runtime=100)], pools=[pool("cpu", min_count=1)])
    assert runs["a"].started == 0.0


def test_the_autoscaler_stops_at_max_count(tmp_path):
    # Three 4-core pods, nodes of 4 cores, at most 2: two nodes come up at 300; the third pod waits
    # for one of them to empty at 400.
    rows = [workload(n, 0, cpu=4, runtime=100) for n in ("a", "b", "c")]
    outcome, runs = _run(tmp_path, rows)
    assert [runs[n].started for n in "abc"] == [300.0, 300.0, 400.0]
    pools = configuration(outcome)["pools"][0]
    assert pools["peakNodes"] == 2
    # At maxCount from 0 (two nodes asked for) until the end at 500.
    assert pools["hoursAtMax"] == round(500 / 3600, 3)


def test_an_empty_node_goes_after_the_scale_down_delay(tmp_path):
    # a ends at 400; the node is empty until 1000 and removed then: b at 1500 waits for a new node.
    rows = [workload("a", 0, cpu=2, runtime=100), workload("b", 1500, cpu=2, runtime=100)]
    _, runs = _run(tmp_path, rows, scale_down_delay=600.0)
    assert runs["b"].started == 1800.0
    # Had b come at 900, the node would still be there.
    rows = [workload("a", 0, cpu=2, runtime=100), workload("b", 900, cpu=2, runtime=100)]
    _, runs = _run(tmp_path, rows, scale_down_delay=600.0)
    assert runs["b"].started == 900.0


def test_scale_down_keeps_min_count(tmp_path):
    rows = [workload("a", 0, cpu=2, runtime=100), workload("b", 5000, cpu=2, runtime=100)]
    _, runs = _run(tmp_path, rows, pools=[pool("cpu", min_count=1)], scale_down_delay=600.0)
    assert runs["b"].started == 5000.0


def test_node_hours_count_from_scale_up(tmp_path):
    outcome, _ = _run(tmp_path, [workload("a", 0, cpu=2, runtime=3600)])
    pools = configuration(outcome)["pools"][0]
    # One node from 0 (asked for; it is paid for while it boots) to the end at 3900.
    assert pools["nodeHours"] == round(3900 / 3600, 3)
    # Ready from 300 with 2 of its 4 cores allocated.
    assert pools["meanAllocated"] == 0.5


def test_a_pod_larger_than_any_node_is_admitted_once_and_left_out_at_its_timeout(tmp_path):
    # 8 cores on 4-core nodes: admitted (quota allows it), never placed. waitForPodsReady evicts it at
    # 1800; Kueue would requeue it after 60 s, 120 s, ... forever. No pool can ever hold the pod, so the
    # replay leaves it out there, and ends.
    rows = [workload("huge", 0, cpu=8, runtime=100)]
    outcome, runs = _run(tmp_path, rows)
    huge = runs["huge"]
    assert huge.state is State.UNPLACEABLE
    assert huge.evictions == 1 and huge.preemptions == 0 and huge.admissions == 1
    assert huge.admitted == 0.0 and huge.started is None
    assert "a node of pool cpu offers cpu 4, the pod asks 8" in huge.reason
    assert outcome.end == 1800.0
    queue = configuration(outcome)["clusterQueues"][0]
    assert queue["neverStarted"] == 1 and queue["evictions"] == 1 and queue["pendingAtEnd"] == 1
    assert any("1 workload can never be placed" in note for note in outcome.notes)


def test_a_pod_that_fits_a_node_later_is_evicted_and_requeued_as_kueue_does(tmp_path):
    # The pod fits a node, but the only node is taken by a workload that never ends: Kueue's semantics
    # stay (admitted at 1, evicted at 1801, back after 60 s at 1861, evicted at 3661, back after 120 s at 3781).
    rows = [workload("forever", 0, cpu=4, runtime=None), workload("later", 1, cpu=4, runtime=100)]
    _, runs = _run(tmp_path, rows, pools=[pool("cpu", max_count=1)], options=ReplayOptions(until=4000))
    later = runs["later"]
    assert later.state is State.ADMITTED and later.evictions == 2
    assert later.admitted == 3781.0 and later.started is None
    # The requeue after a waitForPodsReady eviction is ordered by the eviction time.
    assert later.ts == 3661.0


def test_the_backoff_limit_deactivates(tmp_path):
    kueue = {"waitForPodsReady": {"timeout": "10m", "requeuingStrategy": {"backoffLimitCount": 1,
                                                                          "backoffBaseSeconds": 10}}}
    _, runs = _run(tmp_path, [workload("huge", 0, cpu=8, runtime=100)], kueue=kueue)
    huge = runs["huge"]
    # evicted at 600, back at 610, evicted at 1210: the second requeue is over the limit.
    assert huge.state is State.DEACTIVATED and huge.evictions == 2
    assert "deactivated after 1 requeues" in huge.reason


def test_a_slow_node_makes_waitforpodsready_evict_and_requeue(tmp_path):
    # The node takes 2000 s, longer than the 1800 s timeout: evicted at 1800, back at 1860, and it
    # starts when the node is Ready at 2000.
    rows = [workload("a", 0, cpu=2, runtime=100)]
    _, runs = _run(tmp_path, rows, node_startup={"cpu": 2000.0})
    a = runs["a"]
    assert a.evictions == 1
    assert (a.admitted, a.started, a.finished) == (1860.0, 2000.0, 2100.0)


def test_no_pool_carries_the_flavor_labels(tmp_path):
    objects = [flavor("gpu", labels={"kubernetes.azure.com/agentpool": "gpu"}),
               cluster_queue("team-a", {"gpu": [quota("cpu", 16)]}), local_queue("team-a", "team-a")]
    _, runs = _run(tmp_path, [workload("a", 0, cpu=1)], objects=objects, options=ReplayOptions(until=100))
    assert runs["a"].admitted == 0.0 and runs["a"].started is None
    assert "no node pool carries the labels" in runs["a"].reason


def test_pods_land_only_where_they_tolerate_the_taints(tmp_path):
    taint = {"key": "sku", "value": "gpu", "effect": "NoSchedule"}
    tainted = [pool("cpu", taints=(taint,))]
    _, runs = _run(tmp_path, [workload("plain", 0, cpu=1)], pools=tainted, options=ReplayOptions(until=100))
    assert runs["plain"].started is None
    toleration = [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    _, runs = _run(tmp_path, [workload("tolerant", 0, cpu=1, tolerations=toleration)], pools=tainted)
    assert runs["tolerant"].started == 300.0


def test_block_admission_waits_for_admitted_workloads_to_start(tmp_path):
    kueue = {"waitForPodsReady": {"timeout": "30m", "blockAdmission": True}}
    rows = [workload("a", 0, cpu=2, runtime=100), workload("b", 10, cpu=2, runtime=100)]
    _, runs = _run(tmp_path, rows, kueue=kueue)
    assert runs["b"].admitted == 300.0


def test_a_provisioning_request_check_admits_once_the_nodes_are_ready(tmp_path):
    objects = [flavor("default"), cluster_queue("team-a", {"default": [quota("cpu", 16)]}, checks=["prov"]),
               local_queue("team-a", "team-a"), *provisioning_check("prov")]
    rows = [workload("a", 0, cpu=2, count=2, runtime=100)]
    outcome, runs = _run(tmp_path, rows, objects=objects)
    a = runs["a"]
    # Quota reserved at 0; both pods booked on one new node, Ready at 300: admitted and started then.
    assert (a.admitted, a.started, a.finished) == (300.0, 300.0, 400.0)
    queue = configuration(outcome)["clusterQueues"][0]
    assert queue["waitToAdmit"]["max"] == 300.0 and queue["evictions"] == 0
    # Without the check Kueue admits at once and the pods wait for the node.
    _, runs = _run(tmp_path, rows)
    assert (runs["a"].admitted, runs["a"].started) == (0.0, 300.0)


def test_a_provisioning_request_that_no_pool_can_hold_keeps_its_quota_reserved(tmp_path):
    objects = [flavor("default"), cluster_queue("team-a", {"default": [quota("cpu", 16)]}, checks=["prov"]),
               local_queue("team-a", "team-a"), *provisioning_check("prov")]
    # Three 4-core pods need three nodes; the pool stops at two, and the request is all or nothing.
    _, runs = _run(tmp_path, [workload("a", 0, cpu=4, count=3, runtime=100)], objects=objects,
                   options=ReplayOptions(until=1000))
    assert runs["a"].state is State.RESERVED and runs["a"].admitted is None
    assert "ProvisioningRequest" in runs["a"].reason


def test_check_capacity_books_only_nodes_that_exist(tmp_path):
    check = provisioning_check("prov", "check-capacity.autoscaling.x-k8s.io")
    objects = [flavor("default"), cluster_queue("team-a", {"default": [quota("cpu", 16)]}, checks=["prov"]),
               local_queue("team-a", "team-a"), *check]
    rows = [workload("a", 0, cpu=4, runtime=100), workload("b", 10, cpu=4, runtime=100)]
    _, runs = _run(tmp_path, rows, objects=objects, pools=[pool("cpu", min_count=1)])
    assert runs["a"].admitted == 0.0
    assert runs["b"].admitted == 100.0  # no new node: it waits for a's room


def test_a_preempted_workload_reports_the_times_of_its_last_admission(tmp_path):
    """Found by the property test: a workload preempted after it started, admitted again and still
    waiting for a node kept its first start, so it seemed to start before it was admitted."""
    objects = one_queue(2, preemption={"withinClusterQueue": "LowerPriority"})
    rows = [workload("low", 0, cpu=2, runtime=10000, priority=0), workload("high", 400, cpu=2, runtime=100, priority=10)]
    # high takes low's quota and its node at 400, ends at 500; the empty node goes half a second later,
    # so low, admitted again at 501, waits 300 s for a new one: the replay stops before it comes.
    _, runs = _run(tmp_path, rows, objects, pools=[pool("cpu", max_count=1)], scale_down_delay=0.5,
                   options=ReplayOptions(until=600))
    low = runs["low"]
    assert low.preemptions == 1 and low.admitted == 501.0
    assert low.started is None


def test_a_workload_that_cycles_is_left_out_after_max_admissions_naming_its_queue_and_why(tmp_path, monkeypatch):
    from aks_kueue.replay import engine

    monkeypatch.setattr(engine, "MAX_ADMISSIONS", 3)
    # The one node is held by a workload that never ends; `later` fits a node, so Kueue requeues it after each
    # waitForPodsReady timeout, forever. The replay stops at its third admission and says why.
    rows = [workload("forever", 0, cpu=4, runtime=None), workload("later", 1, cpu=4, runtime=100)]
    outcome, runs = _run(tmp_path, rows, pools=[pool("cpu", max_count=1)])
    later = runs["later"]
    assert later.state is State.ABANDONED and later.admissions == 3 and later.evictions == 3
    assert "admitted 3 times without finishing (0 preemptions, 3 waitForPodsReady evictions)" in later.reason
    assert "last evicted by waitForPodsReady" in later.reason
    (note,) = [n for n in outcome.notes if "admitted 3 times" in n]
    assert "team-a/later in ClusterQueue team-a" in note
    assert configuration(outcome)["clusterQueues"][0]["pendingAtEnd"] == 1  # still waiting, as in Kueue


def test_kueue_s_requeue_backoff_saturates():
    from aks_kueue.replay.config import UNCAPPED_BACKOFF, PodsReady

    ready = PodsReady()
    assert [ready.backoff(n) for n in range(1, 9)] == [60, 120, 240, 480, 960, 1920, 3600, 3600]
    assert ready.backoff(10**6) == 3600.0  # base * 2 ** (count - 1) overflowed a float here
    assert PodsReady(backoff_base=0).backoff(50) == 0
    assert PodsReady(backoff_max=0).backoff(10**6) == UNCAPPED_BACKOFF  # Kueue's MaxInt64/2 ns
    # apimachinery's wait.Backoff: the first step is the base even above the cap, then the cap.
    assert [PodsReady(backoff_base=100, backoff_max=50).backoff(n) for n in (1, 2, 3)] == [100, 50, 50]


def test_an_explicit_zero_backoff_is_kueue_s_zero_not_the_default(tmp_path):
    from aks_kueue.replay import ReplayConfig

    kueue = {"waitForPodsReady": {"timeout": "5m", "requeuingStrategy": {"backoffBaseSeconds": 0,
                                                                         "backoffMaxSeconds": 0}}}
    ready = ReplayConfig("x", [], kueue=kueue).pods_ready
    assert (ready.backoff_base, ready.backoff_max, ready.backoff(3)) == (0.0, 0.0, 0.0)
    assert ReplayConfig("x", [], kueue={"waitForPodsReady": {"timeout": "5m"}}).pods_ready.backoff(2) == 120
