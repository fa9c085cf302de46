"""Time the offline preview as whole processes, against two floors measured alongside.

    python benchmarks/preview.py [--runs N] [--baseline DIR]

Every preview includes the policy pack's verdicts (`aks_kueue.policies`), as `aks-kueue
preview` always runs them. The targets (issue 12):

- dev: the dev stack, policies included, at most 3x the import floor, a process that only
  imports the Pulumi SDK and the two providers the program uses;
- large: the generated organisation (`large_stack`) at most 1.5x the SDK floor, a process
  that registers the same number of bare custom resources under the same mocks.

prod and half are shown for context (prod as the PR workflow runs it, with its policy
config). Each figure is the median wall time of N fresh processes; each ratio is to its
floor timed in alternation with it, so both see the same load. Peak memory is the largest
resident set of any one preview.

The children cache their bytecode in a temporary directory (`PYTHONPYCACHEPREFIX`, after a
warm-up run), as an installed program does, whatever PYTHONDONTWRITEBYTECODE says here, and
nothing is written into the checkouts.
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
# Case -> (the floor it is measured against, the most it may cost as a multiple of it).
TARGETS = {"dev": ("import", 3.0), "large": ("SDK", 1.5)}
MEMORY_LIMIT_MB = 500
# What the Pulumi SDK itself costs per resource: a process that registers as many bare custom
# resources as the large preview registers, under the same mocks.
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


def child_environment(pycache: str) -> dict[str, str]:
    """Bytecode cached under `pycache`, as a program installed by pip has it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = pycache
    return env


# The children's environment: `child_environment`, set in main.
ENV: dict[str, str] = dict(os.environ)


def count_resources(command: list[str]) -> int:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=ENV)
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
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed: {child.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024


def measure(command: list[str], runs: int) -> tuple[float, float]:
    """Median seconds and peak RSS in MB over `runs` fresh processes."""
    samples = [run_once(command) for _ in range(runs)]
    return statistics.median(t for t, _ in samples), max(mb for _, mb in samples)


def measure_against(floor: list[str], command: list[str], runs: int) -> tuple[float, float, float]:
    """Median seconds of `command` and of `floor`, runs alternating, and the peak RSS of `command`.

    Alternating keeps both under the same load, so the ratio holds on a shared machine
    whose speed drifts between one case and the next.
    """
    times, floors, peaks = [], [], []
    for _ in range(runs):
        floor_s, _ = run_once(floor)
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
    child = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    _, status, _ = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(command)} in {root} failed: {child.stderr.read().decode()}")
    return time.perf_counter() - start


def compare(baseline: Path, cases: dict[str, list[str]], runs: int) -> None:
    """Each case here and in another checkout (the code before a change), runs alternating and
    the order flipped every round, so both see the same load; the ratio of medians per case."""
    for name, command in cases.items():
        for root in (ROOT, baseline):  # warm-up: each checkout's bytecode cached
            run_in(root, command)
        here, there = [], []
        for round_ in range(runs):
            order = [(ROOT, here), (baseline, there)]
            for root, times in (order if round_ % 2 == 0 else order[::-1]):
                # The generated stacks sit in the temporary directory; the named ones in each checkout.
                times.append(run_in(root, command))
        now, before = statistics.median(here), statistics.median(there)
        print(f"preview {name:<6} before {before:6.2f} s  after {now:6.2f} s  {now / before:5.3f}x "
              f"(median of {runs} each, alternating)")


def verdict(name: str, ratio: float, peak: float) -> str:
    floor, target = TARGETS[name]
    met = ratio <= target and peak < MEMORY_LIMIT_MB
    return f"target <= {target:g}x the {floor} floor, < {MEMORY_LIMIT_MB} MB: {'met' if met else 'NOT MET'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="a checkout of the code before a change: time every case "
                        "there and here, alternating, and print after/before instead of the floor ratios")
    args = parser.parse_args()
    preview = [sys.executable, "-m", "aks_kueue.cli", "preview", "--json"]
    with tempfile.TemporaryDirectory() as tmp:
        ENV.clear()
        ENV.update(child_environment(str(Path(tmp) / "pycache")))
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
        resources = count_resources(cases["large"])  # also the warm-up of the bytecode cache
        sdk = [sys.executable, "-c", SDK_REGISTRATION, str(resources)]
        for command in (FLOOR, sdk, *cases.values()):
            run_once(command)
        floor_s, floor_mb = measure(FLOOR, args.runs)
        print(f"import floor                  {floor_s:6.2f} s  {floor_mb:4.0f} MB  (imports pulumi, "
              f"pulumi_azure_native.containerservice, pulumi_kubernetes)")
        seconds = {}
        for name, command in cases.items():
            if name == "large":
                continue
            seconds[name], paired, peak = measure_against(FLOOR, command, args.runs)
            ratio = seconds[name] / paired
            note = verdict(name, ratio, peak) if name in TARGETS else "context"
            print(f"preview {name:<5}                 {seconds[name]:6.2f} s  {peak:4.0f} MB  "
                  f"{ratio:5.2f}x the import floor (alongside: {paired:.2f} s); {note}")
        seconds["large"], paired, peak = measure_against(sdk, cases["large"], args.runs)
        ratio = seconds["large"] / paired
        print(f"SDK floor: {resources} bare resources under the mocks, alongside the large preview: {paired:.2f} s")
        print(f"preview large                 {seconds['large']:6.2f} s  {peak:4.0f} MB  {ratio:5.2f}x the SDK floor; "
              f"{verdict('large', ratio, peak)}")
        # Growth: the objects double from half to large; linear growth keeps the
        # above-floor time ratio near 2 (the dev stack stands in for the fixed cost).
        fixed = seconds["dev"]
        growth = (seconds["large"] - fixed) / max(seconds["half"] - fixed, 1e-9)
        print(f"growth half -> large (objects x2): {growth:.2f}x above the dev stack's time (linear: about 2)")


if __name__ == "__main__":
    main()
