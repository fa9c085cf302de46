"""Node pools as the capacity model needs them, rebuilt from AgentPool and DaemonSet resources.

What settings say about a pool (`feasibility/adapter.py`) the pack reads from the pool's
AgentPool instead, with AKS's own defaults where a property is absent: maxPods from the
cluster's network plugin, the NVIDIA driver installed on NVIDIA sizes, the spot taint
AKS adds to spot pools. The DaemonSets placed on a pool are whichever of the stack's
DaemonSets select its nodes and tolerate its taints, not only the program's device plugin.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping, Optional

from aks_kueue.aks.capacity_tag import CAPACITY_TAG, explicit_node
from aks_kueue.feasibility.flavors import BLOCKING_EFFECTS, tolerated
from aks_kueue.feasibility.inputs import PlacedDaemonSet, PoolSpec
from aks_kueue.feasibility.pools import node_labels
from aks_kueue.feasibility.workloads import pod_requests
from aks_kueue.k8s.quantity import QuantityError
from aks_kueue.policies.props import (Unreadable, get, integer, mapping, plain, sequence, string_list,
                                      string_map, text)
from aks_kueue.settings.pools import SPOT_TAINT
from aks_kueue.aks.vm_sizes import lookup

_TAINT = re.compile(r"^(?P<key>[^=:\s]+)(=(?P<value>[^=:\s]*))?:(?P<effect>NoSchedule|PreferNoSchedule|NoExecute)$")


def pool_spec(props: Any, label: str, fallback_max_pods: int) -> PoolSpec:
    """One user pool; raises Unreadable when a property the model needs has the wrong shape."""
    # Inputs name the pool agentPoolName; a pool's outputs from Azure (an unchanged pool in the
    # preview of a deployed stack) carry `name` instead.
    name = text(get(props, "agentPoolName", default=get(props, "name")), f"{label}.agentPoolName")
    vm_size = text(get(props, "vmSize"), f"{label}.vmSize")
    autoscaled = get(props, "enableAutoScaling", default=False) is True
    count_key = "maxCount" if autoscaled else "count"
    max_count = integer(get(props, count_key, default=0 if not autoscaled else None), f"{label}.{count_key}")
    max_pods = get(props, "maxPods")
    max_pods = fallback_max_pods if max_pods is None else integer(max_pods, f"{label}.maxPods")
    if max_count < 0 or max_pods < 1:
        raise Unreadable(f"{label}: {count_key} {max_count} and maxPods {max_pods} are not counts AKS accepts")
    taints = [_taint(t, f"{label}.nodeTaints[{i}]")
              for i, t in enumerate(string_list(get(props, "nodeTaints", default=[]), f"{label}.nodeTaints"))]
    spot = get(props, "scaleSetPriority") == "Spot"
    if spot and _taint(SPOT_TAINT, "") not in taints:
        taints.append(_taint(SPOT_TAINT, ""))  # AKS adds it to every spot pool
    explicit = None
    tag = get(props, "tags", CAPACITY_TAG)
    if tag is not None:
        try:
            explicit = explicit_node(tag)
        except ValueError as error:
            raise Unreadable(f"{label}.tags: {error}") from None
    size = lookup(vm_size)
    if size is None and explicit is None:
        raise Unreadable(f"{label}.vmSize {vm_size!r} is not in the VM size catalog and the pool carries no "
                         f"{CAPACITY_TAG} tag, so its nodes cannot be sized")
    profile = get(props, "gpuInstanceProfile")
    return PoolSpec(
        name=name, vm_size=vm_size, max_count=max_count, max_pods=max_pods,
        labels=string_map(get(props, "nodeLabels", default={}), f"{label}.nodeLabels"), taints=tuple(taints),
        zones=tuple(string_list(get(props, "availabilityZones", default=[]), f"{label}.availabilityZones")),
        gpu_driver=_gpu_driver(props, size, explicit, label),
        gpu_instance_profile=text(profile, f"{label}.gpuInstanceProfile") if profile is not None else None,
        mig_strategy="mixed" if profile is not None else "none", spot=spot, explicit=explicit, source=label)


def _taint(value: str, what: str) -> dict[str, str]:
    match = _TAINT.fullmatch(value)
    if not match:
        raise Unreadable(f"{what} {value!r} is not a taint key=value:Effect")
    return {"key": match["key"], "value": match["value"] or "", "effect": match["effect"]}


def _gpu_driver(props: Any, size, explicit, label: str) -> Optional[str]:
    """AKS installs the NVIDIA driver unless gpuProfile.driver says None, and never an AMD one."""
    if size is not None and size.has_gpu:
        vendor = size.gpu_vendor
    elif explicit is not None and explicit.gpus:
        vendor = "amd" if (explicit.gpu_resource or "").startswith("amd.com/") else "nvidia"
    else:
        return None
    driver = get(props, "gpuProfile", "driver")
    if driver is not None:
        return text(driver, f"{label}.gpuProfile.driver")
    return "Install" if vendor == "nvidia" else "None"


def place_daemonsets(pools: list[PoolSpec], daemonsets: list[tuple[str, Any]], region: str) -> list[PoolSpec]:
    """Each pool with the DaemonSets whose pods land on its nodes (name, props of a DaemonSet)."""
    placed = []
    for pool in pools:
        labels = node_labels(pool, region)
        own = tuple(PlacedDaemonSet(name, requests) for name, requests, selects, tolerations in daemonsets
                    if _lands(selects, tolerations, labels, pool))
        placed.append(dataclasses.replace(pool, daemonsets=own))
    return placed


def daemonset_placement(props: Any, label: str) -> tuple[str, dict[str, str], Any, list]:
    """(name, pod requests, node selection, tolerations) of one DaemonSet resource."""
    name = text(get(props, "metadata", "name"), f"{label}.metadata.name")
    pod = mapping(get(props, "spec", "template", "spec", default={}), f"{label}.spec.template.spec")
    try:
        requests = {r: f"{v}m" if r == "cpu" else str(v) for r, v in pod_requests(plain(pod)).items()}
    except (QuantityError, AttributeError, TypeError) as error:
        raise Unreadable(f"{label}: the pod's resource requests cannot be read ({error})") from None
    selection = {"nodeSelector": string_map(get(pod, "nodeSelector", default={}), f"{label}.nodeSelector"),
                 "terms": plain(get(pod, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuring"
                                    "Execution", "nodeSelectorTerms", default=[]))}
    tolerations = [plain(t) for t in sequence(get(pod, "tolerations", default=[]), f"{label}.tolerations")]
    if not all(isinstance(t, dict) for t in tolerations) or not isinstance(selection["terms"], list):
        raise Unreadable(f"{label}: tolerations and nodeSelectorTerms must be lists of maps")
    return name, requests, selection, tolerations


def _lands(selection, tolerations, labels: Mapping[str, frozenset], pool: PoolSpec) -> bool:
    if any(value not in labels.get(key, ()) for key, value in selection["nodeSelector"].items()):
        return False
    terms = [t for t in selection["terms"] if isinstance(t, dict)]
    if terms and not any(_term_matches(term, labels) for term in terms):
        return False
    return all(tolerated(tolerations, taint) for taint in pool.taints if taint["effect"] in BLOCKING_EFFECTS)


def _term_matches(term: Mapping[str, Any], labels: Mapping[str, frozenset]) -> bool:
    """A nodeSelectorTerm: every matchExpression holds (Kubernetes' operators)."""
    expressions = term.get("matchExpressions") or []
    for expression in expressions if isinstance(expressions, list) else [None]:
        if not isinstance(expression, dict) or not isinstance(expression.get("values") or [], list):
            return False  # a malformed term selects no node
        key, operator = expression.get("key"), expression.get("operator")
        if not isinstance(key, str):
            return False
        values = set(v for v in expression.get("values") or [] if isinstance(v, str))
        have = labels.get(key, frozenset())
        if operator == "In" and not have & values:
            return False
        if operator == "NotIn" and have and have <= values:
            return False
        if operator == "Exists" and not have:
            return False
        if operator == "DoesNotExist" and have:
            return False
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False  # Gt/Lt on pool labels: not modelled, so not counted as landing
    return True
