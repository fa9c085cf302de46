"""The analysis inputs, built from a stack's settings and its validated queue plan.

The only place the feasibility package reads settings; the policy pack builds the same
inputs from Pulumi resource inputs instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from aks_kueue.aks.allocatable import default_max_pods
from aks_kueue.aks.device_plugin import REQUESTS, mig_strategy
from aks_kueue.feasibility.analysis import Analysis, analyse
from aks_kueue.feasibility.inputs import (ExplicitNode, FeasibilityInputs, InstallFacts, Manifest,
                                          PlacedDaemonSet, PoolSpec, object_key)
from aks_kueue.kueue.convert import V1BETA2
from aks_kueue.k8s.quantity import parse_quantity
from aks_kueue.queues import QueuePlan, plan_queues
from aks_kueue.settings import parse_settings
from aks_kueue.settings.pools import NodePool
from aks_kueue.settings.queues import ExpectedWorkload
from aks_kueue.settings.root import Settings

DEVICE_PLUGIN = "nvidia-device-plugin"


def inputs_from_settings(settings: Settings, plan: QueuePlan) -> FeasibilityInputs:
    network = settings.cluster.network
    fallback_pods = default_max_pods(network.plugin, network.plugin_mode)
    manifests, sources = [], {}
    for obj in plan.objects:
        manifest = obj.defaulted or obj.manifest
        manifests.append(manifest)
        if obj.source.startswith("aks-kueue:queues."):  # manifests from files are named by Kind/name
            sources[object_key(manifest)] = obj.source
    # The admission core matches each ClusterQueue's namespaceSelector against these labels.
    manifests += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels)}}
                  for name, labels in plan.namespaces.items()]
    workloads = []
    for i, expected in enumerate(settings.expected_workloads):
        workload = workload_manifest(expected)
        workloads.append(workload)
        sources[object_key(workload)] = f"aks-kueue:expectedWorkloads[{i}]"
    cluster, kueue = settings.cluster, settings.kueue
    install = InstallFacts(
        region=settings.location, kubernetes_version=cluster.kubernetes_version, sku=cluster.sku,
        node_provisioning=cluster.effective_node_provisioning, installers=(kueue.install,),
        integrations=tuple(kueue.integrations) if kueue.integrations is not None else None,
        sources={"location": "azure-native:location", **{
            key: f"aks-kueue:{key}" for key in ("kueue.install", "kueue.integrations", "cluster.sku",
                                                 "cluster.nodeProvisioning", "cluster.kubernetesVersion")}})
    return FeasibilityInputs(
        pools=tuple(pool_spec(p, i, fallback_pods) for i, p in enumerate(settings.node_pools)),
        manifests=tuple(manifests), workloads=tuple(workloads), install=install, sources=sources)


def pool_spec(pool: NodePool, index: int, fallback_max_pods: int) -> PoolSpec:
    explicit = None
    if pool.capacity is not None:
        explicit = ExplicitNode(cpu=pool.capacity.cpu, memory_bytes=int(parse_quantity(pool.capacity.memory)),
                                gpus=pool.capacity.gpus, gpu_resource=pool.capacity.gpu_resource)
    # The program runs the NVIDIA device plugin on these pools (`components/gpu_device_plugin.py`).
    daemonsets = (PlacedDaemonSet(DEVICE_PLUGIN, dict(REQUESTS)),) if pool.needs_device_plugin else ()
    return PoolSpec(
        name=pool.name, vm_size=pool.vm_size, max_count=pool.max_count,
        max_pods=pool.max_pods or fallback_max_pods, labels=dict(pool.labels),
        taints=tuple(pool.node_taint_objects), zones=tuple(pool.zones), gpu_driver=pool.effective_gpu_driver,
        gpu_instance_profile=pool.gpu_instance_profile, mig_strategy=mig_strategy(pool), spot=pool.spot,
        explicit=explicit, daemonsets=daemonsets, source=f"aks-kueue:nodePools[{index}]")


def workload_manifest(expected: ExpectedWorkload) -> Manifest:
    """An expected job shape as the Kueue v1beta2 Workload its job would create."""
    pod_sets = []
    for shape in expected.pod_sets:
        pod_spec: dict[str, Any] = {"containers": [{"name": "main", "resources": {"requests": dict(shape.requests)}}]}
        if shape.node_selector:
            pod_spec["nodeSelector"] = dict(shape.node_selector)
        if shape.tolerations:
            pod_spec["tolerations"] = [t.model_dump(by_alias=True, exclude_none=True) for t in shape.tolerations]
        pod_set: dict[str, Any] = {"name": shape.name, "count": shape.count, "template": {"spec": pod_spec}}
        if shape.min_count is not None:
            pod_set["minCount"] = shape.min_count
        pod_sets.append(pod_set)
    spec: dict[str, Any] = {"queueName": expected.queue_name, "podSets": pod_sets}
    if expected.priority_class is not None:
        spec["priorityClassRef"] = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass",
                                    "name": expected.priority_class}
    return {"apiVersion": V1BETA2, "kind": "Workload",
            "metadata": {"name": expected.name, "namespace": expected.queue_namespace}, "spec": spec}


def analyse_config(config: Mapping[str, str], root: Path) -> Analysis:
    """The analysis of a stack's flat Pulumi config (settings errors raise SettingsError)."""
    settings = parse_settings(config)
    return analyse(inputs_from_settings(settings, plan_queues(settings, root)))
