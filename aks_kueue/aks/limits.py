"""Limits AKS enforces when a cluster or node pool is created, each with its source.

Sources (MicrosoftDocs/azure-aks-docs, read 2026-08-21, published under learn.microsoft.com/azure/aks/):
- [limits] the AKS service limits table, `includes/container-service-limits.md`, shown on
  quotas-skus-regions (ms.date 2026-08-03).
- [system-pools] use-system-pools, "System and user node pools" (ms.date 2026-04-30).
- [max-pods] concepts-network-ip-address-planning, "Maximum pods per node" (ms.date 2026-04-16).
- [sizes] quotas-skus-regions, "VM size restrictions" (ms.date 2026-08-03).
- [authorized] api-server-authorized-ip-ranges, "Limitations and considerations" (ms.date 2026-08-03).
"""

from __future__ import annotations

import re

# [limits] "Maximum node pools per cluster: 100" (the system pool counts).
MAX_NODE_POOLS = 100
# [limits] "Maximum nodes per cluster with Virtual Machine Scale Sets and Standard Load Balancer
# SKU: 5,000 across all node pools"; "Maximum nodes per node pool: 1000".
MAX_NODES_PER_CLUSTER = 5000
MAX_NODES_PER_POOL = 1000

# [system-pools] "System node pools require a VM SKU of at least 4 vCPUs and 4 GB of memory",
# "B series VMs aren't supported for system node pools", "System pools osType must be Linux".
# The API's own description of AgentPoolMode System (pulumi-azure-native 3.29) and [sizes] still
# say 2 vCPUs and 4 GB; the system-pools page is the stricter and the one this program follows.
SYSTEM_POOL_MIN_VCPUS = 4
SYSTEM_POOL_MIN_MEMORY_GIB = 4
SYSTEM_POOL_OS_TYPE = "Linux"
# [sizes] "For user node pools, you might not be able to use VM versions with fewer than two vCPUs and 2 GB".
USER_POOL_MIN_VCPUS = 2
USER_POOL_MIN_MEMORY_GIB = 2

# [max-pods] maxPods is 10 to 250 per node, and 10 only "if and only if the configuration of each
# node pool has space for a minimum of 30 pods" (maxPods x nodes); [system-pools] "System node
# pools must support at least 30 pods as described by the minimum and maximum value formula".
MIN_MAX_PODS = 10
MAX_MAX_PODS = 250
MIN_PODS_PER_POOL = 30

# [authorized] "You can specify up to 200 authorized IP ranges" and "You can't use this feature
# with private clusters".
MAX_AUTHORIZED_IP_RANGES = 200


def dns_prefix(cluster_name: str) -> str:
    """The cluster's DNS prefix, from its name: AKS DNS prefixes allow letters, digits and '-', at most
    54 characters (the ManagedCluster API's dnsPrefix pattern)."""
    return re.sub(r"[^a-zA-Z0-9-]", "-", cluster_name)[:54].strip("-") or "aks"
