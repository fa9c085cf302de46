"""Admission fair sharing against upstream's TestScheduleForAFS, TestShouldApplyEntryPenalty and
`pkg/util/admissionfairsharing` tests (fixtures/upstream/TestScheduleForAFS.yaml; the decay and
usage facts are written here, each naming its upstream test)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from aks_kueue.admission.admission_fair_sharing import (AdmissionFairSharing, calculate_decayed_consumed,
                                                        calculate_usage, should_apply_entry_penalty)
from aks_kueue.admission.configuration import SchedulerConfig
from aks_kueue.kueue.views import LocalQueue
from aks_kueue.admission.snapshot import Snapshot
from aks_kueue.admission.workloads import workload_info
from aks_kueue.admission.admission_fair_sharing import as_quantities
from tests.admission.cycle import one_cycle
from tests.admission.upstream_objects import V1BETA2, cluster_queue, flavors, workload

FIXTURE = yaml.safe_load((Path(__file__).parents[1] / "fixtures" / "upstream" / "TestScheduleForAFS.yaml").read_text())
AFS = AdmissionFairSharing(usage_half_life_time=10, usage_sampling_interval=1)
WEEK, FIVE_MINUTES = 168 * 3600.0, 300.0


def afs_snapshot(afs_on: bool) -> Snapshot:
    objects = flavors(["default"])
    objects.append(cluster_queue("cq1", {"quota": {"default": {"cpu": "8", "memory": "8Gi"}},
                                         "admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"}}))
    for name, weight in (("lq-a", "1"), ("lq-b", "1"), ("lq-c", "1"), ("lq-zero", "0")):
        objects.append({"apiVersion": V1BETA2, "kind": "LocalQueue", "metadata": {"name": name, "namespace": "default"},
                        "spec": {"clusterQueue": "cq1", "fairSharing": {"weight": weight}}})
    return Snapshot.from_objects(objects, scheduler=SchedulerConfig(admission_fair_sharing=AFS if afs_on else None,
                                                                    source="test"))


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=[c["upstream"].split("/", 1)[1] for c in FIXTURE["cases"]])
def test_schedule_for_afs(case):
    snapshot = afs_snapshot(case["afs"])
    if snapshot.afs is not None:
        for lq, cpu in case["initialUsage"].items():
            snapshot.afs.seed(("default", lq), {"cpu": float(cpu)}, 0.0)
        if case.get("deleteQueue"):
            del snapshot.afs.weights[("default", case["deleteQueue"])]
    pending = []
    for order, item in enumerate(case["workloads"]):
        info = workload_info(workload(item["name"], "default", item["queue"], {"cpu": item["cpu"]}), order=order)
        info.created = float(item.get("created", 0))
        pending.append(info)
    admitted, parked = [], set()
    for _ in range(len(pending)):
        waiting = [w for w in pending if w.key not in parked and w.admission is None]
        result = one_cycle(snapshot, waiting)
        for key in result.admitted:
            info = next(w for w in pending if w.key == key)
            admitted.append(info.name)
            if snapshot.afs is not None:
                snapshot.afs.reserved(("default", info.queue_name), info.uid, as_quantities(info.admission.usage), 0.0)
        parked.update(k for keys in result.inadmissible.values() for k in keys)
    assert sorted(admitted) == sorted(case["want"]["admitted"])


@pytest.mark.parametrize("case", FIXTURE["entryPenalty"], ids=[c["upstream"].split("/", 1)[1]
                                                                for c in FIXTURE["entryPenalty"]])
def test_should_apply_entry_penalty(case):
    assert should_apply_entry_penalty(AFS if case["afs"] else None, case["admissionMode"], case["reserved"]) is case["want"]


# TestResolveLQWeight: a configured weight, the default, a missing LocalQueue (weight 1).
def test_resolve_lq_weight():
    lq = LocalQueue.of({"metadata": {"name": "lq", "namespace": "ns"},
                                       "spec": {"clusterQueue": "cq", "fairSharing": {"weight": "2"}}})
    assert lq.fair_weight == 2
    assert LocalQueue.of({"metadata": {"name": "lq"}, "spec": {}}).fair_weight == 1
    snapshot = afs_snapshot(True)
    snapshot.afs.seed(("ns", "missing"), {"cpu": 3.0}, 0.0)
    assert snapshot.afs.usage(("ns", "missing")) == 3.0  # weight 1 for a LocalQueue the ledger does not know


# TestCalculateEntryPenaltyWithDRAResources, TestCalculateEntryPenaltyWithLongHalfLife: positive for every resource.
@pytest.mark.parametrize("half_life, requests", [(600.0, {"cpu": 4.0, "gpu-logical": 2.0}),
                                                 (WEEK, {"cpu": 2.0, "nvidia.com/gpu": 1.0})])
def test_entry_penalty_is_positive(half_life, requests):
    penalty = AdmissionFairSharing(half_life, FIVE_MINUTES).entry_penalty(requests)
    assert set(penalty) == set(requests) and all(v > 0 for v in penalty.values())


def test_decayed_consumed_accumulates_sub_milli():
    """TestCalculateDecayedConsumedAccumulatesSubMilli: every sample grows the consumed resources."""
    usage, consumed, previous = {"cpu": 2.0, "nvidia.com/gpu": 1.0}, {}, {"cpu": 0.0, "nvidia.com/gpu": 0.0}
    for _ in range(3):
        consumed = calculate_decayed_consumed(consumed, usage, FIVE_MINUTES, WEEK)
        assert all(consumed[r] > previous[r] for r in usage)
        previous = consumed


def test_decayed_consumed_converges_to_usage():
    """TestCalculateDecayedConsumedConvergesToUsage: 1, 1.5, 1.75 cpu (within 1m) after 1, 2, 3
    half-lives of 2016 samples each, never above the usage."""
    consumed: dict = {}
    for half_lives, want in ((1, 1.0), (2, 1.5), (3, 1.75)):
        for _ in range(2016):
            consumed = calculate_decayed_consumed(consumed, {"cpu": 2.0}, FIVE_MINUTES, WEEK)
        assert abs(consumed["cpu"] - want) <= 0.001 and consumed["cpu"] <= 2.0


@pytest.mark.parametrize("size", [16 * 2**30, 2**40, 64 * 2**40])
def test_decayed_consumed_keeps_large_quantities_positive(size):
    """TestCalculateDecayedConsumedKeepsLargeQuantitiesPositive (16Gi, 1Ti, 64Ti)."""
    assert calculate_decayed_consumed({}, {"memory": float(size)}, FIVE_MINUTES, WEEK)["memory"] > 0


@pytest.mark.parametrize("consumed, penalty, lq_weight, weights, want", [
    ({"gpu-logical": 2}, {}, 1, {}, 2),                                  # DRA resource with default weight
    ({"gpu-logical": 2}, {}, 1, {"gpu-logical": 3.0}, 6),                # DRA resource with explicit weight
    ({"cpu": 4, "gpu-logical": 2}, {}, 1, {"cpu": 1.0, "gpu-logical": 5.0}, 14),  # mixed CPU and DRA resources
    ({"gpu-logical": 10}, {}, 1, {"gpu-logical": 0}, 0),                 # weight zero contributes nothing
    ({}, {"gpu-logical": 3}, 1, {}, 3),                                  # DRA resource in penalty only
    ({"gpu-logical": 2}, {"gpu-logical": 1}, 2, {"gpu-logical": 4.0}, 6),  # in both consumed and penalty
])
def test_calculate_usage(consumed, penalty, lq_weight, weights, want):
    """TestCalculateUsageWithDRA."""
    assert calculate_usage(consumed, penalty, lq_weight, weights) == want


@pytest.mark.parametrize("consumed, lq_weight", [({}, 0), ({"cpu": 4}, 0), ({"cpu": 4}, -1)])
def test_calculate_usage_with_non_positive_weight(consumed, lq_weight):
    """TestCalculateUsageWithNonPositiveWeight: +Inf, never NaN."""
    got = calculate_usage(consumed, {}, lq_weight, {})
    assert math.isinf(got) and got > 0
