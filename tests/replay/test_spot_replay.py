"""Spot evictions and cost in the replay (issue 32), on small traces worked out by hand.

Every eviction instant here comes from `replay.spot`'s formula, computed in `life` the way the
model computes it: u from the first 8 bytes of BLAKE2b("SEED\\0POOL\\0NODE"), a node's life from
Ready `-ln(u) / rate` hours. With seed 0 and 1 eviction a node-hour, the nodes of pool `spot`
live (to 0.1 s) 1127.3 s (node 1), 5299.1 s (node 2) and 13198.8 s (node 3).
"""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from aks_kueue.aks.prices import read_prices
from aks_kueue.replay import ReplayOptions, read_trace
from aks_kueue.replay.engine import State
from aks_kueue.replay.report import configuration, document, dumps
from aks_kueue.replay.spot import SpotRate, SpotRates
from tests.replay.builders import cluster_queue, flavor, local_queue, one_queue, pool, quota, run, workload

RATE = SpotRates(everywhere=SpotRate(1.0, "given"))     # one eviction a node-hour


def life(seed: int, pool_name: str, node: int, rate: float = 1.0) -> float:
    """Seconds from Ready to eviction, by `replay.spot`'s formula."""
    digest = hashlib.blake2b(f"{seed}\0{pool_name}\0{node}".encode(), digest_size=8).digest()
    u = (int.from_bytes(digest, "big") + 0.5) / 2 ** 64
    return 3600 * -math.log(u) / rate


L1, L2, L3 = life(0, "spot", 1), life(0, "spot", 2), life(0, "spot", 3)


def test_the_lives_this_file_works_with():
    assert (round(L1, 1), round(L2, 1), round(L3, 1)) == (1127.3, 5299.1, 13198.8)


def _spot(tmp_path, rows, startup=300.0, kueue=None, cpu=4, **config):
    return run(tmp_path, one_queue(cpu), rows, pools=[pool("spot", spot=True)], node_startup={"spot": startup},
               scale_down_delay=600.0, spot_rates=RATE, seed=0, kueue=kueue, **config)


def test_an_evicted_node_interrupts_its_workload_which_runs_again_from_the_start(tmp_path):
    # a (2 cores, 1 h) is admitted at 0; node 1 is asked for then, Ready at 300: a starts. Node 1 is
    # evicted at 300 + L1 = 1427.3: a's pod is lost, a stays admitted and its pod waits; node 2 is
    # asked for, Ready at 1727.3 (evicted at 1727.3 + L2 = 7026.4 if still there). a starts again
    # and runs its whole hour: it ends at 5327.3; node 2, empty, is removed at 5927.3, before its
    # eviction, which is dropped.
    outcome, runs = _spot(tmp_path, [workload("a", 0, cpu=2, runtime=3600)])
    a = runs["a"]
    evicted = 300 + L1
    assert a.interruptions == 1 and a.admissions == 1 and a.preemptions == 0 and a.evictions == 0
    assert a.admitted == 0.0
    assert a.started == pytest.approx(evicted + 300, abs=1e-6)
    assert a.finished == pytest.approx(evicted + 300 + 3600, abs=1e-6)
    report = configuration(outcome)
    (queue,) = report["clusterQueues"]
    assert queue["spotInterruptions"] == 1
    # The hour's first L1 seconds on 2 cores were lost: 2 * 1127.3 / 3600 core-hours.
    assert queue["rerunHours"] == {"cpu": round(2 * L1 / 3600, 3)}
    (spot,) = report["pools"]
    assert spot["spot"] is True and spot["spotEvictions"] == 1 and spot["peakNodes"] == 1
    # Node 1 from 0 to 1427.3, node 2 from 1427.3 to the end at 5327.3.
    assert spot["nodeHours"] == round((evicted + 300 + 3600) / 3600, 3)
    (row,) = list(report["workloads"])
    assert row["spotInterruptions"] == 1 and row["started"] == round(evicted + 300, 3)


def test_the_recovery_timeout_evicts_a_workload_whose_lost_pods_are_not_back_in_time(tmp_path):
    # Nodes take 2000 s; waitForPodsReady's timeout is an hour (a's first start at 2000 is in time),
    # its recoveryTimeout 30 min. Node 1 is evicted at 2000 + L1 = 3127.3; node 2 is asked for, Ready
    # at 5127.3, but the recovery timeout comes first, at 4927.3: a is evicted (its quota and pods go)
    # and requeued after the first backoff, 60 s: readmitted at 4987.3, its pod takes node 2 when it
    # is Ready, at 5127.3, and a ends an hour later.
    kueue = {"waitForPodsReady": {"timeout": "1h", "recoveryTimeout": "30m"}}
    _, runs = _spot(tmp_path, [workload("a", 0, cpu=2, runtime=3600)], startup=2000.0, kueue=kueue)
    a = runs["a"]
    evicted = 2000 + L1
    assert (a.interruptions, a.evictions, a.admissions) == (1, 1, 2)
    assert a.admitted == pytest.approx(evicted + 1800 + 60, abs=1e-6)
    assert a.started == pytest.approx(evicted + 2000, abs=1e-6)
    assert a.finished == pytest.approx(evicted + 2000 + 3600, abs=1e-6)
    assert "recoveryTimeout" in a.last_eviction


def test_a_recovery_timeout_of_0s_lets_a_workload_wait_for_its_pods(tmp_path):
    kueue = {"waitForPodsReady": {"timeout": "1h", "recoveryTimeout": "0s"}}
    _, runs = _spot(tmp_path, [workload("a", 0, cpu=2, runtime=3600)], startup=2000.0, kueue=kueue)
    a = runs["a"]
    assert (a.interruptions, a.evictions, a.admissions) == (1, 0, 1)
    assert a.started == pytest.approx(2000 + L1 + 2000, abs=1e-6)


def test_a_long_run_interrupted_near_its_end_still_runs_again(tmp_path):
    # At 0.1 evictions a node-hour the nodes live ten times as long: node 1 from 300 to 300 + 10 L1 =
    # 11572.8, node 2 10 L2 = 52990.6 s. a (11,400 s, from 300) is interrupted 127.2 s before its end,
    # and 11272.8 s after it started: longer than the replay waits when nothing that moves a workload
    # is queued (the timeout, the backoff cap and a startup: 5,884 s). Its new node is Ready at
    # 11872.8, after its old end; it runs again, and ends 11,400 s later.
    rates = SpotRates(everywhere=SpotRate(0.1, "given"))
    _, runs = run(tmp_path, one_queue(4), [workload("a", 0, cpu=2, runtime=11400)], pools=[pool("spot", spot=True)],
                  node_startup={"spot": 300.0}, scale_down_delay=600.0, spot_rates=rates, seed=0)
    a = runs["a"]
    assert 300 + 10 * L1 < 300 + 11400 < 300 + 10 * L1 + 300
    assert a.interruptions == 1 and a.state is State.FINISHED
    assert a.finished == pytest.approx(300 + 10 * L1 + 300 + 11400, abs=1e-6)


def test_pods_of_a_workload_on_other_nodes_stay_and_only_the_lost_ones_wait(tmp_path):
    # b has two 3-core pods: nodes 1 and 2 (4 cores each) are asked for at 0, Ready at 300, one pod
    # each; b starts at 300. Node 1 goes at 300 + L1; its pod waits, node 3 is asked for, Ready 300
    # later, and b starts again then. Node 2, evicted at 300 + L2, outlives b's second run (it ends at
    # 300 + L1 + 300 + 1800 = 3527.3 < 5599.1) and goes at the scale-down, 600 s after.
    _, runs = _spot(tmp_path, [workload("b", 0, cpu=3, count=2, runtime=1800)], cpu=8)
    b = runs["b"]
    assert b.interruptions == 1
    assert b.started == pytest.approx(300 + L1 + 300, abs=1e-6)
    assert b.finished == pytest.approx(300 + L1 + 300 + 1800, abs=1e-6)
    assert 300 + L2 > b.finished + 600


def test_an_admitted_workload_not_started_yet_loses_no_run(tmp_path):
    # minCount 1: node 1 is Ready at 0 (x, 1 core, runs there from 0 to 10, so that the clock starts at
    # 0) and is evicted at L1 = 1127.3, kept meanwhile by minCount. w (two 3-core pods) comes at 1000:
    # one pod on node 1, node 2 asked for the other (Ready at 1300). At 1127.3 node 1 goes with the
    # first pod: w has not started, so no run is lost; the pod waits, node 3 is asked for (node 2's room
    # is promised to the other pod), Ready at 1427.3, and w starts then.
    outcome, runs = run(tmp_path, one_queue(8), [workload("x", 0, cpu=1, runtime=10),
                                                 workload("w", 1000, cpu=3, count=2, runtime=600)],
                        pools=[pool("spot", spot=True, min_count=1)], node_startup={"spot": 300.0},
                        scale_down_delay=600.0, spot_rates=RATE, seed=0)
    w = runs["w"]
    assert w.interruptions == 0 and w.evictions == 0
    assert w.started == pytest.approx(L1 + 300, abs=1e-6) and w.finished == pytest.approx(L1 + 900, abs=1e-6)
    report = configuration(outcome)
    assert report["pools"][0]["spotEvictions"] == 1
    assert report["clusterQueues"][0]["rerunHours"] == {} and report["clusterQueues"][0]["spotInterruptions"] == 0


def test_the_same_seed_gives_the_same_replay_and_another_seed_another(tmp_path):
    rows = [workload(f"w{i}", i * 600, cpu=2, runtime=7200) for i in range(6)]
    first, _ = _spot(tmp_path, rows)
    again, _ = _spot(tmp_path, rows)
    other, _ = run(tmp_path, one_queue(4), rows, pools=[pool("spot", spot=True)], node_startup={"spot": 300.0},
                   scale_down_delay=600.0, spot_rates=RATE, seed=1)
    read = read_trace([str(tmp_path / "trace.jsonl")])
    assert dumps(document([first], read)) == dumps(document([again], read))
    assert dumps(document([first], read)) != dumps(document([other], read))


def test_a_regular_pool_is_never_evicted_and_its_report_has_no_spot_fields(tmp_path):
    outcome, runs = run(tmp_path, one_queue(4), [workload("a", 0, cpu=2, runtime=36000)], pools=[pool("cpu")],
                        node_startup={"cpu": 300.0}, spot_rates=RATE)
    assert runs["a"].interruptions == 0 and runs["a"].finished == 36300.0
    report = configuration(outcome)
    assert "spotEvictions" not in report["pools"][0] and "spotInterruptions" not in report["clusterQueues"][0]
    assert "spotInterruptions" not in next(iter(report["workloads"]))
    assert "cost" not in report and "cost" not in report["pools"][0]      # no --prices: no cost anywhere
    assert not any("spot" in line for line in report["assumptions"])


def test_the_default_rate_is_an_assumption_of_every_report_with_spot_pools(tmp_path):
    outcome, _ = run(tmp_path, one_queue(4), [workload("a", 0, cpu=2, runtime=60)],
                     pools=[pool("spot", spot=True)], node_startup={"spot": 300.0})
    lines = configuration(outcome)["assumptions"]
    assert any(line.startswith("pool spot: spot, a node is evicted at 0.05129 a node-hour") and
               "the top of Azure's lowest published eviction band, 0-5% an hour" in line for line in lines)
    assert any("recoveryTimeout (1800 s)" in line for line in lines)


def test_a_preempted_run_is_work_done_again(tmp_path):
    # No pools: low (4 cores) runs from 0; high (priority 10, 4 cores) preempts it at 100. Lost: 4
    # cores for 100 s, 0.111 core-hours.
    objects = one_queue(4, preemption={"withinClusterQueue": "LowerPriority"})
    outcome, runs = run(tmp_path, objects, [workload("low", 0, cpu=4, runtime=1000),
                                            workload("high", 100, cpu=4, runtime=1000, priority=10)])
    assert runs["low"].preemptions == 1
    assert configuration(outcome)["clusterQueues"][0]["rerunHours"] == {"cpu": round(4 * 100 / 3600, 3)}


# Cost ------------------------------------------------------------------------------------------------


def _row(sku, price, meter=None, product="Virtual Machines Test Series", kind="Consumption", region="eastus",
         **extra):
    found = {"currencyCode": "USD", "retailPrice": price, "armRegionName": region, "armSkuName": sku,
             "meterName": meter or sku, "productName": product, "type": kind, "unitOfMeasure": "1 Hour",
             "serviceName": "Virtual Machines", "effectiveStartDate": "2026-10-01T00:00:00Z",
             "isPrimaryMeterRegion": True}
    found.update(extra)
    return found


def _prices(tmp_path, rows):
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"Items": rows, "NextPageLink": None}))
    return read_prices([path])


# Every kind of row the API returns beside the price of Custom_p (2.0 an hour), each ignored.
DECOYS = [
    _row("Custom_p", 3.0, product="Virtual Machines Test Series Windows"),
    _row("Custom_p", 9000.0, kind="Reservation", reservationTerm="1 Year"),
    _row("Custom_p", 1.5, kind="DevTestConsumption"),
    _row("Custom_p", 0.4, meter="Custom_p Low Priority"),
    _row("Custom_p", 1.9, isPrimaryMeterRegion=False),
    _row("Custom_p", 2.5, region="westus3"),
    _row("Custom_p", 0.6, meter="Custom_p Spot"),        # the Spot meter: not a regular pool's price
]


def _shared(tmp_path, prices_rows, spot=False, pools=None):
    objects = [flavor("default"), cluster_queue("a", {"default": [quota("cpu", 4)]}),
               cluster_queue("b", {"default": [quota("cpu", 4)]}), local_queue("team-a", "a"),
               local_queue("team-b", "b")]
    pools = pools or [pool("p", spot=spot)]
    book = _prices(tmp_path, prices_rows)
    return run(tmp_path, objects, [workload("w1", 0, cpu=2, runtime=3600),
                                   workload("w2", 0, cpu=1, runtime=3600, namespace="team-b")],
               pools=pools, node_startup={p.name: 300.0 for p in pools},
               prices=book.for_pools("eastus", [p.spec for p in pools]), spot_rates=SpotRates(SpotRate(0.0, "given")))


def test_a_pool_costs_its_node_hours_at_its_price_and_queues_share_it_by_what_they_were_allocated(tmp_path):
    # One node (it holds both pods) asked for at 0, Ready at 300, both run an hour: the node is paid
    # from 0 to the end at 3900, 1.0833 node-hours at 2.0 = 2.1667. a held 2 cores for the hour, b 1:
    # a pays 2/3 of it, b 1/3.
    outcome, _ = _shared(tmp_path, [*DECOYS[:3], _row("Custom_p", 2.0), *DECOYS[3:]])
    report = configuration(outcome)
    (p,) = report["pools"]
    assert p["cost"] == {"amount": round(3900 / 3600 * 2.0, 2), "currency": "USD", "hourly": 2.0,
                         "priceDate": "2026-10-01T00:00:00Z"}
    costs = {q["name"]: q["cost"] for q in report["clusterQueues"]}
    assert costs == {"a": {"amount": round(3900 / 3600 * 2.0 * 2 / 3, 2), "currency": "USD"},
                     "b": {"amount": round(3900 / 3600 * 2.0 / 3, 2), "currency": "USD"}}
    assert report["cost"] == {"amount": 2.17, "currency": "USD", "unallocated": 0.0}
    assert any("pool p: 2 USD a node-hour, Custom_p in eastus on its regular (pay-as-you-go) meter, effective "
               "2026-10-01T00:00:00Z" in line for line in report["assumptions"])


def test_a_spot_pool_is_priced_on_its_spot_meter(tmp_path):
    outcome, _ = _shared(tmp_path, [*DECOYS[:6], _row("Custom_p", 2.0), _row("Custom_p", 0.5, meter="Custom_p Spot")],
                         spot=True)
    (p,) = configuration(outcome)["pools"]
    assert p["cost"]["hourly"] == 0.5 and p["cost"]["amount"] == round(3900 / 3600 * 0.5, 2)


def test_a_pool_without_a_price_is_named_and_the_queues_that_used_it_say_so(tmp_path):
    outcome, _ = _shared(tmp_path, DECOYS)
    report = configuration(outcome)
    assert report["pools"][0]["cost"] is None
    assert report["clusterQueues"][0]["cost"] == {"amount": 0.0, "currency": None, "unpriced": ["p"]}
    assert report["cost"]["unpriced"] == ["p"]
    assert any(line.startswith("pool p: no cost (no price for Custom_p in eastus on its regular (pay-as-you-go) "
                               "meter: none of its 6 rows there") for line in report["assumptions"])


def test_the_difference_of_cost_is_the_change_minus_the_base(tmp_path):
    change, _ = _shared(tmp_path, [_row("Custom_p", 2.0)])
    base, _ = _shared(tmp_path, [_row("Custom_p", 3.0)])
    found = document([change, base], read_trace([str(tmp_path / "trace.jsonl")]))
    by_queue = {d["clusterQueue"]: d for d in found["differences"]}
    # The same hours at 2.0 and at 3.0: a's share 1.4444 - 2.1667, b's 0.7222 - 1.0833.
    assert by_queue["a"]["cost"] == round(round(3900 / 3600 * 2 * 2 / 3, 2) - round(3900 / 3600 * 3 * 2 / 3, 2), 2)
    assert by_queue["b"]["cost"] == round(round(3900 / 3600 * 2 / 3, 2) - round(3900 / 3600 * 3 / 3, 2), 2)
    assert by_queue["a"]["rerunHours"] == {}


def test_without_prices_the_engine_counts_nothing_per_queue(tmp_path):
    outcome, _ = run(tmp_path, one_queue(4), [workload("a", 0, cpu=2, runtime=60)], pools=[pool("cpu")],
                     node_startup={"cpu": 300.0})
    assert outcome.nodes is not None and outcome.nodes.pools[0].by_queue is None


def test_an_interruption_cycle_is_bounded(tmp_path):
    # Nodes that live a minute on average, a run of 100 hours on 2 of them: it never finishes; the
    # replay takes it out after MAX_ADMISSIONS admissions and interruptions, and ends.
    from aks_kueue.replay.engine import MAX_ADMISSIONS
    rates = SpotRates(everywhere=SpotRate(60.0, "given"))
    outcome, runs = run(tmp_path, one_queue(8), [workload("long", 0, cpu=3, count=2, runtime=360000)],
                        pools=[pool("spot", spot=True)], node_startup={"spot": 30.0}, spot_rates=rates,
                        options=ReplayOptions())
    long = runs["long"]
    assert long.state is State.ABANDONED
    assert long.admissions + long.interruptions == MAX_ADMISSIONS
    assert "spot interruptions" in long.reason
    assert any("were admitted 1,000 times without finishing" in note for note in outcome.notes)
