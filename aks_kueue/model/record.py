"""The day-2 record of a model: what this update would leave for the next one's guard, and the
model as the last deployment leaves it (pools keep what they were created with).

The record names each resource users depend on with its replace-forcing inputs, in the provider's
names, exactly as the components send them (`aks_kueue/day2/state.py` says what is kept and why).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from aks_kueue.k8s.objects import map_at
from aks_kueue.aks.limits import dns_prefix
from aks_kueue.aks.pools import SYSTEM, Pool
from aks_kueue.day2.allow import (MANAGER_ENTRY, QUEUE_KINDS, Allowances, Entry, Protection, Target, queue_entry,
                                  worker_entry)
from aks_kueue.day2.names import tracked_paths
from aks_kueue.day2.replacement import (AGENT_POOL, HELM_RELEASE, KUBERNETES_EXTENSION, MANAGED_CLUSTER,
                                        MULTIKUEUE_CLUSTER, NAMESPACE, RESOURCE_GROUP, SERVICE_ACCOUNT, extract)
from aks_kueue.day2.state import Record, SystemPoolOwner, Tracked, kept_pools, settle
from aks_kueue.model.desired import Cluster, KueueItem, Model, Network
from aks_kueue.settings.base import snake

RESOURCE_GROUP_ENTRY = Entry(Target.RESOURCE_GROUP)
CLUSTER_ENTRY = Entry(Target.CLUSTER)
SYSTEM_POOL_ENTRY = Entry(Target.SYSTEM_POOL)
KUEUE_ENTRY = Entry(Target.KUEUE)
# The key of each create-only input of a pool, under the pool's own key.
_POOL_KEYS = {"vmSize": "vmSize", "gpuInstanceProfile": "gpuInstanceProfile", "availabilityZones": "zones",
              "enableEncryptionAtHost": "encryptionAtHost", "osDiskType": "osDiskType", "osDiskSizeGB": "osDiskSizeGb",
              "maxPods": "maxPods", "scaleSetPriority": "spot", "scaleSetEvictionPolicy": "spot"}
# What a Spot pool is created with (the AgentPool inputs `components/node_pools/inputs.py` sends).
SPOT_INPUTS = {"scaleSetPriority": "Spot", "scaleSetEvictionPolicy": "Delete", "spotMaxPrice": -1}
# The network profile's fields: the provider's name -> the key under aks-kueue:cluster.network.
_NETWORK_KEYS = {"networkPlugin": "plugin", "networkPluginMode": "pluginMode", "networkPolicy": "policy",
                 "networkDataplane": "dataplane", "podCidr": "podCidr", "serviceCidr": "serviceCidr",
                 "dnsServiceIP": "dnsServiceIp", "outboundType": "outboundType"}


def pool_entry(pool: Pool) -> Entry:
    """How `aks-kueue:allowReplacement` and the record name a pool."""
    return SYSTEM_POOL_ENTRY if pool.mode == SYSTEM else Entry(Target.NODE_POOL, pool.name)


def namespace_entry(namespace: str) -> Entry:
    return Entry(Target.NAMESPACE, namespace)


def network_profile(network: Network) -> dict[str, Any]:
    """The network profile in the provider's names: what is sent and what the guard compares. Each
    field of the model is its stack key in snake case (`dnsServiceIp`: `dns_service_ip`)."""
    return {path: getattr(network, snake(key)) for path, key in _NETWORK_KEYS.items()}


def pool_create_only(pool: Pool) -> dict[str, Any]:
    """A pool's create-only inputs, in the provider's names, as sent on creation."""
    spot = SPOT_INPUTS if pool.spot else {}
    return {"vmSize": pool.vm_size, "gpuInstanceProfile": pool.gpu_instance_profile,
            "availabilityZones": list(pool.zones) or None, "enableEncryptionAtHost": pool.encryption_at_host,
            "osDiskType": pool.os_disk_type, "osDiskSizeGB": pool.os_disk_size_gb, "maxPods": pool.max_pods,
            "scaleSetPriority": spot.get("scaleSetPriority"),
            "scaleSetEvictionPolicy": spot.get("scaleSetEvictionPolicy")}


def desired_record(model: Model, protection: Protection) -> Record:
    """The record this update would leave, before the last deployment is known (`settle` then
    decides who owns the system pool and what the kept pools keep)."""
    cluster = model.cluster
    if cluster is None:
        raise ValueError("a model without a cluster has no day-2 record")
    found = [*_cluster(cluster, protection), *(_pool(cluster, p, protection) for p in (*cluster.system_pools,
                                                                                        *model.pools))]
    install = model.installs[0].mode if model.installs else "none"
    if install != "none":
        kind, label = ((KUBERNETES_EXTENSION, "the Kueue installer (managed extension)") if install == "managed"
                       else (HELM_RELEASE, "the Kueue installer (Helm release)"))
        found.append(Tracked(KUEUE_ENTRY, kind, label, {}, protection.protects(KUEUE_ENTRY),
                             key="aks-kueue:kueue.install"))
    found += [Tracked(namespace_entry(ns.name), NAMESPACE, f"Namespace {ns.name}", {}, False,
                      retained=protection.retains(namespace_entry(ns.name)), key="aks-kueue:queues.localQueues")
              for ns in model.namespaces if not ns.existing]
    if install != "none":
        found += [queue_tracked(obj) for obj in model.objects if obj.kind in QUEUE_KINDS]
        found += fleet_tracked(model)
    objects = model.objects if install != "none" else ()
    return Record(resources={t.entry: t for t in found}, kueue_install=install,
                  kubernetes_version=cluster.kubernetes_version,
                  upgrade_channel=cluster.security.upgrade_channel or "none",
                  system_pool_owner=SystemPoolOwner.CLUSTER,
                  priority_classes={o.name: o.manifest.get("value") for o in objects
                                    if o.kind == "WorkloadPriorityClass"},
                  provisioning_configs={o.name: dict(o.manifest.get("spec") or {}) for o in objects
                                        if o.kind == "ProvisioningRequestConfig"})


def _cluster(cluster: Cluster, protection: Protection) -> list[Tracked]:
    shared = {"resourceGroupName": "aks-kueue:resourceGroupName", "location": "azure-native:location",
              "resourceName": f"{cluster.key}.name"}
    group_facts = extract(RESOURCE_GROUP, {"resourceGroupName": cluster.resource_group, "location": cluster.region})
    cluster_facts = extract(MANAGED_CLUSTER, {
        "resourceGroupName": cluster.resource_group, "resourceName": cluster.name, "location": cluster.region,
        "dnsPrefix": dns_prefix(cluster.name), "networkProfile": network_profile(cluster.network)})
    return [
        Tracked(RESOURCE_GROUP_ENTRY, RESOURCE_GROUP, f"ResourceGroup {cluster.resource_group}", group_facts,
                protection.protects(RESOURCE_GROUP_ENTRY), keys=shared, key="aks-kueue:resourceGroupName"),
        Tracked(CLUSTER_ENTRY, MANAGED_CLUSTER, f"ManagedCluster {cluster.name}", cluster_facts,
                protection.protects(CLUSTER_ENTRY), key=cluster.key,
                keys={**shared, "dnsPrefix": f"{cluster.key}.name",
                      **{f"networkProfile.{k}": f"{cluster.key}.network.{v}" for k, v in _NETWORK_KEYS.items()}}),
    ]


def _pool(cluster: Cluster, pool: Pool, protection: Protection) -> Tracked:
    entry = pool_entry(pool)
    facts = extract(AGENT_POOL, {"resourceGroupName": cluster.resource_group, "resourceName": cluster.name,
                                 "agentPoolName": pool.name, **pool_create_only(pool)})
    keys = {"resourceGroupName": "aks-kueue:resourceGroupName", "resourceName": f"{cluster.key}.name",
            "agentPoolName": f"{pool.key}.name", **{path: f"{pool.key}.{key}" for path, key in _POOL_KEYS.items()}}
    label = "the system pool" if entry == SYSTEM_POOL_ENTRY else f"AgentPool {pool.name}"
    return Tracked(entry, AGENT_POOL, label, facts, protection.protects(entry), keys=keys, key=pool.key,
                   chosen=pool.chosen)


def queue_tracked(obj: KueueItem) -> Tracked:
    """A Kueue object as the record keeps it: the fields Kueue may refuse to change in place."""
    spec = map_at(obj.manifest, "spec")
    found = {f"spec.{field}": spec[field] for field in (p.split(".", 1)[1] for p in tracked_paths(obj.kind))
             if spec.get(field) is not None}
    where = f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name
    # A stack-file object's key takes the field's path; a queue manifest's ("FILE doc N (Kind name)") does not.
    keys = {path: obj.key if " " in obj.key else f"{obj.key}.{path}" for path in found}
    token = f"kubernetes:{obj.manifest.get('apiVersion')}:{obj.kind}"
    return Tracked(queue_entry(obj.kind, obj.namespace, obj.name), token, f"{obj.kind} {where}", found, False,
                   keys=keys, key=obj.key)


def fleet_tracked(model: Model) -> list[Tracked]:
    """A fleet member's links as the record keeps them: on a manager every listed worker, with whether
    this update connects to it (a MultiKueueCluster: only then may it hold workloads the manager
    dispatched), on a worker the manager its service account lets in."""
    fleet = model.fleet
    if fleet is None:
        return []
    if fleet.manages:
        return [Tracked(worker_entry(w.name), MULTIKUEUE_CLUSTER, f"worker {w.name}",
                        {"stack": w.stack, "connected": w.ready}, False, key=w.key) for w in fleet.workers]
    return [Tracked(MANAGER_ENTRY, SERVICE_ACCOUNT, f"the access of manager {fleet.manager}",
                    {"stack": fleet.manager}, False, key=f"{fleet.key}.manager")]


def settled(model: Model, previous: Optional[Record]) -> Model:
    """The model as this update leaves it after the last deployment (`previous`): the pools it keeps
    marked existing, with the create-only inputs they were created with. What the program registers
    (the components read the same settled record through the guard) and what the pack reads back."""
    if model.cluster is None or previous is None:
        return model
    record = settle(desired_record(model, Protection(False, Allowances())), previous)
    kept = set(kept_pools(record, previous))

    def keep(pool: Pool) -> Pool:
        entry = pool_entry(pool)
        facts = record.resources[entry].facts
        return replace(pool, existing=entry in kept, encryption_at_host=facts.get("enableEncryptionAtHost") is True,
                       os_disk_type=facts.get("osDiskType"), os_disk_size_gb=facts.get("osDiskSizeGB"))

    cluster = replace(model.cluster, system_pools=tuple(keep(p) for p in model.cluster.system_pools))
    return replace(model, cluster=cluster, pools=tuple(keep(p) for p in model.pools))
