"""Fair-sharing preemption targets against upstream's TestFairPreemptions (and
TestFairPreemptionSkipsUnsatisfiableTournament): see fixtures/upstream/TestFairPreemptions.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aks_kueue.admission.configuration import SchedulerConfig
from aks_kueue.admission.fair_sharing import DEFAULT_STRATEGIES, FairSharing, PreemptionStrategy
from aks_kueue.admission.snapshot import Snapshot
from aks_kueue.admission.workloads import workload_info
from aks_kueue.kueue.units import amount
from tests.admission.upstream_objects import admission, cluster_queue, cohort, flavors, workload

FIXTURE = yaml.safe_load((Path(__file__).parents[1] / "fixtures" / "upstream" / "TestFairPreemptions.yaml").read_text())
CASES = FIXTURE["cases"]


def fair_snapshot(objects: list[dict], strategies=DEFAULT_STRATEGIES) -> Snapshot:
    fair = FairSharing(tuple(PreemptionStrategy(s) for s in strategies))
    return Snapshot.from_objects(objects, scheduler=SchedulerConfig(fair_sharing=fair, source="test"))


def run_case(case: dict):
    flavor = case.get("assignmentFlavor", "default")
    objects = flavors(case.get("flavors") or ["default"])
    objects += [cluster_queue(n, s) for n, s in (case.get("clusterQueues") or FIXTURE["baseClusterQueues"]).items()]
    objects += [cohort(n, s) for n, s in (case.get("cohorts") or {}).items()]
    snapshot = fair_snapshot(objects, case.get("strategies") or DEFAULT_STRATEGIES)
    for item in case["admitted"]:
        info = workload_info(workload(item["name"], priority=item.get("priority", 0),
                                      requests={"cpu": item.get("cpu", "1")}))
        info.admission = admission(item["cq"], item.get("flavor", flavor), {"cpu": item.get("cpu", "1")})
        info.reserved = 1.0  # every one at the same instant: the UID decides
        snapshot.add_workload(info)
    before = {name: dict(node.usage) for name, node in {**snapshot.tree.cohorts, **snapshot.tree.cluster_queues}.items()}
    incoming = workload_info(workload(case["incoming"]["name"], priority=case["incoming"].get("priority", 0),
                                      requests={"cpu": case["incoming"]["cpu"]}))
    fr = (flavor, "cpu")
    cq = snapshot.cluster_queues[case["targetCQ"]]
    targets = snapshot.preemptor.get_targets(cq, incoming, {fr}, {fr: amount("cpu", case["incoming"]["cpu"])})
    after = {name: dict(node.usage) for name, node in {**snapshot.tree.cohorts, **snapshot.tree.cluster_queues}.items()}
    return targets, before, after


@pytest.mark.parametrize("case", CASES, ids=[c["upstream"].split("/", 1)[1] for c in CASES])
def test_fair_preemptions(case):
    targets, before, after = run_case(case)
    got = sorted([f"{t.namespace}/{t.name}", str(t.reason)] for t in targets)
    assert got == sorted(case["want"])
    # Upstream checks the snapshot is left as it was.
    assert {k: {fr: v for fr, v in u.items() if v} for k, u in after.items()} == \
        {k: {fr: v for fr, v in u.items() if v} for k, u in before.items()}


def test_fixture_holds_every_upstream_case():
    assert len(CASES) == 37
