"""The AKS production security baseline (`../shared/reference/aks.md` section e).

Each item is a resource policy over the ManagedCluster's (or a system AgentPool's)
inputs, advisory by default: a finding is a warning in every stack. Which items are
mandatory in production is decided by `aks-security-baseline-in-prod`, a stack policy
that knows the stack's name from the resources' URNs (urn:pulumi:<stack>::...) and
runs the same checks for the items its `require` list names.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

from pulumi_policy import EnforcementLevel, PolicyConfigSchema
from pulumi_policy.deserialize import serialize_properties

from aks_kueue.policies.base import PROD_STACKS, Violation, resource_policy, resources_policy
from aks_kueue.policies.props import Unreadable, get, sequence, stack_of, string_list
from aks_kueue.policies.world_kueue import AGENT_POOL, MANAGED_CLUSTER

SYSTEM_TAINT = "CriticalAddonsOnly=true:NoSchedule"
NETWORK_POLICIES = ("azure", "calico", "cilium")
UPGRADE_CHANNELS = ("patch", "stable", "rapid", "node-image")
NODE_OS_CHANNELS = ("NodeImage", "SecurityPatch")
_KUBECONFIG = re.compile(r"kind[\"']?\s*:\s*[\"']?Config\b")


def _is_cluster(resource_type: str) -> bool:
    return bool(MANAGED_CLUSTER.match(resource_type))


def local_accounts(props: Any) -> list[str]:
    if get(props, "disableLocalAccounts") is not True:
        return ["disableLocalAccounts is not true: AKS then issues static cluster-admin credentials that bypass "
                "Entra ID and cannot be revoked per user; set cluster.security.localAccountsDisabled: true"]
    return []


def azure_rbac(props: Any) -> list[str]:
    found = []
    if get(props, "enableRBAC") is False:
        found.append("enableRBAC is false: Kubernetes RBAC is off; turn it on")
    if get(props, "aadProfile", "managed") is not True or get(props, "aadProfile", "enableAzureRBAC") is not True:
        found.append("aadProfile.managed and aadProfile.enableAzureRBAC are not both true: cluster access is not "
                     "authorised by Entra ID with Azure RBAC; set cluster.security.azureRbac: true")
    return found


def network_policy(props: Any) -> list[str]:
    chosen = get(props, "networkProfile", "networkPolicy")
    if chosen not in NETWORK_POLICIES:
        return [f"networkProfile.networkPolicy is {chosen or 'unset'}: pods can reach every other pod; use one of "
                f"{', '.join(NETWORK_POLICIES)} (cluster.network.policy)"]
    return []


def api_server_access(props: Any) -> list[str]:
    access = get(props, "apiServerAccessProfile", default={})
    if get(access, "enablePrivateCluster") is True:
        return []
    ranges = string_list(get(access, "authorizedIPRanges", default=[]), "apiServerAccessProfile.authorizedIPRanges")
    if not ranges or "0.0.0.0/0" in ranges:
        return ["the API server is public to every address: set apiServerAccessProfile.authorizedIPRanges "
                "(cluster.security.apiServerAuthorizedIpRanges) or make the cluster private"]
    return []


def upgrade_channels(props: Any) -> list[str]:
    found = []
    channel = get(props, "autoUpgradeProfile", "upgradeChannel")
    if channel not in UPGRADE_CHANNELS:
        found.append(f"autoUpgradeProfile.upgradeChannel is {channel or 'unset (none)'}: the cluster never takes "
                     f"Kubernetes patches by itself; use one of {', '.join(UPGRADE_CHANNELS)}")
    node_os = get(props, "autoUpgradeProfile", "nodeOSUpgradeChannel", default="NodeImage")
    if node_os not in NODE_OS_CHANNELS:
        found.append(f"autoUpgradeProfile.nodeOSUpgradeChannel is {node_os}: node OS security patches are not "
                     f"applied; use {' or '.join(NODE_OS_CHANNELS)}")
    return found


def system_pool_isolation(props: Any) -> list[str]:
    """System pools carry CriticalAddonsOnly, so batch pods never land beside CoreDNS and konnectivity."""
    profiles = sequence(get(props, "agentPoolProfiles", default=[]), "agentPoolProfiles")
    pools = [(get(p, "name", default=f"agentPoolProfiles[{i}]"), p) for i, p in enumerate(profiles)]
    if "agentPoolProfiles" not in list(props):  # an AgentPool resource is one pool
        pools = [(get(props, "agentPoolName", default="this pool"), props)]
    found = []
    for name, pool in pools:
        if get(pool, "mode") != "System":
            continue
        taints = string_list(get(pool, "nodeTaints", default=[]), f"{name}.nodeTaints")
        if SYSTEM_TAINT not in taints:
            found.append(f"system pool {name} lacks the taint {SYSTEM_TAINT}, so user and batch pods can land "
                         "beside the cluster's critical add-ons; add it")
    return found


def kubeconfig_secret(resources: Iterable[Any]) -> list[Violation]:
    """What a policy can see of the kubeconfig's secrecy.

    The stack output and the credentials invoke are not resources, and the policy runtime
    unwraps secret values before a policy reads them. What it does see: the Kubernetes
    provider that holds the kubeconfig names it in additionalSecretOutputs (so the state keeps
    it encrypted whatever is passed), and no other resource carries a kubeconfig in its inputs.
    """
    found = []
    for resource in resources:
        if resource.resource_type.startswith("pulumi:providers:"):
            if "kubeconfig" in list(resource.props) and \
                    "kubeconfig" not in list(resource.opts.additional_secret_outputs or []):
                found.append((f"provider {resource.name} holds a kubeconfig without additionalSecretOutputs: "
                              "[kubeconfig]; name it there so the state always stores it encrypted", resource.urn))
        elif resource.resource_type != "kubernetes:core/v1:Secret" and _carries_kubeconfig(resource.props):
            found.append((f"{resource.resource_type} {resource.name} carries a kubeconfig in its inputs, readable "
                          "by anyone who can read the resource; keep it in the provider or a Secret", resource.urn))
    return found


def _carries_kubeconfig(props: Any) -> bool:
    """Unknown values are sentinel strings here: they are never read as a kubeconfig."""
    stack = [serialize_properties(props)]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += list(value.values())
        elif isinstance(value, list):
            stack += value
        elif isinstance(value, str) and _KUBECONFIG.search(value) and "clusters" in value and "users" in value:
            return True
    return False


CLUSTER_CHECKS: dict[str, tuple[str, Callable[[Any], list[str]]]] = {
    "aks-local-accounts-disabled": ("Local accounts are disabled, so every access goes through Entra ID.",
                                    local_accounts),
    "aks-azure-rbac": ("Kubernetes authorisation uses Entra ID with Azure RBAC.", azure_rbac),
    "aks-network-policy": ("A network policy engine (azure, calico or cilium) is enabled.", network_policy),
    "aks-api-server-access-restricted": ("The API server is private or limited to authorized IP ranges.",
                                         api_server_access),
    "aks-auto-upgrade-channels": ("The cluster follows a Kubernetes upgrade channel and a node OS channel.",
                                  upgrade_channels),
}
KUBECONFIG_POLICY = "aks-kubeconfig-secret"
SYSTEM_POOL_POLICY = "aks-system-pool-isolated"


def _readable(check: Callable[[Any], list[str]]) -> Callable[[Any, dict], list[str]]:
    def run(props: Any, config: dict) -> list[str]:
        try:
            return check(props)
        except Unreadable as error:
            return [f"cannot be judged: {error}"]
    return run


BASELINE = [resource_policy(name, description, _is_cluster, _readable(check))
            for name, (description, check) in CLUSTER_CHECKS.items()]
BASELINE.append(resource_policy(
    SYSTEM_POOL_POLICY, "System node pools are tainted CriticalAddonsOnly=true:NoSchedule.",
    lambda t: _is_cluster(t) or bool(AGENT_POOL.match(t)), _readable(system_pool_isolation)))
BASELINE.append(resources_policy(
    KUBECONFIG_POLICY, "The cluster's kubeconfig stays secret: its provider keeps it in additionalSecretOutputs, "
    "and no other resource carries one in its inputs.",
    lambda resources, config: kubeconfig_secret(resources), level=EnforcementLevel.ADVISORY))

REQUIRE_DEFAULT = ["aks-local-accounts-disabled", "aks-azure-rbac", "aks-api-server-access-restricted",
                   KUBECONFIG_POLICY]


def _prod_baseline(resources: list, config: dict) -> list[Violation]:
    stack = next((stack_of(r.urn) for r in resources), "")
    if stack not in set(config.get("prodStacks") or []):
        return []
    required = list(config.get("require") or [])
    found: list[Violation] = []
    for resource in resources:
        if not _is_cluster(resource.resource_type):
            continue
        for name in required:
            if name in CLUSTER_CHECKS:
                found += [(f"{name} (required in production stack {stack!r}): {message}", resource.urn)
                          for message in _readable(CLUSTER_CHECKS[name][1])(resource.props, config)]
    if KUBECONFIG_POLICY in required:
        found += [(f"{KUBECONFIG_POLICY} (required in production stack {stack!r}): {message}", urn)
                  for message, urn in kubeconfig_secret(resources)]
    return found


PROD_BASELINE = resources_policy(
    "aks-security-baseline-in-prod",
    "In production stacks the baseline items named in `require` are mandatory, not advisory.",
    _prod_baseline, schema=PolicyConfigSchema(properties={
        "prodStacks": PROD_STACKS,
        "require": {"type": "array", "items": {"type": "string", "enum": [*CLUSTER_CHECKS, KUBECONFIG_POLICY]},
                    "default": REQUIRE_DEFAULT, "description": "baseline policies that are mandatory in production"}}))

POLICIES = [*BASELINE, PROD_BASELINE]
