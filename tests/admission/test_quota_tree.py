"""The quota tree against upstream Kueue's TestAvailable cases, through real Kueue objects."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aks_kueue.admission.quota import CohortCycleError, QuotaTree
from aks_kueue.kueue.units import amount
from aks_kueue.kueue.validate import KueueObject, validate_object

CASES = yaml.safe_load((Path(__file__).parents[1] / "fixtures" / "upstream" / "TestAvailable.yaml").read_text())


def _spec(entry: dict, parent_key: str) -> dict:
    """The fixture's shorthand `{flavor/resource: [nominal, borrowingLimit, lendingLimit]}` as Kueue YAML."""
    by_flavor: dict[str, list] = {}
    for key, (nominal, *limits) in (entry.get("resources") or {}).items():
        flavor, resource = key.split("/")
        quota = {"name": resource, "nominalQuota": nominal}
        for field, value in zip(("borrowingLimit", "lendingLimit"), limits):
            if value is not None:
                quota[field] = value
        by_flavor.setdefault(flavor, []).append(quota)
    spec: dict = {}
    if entry.get(parent_key):
        spec["cohortName" if parent_key == "cohort" else "parentName"] = entry[parent_key]
    if by_flavor:
        spec["resourceGroups"] = [{"coveredResources": ["cpu"], "flavors": [
            {"name": f, "resources": r} for f, r in by_flavor.items()]}]
    return spec


def _objects(case: dict) -> list[dict]:
    objects = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": c["name"]},
                "spec": _spec(c, "parent")} for c in case.get("cohorts") or []]
    objects += [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": q["name"]},
                 "spec": {"namespaceSelector": {}, **_spec(q, "cohort")}} for q in case["clusterQueues"]]
    for obj in objects:
        assert validate_object(KueueObject(obj)) == [], obj  # the fixtures are objects Kueue accepts
    return objects


def _amounts(per_queue: dict) -> dict:
    return {cq: {tuple(k.split("/")): amount(k.split("/")[1], v) for k, v in frs.items()}
            for cq, frs in per_queue.items()}


def _snapshot(tree: QuotaTree, measure) -> dict:
    return {cq: {fr: measure(cq, fr) for fr in node.quotas} for cq, node in tree.cluster_queues.items()}


@pytest.mark.parametrize("case", CASES, ids=[c["upstream"] for c in CASES])
def test_available_and_potentially_available(case):
    tree = QuotaTree.from_objects(_objects(case))
    potential = _amounts(case["wantPotentiallyAvailable"])
    assert _snapshot(tree, tree.available) == potential
    assert _snapshot(tree, tree.potential_available) == potential
    usage = _amounts(case["usage"])
    for cq, frs in usage.items():
        tree.add_usage(cq, frs)
    assert _snapshot(tree, tree.available) == _amounts(case["wantAvailable"])
    assert _snapshot(tree, tree.potential_available) == potential
    for cq, frs in usage.items():
        tree.remove_usage(cq, frs)
    assert _snapshot(tree, tree.available) == potential


def test_implicit_cohort_and_no_cohort():
    tree = QuotaTree.from_objects(_objects({"clusterQueues": [
        {"name": "a", "cohort": "ghost", "resources": {"red/cpu": ["4"]}},
        {"name": "b", "cohort": "ghost", "resources": {"red/cpu": ["6"]}},
        {"name": "alone", "resources": {"red/cpu": ["3"]}}]}))
    assert tree.potential_available("a", ("red", "cpu")) == 10_000
    assert tree.potential_available("alone", ("red", "cpu")) == 3_000


def test_cohort_cycle_is_an_error():
    with pytest.raises(CohortCycleError):
        QuotaTree.from_objects(_objects({"clusterQueues": [], "cohorts": [
            {"name": "a", "parent": "b"}, {"name": "b", "parent": "a"}]}))


@pytest.mark.parametrize("resource,quantity,units", [("cpu", "500m", 500), ("cpu", "1", 1000),
                                                     ("memory", "1Gi", 2**30), ("example.com/gpu", "0.5", 1)])
def test_kueue_units(resource, quantity, units):
    assert amount(resource, quantity) == units
