"""The stack outputs a fleet's members read of each other, both ways, and what each builds from them.

Every member exports `fleet`, plain JSON made from its own model:
- a worker: its cluster (region, API server access), Kueue install, pools, Kueue objects,
  namespaces and token generations, all the manager needs to judge dispatch to it before deploy;
- the manager: its teams (LocalQueues, priority classes, namespaces), which every worker mirrors,
  and the token generation of each worker's kubeconfig it holds, which the worker's rotation waits for.
A worker also exports `multikueueKubeconfig`, a secret, which the manager puts in a Secret.

Engine numbers arrive as floats and its maps lose their nulls; `normalise` puts every value the way
the engine hands it back, so that what was read equals what was exported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from aks_kueue.aks.pools import DaemonSetLoad, ExplicitNode, Pool
from aks_kueue.k8s.loader import LoadError, parse_single
from aks_kueue.kueue import multikueue as mk
from aks_kueue.kueue.convert import V1BETA2
from aks_kueue.kueue.multikueue import Role
from aks_kueue.model.conventions import MANAGED_BY
from aks_kueue.model.desired import Cluster, Install, KueueItem, Model, Namespace, Security
from aks_kueue.model.props import UnreadableValue
from aks_kueue.model.fleet import FLEET_OUTPUT, KUBECONFIG_OUTPUT, OUTPUTS_SCHEMA, Fleet, KubeconfigCheck

SECRET_PLACEHOLDER = "[secret]"   # what `pulumi stack output --json` prints for a secret
TEAM_KINDS = ("LocalQueue", "WorkloadPriorityClass")


@dataclass(frozen=True)
class StackOutputs:
    """Another stack's outputs as this stack read them (a StackReference, or a file offline)."""

    values: Mapping[str, Any]
    secret: frozenset[str] = frozenset()

    def get(self, name: str) -> Any:
        return normalise(self.values.get(name))


@dataclass(frozen=True)
class FleetInputs:
    """What a fleet member read of the others: this stack's own full name, and each other stack's
    outputs by its full name (a stack with no outputs yet is absent)."""

    stack: str = ""
    others: Mapping[str, StackOutputs] = field(default_factory=dict)


def normalise(value: Any) -> Any:
    """JSON as the engine hands it back: whole floats ints again, tuples lists, and no null in a map
    (the engine drops a null output property, so null and absent mean the same here)."""
    if isinstance(value, Mapping):
        return {str(k): normalise(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# ---- what a worker exports, and the manager reads back ---------------------------------------

def worker_outputs(model: Model) -> dict[str, Any]:
    """The worker's `fleet` output: what the manager's judge needs to know of this cluster."""
    fleet, cluster = model.fleet, model.cluster
    assert fleet is not None and cluster is not None, "a fleet member's model has both"
    return normalise({
        "schema": OUTPUTS_SCHEMA, "role": str(Role.WORKER), "stack": fleet.stack, "manager": fleet.manager,
        "cluster": {"name": cluster.name, "region": cluster.region, "kubernetesVersion": cluster.kubernetes_version,
                    "privateCluster": cluster.security.private_cluster,
                    "authorizedIpRanges": list(cluster.security.authorized_ip_ranges)},
        "kueue": _install_json(model.installs),
        "pools": [_pool_json(p) for p in model.pools],
        "objects": [{"key": o.key, "manifest": dict(o.manifest)} for o in model.objects],
        "namespaces": [{"name": n.name, "labels": dict(n.labels), "existing": n.existing} for n in model.namespaces],
        "tokenGenerations": list(fleet.token_generations),
    })


def _install_json(installs: tuple[Install, ...]) -> dict[str, Any]:
    if not installs:
        return {"install": "none"}
    install = installs[0]
    return {"install": install.mode, "version": install.version, "releaseTrain": install.release_train,
            "frameworks": list(install.frameworks) if install.frameworks is not None else None}


def _pool_json(pool: Pool) -> dict[str, Any]:
    explicit = pool.explicit
    return {"name": pool.name, "key": pool.key, "vmSize": pool.vm_size, "minCount": pool.min_count,
            "maxCount": pool.max_count, "maxPods": pool.max_pods, "labels": dict(pool.labels),
            "taints": [dict(t) for t in pool.taints], "zones": list(pool.zones), "gpuDriver": pool.gpu_driver,
            "gpuInstanceProfile": pool.gpu_instance_profile, "spot": pool.spot, "osSku": pool.os_sku,
            "explicit": None if explicit is None else {"cpu": explicit.cpu, "memoryBytes": explicit.memory_bytes,
                                                       "gpus": explicit.gpus, "gpuResource": explicit.gpu_resource},
            "daemonsets": [{"name": d.name, "requests": dict(d.requests)} for d in pool.daemonsets]}


def worker_model(outputs: Mapping[str, Any], stack: str) -> Model:
    """The worker's cluster as its `fleet` output describes it, each part keyed in the worker's
    stack (`acme/aks-kueue/fleet-westus3: aks-kueue:nodePools[0]`); UnreadableValue when it cannot be."""
    try:
        return _worker_model(outputs, stack)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise UnreadableValue(f"the `{FLEET_OUTPUT}` output of {stack} cannot be read ({type(error).__name__}: "
                              f"{error})", f"run pulumi up on {stack} with this program's version") from None


def _worker_model(outputs: Mapping[str, Any], stack: str) -> Model:
    if outputs.get("schema") != OUTPUTS_SCHEMA or outputs.get("role") != str(Role.WORKER):
        raise ValueError(f"it is not a worker's output of schema {OUTPUTS_SCHEMA}")
    cluster, kueue = outputs["cluster"], outputs["kueue"]
    pools = tuple(_pool(p, stack) for p in outputs["pools"])
    installs = () if kueue["install"] == "none" else (Install(
        kueue["install"], version=kueue.get("version"), release_train=kueue.get("releaseTrain"),
        frameworks=tuple(kueue["frameworks"]) if kueue.get("frameworks") is not None else None,
        key=f"{stack}: aks-kueue:kueue"),)
    objects = tuple(KueueItem(dict(o["manifest"]), in_stack(stack, str(o["key"]))) for o in outputs["objects"])
    namespaces = tuple(Namespace(str(n["name"]), dict(n.get("labels") or {}), bool(n.get("existing")))
                       for n in outputs["namespaces"])
    built = Cluster(name=str(cluster["name"]), region=str(cluster["region"]),
                    kubernetes_version=str(cluster["kubernetesVersion"]), key=f"{stack}: aks-kueue:cluster",
                    security=Security(private_cluster=bool(cluster.get("privateCluster")),
                                      authorized_ip_ranges=tuple(cluster.get("authorizedIpRanges") or ())))
    return Model(stack=stack, cluster=built, pools=pools, installs=installs, objects=objects, namespaces=namespaces)


def _pool(value: Mapping[str, Any], stack: str) -> Pool:
    explicit = value.get("explicit")
    return Pool(
        name=str(value["name"]), vm_size=str(value["vmSize"]), min_count=int(value["minCount"]),
        max_count=int(value["maxCount"]), max_pods=int(value["maxPods"]), labels=dict(value.get("labels") or {}),
        taints=tuple(dict(t) for t in value.get("taints") or ()), zones=tuple(value.get("zones") or ()),
        gpu_driver=value.get("gpuDriver"), gpu_instance_profile=value.get("gpuInstanceProfile"),
        spot=bool(value.get("spot")), os_sku=value.get("osSku"), key=in_stack(stack, str(value.get("key") or "")),
        explicit=None if explicit is None else ExplicitNode(
            int(explicit["cpu"]), int(explicit["memoryBytes"]), int(explicit.get("gpus") or 0),
            explicit.get("gpuResource")),
        daemonsets=tuple(DaemonSetLoad(str(d["name"]), dict(d["requests"])) for d in value.get("daemonsets") or ()))


def in_stack(stack: str, key: str) -> str:
    """A key of another stack's file, said with the stack it is in."""
    return f"{stack}: {key}"


# ---- what the manager exports, and each worker mirrors ----------------------------------------

def manager_outputs(model: Model) -> dict[str, Any]:
    """The manager's `fleet` output: the teams every worker mirrors, and the token generation of
    each worker's kubeconfig the manager holds (a worker keeps that token until the manager moves on)."""
    fleet = model.fleet
    assert fleet is not None, "a fleet member's model has its fleet"
    teams = {
        "localQueues": [{"namespace": o.namespace, "name": o.name, "spec": dict(o.manifest.get("spec") or {}),
                         "key": o.key} for o in model.of_kind("LocalQueue")],
        "workloadPriorityClasses": [{"name": o.name, "value": o.manifest.get("value"), "key": o.key,
                                     **({"description": o.manifest["description"]}
                                        if "description" in o.manifest else {})}
                                    for o in model.of_kind("WorkloadPriorityClass")],
        "namespaces": [{"name": n.name, "existing": n.existing} for n in model.namespaces],
    }
    workers = [{"name": w.name, "stack": w.stack, "tokenGeneration": _held_generation(w.outputs) if w.ready else None}
               for w in fleet.workers]
    return normalise({"schema": OUTPUTS_SCHEMA, "role": str(Role.MANAGER), "stack": fleet.stack,
                      "kueue": _install_json(model.installs), "teams": teams, "workers": workers})


def _held_generation(outputs: Optional[Mapping[str, Any]]) -> Optional[int]:
    generations = (outputs or {}).get("tokenGenerations")
    return generations[0] if isinstance(generations, list) and generations and isinstance(generations[0], int) \
        else None


def held_generation(manager: Optional[Mapping[str, Any]], worker_stack: Optional[str]) -> Optional[int]:
    """The token generation of this worker's kubeconfig the manager holds, as its output says."""
    for entry in (manager or {}).get("workers") or []:
        if isinstance(entry, Mapping) and entry.get("stack") == worker_stack:
            value = entry.get("tokenGeneration")
            return value if isinstance(value, int) else None
    return None


def mirrored_objects(manager: Mapping[str, Any], manager_stack: str) -> list[KueueItem]:
    """The manager's LocalQueues and WorkloadPriorityClasses, as a worker creates them (each keyed
    where the manager defines it); UnreadableValue when the output cannot be read."""
    try:
        if manager.get("schema") != OUTPUTS_SCHEMA or manager.get("role") != str(Role.MANAGER):
            raise ValueError(f"it is not a manager's output of schema {OUTPUTS_SCHEMA}")
        teams = manager["teams"]
        items = [_labelled({"apiVersion": V1BETA2, "kind": "LocalQueue",
                            "metadata": {"name": str(entry["name"]), "namespace": str(entry["namespace"])},
                            "spec": dict(entry.get("spec") or {})}, mirrored_key(manager_stack, str(entry["key"])))
                 for entry in teams["localQueues"]]
        for entry in teams["workloadPriorityClasses"]:
            body = {"value": entry["value"], **({"description": entry["description"]} if "description" in entry
                                                else {})}
            items.append(_labelled({"apiVersion": V1BETA2, "kind": "WorkloadPriorityClass",
                                    "metadata": {"name": str(entry["name"])}, **body},
                                   mirrored_key(manager_stack, str(entry["key"]))))
        return items
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise UnreadableValue(f"the `{FLEET_OUTPUT}` output of the manager {manager_stack} cannot be read "
                                f"({type(error).__name__}: {error}); run pulumi up on it with this program's "
                                "version") from None


def manager_existing_namespaces(manager: Optional[Mapping[str, Any]]) -> set[str]:
    """The teams' namespaces that exist already on the manager (`default`): a worker has them too."""
    teams = (manager or {}).get("teams") or {}
    return {str(n.get("name")) for n in teams.get("namespaces") or [] if isinstance(n, Mapping) and n.get("existing")}


def mirrored_key(manager_stack: str, key: str) -> str:
    return f"aks-kueue:fleet.manager ({in_stack(manager_stack, key)})"


# ---- the manager's MultiKueue objects --------------------------------------------------------

def multikueue_objects(fleet: Fleet) -> list[KueueItem]:
    """One MultiKueueCluster per worker whose kubeconfig is known, the MultiKueueConfig listing them in
    the declared order (none while there is no worker: it needs one), and the AdmissionCheck."""
    ready = fleet.ready_workers
    items = [_labelled(mk.cluster_manifest(w.name), w.key) for w in ready]
    if ready:
        items.append(_labelled(mk.config_manifest([w.name for w in ready], fleet.quota_management),
                               f"{fleet.key}.workers"))
    items.append(_labelled(mk.check_manifest(), fleet.key))
    return items


def _labelled(manifest: dict[str, Any], key: str) -> KueueItem:
    manifest["metadata"] = {**manifest["metadata"], "labels": dict(MANAGED_BY)}
    return KueueItem(manifest, key)


def kubeconfig_check(value: Any) -> Optional[KubeconfigCheck]:
    """What can be said of a worker's `multikueueKubeconfig` output: None when there is none; not
    known when it is a secret this run could not read; else Kueue's refusals, if any."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or value == SECRET_PLACEHOLDER:
        return KubeconfigCheck(known=False)
    try:
        config = parse_single(value, "the kubeconfig")
    except LoadError:
        return KubeconfigCheck(known=True, problems=("failed to parse kubeconfig",))
    return KubeconfigCheck(known=True, problems=tuple(mk.kubeconfig_problems(config)))


def worker_kubeconfig(outputs: Optional[StackOutputs]) -> Any:
    return None if outputs is None else outputs.values.get(KUBECONFIG_OUTPUT)


def fleet_outputs_of(outputs: Optional[StackOutputs]) -> Optional[dict[str, Any]]:
    value = None if outputs is None else outputs.get(FLEET_OUTPUT)
    return value if isinstance(value, dict) else None


def team_names(manager: Mapping[str, Any]) -> tuple[str, ...]:
    """What a manager's `fleet` output asks every worker to have, as findings name it: `namespace
    team-a`, `LocalQueue team-a/default`, `WorkloadPriorityClass batch-high`."""
    teams = manager.get("teams")
    if not isinstance(teams, Mapping):
        teams = {}
    queues = [q for q in teams.get("localQueues") or [] if isinstance(q, Mapping)]
    names = {f"namespace {q.get('namespace')}" for q in queues}
    names |= {f"LocalQueue {q.get('namespace')}/{q.get('name')}" for q in queues}
    names |= {f"WorkloadPriorityClass {c.get('name')}" for c in teams.get("workloadPriorityClasses") or []
              if isinstance(c, Mapping)}
    return tuple(sorted(names))
