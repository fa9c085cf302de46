"""Small configurations and traces for replay tests whose answers are worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from aks_kueue.aks.nodes import NodeResources, PoolCapacity, node_labels
from aks_kueue.aks.pools import ExplicitNode, Pool
from aks_kueue.kueue.validate import load_object, validate_object
from aks_kueue.replay import ReplayConfig, ReplayOptions, read_trace, replay

V1B2 = "kueue.x-k8s.io/v1beta2"
GIB = 2**30


def flavor(name: str, labels: Optional[dict] = None, taints: Optional[list] = None,
           tolerations: Optional[list] = None) -> dict:
    spec: dict[str, Any] = {}
    if labels:
        spec["nodeLabels"] = labels
    if taints:
        spec["nodeTaints"] = taints
    if tolerations:
        spec["tolerations"] = tolerations
    return {"apiVersion": V1B2, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def quota(resource: str, nominal: Any, borrowing: Any = None, lending: Any = None) -> dict:
    found = {"name": resource, "nominalQuota": str(nominal)}
    if borrowing is not None:
        found["borrowingLimit"] = str(borrowing)
    if lending is not None:
        found["lendingLimit"] = str(lending)
    return found


def cluster_queue(name: str, flavors: dict[str, list[dict]], cohort: Optional[str] = None,
                  preemption: Optional[dict] = None, strategy: Optional[str] = None,
                  checks: Optional[list[str]] = None) -> dict:
    covered = sorted({q["name"] for quotas in flavors.values() for q in quotas})
    spec: dict[str, Any] = {"namespaceSelector": {}, "resourceGroups": [
        {"coveredResources": covered, "flavors": [{"name": f, "resources": sorted(q, key=lambda r: covered.index(
            r["name"]))} for f, q in flavors.items()]}]}
    if cohort:
        spec["cohortName"] = cohort
    if preemption:
        spec["preemption"] = preemption
    if strategy:
        spec["queueingStrategy"] = strategy
    if checks:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": c} for c in checks]}
    return {"apiVersion": V1B2, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def local_queue(namespace: str, cq: str, name: str = "default") -> dict:
    return {"apiVersion": V1B2, "kind": "LocalQueue", "metadata": {"name": name, "namespace": namespace},
            "spec": {"clusterQueue": cq}}


def priority_class(name: str, value: int) -> dict:
    return {"apiVersion": V1B2, "kind": "WorkloadPriorityClass", "metadata": {"name": name}, "value": value}


def provisioning_check(name: str = "prov", provisioning_class: str = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
                       ) -> list[dict]:
    return [{"apiVersion": V1B2, "kind": "AdmissionCheck", "metadata": {"name": name},
             "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                      "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig",
                                     "name": f"{name}-config"}}},
            {"apiVersion": V1B2, "kind": "ProvisioningRequestConfig", "metadata": {"name": f"{name}-config"},
             "spec": {"provisioningClassName": provisioning_class}}]


def validated(manifests: list[dict]) -> list[dict]:
    """As Kueue would store them (the CLI validates and defaults the same way)."""
    found = []
    for manifest in manifests:
        if manifest.get("apiVersion") == "v1":
            found.append(manifest)  # a Namespace, as the CLI keeps it
            continue
        obj = load_object(manifest)
        errors = validate_object(obj)
        assert not errors, (manifest["metadata"]["name"], errors)
        found.append(obj.defaulted)
    return found


def pool(name: str, cpu: int = 4, memory_gib: int = 16, gpus: int = 0, min_count: int = 0, max_count: int = 2,
         labels: Optional[dict] = None, taints: tuple = (), pods: int = 30, spot: bool = False) -> PoolCapacity:
    """A pool whose node offers exactly these amounts (round numbers, for hand-worked answers). A spot
    pool's nodes carry no spot taint here unless `taints` gives it (pods land as on any pool)."""
    spec = Pool(name=name, vm_size=f"Custom_{name}", max_count=max_count, max_pods=pods, min_count=min_count,
                labels=labels or {}, taints=tuple(taints), spot=spot,
                explicit=ExplicitNode(cpu, memory_gib * GIB, gpus, "nvidia.com/gpu" if gpus else None))
    amounts = {"cpu": cpu * 1000, "memory": memory_gib * GIB, "pods": pods}
    if gpus:
        amounts["nvidia.com/gpu"] = gpus
    return PoolCapacity(spec, NodeResources(amounts, ()), node_labels(spec, "eastus"))


def workload(name: str, submitted: Any, cpu: Any = 1, runtime: Any = 100, count: int = 1, namespace: str = "team-a",
             queue: str = "default", priority: Optional[int] = None, **extra: Any) -> dict:
    requests = {"cpu": str(cpu), **extra.pop("requests", {})}
    pod_set: dict[str, Any] = {"name": "main", "count": count, "requests": requests}
    for key in ("minCount", "tolerations", "nodeSelector"):
        if key in extra:
            pod_set[key] = extra.pop(key)
    row = {"submitted": submitted, "namespace": namespace, "queue": queue, "name": name, "podSets": [pod_set]}
    if runtime is not None:
        row["runtime"] = runtime
    if priority is not None:
        row["priority"] = priority
    row.update(extra)
    return row


def write_trace(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def run(tmp_path: Path, objects: list[dict], rows: list[dict], pools: Optional[list[PoolCapacity]] = None,
        kueue: Optional[dict] = None, options: Optional[ReplayOptions] = None, **config: Any):
    """Replay `rows` (JSON Lines) against `objects`; the outcome and its runs by workload name."""
    trace = read_trace([str(write_trace(tmp_path / "trace.jsonl", rows))])
    configuration = ReplayConfig("test", validated(objects), kueue=kueue, pools=pools, **config)
    outcome = replay(configuration, trace, options)
    return outcome, {r.trace.name: r for r in outcome.runs}


def one_queue(cpu: Any = 4, **queue: Any) -> list[dict]:
    """One flavor, one ClusterQueue `team-a` with `cpu` cores, LocalQueue team-a/default."""
    return [flavor("default"), cluster_queue("team-a", {"default": [quota("cpu", cpu)]}, **queue),
            local_queue("team-a", "team-a")]
