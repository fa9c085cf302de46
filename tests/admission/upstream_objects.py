"""Kueue objects from the short forms the upstream fair-sharing fixtures use (see
fixtures/upstream/README.md): a ClusterQueue or Cohort as quota per flavor, preemption, weight; a
workload as its name, queue and requests."""

from __future__ import annotations

from typing import Any, Optional

from aks_kueue.admission.workloads import Admission
from aks_kueue.kueue.units import amount

V1BETA2 = "kueue.x-k8s.io/v1beta2"


def resource_groups(quota: dict[str, Any], resource: str = "cpu") -> list[dict]:
    """`{flavor: nominal}` or `{flavor: {nominal, borrowingLimit, lendingLimit}}`, or for several
    resources `{flavor: {resource: nominal | {...}}}`, as one resource group per covered set."""
    flavors, covered = [], []
    for flavor, value in quota.items():
        per_resource = value if isinstance(value, dict) and not {"nominal", "borrowingLimit", "lendingLimit"} & set(value) \
            else {resource: value}
        resources = []
        for name, limits in per_resource.items():
            limits = limits if isinstance(limits, dict) else {"nominal": limits}
            entry = {"name": name, "nominalQuota": str(limits["nominal"])}
            for key in ("borrowingLimit", "lendingLimit"):
                if limits.get(key) is not None:
                    entry[key] = str(limits[key])
            resources.append(entry)
            if name not in covered:
                covered.append(name)
        flavors.append({"name": flavor, "resources": resources})
    return [{"coveredResources": covered, "flavors": flavors}] if flavors else []


def cluster_queue(name: str, short: dict[str, Any]) -> dict:
    spec: dict[str, Any] = {"namespaceSelector": {}}
    if short.get("cohort"):
        spec["cohortName"] = short["cohort"]
    if "resourceGroups" in short:
        spec["resourceGroups"] = short["resourceGroups"]
    else:
        spec["resourceGroups"] = resource_groups(short.get("quota") or {})
    preemption = {}
    if short.get("within"):
        preemption["withinClusterQueue"] = short["within"]
    if short.get("reclaim"):
        preemption["reclaimWithinCohort"] = short["reclaim"]
    if short.get("borrowWithinCohort"):
        preemption["borrowWithinCohort"] = short["borrowWithinCohort"]
    if preemption:
        spec["preemption"] = preemption
    if short.get("weight") is not None:
        spec["fairSharing"] = {"weight": str(short["weight"])}
    for key in ("flavorFungibility", "queueingStrategy", "admissionScope", "stopPolicy"):
        if short.get(key):
            spec[key] = short[key]
    return {"apiVersion": V1BETA2, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def cohort(name: str, short: dict[str, Any]) -> dict:
    spec: dict[str, Any] = {}
    if short.get("parent"):
        spec["parentName"] = short["parent"]
    if short.get("quota"):
        spec["resourceGroups"] = resource_groups(short["quota"])
    if short.get("resourceGroups"):
        spec["resourceGroups"] = short["resourceGroups"]
    if short.get("weight") is not None:
        spec["fairSharing"] = {"weight": str(short["weight"])}
    return {"apiVersion": V1BETA2, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def flavors(names: list[str]) -> list[dict]:
    return [{"apiVersion": V1BETA2, "kind": "ResourceFlavor", "metadata": {"name": n}, "spec": {}} for n in names]


def workload(name: str, namespace: str = "", queue: str = "", requests: Optional[dict[str, str]] = None,
             priority: int = 0, count: int = 1) -> dict:
    return {"apiVersion": V1BETA2, "kind": "Workload",
            "metadata": {"name": name, "namespace": namespace, "uid": name},
            "spec": {"queueName": queue, "priority": priority, "podSets": [{
                "name": "main", "count": count, "template": {"spec": {"containers": [
                    {"name": "c", "resources": {"requests": dict(requests or {"cpu": "1"})}}]}}}]}}


def admission(cluster_queue_name: str, flavor: str, requests: dict[str, str], count: int = 1) -> Admission:
    usage = {(flavor, r): amount(r, q) * count for r, q in requests.items()}
    return Admission(cluster_queue_name, usage, [{r: flavor for r in requests}])
