"""Warnings about a stack that validates but may not work as deployed: placeholders left in, a
private API server the first `pulumi up` cannot reach, a region or Kubernetes version with a
catch, and what no offline check can know (the `az` command that checks it is in the fix)."""

from __future__ import annotations

import ipaddress
from ipaddress import IPv4Network, IPv6Network
from datetime import date
from typing import Iterable, Optional, Union

from aks_kueue.aks import kubernetes_versions, preflight, regions
from aks_kueue.aks.pools import Pool
from aks_kueue.aks.vm_sizes import lookup
from aks_kueue.day2.upgrades import AUTO_UPGRADE_CONFIG, NODE_OS_UPGRADE_CONFIG
from aks_kueue.judge.finding import ERROR, WARNING, Finding, Severity
from aks_kueue.judge.install import cluster_key
from aks_kueue.judge.rules import PLACEHOLDERS, finding, rule
from aks_kueue.model.desired import Cluster, Model
from aks_kueue.versions import MIN_KUBERNETES_MINOR

PLACEHOLDER = "placeholder-value"
PRIVATE_FIRST_RUN = "private-cluster-first-run"
REGION_ACCESS = "region-access"
KUBERNETES_VERSION = "kubernetes-version"
CHECK_IN_AZURE = "check-in-azure"
# Addresses for documentation, which no real client is in: RFC 5737 (IPv4) and RFC 3849 (IPv6).
_DOCUMENTATION_NETWORKS = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")


@rule(PLACEHOLDER, "No placeholder (a documentation IP range, an all-zero object ID) is left in the stack: an error "
      "in production stacks, a warning in development ones.", "RFC 5737, RFC 3849; Entra object IDs; "
      "../shared/contract/stack-config.md (aks-kueue:environment)",
      "the cluster, the submitter groups and a fleet manager's egress ranges", PLACEHOLDERS, severity=ERROR,
      graded="an error in production stacks, a warning in development ones",
      explanation="The shipped stacks and the docs' examples hold values you must replace: documentation IP ranges "
      "(RFC 5737, RFC 3849), which no real client is in, and all-zero Entra object IDs, which name no group. Left "
      "in, pulumi up cannot reach a cluster limited to those ranges, no one administers it, a team's role "
      "assignments let no one in (Azure may refuse them: the principal does not exist), and a fleet's check that "
      "every worker lets the manager in proves nothing. A copied example must not pass a production gate.")
@rule(PRIVATE_FIRST_RUN, "A private cluster's first pulumi up can reach its API server.", "AKS private clusters",
      "ManagedCluster", severity=WARNING,
      explanation="AKS creates a private cluster's virtual network itself (this program brings none), so your "
      "network can be peered or linked with it only once it exists: a first pulumi up creates the cluster and then "
      "cannot reach its API server to install Kueue. Peer or link, then run pulumi up again.")
@rule(REGION_ACCESS, "The cluster's region is open to every subscription.", "Azure regions list "
      "(aks_kueue/aks/regions.py)", "ManagedCluster", severity=WARNING,
      explanation="Some Azure regions are open only to approved subscriptions, and some were listed as coming soon "
      "when the program's regions list was read; a deployment there fails until access is granted.")
@rule(KUBERNETES_VERSION, "The cluster's Kubernetes version is supported on the day it is judged.", "the AKS "
      "release calendar (aks_kueue/aks/kubernetes_versions.py)", "ManagedCluster", severity=WARNING,
      explanation="AKS takes some versions with a catch: a preview version has no SLA and is not meant for "
      "production, and a version past community support gets new clusters only with long-term support (which this "
      "program does not set) and platform support only for existing ones. The calendar is dated: past its grace "
      "period, a version newer than it is not checked, and the calendar asks to be refreshed. A version AKS "
      "refuses outright is a settings error, not this warning.")
@rule(CHECK_IN_AZURE, "What only Azure can answer is named with the az command that answers it.", "AKS quotas, "
      "VM size and feature availability (aks_kueue/aks/preflight.py)", "the subscription", severity=WARNING,
      explanation="Nothing offline can see the subscription: its registered resource providers and features, the "
      "VM sizes offered to it in the region (NotAvailableForSubscription, or zones a size is not in), the pinned "
      "patch versions AKS offers there (AKS adds and removes patches weekly and rolls them out region by region), "
      "and its vCPU quotas. New subscriptions often have no GPU quota; a spot pool counts against the region's one "
      "Spot vCPU quota, whatever its VM family, which every spot pool of the stack shares. Each finding names the "
      "read-only az command that answers it, and what its answer means.")
def stack_findings(model: Model, today: Optional[date] = None) -> list[Finding]:
    cluster = model.cluster
    if cluster is None:
        return []
    severity = ERROR if model.production else WARNING
    return (_placeholders(cluster, severity) + _submitter_placeholders(model, severity)
            + _egress_placeholders(model, severity) + _private(cluster) + _region(cluster) + _version(cluster, today)
            + _azure_checks(model, cluster))


def _placeholders(cluster: Cluster, severity: Severity) -> list[Finding]:
    findings = []
    for i, cidr in enumerate(cluster.security.authorized_ip_ranges):
        if within(cidr, _DOCUMENTATION_NETWORKS):
            findings.append(finding(
                PLACEHOLDER, severity=severity, object=cluster.subject,
                key=f"{cluster.key}.security.apiServerAuthorizedIpRanges[{i}]",
                message=f"{cidr} is a documentation range ({_rfc(cidr)}), not a real client's", fix="put your own egress ranges here: where pulumi up runs and whoever "
                "uses kubectl (`curl -s https://ifconfig.me` prints this machine's)"))
    for i, group in enumerate(cluster.security.admin_groups):
        if is_placeholder_id(group):
            findings.append(finding(
                PLACEHOLDER, severity=severity, object=cluster.subject,
                key=f"{cluster.key}.security.entraAdminGroupObjectIds[{i}]",
                message=f"{group} is a placeholder, not a real Entra group",
                fix="put your admin group's object ID here (`az ad group show --group <name> --query id -o tsv`)"))
    return findings


def _rfc(cidr: str) -> str:
    return "RFC 3849" if ":" in cidr else "RFC 5737"


def _egress_placeholders(model: Model, severity: Severity) -> list[Finding]:
    """A fleet manager's declared egress: its workers' authorized ranges are judged against it."""
    fleet = model.fleet
    if fleet is None or not fleet.egress_ip_ranges:
        return []
    return [finding(PLACEHOLDER, severity=severity, object="MultiKueue manager", key=f"{fleet.key}.egressIpRanges[{i}]",
                    message=f"{cidr} is a documentation range ({_rfc(cidr)}), not the manager's real egress",
                    fix="put the manager cluster's outbound IP ranges here (its load balancer's or NAT gateway's "
                    "public IPs)")
            for i, cidr in enumerate(fleet.egress_ip_ranges) if within(cidr, _DOCUMENTATION_NETWORKS)]


def _subnet_of(inner: Union[IPv4Network, IPv6Network], outer: Union[IPv4Network, IPv6Network]) -> bool:
    """Whether `inner` lies in `outer`; never across address families."""
    if isinstance(inner, IPv4Network) and isinstance(outer, IPv4Network):
        return inner.subnet_of(outer)
    if isinstance(inner, IPv6Network) and isinstance(outer, IPv6Network):
        return inner.subnet_of(outer)
    return False


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
        if _subnet_of(wanted, allowed):
            return True
    return False


def is_placeholder_id(object_id: str) -> bool:
    """The nil GUID, or one that is nil but for its last four digits (00000000-0000-0000-0000-00000000000a):
    a stand-in, never a real Entra object ID."""
    digits = object_id.replace("-", "")
    return len(digits) == 32 and set(digits[:28]) == {"0"}


def _submitter_placeholders(model: Model, severity: Severity) -> list[Finding]:
    return [finding(PLACEHOLDER, severity=severity, object=group.label, key=group.key,
                    message=f"{group.object_id} is a placeholder, not a real Entra group",
                    fix="put the team's Entra group object ID here (`az ad group show --group <name> --query id -o "
                    "tsv`)")
            for group in model.submitter_groups if is_placeholder_id(group.object_id)]


def _private(cluster: Cluster) -> list[Finding]:
    if not cluster.security.private_cluster:
        return []
    return [finding(
        PRIVATE_FIRST_RUN, object=cluster.subject, key=f"{cluster.key}.security.privateCluster",
        message="the cluster is private and its virtual network, which AKS creates, cannot be peered before the first "
        "pulumi up installs Kueue through it", fix="peer or link your network to the cluster's, then run pulumi up again")]


def _region(cluster: Cluster) -> list[Finding]:
    region = regions.lookup(cluster.region)
    if region is None:
        return []
    key = cluster_key(cluster, "location")
    if region.access is regions.Access.RESTRICTED:
        return [finding(REGION_ACCESS, object=cluster.subject, key=key,
                        message=f"access to {region.name} is restricted to approved subscriptions (Azure regions list)",
                        fix="request it before deploying (https://learn.microsoft.com/troubleshoot/azure/general/"
                        "region-access-request-process)")]
    if region.access is regions.Access.COMING_SOON:
        return [finding(REGION_ACCESS, object=cluster.subject, key=key,
                        message=f"{region.name} was listed as coming soon on {regions.load().as_of.isoformat()}",
                        fix="check it is open with `az account list-locations -o table`")]
    return []


def _version(cluster: Cluster, today: Optional[date]) -> list[Finding]:
    if cluster.kubernetes_version == "unset":
        return []
    try:
        verdict = kubernetes_versions.judge_version(cluster.kubernetes_version, today or kubernetes_versions.today(),
                                                    at_least=MIN_KUBERNETES_MINOR)
    except ValueError:
        return []  # not a version at all: the settings refuse it, and AKS would refuse the cluster
    return [finding(KUBERNETES_VERSION, object=cluster.subject, key=cluster_key(cluster, "kubernetesVersion"),
                    message=note.message, fix=note.fix)
            for note in verdict.warnings]


def _azure_checks(model: Model, cluster: Cluster) -> list[Finding]:
    """What only Azure can answer, each with the read-only `az` command that answers it."""
    pools = [_use(p) for p in (*cluster.system_pools, *model.pools)]
    features = {preflight.Feature.MANAGED_KUEUE} if model.managed else set()
    if any(p.encryption_at_host for p in (*cluster.system_pools, *model.pools)):
        features.add(preflight.Feature.HOST_ENCRYPTION)
    version = cluster.kubernetes_version if cluster.kubernetes_version != "unset" else None
    return [finding(CHECK_IN_AZURE, object="Azure subscription", key=advisory.key, message=advisory.message,
                    fix=f"check with: {advisory.command}" + (f"; {advisory.then}" if advisory.then else ""))
            for advisory in preflight.advisories(cluster.region, pools, features, version)]


def _use(pool: Pool) -> preflight.PoolUse:
    size = lookup(pool.vm_size)
    return preflight.PoolUse(key=pool.key or f"node pool {pool.name}", vm_size=pool.vm_size, nodes=pool.max_count,
                             vcpus=size.vcpus if size else (pool.explicit.cpu if pool.explicit else None),
                             gpu=pool.gpu_vendor is not None, spot=pool.spot)


GPU_UNTAINTED = "gpu-pool-untainted"
RANGE_NOT_PUBLIC = "authorized-range-not-public"
NETWORK_RANGE_PUBLIC = "network-range-public"
MAINTENANCE_DATE_PAST = "maintenance-date-past"
# The taint AKS's GPU guide puts on GPU pools (use-nvidia-gpu: `--node-taints sku=gpu:NoSchedule`).
GPU_TAINT = "sku=gpu:NoSchedule"
_KEEPS_PODS_OFF = ("NoSchedule", "NoExecute")


@rule(GPU_UNTAINTED, "A GPU pool carries a NoSchedule or NoExecute taint, so only pods that tolerate it land there.",
      f"learn.microsoft.com/azure/aks/use-nvidia-gpu (`--node-taints {GPU_TAINT}`)", "GPU node pools", severity=WARNING,
      explanation="Without a NoSchedule or NoExecute taint, any pod the scheduler places, CPU-only ones included, can "
      "take a GPU pool's nodes, and the GPUs Kueue's quota counts on sit behind them. AKS's GPU guide taints GPU "
      "pools; a flavor landing on the pool then carries the taint, and GPU jobs the toleration.")
def gpu_pools_untainted(model: Model) -> list[Finding]:
    return [finding(GPU_UNTAINTED, object=pool.subject, key=f"{pool.key}.taints" if pool.key else pool.subject,
                    message=f"{pool.vm_size} has GPUs but the pool has no NoSchedule or NoExecute taint",
                    fix=f"add taints: [\"{GPU_TAINT}\"] (a flavor with nodePool: {pool.name} then carries it, and GPU "
                    "jobs need the matching toleration)")
            for pool in model.pools if pool.gpu_vendor is not None
            and not any(t.get("effect") in _KEEPS_PODS_OFF for t in pool.taints)]


@rule(RANGE_NOT_PUBLIC, "Every authorized IP range is a public IPv4 range, from which clients reach the API server.",
      "learn.microsoft.com/azure/aks/api-server-authorized-ip-ranges; MicrosoftDocs/azure-docs#113991; "
      "Azure/azure-cli-extensions#675 and #1764; Azure/AKS#5526", "ManagedCluster", severity=WARNING,
      explanation="Clients reach the public API server from public IPv4 addresses, and the API server has an IPv4 "
      "address only (Azure/AKS#5526), so a private or IPv6 range lets no one in. Azure's page calls the ranges "
      "public and the Azure CLI refused private (#1764) and IPv6 (#675) ranges, but the documentation does not say "
      "whether the API refuses them: so this is a warning.")
def authorized_ranges(model: Model) -> list[Finding]:
    """Azure's pages do not say whether the API refuses these, so they are warnings that say so: its page calls the
    ranges public, the Azure CLI refused private (#1764) and IPv6 ranges (#675), and the API server has an IPv4
    address only (Azure/AKS#5526)."""
    cluster = model.cluster
    if cluster is None:
        return []
    found = []
    for i, cidr in enumerate(cluster.security.authorized_ip_ranges):
        try:
            network = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            continue
        key = f"{cluster.key}.security.apiServerAuthorizedIpRanges[{i}]"
        if within(cidr, _DOCUMENTATION_NETWORKS):
            continue  # a placeholder, reported as one
        if network.version == 6:
            found.append(finding(
                RANGE_NOT_PUBLIC, object=cluster.subject, key=key,
                message=f"{cidr} is an IPv6 range, and the API server has an IPv4 address only",
                fix="list the public IPv4 ranges your clients connect from"))
        elif not network.is_global:
            found.append(finding(
                RANGE_NOT_PUBLIC, object=cluster.subject, key=key,
                message=f"{cidr} is not a public range, and clients reach the public API server from public addresses",
                fix="list the public ranges (your NAT or VPN egress) your clients connect from, or use a private "
                "cluster"))
    return found


@rule(NETWORK_RANGE_PUBLIC, "The pod and service ranges are private address space.",
      "learn.microsoft.com/azure/aks/azure-cni-overlay (\"While we don't block the use of public IP ranges, they are "
      "considered out of Microsoft's support scope\"); MicrosoftDocs/azure-aks-docs#263", "ManagedCluster",
      severity=WARNING,
      explanation="AKS accepts public address space for the pod and service ranges but leaves it outside "
      "Microsoft's support, and from inside the cluster the internet hosts at those addresses cannot be reached.")
def public_network_ranges(model: Model) -> list[Finding]:
    cluster = model.cluster
    if cluster is None:
        return []
    found = []
    for field, cidr in (("podCidr", cluster.network.pod_cidr), ("serviceCidr", cluster.network.service_cidr)):
        try:
            public = cidr is not None and ipaddress.ip_network(cidr, strict=False).is_global
        except ValueError:
            continue
        if public:
            found.append(finding(
                NETWORK_RANGE_PUBLIC, object=cluster.subject, key=f"{cluster.key}.network.{field}",
                message=f"{cidr} is public address space",
                fix="use a private range (RFC 1918) that no network the cluster talks to uses, such as 10.0.0.0/16 for "
                "services"))
    return found


@rule(MAINTENANCE_DATE_PAST, "No notAllowedDates span of a maintenance window has already ended.",
      "learn.microsoft.com/azure/aks/planned-maintenance (notAllowedDates); the AKS API's maintenanceWindow",
      "the maintenance configurations", severity=WARNING,
      explanation="A notAllowedDates span that has ended blocks no upgrade, so a freeze it was meant for is not "
      "there. Azure's documentation does not say whether it refuses a past span, so this is a warning; a past "
      "startDate is fine (the window is active right away).")
def maintenance_dates(model: Model, today: Optional[date] = None) -> list[Finding]:
    """A past span blocks nothing; Azure's documentation does not say whether it refuses one, so it is a
    warning. A startDate in the past is not: the API documents it ("If not specified, the maintenance window
    will be active right away"; a past one likewise is active)."""
    cluster = model.cluster
    if cluster is None:
        return []
    day = today or kubernetes_versions.today()
    keys = {AUTO_UPGRADE_CONFIG: "autoUpgrade", NODE_OS_UPGRADE_CONFIG: "nodeOsUpgrade"}
    prefix = f"{cluster.key}.maintenance"
    found = []
    for window in cluster.maintenance:
        spans = window.window.get("notAllowedDates")
        for i, span in enumerate(spans if isinstance(spans, list) else []):
            end = _day(span.get("end")) if isinstance(span, dict) else None
            if end is not None and end < day:
                found.append(finding(
                    MAINTENANCE_DATE_PAST, object=cluster.subject,
                    key=f"{prefix}.{keys.get(window.config_name, window.config_name)}.notAllowedDates[{i}]",
                    message=f"the span {span.get('start')} to {span.get('end')} ended before {day.isoformat()}",
                    fix="remove it, or give the dates of the freeze to come"))
    return found


def _day(text: object) -> Optional[date]:
    try:
        return date.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        return None
