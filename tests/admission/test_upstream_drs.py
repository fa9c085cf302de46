"""Dominant resource shares against upstream's TestDominantResourceShare, TestIsBorrowingOn and
TestPreciseWeightedShareSerialized (see fixtures/upstream/README.md)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from aks_kueue.admission.fair_sharing import DRS, INT64_MAX, dominant_resource_share
from aks_kueue.admission.snapshot import Snapshot

FIXTURE = yaml.safe_load((Path(__file__).parents[1] / "fixtures" / "upstream" / "TestDominantResourceShare.yaml")
                         .read_text())


def frs(per_fr: dict) -> dict:
    """`flavor/resource: amount` keys (the resource may hold a slash) as flavor-resources."""
    return {tuple(key.split("/", 1)): value for key, value in (per_fr or {}).items()}


def snapshot_of(case: dict) -> Snapshot:
    objects = [{"kind": "ResourceFlavor", "metadata": {"name": n}} for n in ("default", "on-demand", "spot")]
    objects.append({"kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": case["clusterQueue"]})
    if case.get("lendingClusterQueue"):
        objects.append({"kind": "ClusterQueue", "metadata": {"name": "lending-cq"}, "spec": case["lendingClusterQueue"]})
    objects += [{"kind": "Cohort", "metadata": {"name": name}, "spec": spec}
                for name, spec in (case.get("cohorts") or {}).items()]
    snapshot = Snapshot.from_objects(objects)
    snapshot.tree.add_usage("cq", frs(case["usage"]))
    return snapshot


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=[c["upstream"].split("/", 1)[1] for c in FIXTURE["cases"]])
def test_dominant_resource_share(case):
    snapshot = snapshot_of(case)
    request = frs(case.get("request"))
    nodes = {**snapshot.tree.cohorts, **snapshot.tree.cluster_queues}
    got = {}
    for name, node in nodes.items():
        drs = dominant_resource_share(node, request)
        rounded = -1 if drs.weighted_share() == INT64_MAX else drs.weighted_share()
        got[name] = [rounded, drs.dominant_resource, drs.borrowing]
    assert got == case["want"]


@pytest.mark.parametrize("case", FIXTURE["isBorrowingOn"], ids=[c["upstream"].split("/", 1)[1]
                                                                 for c in FIXTURE["isBorrowingOn"]])
def test_is_borrowing_on(case):
    quotas = [{"name": "cpu", "nominalQuota": "2"}, {"name": "example.com/gpu", "nominalQuota": "5"}]
    lending = [{"name": "cpu", "nominalQuota": "8"}, {"name": "example.com/gpu", "nominalQuota": "5"}]

    def spec(resources):
        return {"cohortName": "cohort", "resourceGroups": [{"coveredResources": ["cpu", "example.com/gpu"],
                                                            "flavors": [{"name": "default", "resources": resources}]}]}
    snapshot = snapshot_of({"clusterQueue": spec(quotas), "lendingClusterQueue": spec(lending), "usage": case["usage"]})
    drs = dominant_resource_share(snapshot.tree.cluster_queues["cq"])
    assert drs.borrowing == case["wantBorrowing"]
    assert drs.is_borrowing_on(frs(case["requested"])) == case["wantOn"]


@pytest.mark.parametrize("case", FIXTURE["preciseWeightedShare"],
                         ids=[c["upstream"].split("/", 1)[1] for c in FIXTURE["preciseWeightedShare"]])
def test_precise_weighted_share(case):
    got = DRS(fair_weight=case["weight"], unweighted_ratio=case["ratio"]).precise_weighted_share()
    assert got == case["want"] or (math.isinf(got) and math.isinf(case["want"]))


def test_fixture_holds_every_upstream_case():
    assert (len(FIXTURE["cases"]), len(FIXTURE["isBorrowingOn"]), len(FIXTURE["preciseWeightedShare"])) == (16, 5, 4)
