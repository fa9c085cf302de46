"""Warnings about a stack that validates but will not work as deployed: placeholders left in."""

from __future__ import annotations

import ipaddress

from aks_kueue.judge.finding import WARNING, Finding
from aks_kueue.model.desired import Model

PLACEHOLDER = "placeholder-value"
# RFC 5737: addresses for documentation, which no real client is in.
_DOCUMENTATION_NETWORKS = [ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")]


def stack_findings(model: Model) -> list[Finding]:
    cluster = model.cluster
    if cluster is None:
        return []
    findings = []
    for i, cidr in enumerate(cluster.security.authorized_ip_ranges):
        try:
            network = ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            continue
        if any(network.version == doc.version and network.subnet_of(doc) for doc in _DOCUMENTATION_NETWORKS):
            findings.append(Finding(
                PLACEHOLDER, WARNING, "AKS cluster", f"{cluster.key}.security.apiServerAuthorizedIpRanges[{i}]",
                f"{cidr} is a documentation range (RFC 5737) that no real client is in, so pulumi up could not "
                "reach the API server", "put your own egress ranges here"))
    for i, group in enumerate(cluster.security.admin_groups):
        if set(group.replace("-", "")) == {"0"}:
            findings.append(Finding(
                PLACEHOLDER, WARNING, "AKS cluster", f"{cluster.key}.security.entraAdminGroupObjectIds[{i}]",
                "the all-zero ID is a placeholder, so no one would administer the cluster",
                "put your admin group's object ID here"))
    return findings
