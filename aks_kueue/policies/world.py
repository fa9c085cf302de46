"""The world the stack policies judge, rebuilt from the resources the engine hands them.

Nothing here reads the stack config: pools come from AgentPools, the cluster facts from
the ManagedCluster, the install mode from the Extension or Helm release, the queues from
Kueue's CustomResources, the namespaces from Namespace resources and the expected
workloads from their ConfigMap (`aks_kueue/expected_workloads.py`). A change made by hand
in code, past the settings, is judged the same way.

A resource the pack cannot read (a property of the wrong shape) becomes a `Problem`,
reported by its own policy, and is left out; an unknown value raises the policy
runtime's UnknownValueError, as the engine expects during a preview.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional, Sequence

from pulumi_policy.proxy import _DictProxy, _ListProxy

from aks_kueue.expected_workloads import CARRIER_KEY, is_carrier, read_carrier
from aks_kueue.feasibility import Analysis, FeasibilityInputs, InstallFacts, analyse
from aks_kueue.feasibility.inputs import PoolSpec, object_key
from aks_kueue.kueue.validate import KueueObject, load_object
from aks_kueue.policies import world_kueue as wk
from aks_kueue.policies.props import Unreadable, get, plain, stack_of
from aks_kueue.policies.world_pools import daemonset_placement, place_daemonsets, pool_spec


@dataclass(frozen=True)
class Problem:
    message: str
    urn: Optional[str]


@dataclass
class World:
    stack: str = ""
    cluster: Optional[wk.Cluster] = None
    pools: list[PoolSpec] = field(default_factory=list)
    installers: list[wk.Installer] = field(default_factory=list)
    kueue: list[wk.KueueResource] = field(default_factory=list)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    workloads: list[tuple[KueueObject, str]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    # What a finding names ("ClusterQueue team-a", "node pool t4", ...) -> the URN to pin it to.
    urns: dict[str, str] = field(default_factory=dict)
    # Verdicts computed once per world: analyses by VM overhead, Kueue's object checks.
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)

    @property
    def managed(self) -> bool:
        return any(i.mode == "managed" for i in self.installers)

    def analysis(self, vm_overhead: Fraction) -> Optional[Analysis]:
        """The feasibility analysis of the valid objects, once per overhead; None without a cluster."""
        if self.cluster is None:
            return None
        key = ("analysis", vm_overhead)
        if key not in self.memo:
            self.memo[key] = analyse(self._inputs(vm_overhead))
        return self.memo[key]

    def _inputs(self, vm_overhead: Fraction) -> FeasibilityInputs:
        from aks_kueue.policies.kueue_checks import valid_objects, valid_workloads

        cluster = self.cluster
        manifests = [obj.defaulted or obj.manifest for obj in valid_objects(self)]
        manifests += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels)}}
                      for name, labels in self.namespaces.items()]
        installer = self.installers[0].label if self.installers else "Kueue install"
        helm = next((i for i in self.installers if i.mode == "helm"), None)
        install = InstallFacts(
            region=cluster.region, kubernetes_version=cluster.kubernetes_version, sku=cluster.sku,
            node_provisioning=cluster.node_provisioning, installers=tuple(i.mode for i in self.installers),
            integrations=helm.integrations if helm else None,
            sources={"location": f"{cluster.label}.location", "kueue.install": installer,
                     "kueue.integrations": f"{installer}.integrations",
                     "cluster.sku": f"{cluster.label}.sku.name",
                     "cluster.nodeProvisioning": f"{cluster.label}.nodeProvisioningProfile.mode",
                     "cluster.kubernetesVersion": f"{cluster.label}.kubernetesVersion"})
        pools = [dataclasses.replace(p, vm_overhead=vm_overhead) for p in self.pools]
        workloads = [obj.defaulted or obj.manifest for obj in valid_workloads(self)]
        return FeasibilityInputs(pools=tuple(pools), manifests=tuple(manifests), workloads=tuple(workloads),
                                 install=install)


def build_world(resources: Sequence[Any]) -> World:
    world = World(stack=next((stack_of(r.urn) for r in resources), ""))
    by_urn = {r.urn: r for r in resources}
    daemonsets, kueue_resources = [], []
    for resource in resources:
        kind, props, urn = resource.resource_type, resource.props, resource.urn
        label = f"{kind.rsplit(':', 1)[-1]} {resource.name}"
        try:
            if wk.MANAGED_CLUSTER.match(kind):
                if world.cluster is not None:
                    raise Unreadable(f"{label}: a second ManagedCluster; the pack models one cluster per stack")
                world.cluster = wk.read_cluster(props, urn, label)
                world.urns["AKS cluster"] = urn
            elif (installer := wk.read_installer(kind, props, urn, label)) is not None:
                world.installers.append(installer)
                world.urns.setdefault("Kueue install", urn)
            elif wk.KUEUE_OBJECT.match(kind):
                kueue_resources.append((wk.read_kueue_object(kind, props, label), resource))
            elif kind == wk.NAMESPACE:
                name, labels = wk.read_namespace(props, label)
                world.namespaces[name] = labels
            elif kind == wk.CONFIG_MAP and is_carrier(plain(get(props, "metadata", default={}))):
                _read_workloads(world, get(props, "data", CARRIER_KEY), urn, label)
            elif kind == wk.DAEMONSET:
                daemonsets.append(daemonset_placement(props, label))
        except Unreadable as error:
            world.problems.append(Problem(str(error), urn))
    _read_pools(world, resources, daemonsets)
    for obj, resource in kueue_resources:
        world.kueue.append(wk.KueueResource(obj, resource.urn, _all_dependencies(resource, by_urn)))
        world.urns[_describe(obj)] = resource.urn
    return world


def _read_pools(world: World, resources: Sequence[Any], daemonsets: list) -> None:
    if world.cluster is None:
        return
    pools = []
    for resource in resources:
        if not wk.AGENT_POOL.match(resource.resource_type) or get(resource.props, "mode") == "System":
            continue  # the system pool runs system pods only and holds no Kueue quota
        label = f"AgentPool {resource.name}"
        try:
            pools.append(pool_spec(resource.props, label, world.cluster.default_max_pods))
            world.urns[f"node pool {pools[-1].name}"] = resource.urn
        except Unreadable as error:
            world.problems.append(Problem(str(error), resource.urn))
    world.pools = place_daemonsets(pools, daemonsets, world.cluster.region)


def _read_workloads(world: World, text: Any, urn: str, label: str) -> None:
    """Each readable document of the carrier; an unreadable one is a problem of its own."""
    try:
        documents = read_carrier(text)
    except ValueError as error:
        raise Unreadable(f"{label}: {error}") from None
    for index, document in enumerate(documents):
        where = f"{label} {CARRIER_KEY} document {index}"
        try:
            wk.check_identity(document, where)
        except Unreadable as error:
            world.problems.append(Problem(str(error), urn))
            continue
        obj = load_object(document, source=where)
        world.workloads.append((obj, urn))
        world.urns[f"workload {obj.namespace}/{obj.name}"] = urn


def _all_dependencies(resource: Any, by_urn: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    stack = [d for d in resource.dependencies or []]
    while stack:
        dependency = stack.pop()
        urn = getattr(dependency, "urn", dependency)
        if urn in seen:
            continue
        seen.add(urn)
        found = by_urn.get(urn)
        stack += list(found.dependencies or []) if found is not None else []
    return seen


def _describe(obj: KueueObject) -> str:
    kind, namespace, name = object_key(obj.manifest).split("/", 2)
    return f"{kind} {namespace + '/' if namespace else ''}{name}"


_lock = threading.Lock()
_last: tuple[str, Any] = ("", None)


def world_of(resources: Sequence[Any]) -> World:
    """The world of these resources, built once per AnalyzeStack: every stack policy is handed
    a fresh copy of the same resources, and rebuilding them for each would repeat the analysis."""
    global _last
    key = _fingerprint(resources)
    with _lock:
        if _last[0] == key:
            cached = _last[1]
        else:
            try:
                cached = build_world(resources)
            except Exception as error:  # e.g. an unknown value: every policy must see it, not only the first
                cached = error
            _last = (key, cached)
    if isinstance(cached, Exception):
        raise cached
    return cached


def _fingerprint(resources: Sequence[Any]) -> str:
    """Content, not identity: the servicer builds new resource objects for every policy."""
    return repr([(r.urn, r.resource_type, _raw(r.props), [getattr(d, "urn", d) for d in r.dependencies or []])
                 for r in resources])


def _raw(value: Any) -> Any:
    """A proxied value's content, without reading through the proxy (unknowns stay sentinels)."""
    kind = type(value)
    if kind is _DictProxy or kind is _ListProxy:
        value = value["__target"]
        kind = type(value)
    if kind is dict:
        return {k: _raw(v) for k, v in value.items()}
    if kind is list:
        return [_raw(v) for v in value]
    return value
