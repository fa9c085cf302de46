"""A deterministic corpus of Kueue objects, valid and damaged, for the golden-output test.

The bases are valid objects of every Kueue kind (the admission scenarios' objects, Job-shaped
Workloads from the benchmark, hand-written ones of the other kinds, and v1beta1 spellings).
Each mutant is a base with one to three damages at random places: a value replaced by
something of another type or out of range, a key removed, an unknown or misspelt key added,
a list item repeated. Seeded, so every machine builds the same corpus.
"""

from __future__ import annotations

import copy
import random
from typing import Any

API = "kueue.x-k8s.io/v1beta2"
V1BETA1 = "kueue.x-k8s.io/v1beta1"
JUNK: tuple[Any, ...] = (None, True, False, -1, 0, 1, 2**31 - 1, 2**31, -(2**31) - 1, 2**53, 2**63, 1.5, 2.0,
                         "", "x", "1.5Gi", "-1", "500m", "Never", "a" * 300, "Bad_Name", [], {}, ["x"], {"a": 1},
                         [None], [{}], "2025-01-01T00:00:00Z", "kueue.x-k8s.io/x")


def other_kinds() -> list[dict]:
    return [
        {"apiVersion": API, "kind": "AdmissionCheck", "metadata": {"name": "prov"},
         "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                  "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "cfg"}}},
        {"apiVersion": API, "kind": "ProvisioningRequestConfig", "metadata": {"name": "cfg"},
         "spec": {"provisioningClassName": "check-capacity.autoscaling.x-k8s.io", "managedResources": ["nvidia.com/gpu"],
                  "retryStrategy": {"backoffLimitCount": 2, "backoffBaseSeconds": 60, "backoffMaxSeconds": 1800}}},
        {"apiVersion": API, "kind": "Topology", "metadata": {"name": "default"},
         "spec": {"levels": [{"nodeLabel": "topology.kubernetes.io/zone"}, {"nodeLabel": "kubernetes.io/hostname"}]}},
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "tas"},
         "spec": {"nodeLabels": {"pool": "gpu"}, "topologyName": "default",
                  "nodeTaints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]}},
        {"apiVersion": API, "kind": "MultiKueueConfig", "metadata": {"name": "mk"}, "spec": {"clusters": ["west"]}},
        {"apiVersion": API, "kind": "MultiKueueCluster", "metadata": {"name": "west"},
         "spec": {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": "west"}}}},
        {"apiVersion": API, "kind": "WorkloadPriorityClass", "metadata": {"name": "high"}, "value": 1000,
         "description": "urgent"},
        {"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": "team"},
         "spec": {"clusterQueue": "cq", "stopPolicy": "None",
                  "fairSharing": {"weight": "1"}}},
        {"apiVersion": API, "kind": "Cohort", "metadata": {"name": "org"},
         "spec": {"parentName": "root", "fairSharing": {"weight": "2"}, "resourceGroups": [
             {"coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
                 {"name": "cpu", "nominalQuota": "4", "lendingLimit": "2"}]}]}]}},
        {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": "full"},
         "spec": {"cohortName": "org", "namespaceSelector": {"matchLabels": {"team": "a"}},
                  "queueingStrategy": "StrictFIFO", "stopPolicy": "None",
                  "admissionChecksStrategy": {"admissionChecks": [{"name": "prov", "onFlavors": ["default"]}]},
                  "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor",
                                        "preference": "PreemptionOverBorrowing"},
                  "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any",
                                 "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100}},
                  "fairSharing": {"weight": "1"},
                  "resourceGroups": [{"coveredResources": ["cpu", "memory", "pods"], "flavors": [
                      {"name": "default", "resources": [
                          {"name": "cpu", "nominalQuota": "8", "borrowingLimit": "4", "lendingLimit": "2"},
                          {"name": "memory", "nominalQuota": "32Gi"}, {"name": "pods", "nominalQuota": "50"}]}]}]}},
        {"apiVersion": V1BETA1, "kind": "ClusterQueue", "metadata": {"name": "legacy"},
         "spec": {"cohort": "org", "namespaceSelector": {}, "admissionChecks": ["prov"],
                  "flavorFungibility": {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"},
                  "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                      {"name": "default", "resources": [{"name": "cpu", "nominalQuota": "8"}]}]}]}},
        {"apiVersion": V1BETA1, "kind": "Workload", "metadata": {"name": "legacy", "namespace": "team"},
         "spec": {"queueName": "lq", "priorityClassSource": "kueue.x-k8s.io/workloadpriorityclass",
                  "priorityClassName": "high", "priority": 1000,
                  "podSets": [{"name": "main", "count": 2, "minCount": 1, "template": {"spec": {"containers": [
                      {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}}}]}},
        {"apiVersion": V1BETA1, "kind": "AdmissionCheck", "metadata": {"name": "legacy"},
         "spec": {"controllerName": "x.io/c", "retryDelayMinutes": 15}},
    ]


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    """Every path into the object, to a key of a map or an item of a list."""
    found = [path] if path else []
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*path, index))
    return found


def _at(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


def damage(rng: random.Random, obj: dict) -> None:
    """One damage at a random place of `obj`, in place."""
    paths = [p for p in _paths(obj) if p[0] not in ("apiVersion", "kind")]
    if not paths:
        return
    path = rng.choice(paths)
    parent, last = _at(obj, path[:-1]), path[-1]
    action = rng.random()
    if action < 0.55:
        parent[last] = copy.deepcopy(rng.choice(JUNK))
    elif action < 0.7 and isinstance(parent, dict):
        del parent[last]
    elif action < 0.85 and isinstance(parent, dict):
        key = str(last)
        typo = rng.choice((key[:-1], key + "s", key.lower(), key[:1] + key[2:], "unknownField"))
        if typo and typo not in parent:
            parent[typo] = copy.deepcopy(parent[last])
    elif isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    elif isinstance(parent[last], (int, float)) and not isinstance(parent[last], bool):
        parent[last] = parent[last] * 2**rng.choice((16, 31, 40))


def corpus(bases: list[dict], count: int, seed: int) -> list[dict]:
    """The bases, then `count` damaged copies of them."""
    rng = random.Random(seed)
    objects = [copy.deepcopy(b) for b in bases]
    for _ in range(count):
        obj = copy.deepcopy(rng.choice(bases))
        for _ in range(rng.choice((1, 1, 2, 3))):
            damage(rng, obj)
        objects.append(obj)
    return objects
