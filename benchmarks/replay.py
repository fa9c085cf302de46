"""`aks-kueue replay` at scale: Kueue's own scheduler-performance scenarios and a month of an organisation.

    python benchmarks/replay.py [--case NAME] [--runs N] [--profile] [--cycle-time DURATION]
    python benchmarks/replay.py --cases simple,preemption,compare --base ../main   # before and after, one run

The command-line cases (issue 27), each the whole `aks-kueue replay ... --json` command run in a process of
its own (reading, the configuration, the replay, the JSON written), and with `--base CHECKOUT` the same case
on another checkout (the base branch) right after it, so that both are measured under the same load:
- simple: 200,000 workloads of one shape over 20 ClusterQueues that never fill (`--queues`, no nodes).
  Targets: >= 20,000 workloads/s, and a peak of <= 2 KiB a workload (the peak RSS less the process before
  it read anything, over the workloads).
- preemption: a congested cohort of 4 ClusterQueues with four priorities (LowerPriority in the queue, Any
  across the cohort), 8,000 workloads, most of them preempting or waiting. Target: >= 1,500 workloads/s.
- compare: the preemption trace against its queues and, with --compare-queues, the same with one team's
  quota raised from 64 to 80 cores (a change under review; about the same work). Target: at most 1.3x the
  wall time of preemption alone on two cores (the two configurations side by side). A machine busy with
  other work shows it in the load average printed with each case: wall time is then not the measure.

Cases, each in a process of its own (so that its peak memory is its own):
- baseline: Kueue's baseline generator scenario (`benchmarks/data/kueue-baseline.generator.yaml`, from
  kubernetes-sigs/kueue v0.19.2 test/performance/scheduler/configs): 5 cohorts x 6 ClusterQueues,
  15,000 workloads. Target: <= 10 s.
- large-scale: Kueue's large-scale scenario: 10 cohorts x 100 ClusterQueues, 50,000 workloads.
  Target: <= 120 s.
- month and week: a synthetic organisation of 200 ClusterQueues in 20 cohorts on CPU, A100 and H100
  pools under the autoscaler, a month of submissions with a daily rhythm (about 200,000 workloads), and
  the same organisation over its first week (about 50,000). Target: the month <= 5 minutes; growth
  (seconds per workload, month over week) near 1.0 says the cost is linear in workloads.
- baseline-fair, week-fair: the same with a Kueue Configuration that turns fair sharing on (Kueue's
  default strategies): entry order and preemption by dominant resource share. Target: within 1.5x the
  CPU time of the classical case on the same trace (the ratio is printed).
The command cases run with `--cycle-time 0` unless `--cycle-time` says otherwise (issue 30 made 2.4 s the
command's default): the same work as before that flag existed, so a base checkout without it (whose cycles
take no time) is measured on the same replay. A base that cannot take a nonzero `--cycle-time` is not run.
The library cases (baseline to month) build their configuration directly, whose cycles take no time unless
`--cycle-time` is given.
Every case reads its trace through the trace readers (the generator file; the month as JSON Lines
written to a temporary file), builds the configuration as `aks-kueue replay` does, replays it and
builds the contract's JSON document. Peak memory target: <= 1 GiB per case.

Reported: wall time and CPU time (the process's own; on a machine shared with other work the wall
time grows and the CPU time much less), events per second, decisions per second, peak memory; for
Kueue's scenarios also the sanity floor from their rangespec.yaml: ClusterQueue usage
(CPU-time used over nominal quota times the run's length, summed over the queues of a class, as
`test/performance/scheduler/checker` computes it) at least 50% (baseline) and 31.6% (large-scale).
Kueue's harness runs in real time against an API server (about 351 s and 1,179 s): no speed anchor.
`--profile` prints where the time goes (the functions with the most time of their own, by module).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import random
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout (benchmarks/common.py)
if "--checkout" in sys.argv:  # a case measured on another checkout (--base): its aks_kueue, this script's cases
    sys.path.insert(0, sys.argv[sys.argv.index("--checkout") + 1])

from benchmarks.common import (  # noqa: E402
    GPU_TAINT, GPU_TOLERATION, flavor, in_child, kueue, peak_mb, queue_spec, quota)

DATA = Path(__file__).resolve().parent / "data"
TARGETS = {"baseline": 10.0, "large-scale": 120.0, "month": 300.0, "week": None, "baseline-fair": None,
           "week-fair": None}
FAIR_SHARING = {"fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}}
FAIR_RATIO_LIMIT = 1.5  # fair-sharing CPU time over the classical case's, on the same trace
COMMAND_CASES = ("simple", "preemption", "compare")
RATE_TARGETS = {"simple": 20_000.0, "preemption": 1_500.0}   # workloads per second (CPU)
COMPARE_TARGET = 1.3
MEMORY_TARGET_KIB = 2.0
FLOORS = {"baseline": 50.0, "large-scale": 31.6}  # rangespec.yaml clusterQueueClassesMinUsage
MEMORY_LIMIT_MB = 1024
DAY = 86400.0


# The synthetic organisation -----------------------------------------------------------------------

COHORTS, QUEUES_PER_COHORT = 20, 10
POOLS = (  # name, VM size, minCount, maxCount, GPU
    ("cpu", "Standard_D16s_v5", 4, 150, False),
    ("a100", "Standard_NC24ads_A100_v4", 0, 100, True),
    ("h100", "Standard_ND96isr_H100_v5", 0, 20, True),
)


def organisation(seed: int) -> list[dict]:
    """Flavors on the pools, 200 ClusterQueues in 20 cohorts, one LocalQueue each, priority classes.
    Quota is sized as a platform team would size it to these pools: the A100 quota (half the teams
    hold one GPU, the others borrow) and the H100 quota (one team in ten holds a node's 8) add up to
    the pools' GPUs at maxCount; CPU quota is overcommitted about 1.4x, as it often is."""
    rng = random.Random(seed)
    objects = [kueue("WorkloadPriorityClass", n, value=v) for n, v in (("batch-low", 100), ("batch-high", 1000))]
    objects += [flavor(name, {"kubernetes.azure.com/agentpool": name}, gpu) for name, _, _, _, gpu in POOLS]
    for c in range(COHORTS):
        objects.append(kueue("Cohort", f"org-{c}", spec={}))
        for q in range(QUEUES_PER_COHORT):
            name = f"team-{c}-{q}"
            a100 = quota("a100", "24", "210Gi", "1") if q % 2 else quota("a100", "0", "0", "0")
            if q % 3 == 0:
                a100["resources"][2]["borrowingLimit"] = "2"
            quotas = [quota("cpu", str(rng.choice((8, 16, 24))), "96Gi", "0"), a100,
                      quota("h100", "96", "1800Gi", "8" if q == 0 else "0")]
            preemption = {"withinClusterQueue": "LowerPriority",
                          "reclaimWithinCohort": "Any" if q % 2 == 0 else "Never"}
            objects.append(kueue("ClusterQueue", name, spec=queue_spec(f"org-{c}", quotas, preemption=preemption)))
            objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
            objects.append(kueue("LocalQueue", "jobs", name, spec={"clusterQueue": name}))
    return objects


def pools():
    from aks_kueue.aks.nodes import pool_capacity
    from aks_kueue.aks.pools import Pool

    found = []
    for name, size, low, high, gpu in POOLS:
        spec = Pool(name=name, vm_size=size, min_count=low, max_count=high, max_pods=60,
                    labels={}, taints=(dict(GPU_TAINT),) if gpu else (), gpu_driver="Install" if gpu else None)
        found.append(pool_capacity(spec, "eastus"))
    return found


def templates(team: str, rng: random.Random) -> list[dict]:
    """The job shapes one team submits again and again: four CPU jobs, one A100 job and, for the teams
    with H100 quota, one 8-GPU job."""
    cpu = [{"name": "main", "count": rng.choice((1, 2, 4)), "requests": {"cpu": str(rng.choice((1, 2, 4))),
                                                                      "memory": f"{rng.choice((4, 8, 16))}Gi"}}
           for _ in range(4)]
    shapes = [(p, (5, 60)) for p in cpu]
    shapes.append(({"name": "main", "count": 1, "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"},
                    "tolerations": [GPU_TOLERATION]}, (20, 120)))
    if team.endswith("-0"):
        shapes.append(({"name": "main", "count": 1, "requests": {"cpu": "80", "memory": "1200Gi",
                                                                  "nvidia.com/gpu": "8"},
                        "tolerations": [GPU_TOLERATION]}, (60, 240)))
    return [{"podSets": [pod_set], "minutes": minutes} for pod_set, minutes in shapes]


def month_trace(path: Path, days: float, per_team_per_day: float, seed: int) -> int:
    """JSON Lines: each team submits Poisson arrivals with a daily rhythm (busy working hours)."""
    rng = random.Random(seed)
    rows = []
    for c in range(COHORTS):
        for q in range(QUEUES_PER_COHORT):
            team = f"team-{c}-{q}"
            shapes = templates(team, rng)
            t = rng.uniform(0, 600)
            while t < days * DAY:
                hour = (t % DAY) / 3600
                rate = per_team_per_day / DAY * (1.9 if 8 <= hour < 18 else 0.45)
                t += rng.expovariate(rate)
                if t >= days * DAY:
                    break
                shape = rng.choice(shapes)
                low, high = shape["minutes"]
                rows.append((t, {"submitted": round(t, 3), "namespace": team, "queue": "jobs",
                                 "name": f"{team}-{len(rows)}", "priority": rng.choice((100, 100, 100, 1000)),
                                 "runtime": round(60 * math.exp(rng.uniform(math.log(low), math.log(high))), 1),
                                 "podSets": shape["podSets"]}))
    rows.sort(key=lambda r: r[0])
    with open(path, "w") as handle:
        for _, row in rows:
            handle.write(json.dumps(row) + "\n")
    return len(rows)


# The command-line cases (issue 27) ---------------------------------------------------------------


def _queue_file(path: Path, teams: int, nominal: int, cohort: bool, priorities: bool, first: int = 0) -> Path:
    """Kueue YAML for `--queues`: one flavor, `teams` ClusterQueues (in one cohort, preempting by
    priority in the queue and reclaiming anything across it), a LocalQueue each, four priority classes.
    `first`: the first team's nominal cores, when not `nominal` (a quota change under review)."""
    docs = [kueue("ResourceFlavor", "default", spec={})]
    if priorities:
        docs += [kueue("WorkloadPriorityClass", f"p{i}", value=100 * i) for i in range(4)]
    for t in range(teams):
        cores = first if t == 0 and first else nominal
        spec: dict = {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [
            {"name": "default", "resources": [{"name": "cpu", "nominalQuota": str(cores)},
                                              {"name": "memory", "nominalQuota": f"{cores * 4}Gi"}]}]}]}
        if cohort:
            spec.update(cohortName="org", preemption={"withinClusterQueue": "LowerPriority",
                                                      "reclaimWithinCohort": "Any"})
        docs += [kueue("ClusterQueue", f"team-{t}", spec=spec),
                 kueue("LocalQueue", "default", f"team-{t}", spec={"clusterQueue": f"team-{t}"})]
    path.write_text("---\n".join(json.dumps(d) + "\n" for d in docs))
    return path


def simple_trace(path: Path, count: int, seed: int) -> int:
    """One workload a second on average, one shape, ten minutes each, 20 teams: quota never runs out."""
    rng = random.Random(seed)
    with open(path, "w") as handle:
        t = 0.0
        for i in range(count):
            t += rng.expovariate(1.0)
            handle.write(json.dumps({"submitted": round(t, 3), "namespace": f"team-{rng.randrange(20)}",
                                     "queue": "default", "name": f"job-{i}", "runtime": 600,
                                     "podSets": [{"name": "main", "count": 1,
                                                  "requests": {"cpu": "1", "memory": "4Gi"}}]}) + "\n")
    return count


def preemption_trace(path: Path, count: int, seed: int) -> int:
    """A congested cohort: a workload every 4 s on average into 4 teams of 64 cores, one in ten a
    16-pod job, priorities p0 to p3 at random, 10 to 30 minutes each."""
    rng = random.Random(seed)
    with open(path, "w") as handle:
        t = 0.0
        for i in range(count):
            t += rng.expovariate(0.25)
            pods = 16 if rng.random() < 0.1 else 1
            handle.write(json.dumps({"submitted": round(t, 3), "namespace": f"team-{rng.randrange(4)}",
                                     "queue": "default", "name": f"job-{i}", "priorityClass": f"p{rng.randrange(4)}",
                                     "runtime": rng.choice([600, 1200, 1800]),
                                     "podSets": [{"name": "main", "count": pods,
                                                  "requests": {"cpu": "1", "memory": "4Gi"}}]}) + "\n")
    return count


def paced() -> bool:
    """Whether the checkout imported takes `--cycle-time` (issue 30); before it, cycles took no time."""
    import importlib.util

    return importlib.util.find_spec("aks_kueue.replay.pace") is not None


def run_command_case(case: str, seed: int, scratch: Path, cycle_time: str = "0") -> dict:
    """The whole command, in this process: `aks-kueue replay TRACE --queues Q [--compare-queues Q2] --json`."""
    import contextlib
    import io

    from aks_kueue.cli import app

    if not paced() and cycle_time not in ("0", "0s"):
        raise SystemExit(f"{case}: this checkout has no --cycle-time; its cycles take no time (give --cycle-time 0)")

    if case == "simple":
        trace, workloads = scratch / "simple.jsonl", simple_trace(scratch / "simple.jsonl", 200_000, seed)
        flags = ["--queues", str(_queue_file(scratch / "simple.yaml", 20, 1000, cohort=False, priorities=False))]
    else:
        trace, workloads = scratch / "preemption.jsonl", preemption_trace(scratch / "preemption.jsonl", 8_000, seed)
        flags = ["--queues", str(_queue_file(scratch / "heavy.yaml", 4, 64, cohort=True, priorities=True))]
        if case == "compare":
            flags += ["--compare-queues", str(_queue_file(scratch / "bigger.yaml", 4, 64, cohort=True,
                                                          priorities=True, first=80))]
    if paced():
        flags += ["--cycle-time", cycle_time]
    baseline = _rss_mb()
    wall, cpu = time.perf_counter(), time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(io.StringIO()):
        # Not standalone: the command returns its exit code instead of ending the process.
        code = app(["replay", str(trace), *flags, "--json"], standalone_mode=False)
    if code not in (0, None):
        raise RuntimeError(f"{case}: the command exited {code}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    cpu += (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)  # a compared child's
    peak = peak_mb()
    return {"case": case, "workloads": workloads, "wall": wall, "cpu": cpu, "peak_mb": peak,
            "baseline_mb": baseline, "kib_per_workload": (peak - baseline) * 1e6 / 1024 / workloads,
            "load": os.getloadavg()[0]}


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 1e6


def report_command_cases(results: dict[str, dict], base: dict[str, dict]) -> None:
    print("\n| case | checkout | workloads | wall | CPU | workloads/s (CPU) | target | peak memory | KiB a workload |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case, r in results.items():
        for label, found in (("this", r), ("base", base.get(case))):
            if found is None:
                continue
            rate = found["workloads"] / found["cpu"]
            target = RATE_TARGETS.get(case)
            met = "" if target is None else f"≥ {target:,.0f} ({'met' if rate >= target else 'MISSED'})"
            print(f"| {case} | {label} | {found['workloads']:,} | {found['wall']:.1f} s | {found['cpu']:.1f} s | "
                  f"{rate:,.0f} | {met} | {found['peak_mb']:.0f} MB | {found['kib_per_workload']:.2f} |")
    for label, found in (("this", results), ("base", base)):
        if "compare" in found and "preemption" in found:
            ratio = found["compare"]["wall"] / found["preemption"]["wall"]
            print(f"compare / one configuration ({label}): {ratio:.2f}x wall "
                  f"({'met' if ratio <= COMPARE_TARGET else 'MISSED'} ≤ {COMPARE_TARGET}x; "
                  f"CPU {found['compare']['cpu'] / found['preemption']['cpu']:.2f}x)")
    if "simple" in results:
        kib = results["simple"]["kib_per_workload"]
        print(f"simple: {kib:.2f} KiB a workload at peak ({'met' if kib <= MEMORY_TARGET_KIB else 'MISSED'} ≤ "
              f"{MEMORY_TARGET_KIB} KiB)")


# One case, in its own process ------------------------------------------------------------------


def _configuration(case: str, trace, seed: int, cycle_time: str = "0"):
    from dataclasses import replace

    from aks_kueue.cli.replay import _duration, _generated, _validated
    from aks_kueue.kueue.configuration import judge_configuration
    from aks_kueue.replay import ReplayConfig

    if trace.generated is not None:
        found = _generated(trace.generated)
    else:
        objects = _validated([(o, o["metadata"]["name"], None) for o in organisation(seed)])
        found = ReplayConfig(f"synthetic {case}", objects, pools=pools())
    if paced() and cycle_time not in ("0", "0s"):
        from aks_kueue.replay.pace import given

        found.cycle = given(_duration(cycle_time, "--cycle-time"))
    if not case.endswith("-fair"):
        return found
    # As `aks-kueue replay` reads a Configuration given with the queues: defaulted (waitForPodsReady on, as
    # without one), so that the two cases differ only in fair sharing.
    report = judge_configuration({"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
                                  **FAIR_SHARING})
    return replace(found, kueue={**(report.effective or {}), "featureGates": dict(report.gates)})


def run_case(case: str, seed: int, profile: bool, cycle_time: str = "0") -> dict:
    from aks_kueue.replay import read_trace, replay
    from aks_kueue.replay.report import document

    with tempfile.TemporaryDirectory() as scratch:
        base = case.removesuffix("-fair")
        if base in ("baseline", "large-scale"):
            path = DATA / f"kueue-{base}.generator.yaml"
            written = None
        else:
            path = Path(scratch) / f"{base}.jsonl"
            written = month_trace(path, 30.0 if base == "month" else 7.0, 33.0, seed)
        wall, cpu = time.perf_counter(), time.process_time()
        trace = read_trace([str(path)])
        configuration = _configuration(case, trace, seed, cycle_time)
        read_wall, read_cpu = time.perf_counter() - wall, time.process_time() - cpu
        profiler = cProfile.Profile() if profile else None
        if profiler is not None:
            profiler.enable()
        outcome = replay(configuration, trace)
        found = document([outcome], trace)
        if profiler is not None:
            profiler.disable()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    result = {"case": case, "workloads": len(trace.workloads), "written": written, "wall": wall, "cpu": cpu,
              "read_wall": read_wall, "read_cpu": read_cpu, "events": outcome.events, "cycles": outcome.cycles,
              "decisions": outcome.decisions, "end": outcome.end, "queues": len(outcome.queues), "peak_mb": peak_mb(),
              "admitted": sum(r.ever_admitted for r in outcome.runs),
              "finished": sum(r.finished is not None for r in outcome.runs),
              "preemptions": sum(r.preemptions for r in outcome.runs),
              "evictions": sum(r.evictions for r in outcome.runs), "load": os.getloadavg()[0]}
    if trace.generated is not None:
        result["usage"] = _class_usage(outcome, trace.generated.queue_classes)
        result["admission_ms"] = _class_admission(outcome)
    if outcome.nodes is not None:
        result["pools"] = {p["name"]: (p["nodeHours"], p["peakNodes"], p["meanAllocated"])
                           for p in found["configurations"][0]["pools"]}
    if profiler is not None:
        result["profile"] = _where_time_goes(profiler)
    return result


def _class_usage(outcome, classes: dict[str, str]) -> dict[str, float]:
    """Kueue's checker: CPU used (mCPU x ms) x 100 / (nominal quota (mCPU) x (last event - first event)),
    summed over the ClusterQueues of a class; here the replay's start and end are the first and last events."""
    used: Counter[str] = Counter()
    nominal: Counter[str] = Counter()
    for name, meters in outcome.meters.items():
        cls = classes.get(name, "?")
        for (_, resource_name), meter in meters.items():
            if resource_name == "cpu":
                used[cls] += meter.used
                nominal[cls] += meter.nominal
    return {cls: 100.0 * used[cls] / (nominal[cls] * outcome.end) for cls in used if nominal[cls] and outcome.end}


def _class_admission(outcome) -> dict[str, float]:
    """Average creation-to-admission per workload class (the class is the name's first part), in ms."""
    waits: dict[str, list[float]] = {}
    for run in outcome.runs:
        if run.admitted is not None:
            waits.setdefault(run.trace.name.split("-")[0], []).append(run.admitted - run.trace.submitted)
    return {cls: 1000.0 * sum(v) / len(v) for cls, v in waits.items()}


def _where_time_goes(profiler) -> list[tuple[str, float]]:
    import pstats

    by_module: Counter[str] = Counter()
    for (file, _, _), (_, _, own, _, _) in pstats.Stats(profiler).stats.items():
        module = (file.split("aks_kueue/")[-1] if "aks_kueue" in file
                  else "builtins" if file == "~" else "python/" + Path(file).name)
        by_module[module] += own
    total = sum(by_module.values()) or 1.0
    return [(m, 100 * s / total) for m, s in by_module.most_common(12)]


# The report ----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(TARGETS) + list(COMMAND_CASES),
                        help="run one case (in this process) and print its JSON")
    parser.add_argument("--cases", default="baseline,large-scale,week,month")
    parser.add_argument("--runs", type=int, default=1, help="best of this many runs per case")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--profile", action="store_true", help="also say where the time goes (slower)")
    parser.add_argument("--base", help="a checkout of the base branch: each command case runs there too, right "
                                       "after this one")
    parser.add_argument("--cycle-time", default="0", help="how long a scheduling cycle takes, on both checkouts "
                                                              "(default 0: cycles take no time, as before issue 30)")
    parser.add_argument("--checkout", help=argparse.SUPPRESS)  # the checkout a child imports aks_kueue from
    args = parser.parse_args()
    if args.case:
        if args.case in COMMAND_CASES:
            with tempfile.TemporaryDirectory() as scratch:
                print(json.dumps(run_command_case(args.case, args.seed, Path(scratch), args.cycle_time)))
            return
        print(json.dumps(run_case(args.case, args.seed, args.profile, args.cycle_time)))
        return
    wanted = args.cases.split(",")
    paced_flags = ["--cycle-time", args.cycle_time]
    commands = {c: in_child(__file__, c, "--seed", str(args.seed), *paced_flags) for c in wanted if c in COMMAND_CASES}
    base = {}
    if args.base:
        base = {c: in_child(__file__, c, "--seed", str(args.seed), *paced_flags, "--checkout",
                            str(Path(args.base).resolve())) for c in commands}
    for case, r in commands.items():
        print(f"{case}: {r['workloads']:,} workloads in {r['wall']:.1f} s wall / {r['cpu']:.1f} s CPU, peak "
              f"{r['peak_mb']:.0f} MB, load {r['load']:.1f}", flush=True)
    if commands:
        report_command_cases(commands, base)
    results = {}
    for case in [c for c in wanted if c not in COMMAND_CASES]:
        flags = ["--seed", str(args.seed), *paced_flags] + (["--profile"] if args.profile else [])
        runs = [in_child(__file__, case, *flags) for _ in range(max(1, args.runs))]
        results[case] = min(runs, key=lambda r: r["cpu"])
        r = results[case]
        print(f"{case}: {r['workloads']:,} workloads, {r['queues']} ClusterQueues, replayed to {r['end']:,.0f} s "
              f"virtual in {r['wall']:.1f} s wall / {r['cpu']:.1f} s CPU (reading {r['read_cpu']:.1f} s CPU), "
              f"load {r['load']:.1f}; {r['admitted']:,} admitted, {r['finished']:,} finished, "
              f"{r['preemptions']:,} preemptions, {r['evictions']:,} evictions", flush=True)
    print()
    print("| case | workloads | wall | CPU | target | events/s (CPU) | decisions/s (CPU) | peak memory | sanity floor |")
    print("|---|---|---|---|---|---|---|---|---|")
    for case, r in results.items():
        target = TARGETS[case]
        if target is None:
            met = ""
        elif r["wall"] <= target:
            met = f"≤ {target:.0f} s (met)"
        else:  # a machine shared with other work: the process's own CPU time says what it needs
            met = f"≤ {target:.0f} s ({'met on CPU time only' if r['cpu'] <= target else 'MISSED'})"
        floor = ""
        if case in FLOORS and r.get("usage"):
            usage = r["usage"].get("cq", 0.0)
            floor = f"CQ usage {usage:.1f}% ≥ {FLOORS[case]}% ({'met' if usage >= FLOORS[case] else 'MISSED'})"
        print(f"| {case} | {r['workloads']:,} | {r['wall']:.1f} s | {r['cpu']:.1f} s | {met} | "
              f"{r['events'] / r['cpu']:,.0f} | {r['decisions'] / r['cpu']:,.0f} | {r['peak_mb']:.0f} MB "
              f"(≤ {MEMORY_LIMIT_MB}) | {floor} |")
    if "week" in results and "month" in results:
        week, month = results["week"], results["month"]
        growth = (month["cpu"] / month["workloads"]) / (week["cpu"] / week["workloads"])
        print(f"\ngrowth, week ({week['workloads']:,}) to month ({month['workloads']:,}): {growth:.2f} "
              "(CPU seconds per workload, month over week; 1.0 is linear)")
    for case, r in results.items():
        classical = results.get(case.removesuffix("-fair"))
        if case.endswith("-fair") and classical is not None:
            ratio = r["cpu"] / classical["cpu"]
            print(f"{case}: fair sharing over classical on the same trace: {ratio:.2f}x CPU time "
                  f"(target ≤ {FAIR_RATIO_LIMIT}x: {'met' if ratio <= FAIR_RATIO_LIMIT else 'MISSED'}); "
                  f"{r['preemptions']:,} preemptions against {classical['preemptions']:,}")
    for case, r in results.items():
        if r.get("admission_ms"):
            classes = ", ".join(f"{c} {ms:,.0f} ms" for c, ms in sorted(r["admission_ms"].items()))
            print(f"{case}: average creation to admission per class: {classes}")
        if r.get("pools"):
            print(f"{case}: pools (node-hours, peak nodes, mean allocated): {r['pools']}")
        if r.get("profile"):
            print(f"{case}: where the time goes (own time by module): "
                  + ", ".join(f"{m} {p:.0f}%" for m, p in r["profile"]))


if __name__ == "__main__":
    main()
