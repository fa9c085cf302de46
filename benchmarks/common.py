"""What the benchmarks share: timing, peak memory, a case in a process of its own, Kueue objects.

A benchmark run as a script puts this checkout's root first on its path before it imports this
module (Python puts benchmarks/ there), so that it measures this checkout, not an installed package.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
V1B2 = "kueue.x-k8s.io/v1beta2"
GPU_TAINT = {"key": "sku", "value": "gpu", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}

def timed(runs: int, work: Callable[[], Any]) -> tuple[list[float], Any]:
    """The wall seconds of each of `runs` calls of `work`, and what the last call returned."""
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return times, result


def peak_mb() -> float:
    """This process's largest resident set so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def in_child(script: str, case: str, *args: str) -> dict:
    """`script --case CASE ARGS` in a process of its own (so that its peak memory is its own): the JSON
    document it prints last."""
    done = subprocess.run([sys.executable, script, "--case", case, *args], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"{case} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# The generated organisations' Kueue objects ----------------------------------------------------

RESOURCES = ("cpu", "memory", "nvidia.com/gpu")


def kueue(kind: str, name: str, namespace: str | None = None, **fields) -> dict:
    metadata = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {"apiVersion": V1B2, "kind": kind, "metadata": metadata, **fields}


def flavor(name: str, labels: dict, gpu: bool) -> dict:
    """A ResourceFlavor on the nodes with `labels`, tainted as the GPU pools are."""
    taints = {"nodeTaints": [dict(GPU_TAINT)]} if gpu else {}
    return kueue("ResourceFlavor", name, spec={"nodeLabels": labels, **taints})


def quota(flavor: str, cpu: str, memory: str, gpu: str) -> dict:
    """A flavor's nominal quota of cpu, memory and nvidia.com/gpu."""
    return {"name": flavor, "resources": [{"name": r, "nominalQuota": amount}
                                          for r, amount in zip(RESOURCES, (cpu, memory, gpu))]}


def queue_spec(cohort: str, quotas: list[dict], namespaces: dict | None = None, **fields) -> dict:
    """A ClusterQueue's spec: one resource group of cpu, memory and nvidia.com/gpu over the flavors' `quotas`."""
    return {"cohortName": cohort, "namespaceSelector": namespaces or {},
            "resourceGroups": [{"coveredResources": list(RESOURCES), "flavors": quotas}], **fields}
