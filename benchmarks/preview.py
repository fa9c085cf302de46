"""Time the offline preview as whole processes, against two floors measured alongside.

    python benchmarks/preview.py [--runs N] [--baseline DIR]

Every preview includes the policy pack's verdicts (`aks_kueue.policies`), as `aks-kueue
preview` always runs them. The targets (issue 12):

- dev: the dev stack, policies included, at most 3x the import floor, a process that only
  imports the Pulumi SDK and the two providers the program uses;
- large: the generated organisation (`large_stack`) at most 1.5x the SDK floor, a process
  that registers the same number of bare custom resources under the same mocks.

prod and half are shown for context (prod as the PR workflow runs it, with its policy
config).

- fleet: a MultiKueue manager with 10 workers (`fleet_stacks`), previewed with the workers'
  outputs (`--stack-outputs`), at most 2x the preview of one cluster of the same total size:
  every worker's pools, flavors and ClusterQueues in one stack, a LocalQueue for each, and each
  expected workload once per worker, so the admission core decides as often (issue 20). Each figure is the median wall time of N fresh processes; each ratio is to its
floor timed in alternation with it, so both see the same load. Peak memory is the largest
resident set of any one preview.

The children cache their bytecode in a temporary directory (`PYTHONPYCACHEPREFIX`, after a
warm-up run), as an installed program does, whatever PYTHONDONTWRITEBYTECODE says here, and
nothing is written into the checkouts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout (benchmarks/common.py)

from benchmarks.common import GPU_TOLERATION, ROOT, queue_spec, quota  # noqa: E402

FLOOR = [sys.executable, "-c", "import pulumi, pulumi_azure_native.containerservice, pulumi_kubernetes"]
# Case -> (the floor it is measured against, the most it may cost as a multiple of it).
TARGETS = {"dev": ("import", 3.0), "large": ("SDK", 1.5), "fleet": ("single-cluster", 2.0)}
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


# The children's environment; main caches their bytecode in a temporary directory, as a program
# installed by pip has it.
ENV: dict[str, str] = dict(os.environ)


def count_resources(command: list[str]) -> int:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=ENV)
    if done.returncode not in (0, 1):  # 1: a verdict, the document is still complete
        raise SystemExit(f"{' '.join(command)} failed: {done.stderr}")
    return len(json.loads(done.stdout)["resources"])


def run_once(command: list[str], root: Path | None = None) -> tuple[float, float]:
    """Seconds and peak RSS in MB of one fresh process, in `root` (another checkout) or this one.

    Exit 1 is a verdict (a mandatory policy violation), not a failed run; the generated
    stacks may well draw one.
    """
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=root or ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        where = f" in {root}" if root else ""
        raise SystemExit(f"{' '.join(command)}{where} failed: {child.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024


def measure_against(floor: list[str], command: list[str], runs: int) -> tuple[float, float, float]:
    """Median seconds of `command` and of `floor`, runs alternating, and the peak RSS of `command`.

    Alternating keeps both under the same load, so the ratio holds on a shared machine
    whose speed drifts between one case and the next.
    """
    floors, samples = alternating(runs, lambda: run_once(floor), lambda: run_once(command))
    seconds = statistics.median(t for t, _ in samples)
    return seconds, statistics.median(t for t, _ in floors), max(mb for _, mb in samples)


def alternating(runs: int, first, second, flip: bool = False) -> tuple[list, list]:
    """What `first` and `second` return, called in turn `runs` times each (with `flip`, the order
    swapped every other round)."""
    firsts, seconds = [], []
    for round_ in range(runs):
        pair = [(first, firsts), (second, seconds)]
        for work, out in (pair[::-1] if flip and round_ % 2 else pair):
            out.append(work())
    return firsts, seconds


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
    queues = [{"name": f"cq{q}", "spec": queue_spec(
        f"cohort{q % cohorts}", [quota(name, "1", "4Gi", "0") for name in (cpu_flavors[q % len(cpu_flavors)],
                                                                           gpu_flavors[q % len(gpu_flavors)])],
        {"matchLabels": {"team": f"cq{q}"}})} for q in range(cluster_queues)]
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


def _team_queue(name: str, flavors: list[tuple[str, str, str, str]], cohort: str, team: str) -> dict:
    return {"name": name, "spec": queue_spec(cohort, [quota(*each) for each in flavors],
                                             {"matchLabels": {"kueue-team": team}})}


def fleet_stacks(workers: int = 10, teams: int = 20) -> tuple[dict, dict[str, dict], dict]:
    """A manager of `teams` teams (a ClusterQueue, a LocalQueue and an expected workload each) and
    `workers` workers of a CPU and a GPU pool, each with a ClusterQueue per team; and the single
    cluster of the same total size (`workers` x the pools, flavors and ClusterQueues, a LocalQueue
    for each, each workload once per worker)."""
    base = yaml.safe_load((ROOT / "stacks" / "Pulumi.fleet-manager.yaml").read_text())["config"]
    worker_base = yaml.safe_load((ROOT / "stacks" / "Pulumi.fleet-westus3.yaml").read_text())["config"]
    names = [f"w{i}" for i in range(workers)]
    manager = dict(base)
    manager["aks-kueue:fleet"] = {"role": "manager", "egressIpRanges": ["203.0.113.10/32"],
                                  "workers": [{"name": n, "stack": f"acme/aks-kueue/bench-{n}"} for n in names]}
    manager["aks-kueue:queues"] = {
        "resourceFlavors": [{"name": "fleet"}],
        "clusterQueues": [_team_queue(f"team-{t}", [("fleet", "48", "240Gi", str(workers))], f"c{t}", f"team-{t}")
                          for t in range(teams)],
        "localQueues": [{"name": "default", "namespace": f"team-{t}", "spec": {"clusterQueue": f"team-{t}"}}
                        for t in range(teams)]}
    shape = {"count": 1, "requests": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"},
             "tolerations": [GPU_TOLERATION]}
    manager["aks-kueue:expectedWorkloads"] = [{"name": f"job-{t}", "queue": f"team-{t}/default",
                                               "podSets": [{"name": "main", **shape}]} for t in range(teams)]
    # Small enough that the single cluster's pools stay within one pod CIDR's nodes (/16: 256).
    pools = [{"name": "cpu", "vmSize": "Standard_D16s_v5", "minCount": 0, "maxCount": 5, "maxPods": 110},
             {"name": "gpu", "vmSize": "Standard_NC24ads_A100_v4", "minCount": 0, "maxCount": teams, "maxPods": 110,
              "taints": ["sku=gpu:NoSchedule"], "gpuDriver": "Install"}]
    flavors = [("cpu", "2", "8Gi", "0"), ("gpu", "4", "16Gi", "1")]
    worker_configs = {}
    for name in names:
        config = dict(worker_base)
        config["aks-kueue:fleet"] = {"role": "worker", "manager": "acme/aks-kueue/bench-manager"}
        config["aks-kueue:nodePools"] = pools
        config["aks-kueue:queues"] = {
            "resourceFlavors": [{"name": "cpu", "nodePool": "cpu"}, {"name": "gpu", "nodePool": "gpu"}],
            "cohorts": [{"name": "teams", "spec": {}}],
            "clusterQueues": [_team_queue(f"team-{t}", flavors, "teams", f"team-{t}") for t in range(teams)]}
        worker_configs[name] = config
    single = dict(base)
    single.pop("aks-kueue:fleet")
    single["aks-kueue:nodePools"] = [{**p, "name": f"{p['name']}{n[1:]}"} for n in names for p in pools]
    single["aks-kueue:queues"] = {
        "resourceFlavors": [{"name": f"{p['name']}{n[1:]}", "nodePool": f"{p['name']}{n[1:]}"} for n in names
                            for p in pools],
        "cohorts": [{"name": f"teams-{n}", "spec": {}} for n in names],
        "clusterQueues": [_team_queue(f"team-{t}-{n}", [(f"{f}{n[1:]}", *q) for f, *q in flavors], f"teams-{n}",
                                      f"team-{t}") for n in names for t in range(teams)],
        "localQueues": [{"name": n, "namespace": f"team-{t}", "spec": {"clusterQueue": f"team-{t}-{n}"}}
                        for n in names for t in range(teams)]}
    single["aks-kueue:expectedWorkloads"] = [{"name": f"job-{t}-{n}", "queue": f"team-{t}/{n}",
                                              "podSets": [{"name": "main", **shape}]} for n in names
                                             for t in range(teams)]
    return manager, worker_configs, single


def write_fleet(tmp: Path) -> tuple[list[str], list[str]]:
    """The fleet's stack files and each worker's outputs as its stack exports them (computed from its
    model, as its program does): the manager's preview flags, and the single cluster's."""
    from aks_kueue.model import fleet_outputs
    from aks_kueue.model.fleet_outputs import FleetInputs, StackOutputs
    from aks_kueue.model.from_settings import from_settings
    from aks_kueue.settings import parse_settings

    def model(config: dict, stack: str, others: dict):
        flat = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
        return from_settings(parse_settings(flat), ROOT, stack, FleetInputs(f"acme/aks-kueue/{stack}", others))

    manager, workers, single = fleet_stacks()
    (tmp / "Pulumi.bench-manager.yaml").write_text(yaml.safe_dump({"config": manager}))
    (tmp / "Pulumi.bench-single.yaml").write_text(yaml.safe_dump({"config": single}))
    teams = fleet_outputs.manager_outputs(model(manager, "bench-manager", {}))
    flags = []
    for name, config in workers.items():
        outputs = fleet_outputs.worker_outputs(model(config, f"bench-{name}", {
            "acme/aks-kueue/bench-manager": StackOutputs({"fleet": teams})}))
        path = tmp / f"bench-{name}.json"
        path.write_text(json.dumps({"fleet": outputs, "multikueueKubeconfig": "[secret]"}))
        flags.append(f"--stack-outputs=acme/aks-kueue/bench-{name}={path}")
    return (["--config", str(tmp / "Pulumi.bench-manager.yaml"), *flags],
            ["--config", str(tmp / "Pulumi.bench-single.yaml")])


def compare(baseline: Path, cases: dict[str, list[str]], runs: int) -> None:
    """Each case here and in another checkout (the code before a change), runs alternating and
    the order flipped every round, so both see the same load; the ratio of medians per case."""
    for name, command in cases.items():
        for root in (ROOT, baseline):  # warm-up: each checkout's bytecode cached
            run_once(command, root)
        # The generated stacks sit in the temporary directory; the named ones in each checkout.
        here, there = alternating(runs, lambda: run_once(command, ROOT)[0], lambda: run_once(command, baseline)[0],
                                  flip=True)
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
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        ENV["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        large = Path(tmp) / "Pulumi.large.yaml"
        large.write_text(yaml.safe_dump(large_stack()))
        half = Path(tmp) / "Pulumi.half.yaml"
        half.write_text(yaml.safe_dump(large_stack(pools=10, cohorts=10, cluster_queues=100, local_queues=500)))
        prod_config = ROOT / "policy" / "config" / "prod.json"  # as the PR workflow runs prod
        prod = preview + ["--stack", "prod"] + (["--policy-config", str(prod_config)] if prod_config.exists() else [])
        fleet, single = write_fleet(Path(tmp))
        cases = {"dev": preview + ["--stack", "dev"], "prod": prod,
                 "half": preview + ["--config", str(half)],
                 "large": preview + ["--config", str(large)],
                 "fleet": preview + fleet, "single": preview + single}
        if args.baseline is not None:
            compare(args.baseline.resolve(), cases, args.runs)
            return
        resources = count_resources(cases["large"])  # also the warm-up of the bytecode cache
        sdk = [sys.executable, "-c", SDK_REGISTRATION, str(resources)]
        for command in (FLOOR, sdk, *cases.values()):
            run_once(command)
        samples = [run_once(FLOOR) for _ in range(args.runs)]
        floor_s, floor_mb = statistics.median(t for t, _ in samples), max(mb for _, mb in samples)
        print(f"import floor                  {floor_s:6.2f} s  {floor_mb:4.0f} MB  (imports pulumi, "
              f"pulumi_azure_native.containerservice, pulumi_kubernetes)")
        seconds = {}
        for name, command in cases.items():
            if name in ("large", "fleet", "single"):
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
        fleet_s, single_s, peak = measure_against(cases["single"], cases["fleet"], args.runs)
        ratio = fleet_s / single_s
        print(f"single cluster of the fleet's total size: {count_resources(cases['single'])} resources, "
              f"alongside the fleet: {single_s:.2f} s")
        print(f"preview fleet (manager of 10) {fleet_s:6.2f} s  {peak:4.0f} MB  {ratio:5.2f}x the single cluster; "
              f"{verdict('fleet', ratio, peak)}")
        # Growth: the objects double from half to large; linear growth keeps the
        # above-floor time ratio near 2 (the dev stack stands in for the fixed cost).
        fixed = seconds["dev"]
        growth = (seconds["large"] - fixed) / max(seconds["half"] - fixed, 1e-9)
        print(f"growth half -> large (objects x2): {growth:.2f}x above the dev stack's time (linear: about 2)")


if __name__ == "__main__":
    main()
