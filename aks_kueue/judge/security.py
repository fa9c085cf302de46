"""The AKS production security baseline (`../shared/reference/aks.md` section e).

Each check is an error in a production stack (`aks-kueue:environment: production`, the
default) and a warning in a development one; the policy config can still relax a single
check. The checks read the model's cluster, so the program's settings and the resources
the pack sees are judged alike.
"""

from __future__ import annotations

import ipaddress
from typing import Callable, Optional

from aks_kueue.aks.pools import SYSTEM_POOL_TAINT, same_taint, taint_text
from aks_kueue.judge.finding import ERROR, WARNING, Finding
from aks_kueue.model.desired import Cluster, Model

LOCAL_ACCOUNTS = "aks-local-accounts-disabled"
AZURE_RBAC = "aks-azure-rbac"
NETWORK_POLICY = "aks-network-policy"
API_SERVER_ACCESS = "aks-api-server-access-restricted"
UPGRADE_CHANNELS = "aks-auto-upgrade-channels"
SYSTEM_POOL = "aks-system-pool-isolated"
KUBECONFIG = "aks-kubeconfig-secret"
NETWORK_POLICIES = ("azure", "calico", "cilium")
CLUSTER_CHANNELS = ("patch", "stable", "rapid", "node-image")
NODE_OS_CHANNELS = ("NodeImage", "SecurityPatch")
_EVERYTHING = {4: ipaddress.ip_network("0.0.0.0/0"), 6: ipaddress.ip_network("::/0")}

Check = Callable[[Cluster], list[tuple[str, str, str]]]  # (field under cluster.security or cluster, message, fix)


def local_accounts(cluster: Cluster) -> list[tuple[str, str, str]]:
    if cluster.security.local_accounts_disabled:
        return []
    return [("security.localAccountsDisabled", "local accounts are enabled: AKS then issues static cluster-admin "
             "credentials that bypass Entra ID and cannot be revoked per user",
             "set cluster.security.localAccountsDisabled: true")]


def azure_rbac(cluster: Cluster) -> list[tuple[str, str, str]]:
    found = []
    if not cluster.security.rbac:
        found.append(("security.azureRbac", "Kubernetes RBAC is off", "turn enableRBAC on"))
    if not (cluster.security.entra_managed and cluster.security.azure_rbac):
        found.append(("security.azureRbac", "cluster access is not authorised by Entra ID with Azure RBAC "
                      "(aadProfile.managed and enableAzureRBAC are not both true)", "set cluster.security.azureRbac: true"))
    return found


def network_policy(cluster: Cluster) -> list[tuple[str, str, str]]:
    chosen = cluster.network.policy
    if chosen in NETWORK_POLICIES:
        return []
    return [("network.policy", f"the network policy engine is {chosen or 'unset'}: pods can reach every other pod",
             f"set cluster.network.policy to one of {', '.join(NETWORK_POLICIES)}")]


def public_ranges(ranges: tuple[str, ...]) -> Optional[str]:
    """The address family whose every address the ranges admit, taken together, or None."""
    networks = []
    for text in ranges:
        try:
            networks.append(ipaddress.ip_network(text if "/" in text else f"{text}/{32 if ':' not in text else 128}",
                                                 strict=False))
        except ValueError:
            continue  # the settings refuse it; a resource's bad range is not proof of openness
    for version, everything in _EVERYTHING.items():
        merged = list(ipaddress.collapse_addresses(n for n in networks if n.version == version))
        if merged == [everything]:
            return f"IPv{version}"
    return None


def api_server_access(cluster: Cluster) -> list[tuple[str, str, str]]:
    security = cluster.security
    if security.private_cluster:
        return []
    if not security.authorized_ip_ranges:
        return [("security.apiServerAuthorizedIpRanges", "the API server is public to every address",
                 "set cluster.security.apiServerAuthorizedIpRanges to your egress ranges, or make the cluster private")]
    family = public_ranges(security.authorized_ip_ranges)
    if family is not None:
        return [("security.apiServerAuthorizedIpRanges", f"the authorized IP ranges, taken together, admit every "
                 f"{family} address, so the API server is public", "list only your own egress ranges")]
    return []


def upgrade_channels(cluster: Cluster) -> list[tuple[str, str, str]]:
    found = []
    channel = cluster.security.upgrade_channel
    if channel not in CLUSTER_CHANNELS:
        found.append(("security.upgradeChannel", f"the upgrade channel is {channel or 'unset (none)'}: the cluster "
                      "never takes Kubernetes patches by itself", f"use one of {', '.join(CLUSTER_CHANNELS)}"))
    node_os = cluster.security.node_os_upgrade_channel
    if node_os not in NODE_OS_CHANNELS:
        found.append(("security.nodeOsUpgradeChannel", f"the node OS upgrade channel is {node_os}: node OS "
                      "security patches are not applied", f"use {' or '.join(NODE_OS_CHANNELS)}"))
    return found


def system_pool_isolation(cluster: Cluster) -> list[tuple[str, str, str]]:
    """System pools carry CriticalAddonsOnly, so batch pods never land beside CoreDNS and konnectivity."""
    text = taint_text(SYSTEM_POOL_TAINT)
    return [("systemPool", f"system pool {pool.name} lacks the taint {text}, so user and batch pods can land "
             "beside the cluster's critical add-ons", "add the taint to the system pool")
            for pool in cluster.system_pools if not any(same_taint(t, SYSTEM_POOL_TAINT) for t in pool.taints)]


def kubeconfig(cluster: Cluster) -> list[tuple[str, str, str]]:
    if cluster.security.kubeconfig_secret:
        return []
    return [("", "the kubeconfig is not kept secret: the Kubernetes provider does not list it in "
             "additionalSecretOutputs, or another resource carries one in its inputs",
             "keep the kubeconfig in the provider with additionalSecretOutputs: [kubeconfig], or in a Secret")]


CHECKS: dict[str, tuple[str, Check]] = {
    LOCAL_ACCOUNTS: ("Local accounts are disabled, so every access goes through Entra ID.", local_accounts),
    AZURE_RBAC: ("Kubernetes authorisation uses Entra ID with Azure RBAC.", azure_rbac),
    NETWORK_POLICY: ("A network policy engine (azure, calico or cilium) is enabled.", network_policy),
    API_SERVER_ACCESS: ("The API server is private or limited to authorized IP ranges that are not, together, "
                        "every address.", api_server_access),
    UPGRADE_CHANNELS: ("The cluster follows a Kubernetes upgrade channel and a node OS channel.", upgrade_channels),
    SYSTEM_POOL: ("System node pools are tainted CriticalAddonsOnly=true:NoSchedule.", system_pool_isolation),
    KUBECONFIG: ("The cluster's kubeconfig stays secret: its provider keeps it in additionalSecretOutputs, and no "
                 "other resource carries one in its inputs.", kubeconfig),
}
KINDS = tuple(CHECKS)


def security_findings(model: Model) -> list[Finding]:
    cluster = model.cluster
    if cluster is None:
        return []
    severity = ERROR if model.production else WARNING
    findings = []
    for kind, (_, check) in CHECKS.items():
        for field, message, fix in check(cluster):
            findings.append(Finding(kind, severity, "AKS cluster", f"{cluster.key}.{field}" if field else cluster.key,
                                    message, fix))
    return findings
