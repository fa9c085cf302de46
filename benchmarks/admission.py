"""Pending workloads through the admission core, against a floor measured in the same run.

    python benchmarks/admission.py [--workloads N] [--distinct N] [--seed S]

The organisation: 10 cohorts of 10 ClusterQueues, 4 flavors (two CPU, two GPU) in one
resource group covering cpu, memory and nvidia.com/gpu; half the queues may preempt
lower priorities, some lend and borrow with limits. Workloads are CPU or GPU jobs of
random size, priority and queue: from a few job templates per queue, as teams submit
them, or (`--distinct`) each of a shape of its own, the worst case for the decision memo.

Two ways through the assigner, each timed on its own:
- busy cluster: the cluster is first filled to about half its quota; then every
  pending workload gets `Snapshot.assign` against that state (Kueue's decision now);
- simulate: as `aks-kueue simulate`, in order, each Fit admitted so its usage counts
  for the next; the cluster fills up and most later decisions are Preempt or NoFit,
  each with a preemption search.

The floor is one pass over the same workloads that only sums their requests. Growth
is the time per workload at full size over the time per workload at a tenth. Peak
memory is the process's largest resident set.
"""

from __future__ import annotations

import argparse
import random
import resource
import time

from aks_kueue.admission import Snapshot, workload_info

V1B2 = "kueue.x-k8s.io/v1beta2"
FLAVORS = ("cpu-d", "cpu-e", "gpu-a100", "gpu-h100")
TARGET_RATE, TARGET_FLOOR_RATIO, MEMORY_LIMIT_MB = 50_000, 10.0, 1024
TEMPLATES_PER_QUEUE = 6


def organisation(rng: random.Random) -> list[dict]:
    objects = [{"apiVersion": V1B2, "kind": "ResourceFlavor", "metadata": {"name": f},
                "spec": {"nodeLabels": {"kubernetes.azure.com/agentpool": f.replace("-", "")}}} for f in FLAVORS]
    for c in range(10):
        objects.append({"apiVersion": V1B2, "kind": "Cohort", "metadata": {"name": f"cohort-{c}"}, "spec": {}})
        for q in range(10):
            name = f"cq-{c}-{q}"
            gpus = {"cpu-d": 0, "cpu-e": 0, "gpu-a100": 8, "gpu-h100": 4}
            flavors = []
            for f in FLAVORS:
                cpu = {"name": "cpu", "nominalQuota": str(rng.choice((32, 64, 96)))}
                if q % 3 == 0:
                    cpu["borrowingLimit"] = "32"
                if q % 4 == 1:
                    cpu["lendingLimit"] = "16"
                flavors.append({"name": f, "resources": [
                    cpu, {"name": "memory", "nominalQuota": "256Gi"},
                    {"name": "nvidia.com/gpu", "nominalQuota": str(gpus[f])}]})
            spec = {"cohortName": f"cohort-{c}", "namespaceSelector": {},
                    "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": flavors}]}
            if q % 2 == 0:
                spec["preemption"] = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
            objects.append({"apiVersion": V1B2, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec})
            objects.append({"apiVersion": V1B2, "kind": "LocalQueue",
                            "metadata": {"name": "jobs", "namespace": f"ns-{name}"}, "spec": {"clusterQueue": name}})
    return objects


def templates(rng: random.Random) -> dict[str, list[dict]]:
    """Each team submits from a handful of job templates, as CI pipelines and notebooks do."""
    return {f"cq-{c}-{q}": [random_shape(rng) for _ in range(TEMPLATES_PER_QUEUE)]
            for c in range(10) for q in range(10)}


def random_shape(rng: random.Random) -> dict:
    requests = {"cpu": f"{rng.choice((500, 1000, 2000, 4000))}m", "memory": f"{rng.choice((1, 2, 4, 8))}Gi"}
    if rng.random() < 0.3:
        requests["nvidia.com/gpu"] = str(rng.choice((1, 2, 4)))
    return {"name": "main", "count": rng.choice((1, 1, 2, 4)),
            "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}}}


def workloads(rng: random.Random, count: int, catalogue: dict[str, list[dict]] | None) -> list:
    """`count` pending workloads; from the queues' templates, or each of its own random shape."""
    pending = []
    for i in range(count):
        queue = f"cq-{rng.randrange(10)}-{rng.randrange(10)}"
        podset = rng.choice(catalogue[queue]) if catalogue else random_shape(rng)
        manifest = {"metadata": {"name": f"wl-{i}", "namespace": f"ns-{queue}"},
                    "spec": {"queueName": "jobs", "priority": rng.choice((0, 100, 1000)), "podSets": [podset]}}
        pending.append(workload_info(manifest, order=float(i)))
    return pending


def floor_pass(pending: list) -> float:
    start = time.perf_counter()
    totals: dict[str, int] = {}
    for workload in pending:
        for podset in workload.podsets:
            for name, value in podset.per_pod.items():
                totals[name] = totals.get(name, 0) + value * podset.count
    return time.perf_counter() - start


def busy_cluster(objects: list[dict], seed: int) -> Snapshot:
    """A snapshot with about half of every queue's quota in use."""
    snapshot = Snapshot.from_objects(objects)
    filler = workloads(random.Random(seed), 6_000, None)
    for index, workload in enumerate(filler):
        workload.name, workload.uid = f"running-{index}", f"running-{index}"
        decision = snapshot.assign(workload)
        if decision.mode == "Fit" and not decision.borrowing and index % 2 == 0:
            snapshot.admit(workload, decision)
    return snapshot


def assign_pass(snapshot: Snapshot, pending: list) -> tuple[float, dict[str, int]]:
    modes = {"Fit": 0, "Preempt": 0, "NoFit": 0}
    start = time.perf_counter()
    for workload in pending:
        modes[snapshot.assign(workload).mode] += 1
    return time.perf_counter() - start, modes


def simulate_pass(objects: list[dict], pending: list) -> tuple[float, dict[str, int]]:
    modes = {"Fit": 0, "Preempt": 0, "NoFit": 0}
    start = time.perf_counter()
    snapshot = Snapshot.from_objects(objects)
    for workload in pending:
        decision = snapshot.assign(workload)
        modes[decision.mode] += 1
        if decision.mode == "Fit":
            snapshot.admit(workload, decision)
    return time.perf_counter() - start, modes


def run(label: str, objects: list[dict], size: int, seed: int, catalogue) -> tuple[float, float]:
    pending = workloads(random.Random(seed + size), size, catalogue)
    floor = min(floor_pass(pending) for _ in range(3))
    if label == "busy cluster":
        seconds, modes = assign_pass(busy_cluster(objects, seed), pending)
    else:
        seconds, modes = simulate_pass(objects, pending)
    print(f"  {size:>7,} workloads: {seconds:6.2f} s, {size / seconds:9,.0f} decisions/s; "
          f"floor {floor * 1e6 / size:4.2f} µs/workload; {seconds / floor:6.1f}× floor; {modes}")
    return seconds, floor


def report(label: str, small: tuple[int, float], full: tuple[int, float, float]) -> None:
    (small_size, small_seconds), (full_size, seconds, floor) = small, full
    rate, ratio = full_size / seconds, seconds / floor
    growth = (seconds / full_size) / (small_seconds / small_size)
    print(f"{label}: {rate:,.0f} decisions/s (target ≥ {TARGET_RATE:,}: {'met' if rate >= TARGET_RATE else 'MISSED'}); "
          f"{ratio:.1f}× floor (target ≤ {TARGET_FLOOR_RATIO:g}: {'met' if ratio <= TARGET_FLOOR_RATIO else 'MISSED'}); "
          f"growth {growth:.2f} per workload from {small_size:,} to {full_size:,} (linear = 1.0)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=100_000)
    parser.add_argument("--distinct", type=int, default=20_000,
                        help="workloads of a shape of their own, per way (0: skip)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    objects = organisation(rng)
    catalogue = templates(rng)
    for way in ("busy cluster", "simulate"):
        for kind, size, shapes in (("templated", args.workloads, catalogue), ("distinct", args.distinct, None)):
            if not size:
                continue
            print(f"{way}, {kind} ({f'{TEMPLATES_PER_QUEUE} templates per queue' if shapes else 'one shape each'}):")
            small = run(way, objects, size // 10, args.seed, shapes)
            full = run(way, objects, size, args.seed, shapes)
            report(f"{way}, {kind}", (size // 10, small[0]), (size, *full))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory: {peak_mb:.0f} MB (target < {MEMORY_LIMIT_MB} MB: {'met' if peak_mb < MEMORY_LIMIT_MB else 'MISSED'})")


if __name__ == "__main__":
    main()
