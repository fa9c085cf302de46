"""Typed views of Kueue objects that Kueue accepts: what the judge's rules, the admission core and
replay read, instead of the manifest.

A view is built once, by `view(manifest)`, from a manifest that passed `kueue.validate.validate_object`
and is defaulted as the API server stores it (`KueueObject.defaulted`). The schema has then checked
every type and every required field, so a view reads the manifest without checking it again; an
optional field absent from it gets Kueue's default here, once. Quantities are in Kueue's integer units
(`kueue.units.amount`: cpu in millicores, the rest in base units). The names are the Go types' of
Kueue v0.19.2 (`apis/kueue/v1beta2`): `ClusterQueue.resource_groups[].flavors[].resources[]` are
`ResourceGroup`, `FlavorQuotas` and `ResourceQuota`.

The admission core and replay build their own state (Kueue's cache: `admission/models.py`'s
`ClusterQueueInfo` and `ResourceGroupInfo`, `admission/quota.py`'s tree) from these views, and use
`ResourceFlavor` and `LocalQueue` as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Optional, TypeVar, Union

from aks_kueue.k8s.quantity import parse_quantity
from aks_kueue.kueue.admission_checks import applying
from aks_kueue.kueue.units import amount

ManifestMap = Mapping[str, Any]
V = TypeVar("V")
_NO_STOP = "None"


@lru_cache(maxsize=4096)
def _units(resource: str, quantity: Union[str, int]) -> int:
    """Quotas repeat across queues: each spelling parsed once."""
    return amount(resource, quantity)


def _spec(manifest: ManifestMap) -> ManifestMap:
    return manifest.get("spec", {})  # optional in every Kueue CRD


def _name(manifest: ManifestMap) -> str:
    return manifest["metadata"]["name"]  # the object checks require it


def _namespace(manifest: ManifestMap) -> str:
    return manifest["metadata"].get("namespace", "default")  # where kubectl puts an object written without one


def _fair_weight(spec: ManifestMap) -> float:
    """Kueue's parseFairWeight: `spec.fairSharing.weight` (a quantity) as a float, 1 when it is not set."""
    weight = spec.get("fairSharing", {}).get("weight")
    return 1.0 if weight is None else float(parse_quantity(weight))


@dataclass(frozen=True)
class ResourceQuota:
    name: str
    nominal_quota: int
    borrowing_limit: Optional[int] = None
    lending_limit: Optional[int] = None


@dataclass(frozen=True)
class FlavorQuotas:
    name: str
    resources: tuple[ResourceQuota, ...]


@dataclass(frozen=True)
class ResourceGroup:
    covered_resources: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]

    @property
    def flavor_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.flavors)


def _resource_groups(spec: ManifestMap) -> tuple[ResourceGroup, ...]:
    return tuple(
        ResourceGroup(tuple(group["coveredResources"]), tuple(
            FlavorQuotas(flavor["name"], tuple(
                ResourceQuota(r["name"], _units(r["name"], r["nominalQuota"]),
                              _units(r["name"], r["borrowingLimit"]) if "borrowingLimit" in r else None,
                              _units(r["name"], r["lendingLimit"]) if "lendingLimit" in r else None)
                for r in flavor["resources"]))
            for flavor in group["flavors"]))
        for group in spec.get("resourceGroups", ()))


@dataclass(frozen=True)
class AdmissionCheckStrategyRule:
    """One admission check of a ClusterQueue; it applies to `on_flavors`, or to every flavor when empty."""

    name: str
    on_flavors: tuple[str, ...] = ()


@dataclass(frozen=True)
class BorrowWithinCohort:
    policy: str = "Never"
    max_priority_threshold: Optional[int] = None


@dataclass(frozen=True)
class ClusterQueuePreemption:
    within_cluster_queue: str = "Never"
    reclaim_within_cohort: str = "Never"
    borrow_within_cohort: BorrowWithinCohort = BorrowWithinCohort()

    @classmethod
    def of(cls, spec: ManifestMap) -> "ClusterQueuePreemption":
        borrow = spec.get("borrowWithinCohort", {})
        return cls(spec.get("withinClusterQueue", "Never"), spec.get("reclaimWithinCohort", "Never"),
                   BorrowWithinCohort(borrow.get("policy", "Never"), borrow.get("maxPriorityThreshold")))


@dataclass(frozen=True)
class FlavorFungibility:
    when_can_borrow: str = "MayStopSearch"
    when_can_preempt: str = "TryNextFlavor"
    preference: Optional[str] = None

    @classmethod
    def of(cls, spec: ManifestMap) -> "FlavorFungibility":
        return cls(_stop_or_try(spec.get("whenCanBorrow"), "MayStopSearch"),
                   _stop_or_try(spec.get("whenCanPreempt"), "TryNextFlavor"), spec.get("preference"))


def _stop_or_try(value: Optional[str], default: str) -> str:
    # v1beta1's Borrow and Preempt both meant "stop here" (`kueue/convert.py` maps them; a manifest
    # given as v1beta2 with the old words means the same).
    return "MayStopSearch" if value in ("Borrow", "Preempt") else value or default


@dataclass(frozen=True)
class QuotaHolder:
    """What ClusterQueues and Cohorts share: a name, a parent cohort and resource groups of quota."""

    name: str
    parent: Optional[str]                      # a ClusterQueue's cohortName, a Cohort's parentName
    resource_groups: tuple[ResourceGroup, ...]
    fair_weight: float = 1.0                   # spec.fairSharing.weight

    @property
    def flavor_names(self) -> tuple[str, ...]:
        """Every flavor the resource groups name, in order, each once."""
        return tuple(dict.fromkeys(name for group in self.resource_groups for name in group.flavor_names))


@dataclass(frozen=True)
class ClusterQueue(QuotaHolder):
    # None: no namespace is eligible (Kueue's nil selector); {} selects every namespace.
    namespace_selector: Optional[ManifestMap] = None
    admission_checks: tuple[AdmissionCheckStrategyRule, ...] = ()
    stop_policy: str = _NO_STOP
    preemption: ClusterQueuePreemption = ClusterQueuePreemption()
    flavor_fungibility: FlavorFungibility = FlavorFungibility()
    queueing_strategy: str = "BestEffortFIFO"
    admission_mode: Optional[str] = None       # spec.admissionScope.admissionMode
    # The defaulted spec, for the rules of Kueue's that read it whole (`kueue/tas.py`, `kueue/admission_checks.py`).
    spec: ManifestMap = field(default_factory=dict, compare=False, repr=False)

    @property
    def cohort(self) -> Optional[str]:
        return self.parent

    @property
    def stopped(self) -> bool:
        return self.stop_policy != _NO_STOP

    @property
    def checks(self) -> dict[str, frozenset[str]]:
        """Each admission check and the flavors it applies to (`NewAdmissionChecks`)."""
        every = frozenset(self.flavor_names)
        return {rule.name: frozenset(rule.on_flavors) or every for rule in self.admission_checks}

    def checks_for(self, assigned: Optional[Iterable[str]]) -> list[str]:
        """The checks a Workload of this ClusterQueue gets (`admission_checks.checks_for`)."""
        return applying(self.checks, frozenset(self.flavor_names), assigned)

    @classmethod
    def of(cls, manifest: ManifestMap) -> "ClusterQueue":
        spec = _spec(manifest)
        strategy = spec.get("admissionChecksStrategy", {})
        return cls(_name(manifest), spec.get("cohortName") or None, _resource_groups(spec), _fair_weight(spec),
                   namespace_selector=spec.get("namespaceSelector"),
                   admission_checks=tuple(AdmissionCheckStrategyRule(rule["name"], tuple(rule.get("onFlavors", ())))
                                          for rule in strategy.get("admissionChecks", ())),
                   stop_policy=spec.get("stopPolicy", _NO_STOP),
                   preemption=ClusterQueuePreemption.of(spec.get("preemption", {})),
                   flavor_fungibility=FlavorFungibility.of(spec.get("flavorFungibility", {})),
                   queueing_strategy=spec.get("queueingStrategy", "BestEffortFIFO"),
                   admission_mode=spec.get("admissionScope", {}).get("admissionMode"), spec=spec)


@dataclass(frozen=True)
class Cohort(QuotaHolder):
    @classmethod
    def of(cls, manifest: ManifestMap) -> "Cohort":
        spec = _spec(manifest)
        return cls(_name(manifest), spec.get("parentName") or None, _resource_groups(spec), _fair_weight(spec))


@dataclass(frozen=True)
class ResourceFlavor:
    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    node_taints: tuple[ManifestMap, ...] = ()
    tolerations: tuple[ManifestMap, ...] = ()
    topology_name: Optional[str] = None

    @classmethod
    def of(cls, manifest: ManifestMap) -> "ResourceFlavor":
        spec = _spec(manifest)
        return cls(_name(manifest), dict(spec.get("nodeLabels", {})), tuple(spec.get("nodeTaints", ())),
                   tuple(spec.get("tolerations", ())), spec.get("topologyName"))


@dataclass(frozen=True)
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str
    stop_policy: str = _NO_STOP
    # spec.fairSharing.weight, which admission fair sharing divides the queue's usage by.
    fair_weight: float = 1.0

    @property
    def stopped(self) -> bool:
        return self.stop_policy != _NO_STOP

    @classmethod
    def of(cls, manifest: ManifestMap) -> "LocalQueue":
        spec = _spec(manifest)
        return cls(_namespace(manifest), _name(manifest), spec.get("clusterQueue", ""),
                   spec.get("stopPolicy", _NO_STOP), _fair_weight(spec))


@dataclass(frozen=True)
class PodSet:
    name: str
    count: int
    template: ManifestMap
    min_count: Optional[int] = None
    topology_request: ManifestMap = field(default_factory=dict)

    @property
    def pod_spec(self) -> ManifestMap:
        return self.template.get("spec", {})

    @classmethod
    def of(cls, pod_set: ManifestMap) -> "PodSet":
        # The CRD defaults a pod set's name to main and its count to 1 (pod sets given before defaulting, as a
        # trace's, get them here).
        return cls(pod_set.get("name", "main"), pod_set.get("count", 1), pod_set["template"], pod_set.get("minCount"),
                   pod_set.get("topologyRequest", {}))


@dataclass(frozen=True)
class Workload:
    namespace: str
    name: str
    queue_name: Optional[str]
    pod_sets: tuple[PodSet, ...]
    priority_class: Optional[str] = None      # spec.priorityClassRef.name, when it names a WorkloadPriorityClass
    priority: Optional[int] = None

    @classmethod
    def of(cls, manifest: ManifestMap) -> "Workload":
        spec = _spec(manifest)
        ref = spec.get("priorityClassRef", {})
        return cls(_namespace(manifest), _name(manifest), spec.get("queueName"),
                   tuple(map(PodSet.of, spec.get("podSets", ()))),
                   ref.get("name") if ref.get("kind") == "WorkloadPriorityClass" else None, spec.get("priority"))


@dataclass(frozen=True)
class ParametersReference:
    api_group: str
    kind: str
    name: str


@dataclass(frozen=True)
class AdmissionCheck:
    name: str
    controller_name: str
    parameters: Optional[ParametersReference] = None

    def names(self, kind: str) -> Optional[str]:
        """The object of `kind` its parameters name (a ProvisioningRequestConfig, a MultiKueueConfig), or None."""
        return self.parameters.name if self.parameters is not None and self.parameters.kind == kind else None

    @classmethod
    def of(cls, manifest: ManifestMap) -> "AdmissionCheck":
        spec = manifest["spec"]
        given = spec.get("parameters")
        return cls(_name(manifest), spec["controllerName"],
                   ParametersReference(given["apiGroup"], given["kind"], given["name"]) if given is not None else None)


@dataclass(frozen=True)
class ProvisioningRequestConfig:
    name: str
    provisioning_class: str
    managed_resources: tuple[str, ...] = ()

    @classmethod
    def of(cls, manifest: ManifestMap) -> "ProvisioningRequestConfig":
        spec = manifest["spec"]
        return cls(_name(manifest), spec["provisioningClassName"], tuple(spec.get("managedResources", ())))


@dataclass(frozen=True)
class Topology:
    name: str
    levels: tuple[str, ...]     # node labels, broadest first

    @classmethod
    def of(cls, manifest: ManifestMap) -> "Topology":
        return cls(_name(manifest), tuple(level["nodeLabel"] for level in manifest["spec"]["levels"]))


@dataclass(frozen=True)
class WorkloadPriorityClass:
    name: str
    value: int

    @classmethod
    def of(cls, manifest: ManifestMap) -> "WorkloadPriorityClass":
        return cls(_name(manifest), int(manifest["value"]))


@dataclass(frozen=True)
class MultiKueueConfig:
    name: str
    clusters: tuple[str, ...]

    @classmethod
    def of(cls, manifest: ManifestMap) -> "MultiKueueConfig":
        return cls(_name(manifest), tuple(manifest["spec"]["clusters"]))


@dataclass(frozen=True)
class Other:
    """A kind of Kueue object no rule reads field by field (a MultiKueueCluster, ...): only its name."""

    name: str


KueueView = Union[ClusterQueue, Cohort, ResourceFlavor, LocalQueue, Workload, AdmissionCheck,
                  ProvisioningRequestConfig, Topology, WorkloadPriorityClass, MultiKueueConfig, Other]
_KINDS: dict[str, Any] = {
    "ClusterQueue": ClusterQueue, "Cohort": Cohort, "ResourceFlavor": ResourceFlavor, "LocalQueue": LocalQueue,
    "Workload": Workload, "AdmissionCheck": AdmissionCheck, "ProvisioningRequestConfig": ProvisioningRequestConfig,
    "Topology": Topology, "WorkloadPriorityClass": WorkloadPriorityClass, "MultiKueueConfig": MultiKueueConfig,
}


def views_of(manifests: Iterable[ManifestMap], kind: type[V]) -> list[V]:
    """The views of the manifests of one kind (`kind` is its view class, named as the kind), in order."""
    return [kind.of(m) for m in manifests if m.get("kind") == kind.__name__]  # type: ignore[attr-defined]


def view(manifest: ManifestMap) -> KueueView:
    """The typed view of an object Kueue accepts (validated and defaulted, v1beta2)."""
    kind = _KINDS.get(manifest["kind"])
    return kind.of(manifest) if kind is not None else Other(_name(manifest))
