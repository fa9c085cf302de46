"""One scheduling cycle with fair sharing against upstream's TestScheduleForFairSharing
(fixtures/upstream/TestScheduleForFairSharing.yaml; the cycle is tests/admission/cycle.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aks_kueue.admission.configuration import SchedulerConfig
from aks_kueue.admission.fair_sharing import FairSharing
from aks_kueue.admission.snapshot import Snapshot
from aks_kueue.admission.workloads import Admission, workload_info
from aks_kueue.kueue.units import amount
from tests.admission.cycle import one_cycle
from tests.admission.upstream_objects import V1BETA2, cluster_queue, cohort, flavors

FIXTURE = yaml.safe_load((Path(__file__).parents[1] / "fixtures" / "upstream" / "TestScheduleForFairSharing.yaml")
                         .read_text())
CASES = FIXTURE["cases"]


def local_queue(namespace: str, name: str, cq: str) -> dict:
    return {"apiVersion": V1BETA2, "kind": "LocalQueue", "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cq}}


def case_workload(item: dict, order: int):
    namespace, name = item["key"].split("/", 1)
    manifest = {"apiVersion": V1BETA2, "kind": "Workload", "metadata": {"name": name, "namespace": namespace, "uid": name},
                "spec": {"queueName": item.get("queue", ""), "priority": item.get("priority", 0), "podSets": [{
                    "name": "main", "count": item.get("count", 1), "template": {"spec": {"containers": [
                        {"name": "c", "resources": {"requests": dict(item["requests"])}}]}}}]}}
    info = workload_info(manifest, order=order)
    info.created = float(item.get("created", 0))
    if item.get("admitted"):
        count = item.get("count", 1)
        flavors_of = item["admitted"]["flavors"]
        usage = {(flavors_of[r], r): amount(r, q) * count for r, q in item["requests"].items() if r in flavors_of}
        info.admission = Admission(item["admitted"]["cq"], usage, [dict(flavors_of)])
        info.reserved = 0.0
    return info


def snapshot_for(fixture: dict, case: dict) -> tuple[Snapshot, dict[str, str]]:
    objects = flavors(fixture["flavors"])
    objects += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": labels}}
                for n, labels in fixture["namespaces"].items()]
    queues = {**fixture["baseClusterQueues"], **(case.get("clusterQueues") or {})}
    objects += [cluster_queue(n, s) for n, s in queues.items()]
    objects += [cohort(n, s) for n, s in (case.get("cohorts") or {}).items()]
    objects += [local_queue(*q) for q in [*fixture["baseLocalQueues"], *(case.get("localQueues") or [])]]
    scheduler = SchedulerConfig(fair_sharing=FairSharing() if case.get("fairSharing") else None, source="test")
    snapshot = Snapshot.from_objects(objects, scheduler=scheduler)
    return snapshot, {n: s.get("queueingStrategy", "BestEffortFIFO") for n, s in queues.items()}


def run_case(fixture: dict, case: dict):
    snapshot, strategies = snapshot_for(fixture, case)
    pending = []
    for order, item in enumerate(case["workloads"]):
        info = case_workload(item, order)
        if info.admission is not None:
            snapshot.add_workload(info)
        else:
            pending.append(info)
    return one_cycle(snapshot, pending, strategies)


@pytest.mark.parametrize("case", CASES, ids=[c["upstream"].split("/", 1)[1] for c in CASES])
def test_schedule_for_fair_sharing(case):
    got = run_case(FIXTURE, case)
    want = case["want"]
    assert got.admitted == (want.get("admitted") or {})
    assert got.preempted == (want.get("preempted") or {})
    assert {k: sorted(v) for k, v in got.left.items()} == {k: sorted(v) for k, v in (want.get("left") or {}).items()}
    assert ({k: sorted(v) for k, v in got.inadmissible.items()}
            == {k: sorted(v) for k, v in (want.get("inadmissible") or {}).items()})


def test_fixture_holds_every_upstream_case():
    assert len(CASES) == 22
