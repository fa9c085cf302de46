"""The AKS production security baseline (`../shared/reference/aks.md` section e).

Each check is an error in a production stack (`aks-kueue:environment: production`, the
default) and a warning in a development one; the policy config can still relax a single
check. The checks read the model, so the program's settings and the resources the pack sees
are judged alike.

What a pool is created with (an ephemeral OS disk, host encryption) AKS cannot change in
place: those checks are errors for pools this update creates and warnings for pools the last
deployment has and this update keeps (`Pool.existing`), so that the baseline never asks for a
replacement; and a VM size the catalog does not know is not checked, which a warning says.

Each check names its source: the AKS documentation page of the baseline item
(learn.microsoft.com/azure/aks/...) and, where there is one, the checkov check of the same
property for `azurerm_kubernetes_cluster` (bridgecrewio/checkov, checkov/terraform/checks/resource/azure).
"""

from __future__ import annotations

import ipaddress
from dataclasses import replace
from typing import Callable, Optional

from aks_kueue.aks.pools import EPHEMERAL, SYSTEM, SYSTEM_POOL_TAINT, Pool, local_disk_gib, same_taint, taint_text
from aks_kueue.aks.vm_sizes import lookup
from aks_kueue.judge.finding import WARNING, Finding
from aks_kueue.judge.rules import finding, rule
from aks_kueue.model.desired import Cluster, Model

LOCAL_ACCOUNTS = "aks-local-accounts-disabled"
AZURE_RBAC = "aks-azure-rbac"
NETWORK_POLICY = "aks-network-policy"
API_SERVER_ACCESS = "aks-api-server-access-restricted"
UPGRADE_CHANNELS = "aks-auto-upgrade-channels"
SYSTEM_POOL = "aks-system-pool-isolated"
KUBECONFIG = "aks-kubeconfig-secret"
AZURE_POLICY = "aks-azure-policy"
DEFENDER = "aks-defender"
IMAGE_CLEANER = "aks-image-cleaner"
MONITORING = "aks-monitoring"
MAX_PODS = "aks-max-pods"
PAID_TIER = "aks-paid-tier"
EPHEMERAL_OS = "aks-ephemeral-os-disk"
HOST_ENCRYPTION = "aks-host-encryption"
SECRETS_ROTATION = "aks-secrets-store-rotation"
NETWORK_POLICIES = ("azure", "calico", "cilium")
CLUSTER_CHANNELS = ("patch", "stable", "rapid", "node-image")
NODE_OS_CHANNELS = ("NodeImage", "SecurityPatch")
PAID_TIERS = ("Standard", "Premium")
# checkov CKV_AZURE_168: "nodes should use a minimum number of 50 pods".
MIN_MAX_PODS = 50
MONITORING_KEY = "aks-kueue:monitoring"
_EVERYTHING = {4: ipaddress.ip_network("0.0.0.0/0"), 6: ipaddress.ip_network("::/0")}


def baseline(kind: str, title: str, source: str, applies_to: str, explanation: str) -> Callable:
    """Register a check of the model as the baseline rule `kind`. The check gives what a production stack gets
    (`finding(kind, ...)`: errors, and warnings for what is advisory everywhere: a pool the update keeps,
    something not checked); in a development stack each of its findings is a warning."""
    def register(check: Callable[[Model], list[Finding]]) -> Callable[[Model], list[Finding]]:
        def findings(model: Model) -> list[Finding]:
            if model.cluster is None:
                return []
            found = check(model)
            return found if model.production else [replace(f, severity=WARNING) for f in found]
        rule(kind, title, source, applies_to, baseline=True, explanation=explanation)(findings)
        return check
    return register


def cluster_check(kind: str, title: str, source: str, explanation: str, applies_to: str = "ManagedCluster") -> Callable:
    """A baseline rule of the cluster alone: each (field under the cluster's key, message, fix) a finding."""
    def register(check: Callable[[Cluster], list[tuple[str, str, str]]]) -> Callable:
        def findings(model: Model) -> list[Finding]:
            cluster = model.cluster
            if cluster is None:
                return []
            return [finding(kind, object=cluster.subject, key=f"{cluster.key}.{field}" if field else cluster.key,
                            message=message, fix=fix) for field, message, fix in check(cluster)]
        baseline(kind, title, source, applies_to, explanation)(findings)
        return check
    return register


def cluster_setting(kind: str, title: str, source: str, *, holds: Callable[[Cluster], bool], field: str,
                    message: str | Callable[[Cluster], str], fix: str, explanation: str,
                    applies_to: str = "ManagedCluster") -> None:
    """A baseline rule of one cluster setting: where `holds` is false, one issue at `field`."""
    cluster_check(kind, title, source, explanation, applies_to)(lambda cluster: [] if holds(cluster) else [
        (field, message(cluster) if callable(message) else message, fix)])


_AKS = "learn.microsoft.com/azure/aks/"

cluster_setting(
    LOCAL_ACCOUNTS,
    "Local accounts are disabled, so every access goes through Entra ID.",
    f"{_AKS}local-accounts; checkov CKV_AZURE_141",
    holds=lambda c: c.security.local_accounts_disabled,
    field="security.localAccountsDisabled",
    message="local accounts are enabled",
    fix="set cluster.security.localAccountsDisabled: true",
    explanation="With local accounts enabled, AKS issues static cluster-admin credentials that bypass Entra ID and "
    "cannot be revoked per user.")


@cluster_check(AZURE_RBAC, "Kubernetes authorisation uses Entra ID with Azure RBAC.",
               f"{_AKS}manage-azure-rbac; checkov CKV_AZURE_5 (Kubernetes RBAC)",
               "Without Kubernetes RBAC every authenticated user may do anything; with Entra ID and Azure RBAC, who "
               "may do what in the cluster is granted and revoked in Azure, per user and group, like the rest of the "
               "subscription.")
def azure_rbac(cluster: Cluster) -> list[tuple[str, str, str]]:
    found = []
    if not cluster.security.rbac:
        found.append(("security.azureRbac", "Kubernetes RBAC is off", "turn enableRBAC on"))
    if not (cluster.security.entra_managed and cluster.security.azure_rbac):
        found.append(("security.azureRbac", "cluster access is not authorised by Entra ID with Azure RBAC "
                      "(aadProfile.managed and enableAzureRBAC are not both true)", "set cluster.security.azureRbac: "
                      "true"))
    return found


cluster_setting(
    NETWORK_POLICY,
    "A network policy engine (azure, calico or cilium) is enabled.",
    f"{_AKS}use-network-policies; checkov CKV_AZURE_7",
    holds=lambda c: c.network.policy in NETWORK_POLICIES,
    field="network.policy",
    message=lambda c: f"the network policy engine is {c.network.policy or 'unset'}",
    fix=f"set cluster.network.policy to one of {', '.join(NETWORK_POLICIES)}",
    explanation="Without a network policy engine, Kubernetes NetworkPolicies are not enforced: every pod can reach "
    "every other pod, whatever the namespaces' policies say.")


def public_ranges(ranges: tuple[str, ...]) -> Optional[str]:
    """The address family whose every address the ranges admit, taken together (0.0.0.0/1 and
    128.0.0.0/1 are as public as 0.0.0.0/0), or None. IPv4 and IPv6 are judged apart."""
    networks = []
    for text in ranges:
        try:
            networks.append(ipaddress.ip_network(text if "/" in text else f"{text}/{32 if ':' not in text else 128}",
                                                 strict=False))
        except ValueError:
            continue  # the settings refuse it; a resource's bad range is not proof of openness
    v4 = [n for n in networks if isinstance(n, ipaddress.IPv4Network)]
    v6 = [n for n in networks if isinstance(n, ipaddress.IPv6Network)]
    for version, merged in ((4, list(ipaddress.collapse_addresses(v4))), (6, list(ipaddress.collapse_addresses(v6)))):
        if merged == [_EVERYTHING[version]]:
            return f"IPv{version}"
    return None


@cluster_check(API_SERVER_ACCESS,
               "The API server is private or limited to authorized IP ranges that are not, together, every address.",
               f"{_AKS}api-server-authorized-ip-ranges, private-clusters; checkov CKV_AZURE_6, CKV_AZURE_115",
               "A public API server can be reached, and its credentials tried, from any address on the internet. "
               "Ranges are judged together: 0.0.0.0/1 and 128.0.0.0/1 admit every IPv4 address as 0.0.0.0/0 does.")
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
                 f"{family} address", "list only your own egress ranges")]
    return []


@cluster_check(UPGRADE_CHANNELS, "The cluster follows a Kubernetes upgrade channel and a node OS channel.",
               f"{_AKS}auto-upgrade-cluster, auto-upgrade-node-os-image; checkov CKV_AZURE_171",
               "Without an upgrade channel the cluster never takes Kubernetes patches by itself, and without a node "
               "OS channel the nodes' OS security patches are not applied.")
def upgrade_channels(cluster: Cluster) -> list[tuple[str, str, str]]:
    found = []
    channel = cluster.security.upgrade_channel
    if channel not in CLUSTER_CHANNELS:
        found.append(("security.upgradeChannel", f"the upgrade channel is {channel or 'unset (none)'}", f"use one of {', '.join(CLUSTER_CHANNELS)}"))
    node_os = cluster.security.node_os_upgrade_channel
    if node_os not in NODE_OS_CHANNELS:
        found.append(("security.nodeOsUpgradeChannel", f"the node OS upgrade channel is {node_os}", f"use {' or '.join(NODE_OS_CHANNELS)}"))
    return found


@cluster_check(SYSTEM_POOL, "System node pools are tainted CriticalAddonsOnly=true:NoSchedule.",
               f"{_AKS}use-system-pools; checkov CKV_AZURE_232",
               "Without the taint, user and batch pods can land on system nodes beside the cluster's critical "
               "add-ons (CoreDNS, konnectivity, metrics-server) and starve them.",
               "ManagedCluster system pools and System AgentPools")
def system_pool_isolation(cluster: Cluster) -> list[tuple[str, str, str]]:
    """System pools carry CriticalAddonsOnly, so batch pods never land beside CoreDNS and konnectivity."""
    text = taint_text(SYSTEM_POOL_TAINT)
    return [("systemPool", f"system pool {pool.name} lacks the taint {text}", "add the taint to the system pool")
            for pool in cluster.system_pools if not any(same_taint(t, SYSTEM_POOL_TAINT) for t in pool.taints)]


cluster_setting(
    KUBECONFIG,
    "The cluster's kubeconfig stays secret: its provider keeps it in additionalSecretOutputs, and no "
    "other resource carries one in its inputs.",
    "Pulumi secrets (pulumi.md); no checkov check",
    holds=lambda c: c.security.kubeconfig_secret,
    field="",
    message="the kubeconfig is not kept secret by the Kubernetes provider's additionalSecretOutputs, or another "
            "resource carries one in its inputs",
    fix="keep the kubeconfig in the provider with additionalSecretOutputs: [kubeconfig], or in a Secret",
    explanation="A kubeconfig is a credential to the cluster: unless Pulumi marks it secret, it is stored in plain "
    "text in the stack's state and shown in previews and logs.",
    applies_to="ManagedCluster and the Kubernetes provider")
cluster_setting(
    AZURE_POLICY,
    "The Azure Policy add-on is on.",
    f"{_AKS}use-azure-policy; checkov CKV_AZURE_116",
    holds=lambda c: c.security.azure_policy,
    field="security.azurePolicy",
    message="the Azure Policy add-on is off",
    fix="set cluster.security.azurePolicy: true",
    explanation="Without the Azure Policy add-on, no Azure policy (the AKS deployment safeguards, the Pod Security "
    "Standards) is enforced inside the cluster.")
cluster_setting(
    DEFENDER,
    "Microsoft Defender for Containers' sensor is on.",
    "learn.microsoft.com/azure/defender-for-cloud/defender-for-containers-enable; the AKS security "
    "baseline (Azure security benchmark); checkov CKV_AZURE_85 checks only the subscription's plan",
    holds=lambda c: bool(c.security.defender),
    field="security.defender",
    message=lambda c: "Microsoft Defender for Containers' sensor is "
                      f"{'turned off' if c.security.defender is False else 'not turned on by this stack'}",
    fix="turn on aks-kueue:monitoring with containerInsights (Defender uses its Log Analytics workspace) "
        "or set cluster.security.defender.logAnalyticsWorkspaceId; remove defender.enabled: false",
    explanation="Without Defender for Containers' sensor, runtime threats on the nodes are not detected. The sensor "
    "sends to a Log Analytics workspace: the monitoring component's, or one the stack names.")
cluster_setting(
    IMAGE_CLEANER,
    "Image Cleaner removes unused and vulnerable images from the nodes.",
    f"{_AKS}image-cleaner (preconfigured on AKS Automatic); no checkov check",
    holds=lambda c: c.security.image_cleaner,
    field="security.imageCleaner",
    message="Image Cleaner is off",
    fix="set cluster.security.imageCleaner.enabled: true",
    explanation="Without Image Cleaner, unused images, vulnerable ones included, stay on the nodes until they are "
    "replaced.")


@baseline(MONITORING, "Managed Prometheus and Container Insights collect the cluster's metrics and logs.",
          f"{_AKS}monitor-aks; checkov CKV_AZURE_4 (Container Insights)", "the cluster (aks-kueue:monitoring)",
          "Without managed Prometheus the cluster's metrics (Kueue's among them) are not collected, and without "
          "Container Insights its container logs are not; an incident then has nothing to read.")
def monitoring(model: Model) -> list[Finding]:
    found: list[Finding] = []
    cluster = model.cluster
    if cluster is None:
        return found
    for part, state, field in (("managed Prometheus", cluster.monitoring.managed_prometheus, "managedPrometheus"),
                               ("Container Insights", cluster.monitoring.container_insights, "containerInsights")):
        if state:
            continue
        how = "is off" if state is False else "is not turned on (aks-kueue:monitoring is not set)"
        found.append(finding(
            MONITORING, object=cluster.subject, key=f"{MONITORING_KEY}.{field}",
            message=f"{part} {how}",
            fix=f"set aks-kueue:monitoring.{field}: true (aks-kueue:monitoring: {{}} turns on both)"))
    return found


@baseline(MAX_PODS, "User pools allow at least 50 pods per node.",
          f"{_AKS}concepts-network-ip-address-planning; checkov CKV_AZURE_168", "AgentPool (user pools)",
          f"A node that allows few pods runs out of pod slots before it runs out of CPU or memory, so Kueue admits "
          f"work whose pods then stay pending; checkov asks for {MIN_MAX_PODS} at least.")
def max_pods(model: Model) -> list[Finding]:
    return [finding(MAX_PODS, object=pool.subject, key=f"{pool.key}.maxPods",
                    message=f"pool {pool.name} allows {pool.max_pods} pods per node, fewer than {MIN_MAX_PODS}",
                    fix=f"set maxPods to {MIN_MAX_PODS} or more (the default with Azure CNI Overlay is 250)")
            for pool in model.pools if pool.max_pods < MIN_MAX_PODS]


cluster_setting(
    PAID_TIER,
    "The cluster runs on a paid tier (Standard or Premium), with an uptime SLA.",
    f"{_AKS}free-standard-pricing-tiers; checkov CKV_AZURE_170 (which accepts Standard only)",
    holds=lambda c: c.tier in PAID_TIERS,
    field="tier",
    message=lambda c: f"the cluster runs on the {c.tier} tier",
    fix="set cluster.tier: Standard (or Premium)",
    explanation="The Free tier has no uptime SLA for the API server, which Kueue, the autoscaler and every job "
    "controller depend on.")


@baseline(EPHEMERAL_OS,
          "Pools use an ephemeral OS disk where their VM size can hold one (required of new pools, advised for pools "
          "the last deployment has).",
          f"{_AKS}concepts-storage#ephemeral-os-disk; checkov CKV_AZURE_226",
          "ManagedCluster system pools and AgentPools",
          "Managed OS disks are slower than an ephemeral OS disk on the VM's local disk, and persist node data in "
          "Azure Storage. AKS sets the OS disk only when a pool is created: for a pool the last deployment has, this "
          "is advice, never a replacement. A VM size the catalog does not know is not checked, which a warning "
          "says.")
def ephemeral_os(model: Model) -> list[Finding]:
    found = []
    for pool in _all_pools(model):
        fits, disk = pool.ephemeral_os_fits, pool.effective_os_disk_type
        if disk == EPHEMERAL:
            continue
        size = lookup(pool.vm_size)
        if fits is None or size is None:  # the catalog says whether it fits only of a size it knows
            found.append(finding(
                EPHEMERAL_OS, severity=WARNING, object=pool.subject, key=f"{pool.key}.vmSize",
                message=f"whether {pool.vm_size} can hold an ephemeral OS disk was not checked (the VM size catalog "
                "does not say)",
                fix="set osDiskType: Ephemeral if the size supports it (its size page, \"Ephemeral OS Disk\")"))
        elif fits:
            found.append(_created_with(EPHEMERAL_OS, pool, "osDiskType", f"pool {pool.name}'s OS disk is {disk}, "
                                       f"although {pool.vm_size} can hold it as an ephemeral disk on its local disk "
                                       f"({local_disk_gib(size):g} GiB)", "osDiskType: Ephemeral"))
        # Advice only where a smaller OS disk (AKS takes 30 GiB and more) would make it fit.
        elif size.ephemeral_os_disk and (local := local_disk_gib(size)) and local >= 30 and not pool.existing:
            found.append(finding(
                EPHEMERAL_OS, severity=WARNING, object=pool.subject, key=f"{pool.key}.osDiskSizeGb",
                message=f"{pool.vm_size} supports ephemeral OS disks, but its local disk ({local:g} GiB) is smaller "
                f"than the OS disk asked for ({pool.os_disk_size_gb or 'the default 128'} GiB)", fix=f"set osDiskSizeGb to {int(local)} or less to use an ephemeral OS disk"))
    return found


@baseline(HOST_ENCRYPTION,
          "Pools encrypt their temp disks and OS disk caches on the VM host (required of new pools, advised for "
          "pools the last deployment has).",
          f"{_AKS}enable-host-encryption; checkov CKV_AZURE_227", "ManagedCluster system pools and AgentPools",
          "Without host encryption, a node's temp disk and OS disk cache are not encrypted on the VM host. AKS sets it "
          "only when a pool is created: for a pool the last deployment has, this is advice, never a replacement. A "
          "VM size the catalog does not know is not checked (the program leaves host encryption off), which a "
          "warning says.")
def host_encryption(model: Model) -> list[Finding]:
    found = []
    for pool in _all_pools(model):
        if pool.encryption_at_host:
            continue
        if lookup(pool.vm_size) is None:
            found.append(finding(
                HOST_ENCRYPTION, severity=WARNING, object=pool.subject, key=f"{pool.key}.encryptionAtHost",
                message=f"host encryption of pool {pool.name} was not checked (the VM size catalog does not know "
                f"{pool.vm_size})",
                fix=f"set encryptionAtHost: true if the size supports it (`az vm list-skus --size {pool.vm_size} "
                "--query \"[].capabilities[?name=='EncryptionAtHostSupported']\"`)"))
        else:
            found.append(_created_with(HOST_ENCRYPTION, pool, "encryptionAtHost", f"pool {pool.name} runs without host "
                                       "encryption",
                                       "encryptionAtHost: true"))
    return found


cluster_setting(
    SECRETS_ROTATION,
    "Where the Key Vault secrets provider is on, it rotates secrets.",
    f"{_AKS}csi-secrets-store-configuration-options; checkov CKV_AZURE_172",
    holds=lambda c: not (p := c.security.key_vault_secrets_provider) or not p.enabled or p.rotation,
    field="security.keyVaultSecretsProvider.secretRotation",
    message="the Key Vault secrets provider is on without rotation",
    fix="set cluster.security.keyVaultSecretsProvider.secretRotation: true",
    explanation="Without rotation, pods keep a secret's old value after it changes in Key Vault.")


def _created_with(kind: str, pool: Pool, field: str, message: str, setting: str) -> Finding:
    """A create-only setting: required of a new pool, advised for one the last deployment has."""
    if pool.existing:
        entry = "systemPool" if pool.mode == SYSTEM else f"nodePools.{pool.name}"
        return finding(kind, severity=WARNING, object=pool.subject, key=f"{pool.key}.{field}",
                       message=f"{message}, and the pool exists already",
                       fix=f"to change it, replace the pool on purpose: write {setting} with {entry} in "
                       "aks-kueue:allowReplacement (where the last deployment protects the pool, after one update "
                       "that only lists it)")
    return finding(kind, object=pool.subject, key=f"{pool.key}.{field}", message=message,
                   fix=f"write {setting}, or leave it unset for the baseline's default")


def _all_pools(model: Model) -> tuple[Pool, ...]:
    return (*(model.cluster.system_pools if model.cluster is not None else ()), *model.pools)
