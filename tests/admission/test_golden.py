"""Simulate's decisions are pinned, so a change made for speed cannot change one.

`golden/simulate.json.gz` holds every decision of `simulate` (and the preemption targets
the core found for each Preempt) on the simulate fixture, on 600 seeded random scenarios
(see `scenarios.py`), and on the benchmark's backlog at a tenth and at full size (the full
size as a digest), recorded from a plain, unoptimised core. Regenerate only for an intended
change of behaviour, and say why in the commit message:

    python -m tests.admission.test_golden
"""

from __future__ import annotations

import gzip
import hashlib
import json
from functools import cache
from pathlib import Path

import pytest

from aks_kueue.admission import Snapshot, workload_info
from aks_kueue.admission.simulate import simulate
from aks_kueue.kueue.manifests import read_documents
from aks_kueue.kueue.validate import load_object, validate_object
from benchmarks.admission import sized
from tests.admission.scenarios import scenario

GOLDEN = Path(__file__).parent / "golden" / "simulate.json.gz"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "simulate"
# The simulate fixtures that existed when the goldens were recorded, before the speed work; later
# ones (jobs, admission checks) are tested against their own expectations in tests/cli.
RECORDED_FIXTURES = ("team-queue.yaml",)
SEEDS = range(600)
BENCHMARK_TENTH, BENCHMARK_FULL = (1_000, 20, 2, 7), (10_000, 200, 20, 7)


def as_the_cli_reads(path: Path) -> list[dict]:
    """Documents validated and defaulted as `aks-kueue simulate` passes them on."""
    manifests = []
    for _, document in read_documents(path, also=(("v1", "Namespace"),)):
        if document.get("kind") == "Namespace":
            manifests.append(document)
            continue
        obj = load_object(document)
        assert validate_object(obj) == []
        manifest = dict(obj.defaulted)
        if "status" in obj.manifest:
            manifest["status"] = obj.manifest["status"]
        manifests.append(manifest)
    return manifests


@cache
def inputs() -> dict[str, list[dict]]:
    cases = {f"fixture {name}": as_the_cli_reads(FIXTURES / name) for name in RECORDED_FIXTURES}
    cases.update({f"scenario {seed}": scenario(seed) for seed in SEEDS})
    objects, pending = sized(*BENCHMARK_TENTH)
    cases["benchmark tenth"] = objects + pending
    return cases


def targets_found(manifests: list[dict]) -> list[list[str]]:
    """Per pending workload, in simulate's order: the preemption targets the core found."""
    snapshot = Snapshot.from_objects(manifests)
    found = []
    for order, manifest in enumerate(m for m in manifests if m.get("kind") == "Workload"):
        if (manifest.get("status") or {}).get("admission"):
            continue
        workload = workload_info(manifest, snapshot.priority_classes, order)
        decision = snapshot.assign(workload)
        found.append([f"{t.namespace}/{t.name}@{t.cluster_queue}" for t in decision.targets])
        if decision.fits:
            snapshot.admit(workload, decision)
    return found


def split(decisions: list[dict]) -> tuple[list[dict], list[list[str]]]:
    """The decisions as they are recorded, and their preemption targets apart."""
    plain, targets = [], []
    for decision in decisions:
        decision = dict(decision)
        listed = decision.pop("preemptionTargets")
        # Added after the goldens were recorded; these inputs hold no AdmissionCheck.
        assert decision.pop("admissionChecks") == []
        plain.append(decision)
        targets.append([f"{t['namespace']}/{t['name']}@{t['clusterQueue']}" for t in listed])
    return plain, targets


def digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def record() -> None:
    golden = {}
    for name, manifests in inputs().items():
        decisions, targets = split(simulate(manifests))
        assert targets == targets_found(manifests)
        golden[name] = {"decisions": decisions, "targets": targets}
    objects, pending = sized(*BENCHMARK_FULL)
    manifests = objects + pending
    golden["benchmark full"] = {"digest": digest(split(simulate(manifests))[0]),
                                "targets": digest(targets_found(manifests))}
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_bytes(gzip.compress(json.dumps(golden, sort_keys=True).encode(), mtime=0))
    print(f"wrote {GOLDEN} ({len(golden)} cases)")


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(gzip.decompress(GOLDEN.read_bytes()))


def test_every_case_is_recorded(golden):
    assert set(golden) == {*inputs(), "benchmark full"}


@pytest.mark.parametrize("name", sorted(inputs()))
def test_decisions_are_unchanged(golden, name):
    manifests = inputs()[name]
    decisions, targets = split(simulate(manifests))
    assert decisions == golden[name]["decisions"]
    assert targets == golden[name]["targets"]


def test_benchmark_backlog_is_unchanged(golden):
    objects, pending = sized(*BENCHMARK_FULL)
    decisions, targets = split(simulate(objects + pending))
    assert digest(decisions) == golden["benchmark full"]["digest"]
    assert digest(targets) == golden["benchmark full"]["targets"]
    assert len(decisions) == BENCHMARK_FULL[0]


if __name__ == "__main__":
    record()
