"""Time the bounded loader against PyYAML on a backlog of Workloads, in one process.

The loader (aks_kueue/k8s/loader.py) checks depth, alias expansion and duplicated keys
while it builds values from libyaml's events; the floor is PyYAML's own C loader
(`yaml.CSafeLoader`), which checks none of that, and PyYAML's pure-Python `SafeLoader`
is shown for scale. It prints the best of `--runs` per reader at 1/10 and full size,
the ratio to the floor, the growth from 1/10 to full size (linear is about 10x), and the
loader's peak memory (tracemalloc) at full size.

    venv/bin/python benchmarks/loader.py [--workloads 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import sys
import tracemalloc
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout (benchmarks/common.py)

from aks_kueue.k8s.loader import parse_documents  # noqa: E402
from benchmarks.common import GPU_TOLERATION, V1B2, timed  # noqa: E402


def backlog(n: int) -> str:
    """`n` pending Workloads of 20 namespaces, with tolerations, a node selector and limits."""
    documents = [{"apiVersion": V1B2, "kind": "Workload",
                  "metadata": {"name": f"wl-{i}", "namespace": f"team-{i % 20}", "labels": {"app": "train"}},
                  "spec": {"queueName": "q", "podSets": [{"name": "main", "count": 1 + i % 8, "template": {"spec": {
                      "tolerations": [dict(GPU_TOLERATION)],
                      "nodeSelector": {"agentpool": "gpu"},
                      "containers": [{"name": "c", "image": "busybox", "resources": {
                          "requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"nvidia.com/gpu": "1"}}}]}}}]}}
                 for i in range(n)]
    return yaml.safe_dump_all(documents)


def best(read, text: str, runs: int) -> float:
    return min(timed(runs, lambda: read(text))[0])


READERS = {
    "aks-kueue loader": lambda text: parse_documents(text, "backlog.yaml"),
    "PyYAML CSafeLoader (floor)": lambda text: list(yaml.load_all(text, Loader=yaml.CSafeLoader)),
    "PyYAML SafeLoader": lambda text: list(yaml.load_all(text, Loader=yaml.SafeLoader)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    small, full = backlog(args.workloads // 10), backlog(args.workloads)
    print(f"{args.workloads:,} Workloads, {len(full) / 1e6:.1f} MB of YAML; best of {args.runs}")
    timings = {name: (best(read, small, args.runs), best(read, full, args.runs)) for name, read in READERS.items()}
    floor = timings["PyYAML CSafeLoader (floor)"][1]
    print(f"{'reader':28} {'1/10 s':>8} {'full s':>8} {'objects/s':>10} {'x floor':>8} {'growth':>7}")
    for name, (tenth, whole) in timings.items():
        print(f"{name:28} {tenth:8.3f} {whole:8.3f} {args.workloads / whole:10,.0f} {whole / floor:8.2f} "
              f"{whole / tenth:7.1f}")
    tracemalloc.start()
    parse_documents(full, "backlog.yaml")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"loader peak memory at full size: {peak / 2**20:.0f} MiB (the text itself: {len(full) / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
