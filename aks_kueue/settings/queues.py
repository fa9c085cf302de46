"""`aks-kueue:queues` and `aks-kueue:expectedWorkloads`: the envelope around Kueue's own shapes.

Only the envelope is checked here (names, pool and queue references). The specs are
Kueue's and are checked by the Kueue validator, with the same key paths.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Iterator, Optional, Union

from pydantic import Discriminator, Field, Tag, field_validator
from pydantic_core import PydanticCustomError

from aks_kueue.aks.autoscaler import class_problem
from aks_kueue.aks.pools import AGENTPOOL
from aks_kueue.aks.topology import AKS_LEVELS, from_aks_problem
from aks_kueue.k8s.merge import deep_merge
from aks_kueue.k8s.quantity import QuantityError, parse_quantity
from aks_kueue.kueue.convert import V1BETA2, cluster_queue_spec_to_v1beta2
from aks_kueue.k8s.field import Path
from aks_kueue.k8s.names import dns1123_label_problem, qualified_name_problem
from aks_kueue.settings.base import GUID, ConfigModel, check, checked, matching, problem, raised

_QUEUE_REF = re.compile(r"^(?P<namespace>[^/\s]+)/(?P<name>[^/\s]+)$")


class NamedSpec(ConfigModel):
    name: str
    spec: Any = None


class FlavorEntry(NamedSpec):
    node_pool: Optional[str] = None


class Provisioning(ConfigModel):
    """`clusterQueues[].provisioning`: a ProvisioningRequest AdmissionCheck for the ClusterQueue."""

    class_: Annotated[str, checked(class_problem)] = Field(alias="class")
    on_flavors: Optional[list[str]] = None
    parameters: dict[str, str] = {}

    @field_validator("on_flavors")
    @classmethod
    def _flavors(cls, names: Optional[list[str]]) -> Optional[list[str]]:
        if names is not None and not names:
            raise problem("an empty list limits the check to no flavor",
                          fix="list flavors, or omit onFlavors for all")
        if names and len(set(names)) != len(names):
            raise problem("each flavor may be listed once")
        return names

    @field_validator("parameters")
    @classmethod
    def _parameters(cls, parameters: dict[str, str]) -> dict[str, str]:
        # The ProvisioningRequestConfig CRD: at most 100 parameters of at most 255 characters.
        if len(parameters) > 100:
            raise problem(f"{len(parameters)} parameters; a ProvisioningRequestConfig takes at most 100")
        for key, value in parameters.items():
            if len(value) > 255:
                raise problem(f"{key}: {len(value)} characters; a ProvisioningRequest parameter takes at most 255")
        return parameters


# The generated AdmissionCheck and ProvisioningRequestConfig are named after their ClusterQueue.
PROVISIONING_SUFFIX = "-provisioning"
# An AdmissionCheck names its ProvisioningRequestConfig in parameters.name, a DNS label (CRD).
_CONFIG_NAME_MAX = 63


class ClusterQueueEntry(NamedSpec):
    provisioning: Optional[Provisioning] = None

    @property
    def check_name(self) -> str:
        """The name of the generated AdmissionCheck and of its ProvisioningRequestConfig."""
        return f"{self.name}{PROVISIONING_SUFFIX}"

    @check(first=True)
    def _provisioning_fits(self):
        if self.provisioning is None:
            return
        if len(self.check_name) > _CONFIG_NAME_MAX:
            yield problem(f"the generated ProvisioningRequestConfig {self.check_name!r} would be "
                          f"{len(self.check_name)} characters; an AdmissionCheck names it with at most "
                          f"{_CONFIG_NAME_MAX}, so shorten the ClusterQueue's name to at most "
                          f"{_CONFIG_NAME_MAX - len(PROVISIONING_SUFFIX)} characters", at="provisioning")
        flavors = _flavor_names(self.spec)
        for i, name in enumerate(self.provisioning.on_flavors or []):
            if flavors is not None and name not in flavors:
                yield problem(f"flavor {name!r} is not one of this ClusterQueue's flavors "
                              f"({', '.join(flavors) or 'none'}); the check would never apply",
                              at=Path("provisioning", "onFlavors").index(i))


def _flavor_names(spec: Any) -> Optional[list[str]]:
    """The flavors a ClusterQueue spec names, or None when the spec is not readable yet (the Kueue
    validator reports that)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("resourceGroups", []), list):
        return None
    names = []
    for group in spec.get("resourceGroups", []):
        flavors = group.get("flavors", []) if isinstance(group, dict) else None
        if not isinstance(flavors, list):
            return None
        names += [f["name"] for f in flavors if isinstance(f, dict) and isinstance(f.get("name"), str)]
    return list(dict.fromkeys(names))


class TopologyEntry(NamedSpec):
    """`{name, spec}` as in Kueue, or `{name, fromAks: [zone, hostname]}`: levels on AKS's node labels."""

    from_aks: Optional[Annotated[list[str], checked(from_aks_problem)]] = None

    @check
    def _one_source(self):
        if self.from_aks is not None and self.spec is not None:
            yield problem("give either fromAks or spec.levels, not both; fromAks expands to spec.levels", at="fromAks")


class LocalQueueEntry(NamedSpec):
    namespace: str
    # Entra group object IDs whose members may get credentials and submit and watch jobs in the namespace.
    submitter_groups: list[str] = []

    @field_validator("submitter_groups")
    @classmethod
    def _groups(cls, groups: list[str]) -> list[str]:
        problems: list[PydanticCustomError] = []
        seen: dict[str, int] = {}
        for i, group in enumerate(groups):
            if not GUID.fullmatch(group):
                problems.append(problem(f"{group!r} is not an Entra group object ID",
                                        fix="use the group's object ID, a GUID such as "
                                        "3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f809a1b (`az ad group show --group <name> "
                                        "--query id -o tsv` prints it)", at=Path().index(i)))
            elif group.lower() in seen:
                problems.append(problem(f"{group} is already listed as submitterGroups[{seen[group.lower()]}]",
                                        fix="list each group once", at=Path().index(i)))
            else:
                seen[group.lower()] = i
        if problems:
            raise raised(problems)
        return groups


class PriorityClassEntry(ConfigModel):
    name: str
    value: Any
    description: Optional[str] = None


class Queues(ConfigModel):
    resource_flavors: list[FlavorEntry] = []
    cohorts: list[NamedSpec] = []
    cluster_queues: list[ClusterQueueEntry] = []
    local_queues: list[LocalQueueEntry] = []
    workload_priority_classes: list[PriorityClassEntry] = []
    topologies: list[TopologyEntry] = []
    # Namespaces that exist already: the program only patches their labels, never creates,
    # owns or deletes them.
    existing_namespaces: list[str] = []

    @field_validator("existing_namespaces")
    @classmethod
    def _namespace_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if dns1123_label_problem(name):
                raise problem(f"{name!r} is not a namespace name",
                              fix="use a DNS label such as team-a")
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise problem(f"{', '.join(dupes)} listed more than once")
        return names

    @property
    def has_objects(self) -> bool:
        return any((self.resource_flavors, self.cohorts, self.cluster_queues, self.local_queues,
                    self.workload_priority_classes, self.topologies))

    def manifests(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Each entry as the Kueue object it writes, by its stack key: its own spec, a pool's flavor with the label it
        selects the pool by (its taints, a ClusterQueue's generated check and a Topology's levels from AKS come with
        the model)."""
        def written(field: str, i: int, kind: str, spec: Any, **metadata: str) -> tuple[str, dict[str, Any]]:
            return f"aks-kueue:queues.{field}[{i}]", {"apiVersion": V1BETA2, "kind": kind, "metadata": metadata,
                                                      "spec": spec if spec is not None else {}}

        for i, flavor in enumerate(self.resource_flavors):
            spec = flavor.spec
            if flavor.node_pool is not None and isinstance(spec if spec is not None else {}, dict):
                # The label a pool's flavor selects its nodes by (its taints come with the model).
                spec = deep_merge({"nodeLabels": {AGENTPOOL: flavor.node_pool}}, spec or {})
            yield written("resourceFlavors", i, "ResourceFlavor", spec, name=flavor.name)
        for i, cohort in enumerate(self.cohorts):
            yield written("cohorts", i, "Cohort", cohort.spec, name=cohort.name)
        for i, queue in enumerate(self.cluster_queues):
            yield written("clusterQueues", i, "ClusterQueue",
                          cluster_queue_spec_to_v1beta2(queue.spec if queue.spec is not None else {}), name=queue.name)
        for i, local in enumerate(self.local_queues):
            yield written("localQueues", i, "LocalQueue", local.spec, name=local.name, namespace=local.namespace)
        for i, topology in enumerate(self.topologies):
            if topology.from_aks is None:
                yield written("topologies", i, "Topology", topology.spec, name=topology.name)
        for i, entry in enumerate(self.workload_priority_classes):
            yield f"aks-kueue:queues.workloadPriorityClasses[{i}]", {
                "apiVersion": V1BETA2, "kind": "WorkloadPriorityClass", "metadata": {"name": entry.name},
                "value": entry.value, **({"description": entry.description} if entry.description is not None else {})}


class Toleration(ConfigModel):
    key: Optional[str] = None
    operator: str = "Equal"
    value: Optional[str] = None
    effect: Optional[str] = None
    toleration_seconds: Optional[int] = None


class SliceConstraint(ConfigModel):
    topology: str
    size: int = Field(ge=1)


class TopologyRequest(ConfigModel):
    """Kueue's PodSetTopologyRequest (v1beta2 Workload `podSets[].topologyRequest`), as the job's
    topology annotations make it. Levels are node labels, as in Kueue."""

    required: Optional[str] = None
    preferred: Optional[str] = None
    unconstrained: Optional[bool] = None
    pod_index_label: Optional[str] = None
    sub_group_index_label: Optional[str] = None
    sub_group_count: Optional[int] = None
    pod_set_group_name: Optional[str] = None
    pod_set_slice_required_topology: Optional[str] = None
    pod_set_slice_size: Optional[int] = None
    podset_slice_required_topology_constraints: Optional[list[SliceConstraint]] = None

    @check(first=True)
    def _levels(self):
        given = [k for k in ("required", "preferred", "unconstrained") if getattr(self, k) is not None]
        if len(given) > 1:
            yield problem(f"give one of required, preferred or unconstrained, not {' and '.join(given)}; a job carries "
                          "one topology annotation per pod set", at=given[1])
        levels = {"required": self.required, "preferred": self.preferred,
                  "podSetSliceRequiredTopology": self.pod_set_slice_required_topology}
        for i, constraint in enumerate(self.podset_slice_required_topology_constraints or []):
            levels[Path("podsetSliceRequiredTopologyConstraints").index(i).child("topology")] = constraint.topology
        for key, level in levels.items():
            if level in AKS_LEVELS:
                yield problem(f"{level!r} is a fromAks name; Kueue's field takes the level's node label: "
                              f"{AKS_LEVELS[level]}", at=key)
        # What Kueue's job webhook refuses in the topology annotations these fields come from
        # (`ValidateTASPodSetRequest`, kueue v0.19.2 pkg/controller/jobframework/tas_validation.go).
        if self.pod_set_group_name is not None:
            if self.required is None and self.preferred is None:
                yield problem("needs required or preferred: a group shares one topology domain at that level",
                              at="podSetGroupName")
            if self.pod_set_slice_required_topology is not None or self.pod_set_slice_size is not None:
                yield problem("may not be set with slices (podSetSliceRequiredTopology, podSetSliceSize)",
                              at="podSetGroupName")


class PodSetShape(ConfigModel):
    name: str
    count: int = Field(ge=1)
    min_count: Optional[int] = Field(None, ge=1)
    requests: dict[str, Any]
    node_selector: dict[str, str] = {}
    tolerations: list[Toleration] = []
    topology_request: Optional[TopologyRequest] = None

    @check
    def _slice_within_count(self):
        size = self.topology_request.pod_set_slice_size if self.topology_request is not None else None
        if size is not None and size > self.count:
            yield problem(f"{size} is above the pod set's count {self.count}; a slice is part of the pod set",
                          at="topologyRequest.podSetSliceSize")

    @field_validator("requests")
    @classmethod
    def _quantities(cls, requests: dict[str, Any]) -> dict[str, Any]:
        for resource, amount in requests.items():
            if why := qualified_name_problem(resource):
                raise problem(f"{resource!r} is not a resource name: {why}")
            try:
                if parse_quantity(amount) < 0:
                    raise problem(f"requests.{resource} is negative; requests must be >= 0")
            except QuantityError as error:
                raise problem(f"requests.{resource}: {error}") from None
        return requests


class ExpectedWorkload(ConfigModel):
    name: str
    queue: Annotated[str, matching(_QUEUE_REF, "is not a queue reference",
                                               "write <namespace>/<LocalQueue>, for example team-a/default")]
    priority_class: Optional[str] = None
    pod_sets: list[PodSetShape] = Field(min_length=1)

    @property
    def queue_namespace(self) -> str:
        return self.queue.split("/", 1)[0]

    @property
    def queue_name(self) -> str:
        return self.queue.split("/", 1)[1]


class ManifestWorkload(ConfigModel):
    """An expected workload given as a job file (Job, JobSet, RayJob, MPIJob, ... with the
    `kueue.x-k8s.io/queue-name` label), relative to the project root: the Workload Kueue would
    create for it is what the pack proves."""

    manifest: str = Field(min_length=1)


def _workload_kind(value: Any) -> str:
    return "manifest" if isinstance(value, dict) and "manifest" in value else "shape"


# `{manifest: PATH}` or the hand-written shape; each entry is judged as the one it looks like.
ExpectedWorkloadEntry = Annotated[Union[Annotated[ExpectedWorkload, Tag("shape")],
                                        Annotated[ManifestWorkload, Tag("manifest")]],
                                  Discriminator(_workload_kind)]

