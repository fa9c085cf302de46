"""The flavor assigner against upstream's TestAssignFlavors cases (see fixtures/upstream/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aks_kueue.admission.assigner import FlavorAssigner
from aks_kueue.admission.modes import PreemptionMode
from aks_kueue.admission.snapshot import Snapshot
from aks_kueue.kueue.units import amount
from aks_kueue.admission.workloads import workload_info

FIXTURE = yaml.safe_load((Path(__file__).parents[1] / "fixtures" / "upstream" / "TestAssignFlavors.yaml").read_text())
POSSIBILITIES = {"NoCandidates": PreemptionMode.NO_CANDIDATES, "Preempt": PreemptionMode.PREEMPT,
                 "Reclaim": PreemptionMode.RECLAIM}


def _object(kind: str, entry: dict) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": {"name": entry["name"]},
            "spec": entry.get("spec") or {}}


def _usage(per_flavor: dict | None) -> dict:
    return {(flavor, resource): amount(resource, quantity)
            for flavor, resources in (per_flavor or {}).items() for resource, quantity in resources.items()}


class FakeOracle:
    """Upstream's testOracle: a stated answer per flavor/resource, else Preempt with no borrowing."""

    def __init__(self, results: dict | None):
        self.answers = {tuple(key.split("/", 1)): (POSSIBILITIES[v["possibility"]], v.get("borrow", 0))
                        for key, v in (results or {}).items()}

    def simulate_preemption(self, cq, workload, fr, quantity):
        return self.answers.get(fr, (PreemptionMode.PREEMPT, 0))

    def borrowing_after(self, cq, workload, fr, quantity, height=None):
        return None  # a stated answer is not derived from the tree: always asked, as upstream asks


def run_case(case: dict):
    objects = [_object("ResourceFlavor", {"name": n, "spec": s}) for n, s in FIXTURE["resourceFlavors"].items()]
    objects.append(_object("ClusterQueue", case["clusterQueue"]))
    if case.get("secondaryClusterQueue"):
        objects.append(_object("ClusterQueue", case["secondaryClusterQueue"]))
    objects += [_object("Cohort", c) for c in case.get("cohorts") or []]
    snapshot = Snapshot.from_objects(objects)
    cq_name = case["clusterQueue"]["name"]
    snapshot.tree.add_usage(cq_name, _usage(case.get("clusterQueueUsage")))
    if case.get("secondaryClusterQueue"):
        snapshot.tree.add_usage(case["secondaryClusterQueue"]["name"], _usage(case.get("secondaryClusterQueueUsage")))
    status = {}
    if case.get("reclaimablePods") and (case.get("featureGates") or {}).get("ReclaimablePods", True):
        status["reclaimablePods"] = case["reclaimablePods"]
    workload = workload_info({"metadata": {"name": "wl", "namespace": "default"},
                              "spec": {"podSets": case["podSets"]}, "status": status})
    assigner = FlavorAssigner(snapshot.cluster_queues[cq_name], workload, snapshot.flavor_matches,
                              FakeOracle(case.get("simulationResult")), case.get("enableFairSharing", False))
    return assigner.assign()


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=[c["upstream"].split("/", 1)[1] for c in FIXTURE["cases"]])
def test_assign_flavors(case):
    want = case["want"]
    got = run_case(case)
    assert str(got.mode) == want["mode"]
    assert got.borrowing == want.get("borrowing", 0)
    assert got.usage == _usage(want.get("usage"))
    got_podsets = [{
        "name": ps.name, "count": ps.count,
        "flavors": {r: {"name": f.name, "mode": str(f.mode)} for r, f in ps.flavors.items()},
        "reasons": sorted(ps.reasons),
    } for ps in got.podsets]
    want_podsets = [{
        "name": ps["name"], "count": ps.get("count", 0), "flavors": ps.get("flavors") or {},
        "reasons": sorted(ps.get("reasons") or []),
    } for ps in want["podSets"]]
    assert got_podsets == want_podsets


def test_fixture_is_a_broad_sample():
    assert len(FIXTURE["cases"]) >= 45
    modes = {c["want"]["mode"] for c in FIXTURE["cases"]}
    assert modes == {"Fit", "Preempt", "NoFit"}
