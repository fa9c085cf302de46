"""`pulumi preview --json` documents (Pulumi's PreviewDigest shape) for the plan-gate tests."""

from __future__ import annotations

STACK = "urn:pulumi:prod::aks-kueue::"
RG = STACK + "aksKueue:index:AksCluster$azure-native:resources:ResourceGroup::main-rg"
CLUSTER = STACK + "aksKueue:index:AksCluster$azure-native:containerservice:ManagedCluster::main-aks"
SYSTEM = STACK + "aksKueue:index:AksCluster$azure-native:containerservice:AgentPool::main-system"
A100 = STACK + "aksKueue:index:NodePools$azure-native:containerservice:AgentPool::pools-a100"
CPU = STACK + "aksKueue:index:NodePools$azure-native:containerservice:AgentPool::pools-cpu"
EXTENSION = STACK + "aksKueue:index:KueueInstall$azure-native:kubernetesconfiguration:Extension::kueue-extension"
RELEASE = STACK + "aksKueue:index:KueueInstall$kubernetes:helm.sh/v3:Release::kueue-helm"
TEAM_A = STACK + "aksKueue:index:KueueQueues$kubernetes:core/v1:Namespace::queues-namespace-team-a"
QUEUE = STACK + ("aksKueue:index:KueueQueues$kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue::"
                 "queues-localqueue-team-a/default")
MAINTENANCE = STACK + ("aksKueue:index:AksCluster$azure-native:containerservice:MaintenanceConfiguration::"
                       "main-auto-upgrade-schedule")


def state(urn, inputs, **extra):
    kind = urn.split("::")[2].rsplit("$", 1)[-1]
    return {"urn": urn, "custom": True, "type": kind, "inputs": inputs, "outputs": inputs, **extra}


def step(op, urn, old=None, new=None, **extra):
    found = {"op": op, "urn": urn, "provider": ""}
    if old is not None:
        found["oldState"] = old
    if new is not None:
        found["newState"] = new
    found.update(extra)
    return found


def pool_inputs(name, vm):
    return {"agentPoolName": name, "vmSize": vm, "mode": "User", "resourceName": "aks-batch-prod"}


def replace_pool(urn=A100, name="a100", delete_first=True):
    """A pool replaced on vmSize: three steps, deleting first as azure-native does for a named resource."""
    old = state(urn, pool_inputs(name, "Standard_NC24ads_A100_v4"), protect=False)
    new = state(urn, pool_inputs(name, "Standard_NC48ads_A100_v4"))
    steps = [step("delete-replaced", urn, old=old, new=new, replaceReasons=["vmSize"]),
             step("replace", urn, old=old, new=new, replaceReasons=["vmSize"], diffReasons=["vmSize"]),
             step("create-replacement", urn, old=old, new=new, replaceReasons=["vmSize"])]
    return steps if delete_first else list(reversed(steps))


def document(steps, allow=None):
    config = {"azure-native:location": "eastus", "aks-kueue:cluster": "{\"name\": \"aks-batch-prod\"}"}
    if allow is not None:
        import json

        config["aks-kueue:allowReplacement"] = json.dumps(allow)
    summary = {}
    for s in steps:
        summary[s["op"]] = summary.get(s["op"], 0) + 1
    return {"config": config, "steps": steps, "changeSummary": summary, "duration": 1000}


SAME_AND_UPDATE = [
    step("same", RG, old=state(RG, {"resourceGroupName": "rg"}), new=state(RG, {"resourceGroupName": "rg"})),
    step("update", CPU, old=state(CPU, pool_inputs("cpu", "Standard_D16s_v5")),
         new=state(CPU, {**pool_inputs("cpu", "Standard_D16s_v5"), "maxCount": 12}), diffReasons=["maxCount"]),
    step("create", MAINTENANCE, new=state(MAINTENANCE, {"configName": "aksManagedAutoUpgradeSchedule"})),
]


# A fleet: the manager's links to its workers, a worker's access for its manager (URNs as the program names them).
MANAGER_STACK = "urn:pulumi:fleet-manager::aks-kueue::"
WORKER_STACK = "urn:pulumi:fleet-westus3::aks-kueue::"
_KUEUE = "aksKueue:index:KueueQueues$kubernetes:kueue.x-k8s.io/v1beta2:"
MK_CLUSTER = MANAGER_STACK + _KUEUE + "MultiKueueCluster::queues-multikueuecluster-westus3-a100"
MK_CLUSTER_SWEDEN = MANAGER_STACK + _KUEUE + "MultiKueueCluster::queues-multikueuecluster-swedencentral-h100"
MK_CONFIG = MANAGER_STACK + _KUEUE + "MultiKueueConfig::queues-multikueueconfig-multikueue"
MK_CHECK = MANAGER_STACK + _KUEUE + "AdmissionCheck::queues-admissioncheck-multikueue"
KUBECONFIG_SECRET = MANAGER_STACK + ("aksKueue:index:MultiKueueManager$kubernetes:core/v1:Secret::"
                                     "fleet-kubeconfig-westus3-a100")
_WORKER = WORKER_STACK + "aksKueue:index:MultiKueueWorker$"
SERVICE_ACCOUNT = _WORKER + "kubernetes:core/v1:ServiceAccount::fleet-sa"
CLUSTER_ROLE = _WORKER + "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole::fleet-role"
ROLE_BINDING = _WORKER + "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding::fleet-binding"


def token_secret(generation):
    return _WORKER + f"kubernetes:core/v1:Secret::fleet-token-{generation}"


def mk_config_inputs(*clusters):
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueConfig", "metadata": {"name": "multikueue"},
            "spec": {"clusters": list(clusters)}}


def worker_config(generations=None):
    """A worker's `aks-kueue:fleet` as a plan's config carries it (JSON text)."""
    import json

    fleet = {"role": "worker", "manager": "acme/aks-kueue/fleet-manager"}
    if generations is not None:
        fleet["tokenGenerations"] = generations
    return {"aks-kueue:fleet": json.dumps(fleet)}
