"""A pod's effective resource requests, as Kubernetes' PodRequests computes them.

The containers' sum, each sidecar (an init container with `restartPolicy: Always`) added
to it, the largest plain init container step as a floor, pod-level requests replacing the
sum for cpu and memory, then the pod overhead. As Kueue's AdjustResources does, a
container limit stands in for a missing request (the usual way to ask for
`nvidia.com/gpu`). LimitRange defaults and RuntimeClass overheads need the cluster, so
they are not applied. Exact quantities; admission converts them to Kueue's units, the
capacity model compares them with what a node can allocate. One rule for both.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Mapping

from aks_kueue.k8s.quantity import parse_quantity

POD_LEVEL_RESOURCES = ("cpu", "memory")
_ZERO = Fraction(0)


def pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, Fraction]:
    """Kubernetes' effective requests of one pod, as exact quantities."""
    requests: dict[str, Fraction] = {}
    for container in pod_spec.get("containers") or []:
        _add(requests, container_requests(container))
    sidecars: dict[str, Fraction] = {}
    init_floor: dict[str, Fraction] = {}
    for container in pod_spec.get("initContainers") or []:
        own = container_requests(container)
        if container.get("restartPolicy") == "Always":
            _add(requests, own)
            _add(sidecars, own)
            step = dict(sidecars)
        else:
            step = dict(own)
            _add(step, sidecars)
        for resource, value in step.items():
            init_floor[resource] = max(init_floor.get(resource, _ZERO), value)
    for resource, value in init_floor.items():
        requests[resource] = max(requests.get(resource, _ZERO), value)
    pod_level = ((pod_spec.get("resources") or {}).get("requests")) or {}
    for resource in POD_LEVEL_RESOURCES:
        if resource in pod_level:
            requests[resource] = parse_quantity(pod_level[resource])
    _add(requests, {r: parse_quantity(q) for r, q in (pod_spec.get("overhead") or {}).items()})
    return requests


def container_requests(container: dict) -> dict[str, Fraction]:
    resources = container.get("resources") or {}
    limits, requests = resources.get("limits"), resources.get("requests")
    merged = {**limits, **requests} if limits and requests else limits or requests or {}
    return {resource: parse_quantity(value) for resource, value in merged.items()}


def _add(into: dict[str, Fraction], more: dict[str, Fraction]) -> None:
    for resource, value in more.items():
        into[resource] = into[resource] + value if resource in into else value
