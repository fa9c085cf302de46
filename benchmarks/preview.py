"""Time the offline preview as whole processes, against the SDK import floor.

    python benchmarks/preview.py [--runs N]

The floor is a process that only imports the Pulumi SDK and the two providers the
program uses. Each figure is the median wall time of N fresh processes; peak memory
is the largest resident set of any one of them. Ratios are measured in the same run.
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
TARGETS = {"dev": 3.0, "large": 10.0}
MEMORY_LIMIT_MB = 500


def measure(command: list[str], runs: int) -> tuple[float, float]:
    """Median seconds and peak RSS in MB over `runs` fresh processes."""
    times, peaks = [], []
    for _ in range(runs):
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        times.append(time.perf_counter() - start)
        peaks.append(usage.ru_maxrss / 1024)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(command)} failed: {child.stderr.read().decode()}")
    return statistics.median(times), max(peaks)


def large_stack(pools: int = 20) -> dict:
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    sizes = ["Standard_D8s_v5", "Standard_D16s_v5", "Standard_E8s_v5", "Standard_NC24ads_A100_v4"]
    config["aks-kueue:nodePools"] = [
        {"name": f"pool{i}", "vmSize": sizes[i % len(sizes)], "minCount": 0, "maxCount": 10, "maxPods": 110,
         **({"taints": ["sku=gpu:NoSchedule"], "gpuDriver": "Install"} if i % len(sizes) == 3 else {})}
        for i in range(pools)
    ]
    return {"config": config}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    preview = [sys.executable, "-m", "aks_kueue.cli", "preview", "--json"]
    with tempfile.TemporaryDirectory() as tmp:
        large = Path(tmp) / "Pulumi.large.yaml"
        large.write_text(yaml.safe_dump(large_stack()))
        cases = {"dev": preview + ["--stack", "dev"], "large": preview + ["--config", str(large)]}
        floor_s, floor_mb = measure(FLOOR, args.runs)
        print(f"import floor          {floor_s:6.2f} s  {floor_mb:6.0f} MB")
        for name, command in cases.items():
            seconds, peak = measure(command, args.runs)
            ratio = seconds / floor_s
            verdict = "ok" if ratio <= TARGETS[name] and peak < MEMORY_LIMIT_MB else "OVER TARGET"
            print(f"preview {name:<13} {seconds:6.2f} s  {peak:6.0f} MB  {ratio:5.2f}x floor "
                  f"(target {TARGETS[name]:g}x, <{MEMORY_LIMIT_MB} MB)  {verdict}")


if __name__ == "__main__":
    main()
