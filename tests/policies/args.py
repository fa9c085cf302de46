"""Policy arguments built as the engine builds them (pulumi.md 1.6a), and a small stack to edit.

Props are wrapped in pulumi_policy's unknown-checking proxy, as `_PolicyAnalyzerServicer`
wraps them; `UNKNOWN` in a value makes reading it raise as during a real preview.
"""

from __future__ import annotations

import copy
from typing import Any, Iterable, Optional

from pulumi_policy import (PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions, ResourceValidationArgs,
                           StackValidationArgs)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy

from aks_kueue.model.carrier import carrier_manifest
from aks_kueue.preview.pack import policy_view

UNKNOWN = UNKNOWN_STRING_VALUE
CLUSTER = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
EXTENSION = "azure-native:kubernetesconfiguration:Extension"
RELEASE = "kubernetes:helm.sh/v3:Release"
PROVIDER = "pulumi:providers:kubernetes"


def urn(type_token: str, name: str, stack: str = "dev") -> str:
    return f"urn:pulumi:{stack}::aks-kueue::{type_token}::{name}"


def resource(type_token: str, name: str, props: dict, depends_on: Iterable[PolicyResource] = (),
             stack: str = "dev", secret_outputs: Iterable[str] = ()) -> PolicyResource:
    opts = PolicyResourceOptions(protect=False, ignore_changes=[], delete_before_replace=None, aliases=[],
                                 custom_timeouts=PolicyCustomTimeouts(0, 0, 0),
                                 additional_secret_outputs=list(secret_outputs), parent=None)
    return PolicyResource(type_token, unknown_checking_proxy(copy.deepcopy(props)), urn(type_token, name, stack),
                          name, opts, None, None, list(depends_on), {})


def stack_violations(policy, resources: list[PolicyResource], config: Optional[dict] = None) -> list[tuple]:
    seen: list[tuple] = []
    policy.validate(StackValidationArgs(resources, config), lambda message, urn=None: seen.append((message, urn)))
    return seen


def resource_violations(policy, type_token: str, props: dict, stack: str = "dev",
                        config: Optional[dict] = None) -> list[str]:
    seen: list[str] = []
    args = ResourceValidationArgs(type_token, unknown_checking_proxy(copy.deepcopy(props)),
                                  urn(type_token, "main-aks", stack), "main-aks", None, None, config)
    policy.validate(args, lambda message, urn=None: seen.append(message))
    return seen


# A hardened cluster as the program registers it (the prod stack's inputs, abridged).
CLUSTER_PROPS = {
    "location": "eastus", "kubernetesVersion": "1.34", "sku": {"name": "Base", "tier": "Standard"},
    "enableRBAC": True, "disableLocalAccounts": True,
    "aadProfile": {"managed": True, "enableAzureRBAC": True},
    "apiServerAccessProfile": {"enablePrivateCluster": False, "authorizedIPRanges": ["203.0.113.0/24"]},
    "networkProfile": {"networkPlugin": "azure", "networkPluginMode": "overlay", "networkPolicy": "cilium"},
    "autoUpgradeProfile": {"upgradeChannel": "patch", "nodeOSUpgradeChannel": "NodeImage"},
    "nodeProvisioningProfile": {"mode": "Manual"},
    "agentPoolProfiles": [{"name": "system", "mode": "System", "vmSize": "Standard_D4s_v5", "count": 1,
                           "nodeTaints": ["CriticalAddonsOnly=true:NoSchedule"], "enableEncryptionAtHost": True}],
    "securityProfile": {"workloadIdentity": {"enabled": True}, "imageCleaner": {"enabled": True, "intervalHours": 168},
                        "defender": {"logAnalyticsWorkspaceResourceId": UNKNOWN,
                                     "securityMonitoring": {"enabled": True}}},
    "addonProfiles": {"azurepolicy": {"enabled": True},
                      "omsagent": {"enabled": True, "config": {"logAnalyticsWorkspaceResourceID": UNKNOWN}}},
    "azureMonitorProfile": {"metrics": {"enabled": True}},
}


def pool_props(name: str, vm_size: str, max_count: int, **extra: Any) -> dict:
    """A pool as the program registers it: host encryption on, an ephemeral OS disk where the size holds one."""
    from aks_kueue.aks.pools import default_os_disk

    disk, size = default_os_disk(vm_size, None) if isinstance(vm_size, str) else (None, None)
    return {"agentPoolName": name, "vmSize": vm_size, "mode": "User", "enableAutoScaling": True,
            "minCount": 0, "maxCount": max_count, "maxPods": 110, "enableEncryptionAtHost": True,
            **({"osDiskType": disk} if disk else {}), **({"osDiskSizeGB": size} if size else {}), **extra}


def kueue(kind: str, name: str, spec: Optional[dict] = None, namespace: Optional[str] = None, **fields) -> tuple:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    body = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": metadata, **fields}
    if spec is not None:
        body["spec"] = spec
    return f"kubernetes:kueue.x-k8s.io/v1beta2:{kind}", body


def gpu_queue_stack(gpu_quota: str = "2", stack: str = "dev", workloads: Optional[list] = None,
                    installer: str = "helm", edit=None, environment: Optional[str] = None,
                    device_plugin: bool = True) -> list[PolicyResource]:
    """A cluster, a CPU pool and a 2-node T4 pool (with the program's NVIDIA device plugin on it, as
    AKS installs the driver), Kueue from Helm, one team queue: built by hand."""
    cluster = resource(CLUSTER, "main-aks", CLUSTER_PROPS, stack=stack)
    cpu = resource(POOL, "pools-cpu", pool_props("cpu", "Standard_D8s_v5", 3), [cluster], stack)
    t4 = resource(POOL, "pools-t4", pool_props("t4", "Standard_NC8as_T4_v3", 2, nodeTaints=["sku=gpu:NoSchedule"]),
                  [cluster], stack)
    if installer == "helm":
        install = resource(RELEASE, "kueue-helm", {"chart": "oci://registry.k8s.io/kueue/charts/kueue",
                                                   "version": "0.19.2"}, stack=stack)
    else:
        install = resource(EXTENSION, "kueue-extension", {"extensionType": "microsoft.kueue",
                                                          "version": "0.19.6-aks.0.4.4",
                                                          "autoUpgradeMinorVersion": False}, [cpu, t4], stack)
    objects = [
        kueue("ResourceFlavor", "cpu", {"nodeLabels": {"kubernetes.azure.com/agentpool": "cpu"}}),
        kueue("ResourceFlavor", "t4", {"nodeLabels": {"kubernetes.azure.com/agentpool": "t4"},
                                       "nodeTaints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]}),
        kueue("ClusterQueue", "ml", {"namespaceSelector": {}, "resourceGroups": [{
            "coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": [
                {"name": "cpu", "resources": [{"name": "cpu", "nominalQuota": "20"},
                                              {"name": "memory", "nominalQuota": "72Gi"},
                                              {"name": "nvidia.com/gpu", "nominalQuota": "0"}]},
                {"name": "t4", "resources": [{"name": "cpu", "nominalQuota": "14"},
                                             {"name": "memory", "nominalQuota": "90Gi"},
                                             {"name": "nvidia.com/gpu", "nominalQuota": gpu_quota}]}]}]}),
        kueue("LocalQueue", "default", {"clusterQueue": "ml"}, namespace="ml"),
    ]
    if edit is not None:
        edit(objects)
    resources = [cluster, cpu, t4, install,
                 resource("kubernetes:core/v1:Namespace", "ns-ml",
                          {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}}, stack=stack)]
    if device_plugin:
        resources.append(resource("kubernetes:apps/v1:DaemonSet", "gpu-plugin", t4_device_plugin(), [t4], stack))
    resources += [resource(t, f"{b['kind'].lower()}-{b['metadata']['name']}", b, [install], stack) for t, b in objects]
    if workloads or environment:
        resources.append(carrier(workloads or [], environment or "production", stack))
    return resources


def t4_device_plugin() -> dict:
    """The program's device plugin DaemonSet for the T4 pool of `gpu_queue_stack`."""
    from aks_kueue.aks.device_plugin import daemonset
    from aks_kueue.aks.pools import Pool

    t4 = Pool(name="t4", vm_size="Standard_NC8as_T4_v3", max_count=2, max_pods=110,
              taints=({"key": "sku", "value": "gpu", "effect": "NoSchedule"},))
    return daemonset("nvidia-device-plugin", "none", [t4])


def carrier(workloads: list, environment: str = "production", stack: str = "dev", keys=None) -> PolicyResource:
    """The program's model ConfigMap: expected workloads, stack keys and the environment."""
    return resource("kubernetes:core/v1:ConfigMap", "expected", carrier_manifest(workloads, keys or {}, environment),
                    stack=stack)


def workload(name: str, requests: dict, count: int = 1, tolerate_gpu: bool = True) -> dict:
    pod = {"containers": [{"name": "main", "resources": {"requests": requests}}]}
    if tolerate_gpu:
        pod["tolerations"] = [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": name, "namespace": "ml"},
            "spec": {"queueName": "default", "podSets": [{"name": "main", "count": count,
                                                           "template": {"spec": pod}}]}}


# A recorded preview as the servicer hands it to a stack policy.
policy_resources = policy_view
