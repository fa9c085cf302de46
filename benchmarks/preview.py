"""Time the offline preview as whole processes, against the SDK import floor.

    python benchmarks/preview.py [--runs N]

Every preview includes the policy pack's verdicts (`aks_kueue.policies`), as
`aks-kueue preview` always runs them. The floor is a process that only imports the
Pulumi SDK and the two providers the program uses. Each figure is the median wall time of N fresh processes; peak memory
is the largest resident set of any one of them. Each case's ratio is to the floor timed
in alternation with it, so both see the same load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FLOOR = [sys.executable, "-c", "import pulumi, pulumi_azure_native.containerservice, pulumi_kubernetes"]
# Every preview runs the policy pack over its record; prod's target is the policy issue's.
TARGETS = {"dev": 3.0, "prod": 4.0, "half": 10.0, "large": 10.0}
MEMORY_LIMIT_MB = 500
# Context, not a target: a process that registers the same number of bare custom
# resources under the same mocks, to show what the Pulumi SDK itself costs per resource.
SDK_REGISTRATION = """
import sys, pulumi, pulumi_kubernetes as k8s
from aks_kueue.preview.mocks import OfflineMocks
mocks = OfflineMocks()
pulumi.runtime.set_mocks(mocks, project="p", stack="s", preview=True)
def program():
    for i in range(int(sys.argv[1])):
        k8s.apiextensions.CustomResource(f"r{i}", api_version="example.com/v1", kind="Thing",
                                         metadata={"name": f"r{i}"}, spec={"i": i})
pulumi.runtime.test(program)()
"""


def count_resources(command: list[str]) -> int:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode not in (0, 1):  # 1: a verdict, the document is still complete
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr}")
    import json

    return len(json.loads(done.stdout)["resources"])


def run_once(command: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS in MB of one fresh process.

    Exit 1 is a verdict (a mandatory policy violation), not a failed run; the generated
    stacks may well draw one.
    """
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed: {child.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024


def measure(command: list[str], runs: int) -> tuple[float, float]:
    """Median seconds and peak RSS in MB over `runs` fresh processes."""
    samples = [run_once(command) for _ in range(runs)]
    return statistics.median(t for t, _ in samples), max(mb for _, mb in samples)


def measure_against_floor(command: list[str], runs: int) -> tuple[float, float, float]:
    """Median seconds of `command` and of the floor, runs alternating, and the peak RSS.

    Alternating keeps both under the same load, so the ratio holds on a shared machine
    whose speed drifts between one case and the next.
    """
    times, floors, peaks = [], [], []
    for _ in range(runs):
        floor_s, _ = run_once(FLOOR)
        seconds, peak = run_once(command)
        floors.append(floor_s)
        times.append(seconds)
        peaks.append(peak)
    return statistics.median(times), statistics.median(floors), max(peaks)


def large_stack(pools: int = 20, cohorts: int = 20, cluster_queues: int = 200, local_queues: int = 1000) -> dict:
    """A generated organisation: every ClusterQueue has a CPU and a GPU flavor, one
    namespace, and local_queues / cluster_queues LocalQueues in it."""
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    sizes = ["Standard_D8s_v5", "Standard_D16s_v5", "Standard_E8s_v5", "Standard_NC24ads_A100_v4"]
    config["aks-kueue:nodePools"] = [
        {"name": f"pool{i}", "vmSize": sizes[i % len(sizes)], "minCount": 0, "maxCount": 10, "maxPods": 110,
         **({"taints": ["sku=gpu:NoSchedule"], "gpuDriver": "Install"} if i % len(sizes) == 3 else {})}
        for i in range(pools)
    ]
    flavors = [{"name": f"flavor{i}", "nodePool": f"pool{i}"} for i in range(pools)]
    cpu_flavors = [f["name"] for i, f in enumerate(flavors) if i % len(sizes) != 3]
    gpu_flavors = [f["name"] for i, f in enumerate(flavors) if i % len(sizes) == 3]
    queues = []
    for q in range(cluster_queues):
        quota = [("cpu", "1"), ("memory", "4Gi"), ("nvidia.com/gpu", "0")]
        gpu_quota = [("cpu", "1"), ("memory", "4Gi"), ("nvidia.com/gpu", "0")]
        queues.append({"name": f"cq{q}", "spec": {
            "cohortName": f"cohort{q % cohorts}", "namespaceSelector": {"matchLabels": {"team": f"cq{q}"}},
            "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [
                {"name": name, "resources": [{"name": r, "nominalQuota": v} for r, v in amounts]}
                for name, amounts in ((cpu_flavors[q % len(cpu_flavors)], quota),
                                      (gpu_flavors[q % len(gpu_flavors)], gpu_quota))]}]}})
    per_queue = max(1, local_queues // cluster_queues)
    config["aks-kueue:queues"] = {
        "resourceFlavors": flavors,
        "cohorts": [{"name": f"cohort{c}", "spec": {}} for c in range(cohorts)],
        "clusterQueues": queues,
        "localQueues": [{"name": f"lq{k}", "namespace": f"team-cq{q}", "spec": {"clusterQueue": f"cq{q}"}}
                        for q in range(cluster_queues) for k in range(per_queue)],
    }
    config.pop("aks-kueue:expectedWorkloads", None)
    return {"config": config}


def run_in(root: Path, command: list[str]) -> float:
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, _ = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(command)} in {root} failed: {child.stderr.read().decode()}")
    return time.perf_counter() - start


def compare(baseline: Path, cases: dict[str, list[str]], runs: int) -> None:
    """Each case here and in another checkout (the code before a change), runs alternating and
    the order flipped every round, so both see the same load; the ratio of medians per case."""
    for name, command in cases.items():
        here, there = [], []
        for round_ in range(runs):
            order = [(ROOT, here), (baseline, there)]
            for root, times in (order if round_ % 2 == 0 else order[::-1]):
                # The generated stacks sit in the temporary directory; the named ones in each checkout.
                times.append(run_in(root, command))
        now, before = statistics.median(here), statistics.median(there)
        print(f"preview {name:<6} before {before:6.2f} s  after {now:6.2f} s  {now / before:5.3f}x "
              f"(median of {runs} each, alternating)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="a checkout of the code before a change: time every case "
                        "there and here, alternating, and print after/before instead of the floor ratios")
    args = parser.parse_args()
    preview = [sys.executable, "-m", "aks_kueue.cli", "preview", "--json"]
    with tempfile.TemporaryDirectory() as tmp:
        large = Path(tmp) / "Pulumi.large.yaml"
        large.write_text(yaml.safe_dump(large_stack()))
        half = Path(tmp) / "Pulumi.half.yaml"
        half.write_text(yaml.safe_dump(large_stack(pools=10, cohorts=10, cluster_queues=100, local_queues=500)))
        prod_config = ROOT / "policy" / "config" / "prod.json"  # as the PR workflow runs prod
        prod = preview + ["--stack", "prod"] + (["--policy-config", str(prod_config)] if prod_config.exists() else [])
        cases = {"dev": preview + ["--stack", "dev"], "prod": prod,
                 "half": preview + ["--config", str(half)],
                 "large": preview + ["--config", str(large)]}
        if args.baseline is not None:
            compare(args.baseline.resolve(), cases, args.runs)
            return
        floor_s, floor_mb = measure(FLOOR, args.runs)
        print(f"import floor          {floor_s:6.2f} s  {floor_mb:6.0f} MB")
        seconds = {}
        for name, command in cases.items():
            seconds[name], paired_floor, peak = measure_against_floor(command, args.runs)
            ratio = seconds[name] / paired_floor
            verdict = "ok" if ratio <= TARGETS[name] and peak < MEMORY_LIMIT_MB else "OVER TARGET"
            print(f"preview {name:<13} {seconds[name]:6.2f} s  {peak:6.0f} MB  {ratio:5.2f}x floor "
                  f"(floor alongside {paired_floor:.2f} s; target {TARGETS[name]:g}x, <{MEMORY_LIMIT_MB} MB)  "
                  f"{verdict}")
        resources = count_resources(cases["large"])
        sdk_s, _ = measure([sys.executable, "-c", SDK_REGISTRATION, str(resources)], args.runs)
        print(f"SDK registration of {resources} bare resources under mocks: {sdk_s:.2f} s "
              f"({sdk_s / floor_s:.2f}x floor); the large preview is {seconds['large'] / sdk_s:.2f}x that")
        # Growth: the objects double from half to large; linear growth keeps the
        # above-floor time ratio near 2 (the dev stack stands in for the fixed cost).
        fixed = seconds["dev"]
        growth = (seconds["large"] - fixed) / max(seconds["half"] - fixed, 1e-9)
        print(f"growth half -> large (objects x2): {growth:.2f}x above the dev stack's time "
              f"(linear: about 2)")


if __name__ == "__main__":
    main()
