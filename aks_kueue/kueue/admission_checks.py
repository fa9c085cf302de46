"""Which admission checks of a ClusterQueue a Workload gets, and the ProvisioningRequest check's
objects, as Kueue v0.19.2 reads them.

Sources (kubernetes-sigs/kueue at v0.19.2):
- `pkg/util/admissioncheck/admissioncheck.go` `NewAdmissionChecks`: a ClusterQueue's
  `admissionChecksStrategy.admissionChecks[]`, each applying to its `onFlavors`, or to every
  flavor of the ClusterQueue when `onFlavors` is empty.
- `pkg/workload/workload.go` `AdmissionChecksForWorkload`: a Workload with quota reserved gets
  the checks whose flavors meet the flavors assigned to it; one without gets only the checks
  that apply to every flavor of its ClusterQueue. Each starts `Pending`; the Workload is
  Admitted once every one is `Ready`.
- `pkg/controller/admissionchecks/provisioning/controller.go`: the ProvisioningRequest a check
  creates holds every pod set with a count above 0 that uses one of the config's
  `managedResources` (every such pod set when the list is empty), not only those on `onFlavors`.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Protocol, TypeVar

from aks_kueue.k8s.objects import map_at


class PodSetLike(Protocol):
    """What `requested_pod_sets` reads of a pod set (`kueue.views.PodSet`)."""

    @property
    def count(self) -> int: ...

    @property
    def pod_spec(self) -> Mapping[str, Any]: ...


P = TypeVar("P", bound=PodSetLike)

PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
PENDING = "Pending"


def _dicts(value: Any) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def cluster_queue_flavors(spec: Mapping[str, Any]) -> list[str]:
    """Every flavor named by the ClusterQueue's resource groups, in order."""
    names = [f.get("name") for g in _dicts(spec.get("resourceGroups")) for f in _dicts(g.get("flavors"))]
    return list(dict.fromkeys(n for n in names if isinstance(n, str)))


def checks_of(spec: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """Each admission check of a ClusterQueue spec (v1beta2) and the flavors it applies to."""
    strategy = spec.get("admissionChecksStrategy")
    entries = _dicts(strategy.get("admissionChecks")) if isinstance(strategy, dict) else []
    every = frozenset(cluster_queue_flavors(spec))
    checks = {}
    for entry in entries:
        name = entry.get("name")
        if not isinstance(name, str):
            continue
        on = [f for f in entry.get("onFlavors") or [] if isinstance(f, str)]
        checks[name] = frozenset(on) if on else every
    return checks


def checks_for(spec: Mapping[str, Any], assigned: Optional[Iterable[str]]) -> list[str]:
    """The checks a Workload of this ClusterQueue gets: with quota reserved on `assigned` flavors,
    those whose flavors meet them; with no reservation (`assigned` None), those applying to all."""
    return applying(checks_of(spec), frozenset(cluster_queue_flavors(spec)), assigned)


def applying(checks: Mapping[str, frozenset[str]], every: frozenset[str],
             assigned: Optional[Iterable[str]]) -> list[str]:
    """`checks_for` of a ClusterQueue's checks (each with its flavors) and its flavors (`every`)."""
    if assigned is None:
        return [name for name, flavors in checks.items() if flavors >= every]
    used = set(assigned)
    return [name for name, flavors in checks.items() if flavors & used]


def provisioning_config_name(check: Mapping[str, Any]) -> Optional[str]:
    """The ProvisioningRequestConfig a ProvisioningRequest AdmissionCheck names, if it names one."""
    spec = map_at(check, "spec")
    if spec.get("controllerName") != PROVISIONING_CONTROLLER:
        return None
    parameters = map_at(spec, "parameters")
    if parameters.get("kind") != "ProvisioningRequestConfig":
        return None
    name = parameters.get("name")
    return name if isinstance(name, str) else None


def is_provisioning(check: Mapping[str, Any]) -> bool:
    spec = map_at(check, "spec")
    return spec.get("controllerName") == PROVISIONING_CONTROLLER


def pod_uses(pod_spec: Mapping[str, Any], resources: set[str]) -> bool:
    """`podUses`: a container or init container requests or limits one of the resources."""
    for container in [*_dicts(pod_spec.get("initContainers")), *_dicts(pod_spec.get("containers"))]:
        limits = map_at(container, "resources")
        for part in ("requests", "limits"):
            if isinstance(limits.get(part), dict) and resources & set(limits[part]):
                return True
    return False


def requested_pod_sets(pod_sets: Iterable[P], managed_resources: Iterable[str]) -> list[P]:
    """The pod sets of a Workload a ProvisioningRequest holds (`requiredPodSets`): count above 0 and, when the
    config lists managedResources, using one of them."""
    resources = set(managed_resources)
    return [p for p in pod_sets if p.count > 0 and (not resources or pod_uses(p.pod_spec, resources))]
