"""v1beta1 -> v1beta2, as Kueue's conversion webhook does it for the objects we write.

Sources: `apis/kueue/v1beta1/*_conversion.go` at v0.19.2. ClusterQueue, Workload,
AdmissionCheck and MultiKueueCluster specs changed shape; the other kinds only change
apiVersion.
"""

from __future__ import annotations

import copy
from typing import Any

GROUP = "kueue.x-k8s.io"
V1BETA1 = f"{GROUP}/v1beta1"
V1BETA2 = f"{GROUP}/v1beta2"
_FUNGIBILITY = {"whenCanBorrow": {"Borrow": "MayStopSearch"}, "whenCanPreempt": {"Preempt": "MayStopSearch"}}


def cluster_queue_spec_to_v1beta2(spec: Any) -> Any:
    """Rename the v1beta1 spellings users still write; a v1beta2 spec passes unchanged."""
    if not isinstance(spec, dict):
        return spec
    spec = copy.deepcopy(spec)
    if "cohort" in spec:
        cohort = spec.pop("cohort")
        spec.setdefault("cohortName", cohort)
    if "admissionChecks" in spec:
        # As Kueue's conversion does: a non-empty list replaces any strategy.
        names = spec.pop("admissionChecks")
        if isinstance(names, list) and names:
            spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": n} for n in names]}
    fungibility = spec.get("flavorFungibility")
    if isinstance(fungibility, dict):
        for field, renames in _FUNGIBILITY.items():
            if fungibility.get(field) in renames:
                fungibility[field] = renames[fungibility[field]]
    return spec


_PRIORITY_SOURCES = {
    "kueue.x-k8s.io/workloadpriorityclass": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass"},
    "scheduling.k8s.io/priorityclass": {"group": "scheduling.k8s.io", "kind": "PriorityClass"},
}


def workload_spec_to_v1beta2(spec: Any) -> Any:
    """`priorityClassSource` + `priorityClassName` became `priorityClassRef`."""
    if not isinstance(spec, dict):
        return spec
    spec = copy.deepcopy(spec)
    source = spec.pop("priorityClassSource", None)
    name = spec.pop("priorityClassName", None)
    if source in _PRIORITY_SOURCES and name:
        spec["priorityClassRef"] = {**_PRIORITY_SOURCES[source], "name": name}
    return spec


def multikueue_cluster_spec_to_v1beta2(spec: dict[str, Any]) -> dict[str, Any]:
    """`kubeConfig` and `clusterProfileRef` moved under `clusterSource`."""
    spec = copy.deepcopy(spec)
    source = {key: spec.pop(key) for key in ("kubeConfig", "clusterProfileRef") if key in spec}
    if source:
        spec["clusterSource"] = source
    return spec


def to_v1beta2(manifest: dict[str, Any]) -> dict[str, Any]:
    if manifest.get("apiVersion") != V1BETA1:
        return manifest
    converted = {**manifest, "apiVersion": V1BETA2}
    kind, spec = manifest.get("kind"), manifest.get("spec")
    if kind == "ClusterQueue":
        converted["spec"] = cluster_queue_spec_to_v1beta2(spec)
    elif kind == "Workload":
        converted["spec"] = workload_spec_to_v1beta2(spec)
    elif kind == "MultiKueueCluster" and isinstance(spec, dict):
        converted["spec"] = multikueue_cluster_spec_to_v1beta2(spec)
    elif kind == "AdmissionCheck" and isinstance(spec, dict):
        converted["spec"] = {k: v for k, v in spec.items() if k != "retryDelayMinutes"}  # removed in v1beta2
    return converted
