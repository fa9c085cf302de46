"""Warnings about a stack that validates but may not work as deployed: placeholders left in, a
private API server the first `pulumi up` cannot reach, a region or Kubernetes version with a
catch, and what no offline check can know (the `az` command that checks it is in the fix)."""

from __future__ import annotations

import ipaddress
from datetime import date
from typing import Iterable, Optional

from aks_kueue.aks import kubernetes_versions, preflight, regions
from aks_kueue.aks.pools import Pool
from aks_kueue.aks.vm_sizes import lookup
from aks_kueue.judge.finding import WARNING, Finding
from aks_kueue.judge.install import cluster_key
from aks_kueue.judge.rules import rule
from aks_kueue.model.desired import Cluster, Model
from aks_kueue.versions import MIN_KUBERNETES_MINOR

PLACEHOLDER = "placeholder-value"
PRIVATE_FIRST_RUN = "private-cluster-first-run"
REGION_ACCESS = "region-access"
KUBERNETES_VERSION = "kubernetes-version"
CHECK_IN_AZURE = "check-in-azure"
# RFC 5737: addresses for documentation, which no real client is in.
_DOCUMENTATION_NETWORKS = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")


@rule(PLACEHOLDER, "No placeholder (a documentation IP range, an all-zero object ID) is left in the stack.",
      "RFC 5737; Entra object IDs", "the cluster and the submitter groups")
@rule(PRIVATE_FIRST_RUN, "A private cluster's first pulumi up can reach its API server.", "AKS private clusters",
      "ManagedCluster")
@rule(REGION_ACCESS, "The cluster's region is open to every subscription.", "Azure regions list "
      "(aks_kueue/aks/regions.py)", "ManagedCluster")
@rule(KUBERNETES_VERSION, "The cluster's Kubernetes version is supported on the day it is judged.", "the AKS "
      "release calendar (aks_kueue/aks/kubernetes_versions.py)", "ManagedCluster")
@rule(CHECK_IN_AZURE, "What only Azure can answer is named with the az command that answers it.", "AKS quotas, "
      "VM size and feature availability (aks_kueue/aks/preflight.py)", "the subscription")
def stack_findings(model: Model, today: Optional[date] = None) -> list[Finding]:
    cluster = model.cluster
    if cluster is None:
        return []
    return (_placeholders(cluster) + _submitter_placeholders(model) + _private(cluster) + _region(cluster)
            + _version(cluster, today) + _azure_checks(model, cluster))


def _placeholders(cluster: Cluster) -> list[Finding]:
    findings = []
    for i, cidr in enumerate(cluster.security.authorized_ip_ranges):
        if within(cidr, _DOCUMENTATION_NETWORKS):
            findings.append(Finding(
                PLACEHOLDER, WARNING, cluster.subject, f"{cluster.key}.security.apiServerAuthorizedIpRanges[{i}]",
                f"{cidr} is a documentation range (RFC 5737) that no real client is in, so pulumi up could not "
                "reach the API server", "put your own egress ranges here"))
    for i, group in enumerate(cluster.security.admin_groups):
        if set(group.replace("-", "")) == {"0"}:
            findings.append(Finding(
                PLACEHOLDER, WARNING, cluster.subject, f"{cluster.key}.security.entraAdminGroupObjectIds[{i}]",
                "the all-zero ID is a placeholder, so no one would administer the cluster",
                "put your admin group's object ID here"))
    return findings


def within(network: str, ranges: Iterable[str]) -> bool:
    """Whether `network` lies within one of `ranges` (of its IP version); a malformed one is in none."""
    try:
        wanted = ipaddress.ip_network(network, strict=False)
    except ValueError:
        return False
    for text in ranges:
        try:
            allowed = ipaddress.ip_network(text, strict=False)
        except ValueError:
            continue
        if wanted.version == allowed.version and wanted.subnet_of(allowed):
            return True
    return False


def is_placeholder_id(object_id: str) -> bool:
    """The nil GUID, or one that is nil but for its last four digits (00000000-0000-0000-0000-00000000000a):
    a stand-in, never a real Entra object ID."""
    digits = object_id.replace("-", "")
    return len(digits) == 32 and set(digits[:28]) == {"0"}


def _submitter_placeholders(model: Model) -> list[Finding]:
    return [Finding(PLACEHOLDER, WARNING, group.label, group.key,
                    f"{group.object_id} is a placeholder, not a real Entra group, so its role assignments would "
                    "let no one in (Azure may refuse them outright: the principal does not exist)",
                    "put the team's Entra group object ID here (`az ad group show --group <name> --query id -o tsv`)")
            for group in model.submitter_groups if is_placeholder_id(group.object_id)]


def _private(cluster: Cluster) -> list[Finding]:
    if not cluster.security.private_cluster:
        return []
    return [Finding(
        PRIVATE_FIRST_RUN, WARNING, cluster.subject, f"{cluster.key}.security.privateCluster",
        "AKS creates the cluster's virtual network itself (this program brings none), so a network can be peered "
        "with it only once it exists: a first pulumi up creates the cluster and then cannot reach its API server "
        "to install Kueue", "peer or link your network to the cluster's, then run pulumi up again")]


def _region(cluster: Cluster) -> list[Finding]:
    region = regions.lookup(cluster.region)
    if region is None:
        return []
    key = cluster_key(cluster, "location")
    if region.access is regions.Access.RESTRICTED:
        return [Finding(REGION_ACCESS, WARNING, cluster.subject, key,
                        f"access to {region.name} is restricted to approved subscriptions (Azure regions list)",
                        "request it before deploying (https://learn.microsoft.com/troubleshoot/azure/general/"
                        "region-access-request-process)")]
    if region.access is regions.Access.COMING_SOON:
        return [Finding(REGION_ACCESS, WARNING, cluster.subject, key,
                        f"{region.name} was listed as coming soon on {regions.load().as_of.isoformat()}",
                        "check it is open with `az account list-locations -o table`")]
    return []


def _version(cluster: Cluster, today: Optional[date]) -> list[Finding]:
    if cluster.kubernetes_version == "unset":
        return []
    try:
        verdict = kubernetes_versions.judge_version(cluster.kubernetes_version, today or kubernetes_versions.today(),
                                                    at_least=MIN_KUBERNETES_MINOR)
    except ValueError:
        return []  # not a version at all: the settings refuse it, and AKS would refuse the cluster
    return [Finding(KUBERNETES_VERSION, WARNING, cluster.subject, cluster_key(cluster, "kubernetesVersion"), warning)
            for warning in verdict.warnings]


def _azure_checks(model: Model, cluster: Cluster) -> list[Finding]:
    """What only Azure can answer, each with the read-only `az` command that answers it."""
    pools = [_use(p) for p in (*cluster.system_pools, *model.pools)]
    features = {preflight.Feature.MANAGED_KUEUE} if model.managed else set()
    if any(p.encryption_at_host for p in (*cluster.system_pools, *model.pools)):
        features.add(preflight.Feature.HOST_ENCRYPTION)
    version = cluster.kubernetes_version if cluster.kubernetes_version != "unset" else None
    return [Finding(CHECK_IN_AZURE, WARNING, "Azure subscription", advisory.key, advisory.message,
                    f"check with: {advisory.command}")
            for advisory in preflight.advisories(cluster.region, pools, features, version)]


def _use(pool: Pool) -> preflight.PoolUse:
    size = lookup(pool.vm_size)
    return preflight.PoolUse(key=pool.key or f"node pool {pool.name}", vm_size=pool.vm_size, nodes=pool.max_count,
                             vcpus=size.vcpus if size else (pool.explicit.cpu if pool.explicit else None),
                             gpu=pool.gpu_vendor is not None, spot=pool.spot)
