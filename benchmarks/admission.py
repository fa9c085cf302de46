"""`validate` and `simulate` on a real backlog, against a floor measured in the same run.

    python benchmarks/admission.py [--workloads N] [--queues N] [--cohorts N] [--runs N] [--seed S]

The backlog (issue 13, "Scale"): 10,000 pending Workloads over 200 ClusterQueues in 20
cohorts (10 queues each), 4 ResourceFlavors (two CPU, two GPU, the GPU ones tainted) in
one resource group covering cpu, memory and nvidia.com/gpu. Half the queues preempt
lower priorities and reclaim within their cohort, some lend and borrow with limits.
Each Workload is shaped as Kueue's Job integration writes one (owner reference, labels,
a pod template with image, command, env, requests and limits, GPU jobs with a toleration
and a node selector) and each has a shape of its own (the worst case for the decision
memo), a random queue and a priority.

Three cases, each in a process of its own (so that its peak memory is its own):
- validate: every Workload through `load_object` and `validate_object` (CRD schema, CEL
  rules, the Workload webhook), as `aks-kueue validate` judges them;
- simulate: `aks_kueue.admission.simulate.simulate` on the organisation and the backlog,
  as `aks-kueue simulate` decides it (in order, each Fit admitted);
- simulate-fair: the same with a Configuration that turns fair sharing on (Kueue's default
  strategies): preemption targets are then chosen by dominant resource share.

The floor only loads the same objects: PyYAML parsing them from their YAML text with its
C loader (libyaml; the pure-Python loader when libyaml is missing, and the report says so). Each case also
runs at a tenth of the size (a tenth of the workloads, queues and cohorts, so every
queue sees the same load); growth is the time per workload at full size over the time
per workload at a tenth (1.0 is linear). Peak memory is the case process's largest
resident set. Times are the best of `--runs`.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout (benchmarks/common.py)

from benchmarks.common import (  # noqa: E402
    GPU_TOLERATION, V1B2, flavor, in_child, kueue, peak_mb, queue_spec, quota, timed)

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

FLAVORS = ("cpu-d", "cpu-e", "gpu-a100", "gpu-h100")
TARGETS = {"validate": 5_000, "simulate": 10_000, "simulate-fair": 10_000}  # objects or decisions per second
MEMORY_LIMIT_MB = 1024
QUEUES_PER_COHORT = 10


def organisation(queues: int, cohorts: int, seed: int) -> list[dict]:
    """Flavors, cohorts, ClusterQueues and one LocalQueue per ClusterQueue."""
    rng = random.Random(seed)
    objects = [flavor(f, {"kubernetes.azure.com/agentpool": f.replace("-", "")}, f.startswith("gpu")) for f in FLAVORS]
    gpus = {"cpu-d": "0", "cpu-e": "0", "gpu-a100": "8", "gpu-h100": "4"}
    per_cohort = max(1, queues // max(1, cohorts))
    for c in range(cohorts):
        objects.append(kueue("Cohort", f"cohort-{c}", spec={}))
        for q in range(per_cohort):
            name = f"cq-{c}-{q}"
            quotas = [quota(f, str(rng.choice((32, 64, 96))), "256Gi", gpus[f]) for f in FLAVORS]
            limits = {**({"borrowingLimit": "32"} if q % 3 == 0 else {}),
                      **({"lendingLimit": "16"} if q % 4 == 1 else {})}
            for cpu in (each["resources"][0] for each in quotas):
                cpu.update(limits)
            preemption = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}
            spec = queue_spec(f"cohort-{c}", quotas, **({"preemption": preemption} if q % 2 == 0 else {}))
            objects.append(kueue("ClusterQueue", name, spec=spec))
            objects.append(kueue("LocalQueue", "jobs", f"ns-{name}", spec={"clusterQueue": name}))
    return objects


def queue_names(objects: list[dict]) -> list[str]:
    return [o["metadata"]["name"] for o in objects if o["kind"] == "ClusterQueue"]


def backlog(queues: list[str], count: int, seed: int) -> list[dict]:
    """`count` pending Workloads as Kueue's Job integration writes them, each of its own shape.
    Together they ask for about three times the quota, as a backlog does."""
    rng = random.Random(seed)
    workloads = []
    for i in range(count):
        queue = rng.choice(queues)
        gpu = rng.random() < 0.3
        cpu, memory = rng.choice((500, 1000, 2000, 4000)), rng.choice((1, 2, 4, 8))
        requests = {"cpu": f"{cpu + rng.randrange(0, 100)}m", "memory": f"{memory * 1024 + rng.randrange(0, 512)}Mi"}
        limits = {"memory": requests["memory"]}
        if gpu:
            limits["nvidia.com/gpu"] = str(rng.choice((1, 2, 4)))
        job = f"train-{i}"
        main = {
            "name": "main", "image": "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04:latest",
            "imagePullPolicy": "IfNotPresent", "command": ["python", "train.py"],
            "args": ["--epochs", str(rng.randrange(1, 50)), "--output", "/scratch/out"],
            "env": [{"name": "RUN_ID", "value": f"run-{i}"}, {"name": "OMP_NUM_THREADS", "value": "4"},
                    {"name": "STORAGE_KEY", "valueFrom": {"secretKeyRef": {"name": "storage", "key": "key"}}}],
            "resources": {"requests": requests, "limits": limits},
            "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True,
                                "capabilities": {"drop": ["ALL"]}},
            "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"},
                             {"name": "config", "mountPath": "/etc/train", "readOnly": True}],
        }
        pod: dict = {
            "restartPolicy": "Never", "serviceAccountName": "trainer", "terminationGracePeriodSeconds": 30,
            "containers": [main],
            "volumes": [{"name": "scratch", "emptyDir": {}}, {"name": "config", "configMap": {"name": "train"}}],
        }
        if rng.random() < 0.2:
            pod["initContainers"] = [{"name": "fetch", "image": "busybox:1.36", "command": ["sh", "-c", "true"],
                                      "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]
        if gpu:
            pod["tolerations"] = [dict(GPU_TOLERATION)]
            pod["nodeSelector"] = {"kubernetes.azure.com/agentpool": rng.choice(("gpua100", "gpuh100"))}
        uid = f"00000000-0000-4000-8000-{i:012d}"
        workloads.append({
            "apiVersion": V1B2, "kind": "Workload",
            "metadata": {
                "name": f"job-{job}-{i % 0xfffff:05x}", "namespace": f"ns-{queue}",
                "labels": {"kueue.x-k8s.io/job-uid": uid},
                "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job, "uid": uid,
                                     "controller": True, "blockOwnerDeletion": True}],
            },
            "spec": {
                "queueName": "jobs", "priority": rng.choice((0, 100, 1000)),
                "podSets": [{"name": "main", "count": rng.choice((1, 2, 4, 8)),
                             "template": {"metadata": {"labels": {"app": "train"}}, "spec": pod}}],
            },
        })
    return workloads


def sized(workloads: int, queues: int, cohorts: int, seed: int) -> tuple[list[dict], list[dict]]:
    """The organisation and the backlog at one size (deterministic for a seed)."""
    objects = organisation(queues, cohorts, seed)
    return objects, backlog(queue_names(objects), workloads, seed + workloads)


# One case, in its own process ----------------------------------------------------------------


def run_case(case: str, workloads: int, queues: int, cohorts: int, runs: int, seed: int) -> dict:
    objects, pending = sized(workloads, queues, cohorts, seed)
    loaded = pending if case == "validate" else objects + pending
    text = yaml.dump_all(loaded, Dumper=DUMPER)
    floor = min(timed(max(3, runs), lambda: list(yaml.load_all(text, Loader=LOADER)))[0])
    manifests = list(yaml.load_all(text, Loader=LOADER))  # neither case changes its input
    if case == "validate":
        from aks_kueue.kueue.validate import load_object, validate_object

        def work():
            invalid = 0
            for manifest in manifests:
                invalid += bool(validate_object(load_object(manifest)))
            return {"invalid": invalid}
    else:
        from aks_kueue.admission.simulate import simulate

        options = {}
        if case == "simulate-fair":
            from aks_kueue.admission.configuration import SchedulerConfig
            from aks_kueue.admission.fair_sharing import FairSharing

            options["scheduler"] = SchedulerConfig(fair_sharing=FairSharing(), source="benchmark")

        def work():
            modes: dict[str, int] = {}
            for decision in simulate(manifests, **options):
                modes[decision["mode"]] = modes.get(decision["mode"], 0) + 1
            return modes
    times, outcome = timed(runs, work)
    return {"case": case, "workloads": workloads, "seconds": min(times), "floor": floor, "outcome": outcome,
            "peak_mb": peak_mb()}


# The report ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=10_000)
    parser.add_argument("--queues", type=int, default=200)
    parser.add_argument("--cohorts", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3, help="best of this many timings per case")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--case", choices=sorted(TARGETS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.workloads, args.queues, args.cohorts, args.runs, args.seed)))
        return
    rows = []
    sizes = ((args.workloads // 10, args.queues // 10, max(1, args.cohorts // 10)),
             (args.workloads, args.queues, args.cohorts))
    for case in ("validate", "simulate", "simulate-fair"):
        tenth, full = (in_child(__file__, case, "--workloads", str(workloads), "--queues", str(queues), "--cohorts",
                                str(cohorts), "--runs", str(args.runs), "--seed", str(args.seed))
                       for workloads, queues, cohorts in sizes)
        rate = full["workloads"] / full["seconds"]
        growth = (full["seconds"] / full["workloads"]) / (tenth["seconds"] / tenth["workloads"])
        rows.append((case, full, rate, growth))
        print(f"{case}: tenth {tenth['workloads']:,} in {tenth['seconds']:.2f} s; "
              f"full {full['workloads']:,} in {full['seconds']:.2f} s; outcome {full['outcome']}")
    unit = {"validate": "objects/s", "simulate": "decisions/s", "simulate-fair": "decisions/s"}
    print()
    print("| case | workloads | rate | target | × floor | growth (1/10 → full, per workload) | peak memory |")
    print("|---|---|---|---|---|---|---|")
    for case, full, rate, growth in rows:
        met = "met" if rate >= TARGETS[case] else "MISSED"
        print(f"| {case} | {full['workloads']:,} | {rate:,.0f} {unit[case]} | ≥ {TARGETS[case]:,} ({met}) | "
              f"{full['seconds'] / full['floor']:.2f} | {growth:.2f} | {full['peak_mb']:.0f} MB |")
    floor = rows[0][1]["floor"]
    print(f"\nfloor: PyYAML's {LOADER.__name__} parsing the same objects ({floor:.2f} s for the validate "
          f"backlog); memory target < {MEMORY_LIMIT_MB} MB per case")


if __name__ == "__main__":
    main()
