"""Deterministic random Kueue organisations and workloads, for the golden-output test.

`scenario(seed)` builds v1beta2 manifests from a seeded `random.Random`, so the same seed
gives the same objects on every machine and Python version. They reach more of the
admission core than the property tests' generator: two resource groups, several podsets
(some in a podSetGroup), partial admission, WorkloadPriorityClasses, taints, tolerations,
selectors and required affinity, namespace selectors with Namespace labels, stopped and
inactive queues, hierarchical cohorts with quota of their own, every preemption policy
(borrowWithinCohort with a threshold included), flavorFungibility with `preference`,
the `pods` resource, already admitted (and evicted) workloads, and creation timestamps.
"""

from __future__ import annotations

import random

API = "kueue.x-k8s.io/v1beta2"
RESOURCES = ("cpu", "memory")
GPU = "nvidia.com/gpu"


def _quantity(resource: str, n: int) -> str:
    return {"cpu": f"{n * 500}m", "memory": f"{n}Gi", GPU: str(n), "pods": str(n * 2)}[resource]


def _timestamp(rng: random.Random) -> str:
    return f"2025-01-0{rng.randrange(1, 10)}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:00Z"


def _flavors(rng: random.Random) -> tuple[list[dict], list[str]]:
    objects, names = [], []
    for i in range(rng.randrange(1, 5)):
        name = f"f{i}"
        spec: dict = {}
        if rng.random() < 0.7:
            spec["nodeLabels"] = {"pool": name, **({"zone": rng.choice("ab")} if rng.random() < 0.3 else {})}
        if rng.random() < 0.3:
            spec["nodeTaints"] = [{"key": "sku", "value": "gpu", "effect": rng.choice(("NoSchedule", "NoExecute",
                                                                                        "PreferNoSchedule"))}]
            if rng.random() < 0.3:
                spec["tolerations"] = [{"key": "sku", "operator": "Exists", "effect": "NoSchedule"}]
        objects.append({"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec})
        names.append(name)
    return objects, names


def _resource_groups(rng: random.Random, flavors: list[str], has_parent: bool, is_cohort: bool) -> list[dict]:
    groups = []
    split = rng.random() < 0.3 and len(flavors) > 1
    layouts = [(list(RESOURCES) + (["pods"] if rng.random() < 0.2 else []), flavors[: len(flavors) // 2 or 1])]
    if split:
        layouts.append(([GPU], flavors[len(flavors) // 2:]))
    else:
        layouts[0] = (layouts[0][0], flavors)
    for covered, group_flavors in layouts:
        chosen = [f for f in group_flavors if rng.random() < 0.8] or group_flavors[:1]
        rng.shuffle(chosen)
        entries = []
        for flavor in chosen:
            resources = []
            for resource in covered:
                nominal = rng.randrange(0, 17)
                entry = {"name": resource, "nominalQuota": _quantity(resource, nominal)}
                if has_parent and rng.random() < 0.3:
                    entry["borrowingLimit"] = _quantity(resource, rng.randrange(0, 5))
                if has_parent and rng.random() < 0.3:
                    entry["lendingLimit"] = _quantity(resource, rng.randrange(0, (9 if is_cohort else nominal) + 1))
                resources.append(entry)
            entries.append({"name": flavor, "resources": resources})
        groups.append({"coveredResources": covered, "flavors": entries})
    return groups


def _preemption(rng: random.Random, has_parent: bool) -> dict:
    preemption = {"withinClusterQueue": rng.choice(("Never", "LowerPriority", "LowerOrNewerEqualPriority"))}
    if has_parent:
        preemption["reclaimWithinCohort"] = rng.choice(("Never", "LowerPriority", "Any"))
        if preemption["reclaimWithinCohort"] != "Never" and rng.random() < 0.4:
            borrow = {"policy": "LowerPriority"}
            if rng.random() < 0.5:
                borrow["maxPriorityThreshold"] = rng.choice((0, 50, 100))
            preemption["borrowWithinCohort"] = borrow
    return preemption


def _fungibility(rng: random.Random) -> dict:
    fungibility = {"whenCanBorrow": rng.choice(("MayStopSearch", "TryNextFlavor")),
                   "whenCanPreempt": rng.choice(("MayStopSearch", "TryNextFlavor"))}
    if fungibility == {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"} and rng.random() < 0.5:
        fungibility["preference"] = rng.choice(("BorrowingOverPreemption", "PreemptionOverBorrowing"))
    return fungibility


def organisation(rng: random.Random) -> tuple[list[dict], list[str], list[str]]:
    """Objects, the ClusterQueue names, the namespaces with a LocalQueue `lq`."""
    objects, flavors = _flavors(rng)
    cohorts: list[str] = []
    for i in range(rng.randrange(0, 4)):
        name = f"c{i}"
        spec: dict = {}
        parent = rng.choice([None, *cohorts]) if cohorts else None
        if parent:
            spec["parentName"] = parent
        if rng.random() < 0.4:
            spec["resourceGroups"] = _resource_groups(rng, flavors, parent is not None, True)
        if rng.random() < 0.8:  # the others are implicit
            objects.append({"apiVersion": API, "kind": "Cohort", "metadata": {"name": name}, "spec": spec})
        cohorts.append(name)
    queues, namespaces = [], []
    for i in range(rng.randrange(1, 7)):
        name = f"cq{i}"
        cohort = rng.choice([None, *cohorts]) if cohorts else None
        spec = {"resourceGroups": _resource_groups(rng, flavors, cohort is not None, False)}
        spec["namespaceSelector"] = rng.choice(({}, {}, {}, {}, {}, {"matchLabels": {"team": name}},
                                                {"matchExpressions": [{"key": "team", "operator": "In",
                                                                       "values": [name, "all"]}]}))
        if rng.random() < 0.03:
            spec.pop("namespaceSelector")  # nil: no namespace
        if cohort:
            spec["cohortName"] = cohort
        if rng.random() < 0.8:
            spec["preemption"] = _preemption(rng, cohort is not None)
        if rng.random() < 0.5:
            spec["flavorFungibility"] = _fungibility(rng)
        if rng.random() < 0.03:
            spec["stopPolicy"] = "Hold"
        if rng.random() < 0.03:
            spec["resourceGroups"][0]["flavors"].append({"name": "missing", "resources": [
                {"name": r, "nominalQuota": "1"} for r in spec["resourceGroups"][0]["coveredResources"]]})
        objects.append({"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec})
        namespace = f"ns-{name}"
        objects.append({"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": namespace},
                        "spec": {"clusterQueue": name, **({"stopPolicy": "Hold"} if rng.random() < 0.03 else {})}})
        objects.append({"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": namespace, "labels": {"team": rng.choice((name, name, "all", "other"))}}})
        queues.append(name)
        namespaces.append(namespace)
    for value, name in ((0, "low"), (100, "mid"), (1000, "high")):
        objects.append({"apiVersion": API, "kind": "WorkloadPriorityClass", "metadata": {"name": name}, "value": value})
    return objects, queues, namespaces


def _pod(rng: random.Random) -> dict:
    requests = {r: _quantity(r, rng.randrange(0, 4)) for r in RESOURCES if rng.random() < 0.9}
    container: dict = {"name": "c", "resources": {"requests": requests}}
    if rng.random() < 0.1:
        container["resources"]["limits"] = {GPU: str(rng.randrange(1, 3))}
    pod: dict = {"containers": [container]}
    if rng.random() < 0.15:
        pod["nodeSelector"] = {"pool": f"f{rng.randrange(4)}"}
    if rng.random() < 0.1:
        pod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "pool", "operator": rng.choice(("In", "NotIn")),
                                   "values": [f"f{rng.randrange(4)}", f"f{rng.randrange(4)}"]}]}]}}}
    if rng.random() < 0.3:
        pod["tolerations"] = [{"key": "sku", "operator": "Equal", "value": "gpu",
                               "effect": rng.choice(("NoSchedule", "NoExecute"))}]
    return pod


def _podsets(rng: random.Random) -> list[dict]:
    podsets = []
    group = "g" if rng.random() < 0.15 else None
    for p in range(1 if rng.random() < 0.75 else rng.randrange(2, 4)):
        count = rng.randrange(1, 6)
        podset: dict = {"name": f"ps{p}", "count": count, "template": {"spec": _pod(rng)}}
        if p == 0 and rng.random() < 0.25:
            podset["minCount"] = rng.randrange(1, count + 1)
        if group and p < 2:
            podset["topologyRequest"] = {"podSetGroupName": group}
        podsets.append(podset)
    return podsets


def workload(rng: random.Random, name: str, namespaces: list[str]) -> dict:
    spec: dict = {"queueName": "lq" if rng.random() < 0.98 else "elsewhere", "podSets": _podsets(rng)}
    choice = rng.random()
    if choice < 0.4:
        spec["priority"] = rng.choice((0, 1, 50, 100, 1000))
    elif choice < 0.6:
        name_value = rng.choice((("low", 0), ("mid", 100), ("high", 1000)))
        spec["priorityClassRef"] = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass",
                                    "name": name_value[0]}
        spec["priority"] = name_value[1]  # Kueue copies the class's value
    metadata = {"name": name, "namespace": rng.choice(namespaces)}
    if rng.random() < 0.5:
        metadata["namespace"] = namespaces[0]  # most work goes to one team, so queues fill up
    if rng.random() < 0.5:
        metadata["creationTimestamp"] = _timestamp(rng)
    return {"apiVersion": API, "kind": "Workload", "metadata": metadata, "spec": spec}


def admitted(rng: random.Random, manifest: dict, queue: str, flavors: list[str]) -> dict:
    """The workload as already admitted to `queue` on random flavors, its usage as Kueue writes it."""
    assignments = []
    for podset in manifest["spec"]["podSets"]:
        flavor = rng.choice(flavors)
        requests = podset["template"]["spec"]["containers"][0]["resources"].get("requests", {})
        usage = {r: _quantity(r, int(_quantity_units(r, q)) * podset["count"]) for r, q in requests.items()}
        assignments.append({"name": podset["name"], "count": podset["count"],
                            "flavors": {r: flavor for r in usage}, "resourceUsage": usage})
    status: dict = {"admission": {"clusterQueue": queue, "podSetAssignments": assignments},
                    "conditions": [{"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved",
                                    "message": "", "lastTransitionTime": _timestamp(rng)}]}
    if rng.random() < 0.1:
        status["conditions"].append({"type": "Evicted", "status": "True", "reason": "Preempted", "message": "",
                                     "lastTransitionTime": _timestamp(rng)})
    return {**manifest, "status": status}


def _quantity_units(resource: str, quantity: str) -> int:
    """Back from `_quantity` to its step count."""
    if resource == "cpu":
        return int(quantity.rstrip("m")) // 500
    if resource == "memory":
        return int(quantity.rstrip("Gi"))
    return int(quantity) // (2 if resource == "pods" else 1)


def scenario(seed: int) -> list[dict]:
    """An organisation, some admitted workloads, then pending ones, in file order."""
    rng = random.Random(seed)
    objects, queues, namespaces = organisation(rng)
    flavors = [o["metadata"]["name"] for o in objects if o["kind"] == "ResourceFlavor"]
    workloads = []
    for i in range(rng.randrange(0, 4)):
        queue = rng.choice(queues)
        manifest = workload(rng, f"running-{i}", [f"ns-{queue}"])
        manifest["spec"]["queueName"] = "lq"
        workloads.append(admitted(rng, manifest, queue, flavors))
    for i in range(rng.randrange(1, 25)):
        workloads.append(workload(rng, f"w{i}", namespaces))
    return objects + workloads
