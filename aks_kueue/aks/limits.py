"""Limits AKS enforces when a cluster, a node pool or a maintenance window is created, each kept
with where it is written and the sentence (or schema line) that says so.

A number here is a `Cited` integer and a range a `Range`: both carry their `Citation`, and
`tests/aks/test_limits.py` fails on any limit of this module without one, or whose quote does
not state its number.

Sources (MicrosoftDocs/azure-aks-docs pages are read as published under learn.microsoft.com/azure/aks/):
- [limits] the AKS service limits table, `includes/container-service-limits.md`, shown on
  quotas-skus-regions (ms.date 2026-08-03), read 2026-08-21.
- [system-pools] use-system-pools, "System and user node pools" (ms.date 2026-04-30), read 2026-08-21.
- [max-pods] concepts-network-ip-address-planning, "Maximum pods per node" (ms.date 2026-04-16).
- [sizes] quotas-skus-regions, "VM size restrictions" (ms.date 2026-08-03), read 2026-08-21.
- [authorized] api-server-authorized-ip-ranges, "Limitations and considerations" (ms.date 2026-08-03).
- [api] the AKS REST API the pinned pulumi-azure-native 3.29 speaks, 2025-09-01
  (its Python package carries no ranges; the specification does): Azure/azure-rest-api-specs,
  `specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable/2025-09-01/managedClusters.json`.
- [cilium] the AKS resource provider's refusal of a Cilium dataplane with another policy
  engine, as users met it (Azure/AKS-Construction#535), and upgrade-aks-ipam-and-dataplane.
- [release-2019-04-15] the AKS release note quoted in Azure/AKS#931, on how the pod floor is computed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Citation:
    """Where a limit is written (a page or schema, by URL) and the words there that state it."""

    name: str       # short, as messages cite it
    url: str
    quote: str


class Cited(int):
    """An integer AKS enforces, carrying its citation; it is an int everywhere it is used."""

    citation: Citation

    def __new__(cls, value: int, citation: Citation) -> "Cited":
        number = super().__new__(cls, value)
        number.citation = citation
        return number


@dataclass(frozen=True)
class Range:
    """The inclusive range the AKS API accepts for one field, in the API's own name and unit."""

    field: str
    minimum: int
    maximum: int
    unit: str
    citation: Citation

    def problem(self, value: int) -> Optional[str]:
        """What is wrong with `value`, in the settings-error style; None when it is inside."""
        if self.minimum <= value <= self.maximum:
            return None
        unit = f" {self.unit}" if self.unit else ""
        return (f"{value} is not valid: the AKS API takes {self.field} from {self.minimum} to {self.maximum}{unit} "
                f"({self.citation.name}); write a value in that range")


_DOCS = "https://learn.microsoft.com/azure/aks/"
_API_URL = ("https://github.com/Azure/azure-rest-api-specs/blob/1041da1a500c263360ec4c2692e7e1995f0dcb5a/"
            "specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable/2025-09-01/"
            "managedClusters.json")
_API = "managedClusters.json, AKS API 2025-09-01"


def _limits(quote: str) -> Citation:
    return Citation("AKS service limits, quotas-skus-regions", _DOCS + "quotas-skus-regions", quote)


def _api(definition: str, quote: str) -> Citation:
    return Citation(_API, f"{_API_URL} (definitions.{definition})", quote)


# [limits] "Maximum node pools per cluster: 100" (the system pool counts).
MAX_NODE_POOLS = Cited(100, _limits("Maximum node pools per cluster: 100"))
MAX_NODES_PER_CLUSTER = Cited(5000, _limits(
    "Maximum nodes per cluster with Virtual Machine Scale Sets and Standard Load Balancer SKU: 5,000 across all "
    "node pools"))
MAX_NODES_PER_POOL = Cited(1000, _limits("Maximum nodes per node pool: 1000"))

# [system-pools] The API's own description of AgentPoolMode System (2025-09-01: "at least 2vCPUs
# and 4GB of memory") and [sizes] still say 2 vCPUs; the system-pools page is the stricter and
# the one this program follows.
_SYSTEM_POOLS = Citation("use-system-pools", _DOCS + "use-system-pools",
                         "System node pools require a VM SKU of at least 4 vCPUs and 4 GB of memory")
SYSTEM_POOL_MIN_VCPUS = Cited(4, _SYSTEM_POOLS)
SYSTEM_POOL_MIN_MEMORY_GIB = Cited(4, _SYSTEM_POOLS)
# [system-pools] "B series VMs aren't supported for system node pools", "System pools osType must be Linux".
SYSTEM_POOL_OS_TYPE = "Linux"
_SIZES = Citation("quotas-skus-regions, VM size restrictions", _DOCS + "quotas-skus-regions",
                  "For user node pools, you might not be able to use VM versions with fewer than two vCPUs and 2 GB")
USER_POOL_MIN_VCPUS = Cited(2, _SIZES)
USER_POOL_MIN_MEMORY_GIB = Cited(2, _SIZES)

# [max-pods] maxPods is 10 to 250 per node, and 10 only when the pool has space for 30 pods.
_MAX_PODS = Citation(
    "concepts-network-ip-address-planning", _DOCS + "concepts-network-ip-address-planning",
    "You can set the maximum pods per node value as high as 250. [...] The minimum value that can be set for "
    "maximum pods per node is 10 if and only if the configuration of each node pool has space for a minimum of 30 "
    "pods. For example, setting the maximum pods per node to the minimum of 10 requires each individual node pool "
    "to have a minimum of three nodes.")
MIN_MAX_PODS = Cited(10, _MAX_PODS)
MAX_MAX_PODS = Cited(250, _MAX_PODS)
# The pod floor of every pool, the system pool's and each user pool's. The node count it is
# judged on is the one the pool is created with: [release-2019-04-15] "AKS now calculates the
# minimum number of pods via: maxPods or maxPods * vm_count > managed add-on pods", where
# vm_count is the pool's `count`. This program creates an autoscaled pool with count = minCount
# (`components/node_pools/inputs.py`), so for user pools the floor is maxPods x minCount, and a
# pool whose maxPods alone reaches 30 passes at any count (minCount 0 included), as the
# "maxPods or" of the note says.
MIN_PODS_PER_POOL = Cited(30, _MAX_PODS)
POD_FLOOR_NODE_COUNT = Citation(
    "AKS release 2019-04-15 (Azure/AKS#931)", "https://github.com/Azure/AKS/issues/931",
    "AKS now calculates the minimum number of pods via: maxPods or maxPods * vm_count > managed add-on pods")

# [authorized] "You can't use this feature with private clusters".
MAX_AUTHORIZED_IP_RANGES = Cited(200, Citation(
    "api-server-authorized-ip-ranges", _DOCS + "api-server-authorized-ip-ranges",
    "You can specify up to 200 authorized IP ranges"))

# [cilium] The Cilium dataplane enforces network policy itself; AKS refuses it with Calico or
# Azure NPM ("target": "networkProfile.networkPolicy"), and replaces either when a cluster is
# moved to Cilium.
CILIUM_NEEDS_CILIUM_POLICY = Citation(
    "CiliumDataplaneRequiresNetworkPolicyCilium",
    "https://github.com/Azure/AKS-Construction/issues/535",
    "\"message\": \"Cilium dataplane requires network policy cilium.\", \"subcode\": "
    "\"CiliumDataplaneRequiresNetworkPolicyCilium\"")
CILIUM_REPLACES_ENGINES = Citation(
    "upgrade-aks-ipam-and-dataplane", _DOCS + "upgrade-aks-ipam-and-dataplane",
    "When enabling Cilium in a cluster with a different network policy engine (Azure NPM or Calico), the network "
    "policy engine will be uninstalled and replaced with Cilium.")

# [api] A maintenance window's schedule and length.
INTERVAL_DAYS = Range("intervalDays", 1, 7, "days between windows", _api(
    "DailySchedule", '"intervalDays": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 7, '
    '"description": "Specifies the number of days between each set of occurrences."}'))
INTERVAL_WEEKS = Range("intervalWeeks", 1, 4, "weeks between windows", _api(
    "WeeklySchedule", '"intervalWeeks": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 4, '
    '"description": "Specifies the number of weeks between each set of occurrences."}'))
ABSOLUTE_INTERVAL_MONTHS = Range("intervalMonths", 1, 6, "months between windows", _api(
    "AbsoluteMonthlySchedule", '"intervalMonths": {"type": "integer", "format": "int32", "minimum": 1, '
    '"maximum": 6, "description": "Specifies the number of months between each set of occurrences."}'))
RELATIVE_INTERVAL_MONTHS = Range("intervalMonths", 1, 6, "months between windows", _api(
    "RelativeMonthlySchedule", '"intervalMonths": {"type": "integer", "format": "int32", "minimum": 1, '
    '"maximum": 6, "description": "Specifies the number of months between each set of occurrences."}'))
DAY_OF_MONTH = Range("dayOfMonth", 1, 31, "", _api(
    "AbsoluteMonthlySchedule", '"dayOfMonth": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 31, '
    '"description": "The date of the month."}'))
DURATION_HOURS = Range("durationHours", 4, 24, "hours", _api(
    "MaintenanceWindow", '"durationHours": {"type": "integer", "format": "int32", "minimum": 4, "maximum": 24, '
    '"default": 24, "description": "Length of maintenance window range from 4 to 24 hours."}'))

# [api] A pool's upgradeSettings.
DRAIN_TIMEOUT_MINUTES = Range("drainTimeoutInMinutes", 1, 1440, "minutes", _api(
    "AgentPoolUpgradeSettings", '"drainTimeoutInMinutes": {"type": "integer", "format": "int32", "maximum": 1440, '
    '"minimum": 1, "description": "The drain timeout for a node. The amount of time (in minutes) to wait on '
    'eviction of pods and graceful termination per node. [...] If not specified, the default is 30 minutes."}'))
NODE_SOAK_MINUTES = Range("nodeSoakDurationInMinutes", 0, 30, "minutes", _api(
    "AgentPoolUpgradeSettings", '"nodeSoakDurationInMinutes": {"type": "integer", "format": "int32", '
    '"maximum": 30, "minimum": 0, "description": "The soak duration for a node. [...] If not specified, the '
    'default is 0 minutes."}'))


def pod_floor_problem(max_pods: int, nodes: int, count_key: str, created_with: str) -> Optional[str]:
    """What is wrong with a pool of `nodes` nodes of `max_pods` pods against AKS's pod floor;
    None when the pool has space for MIN_PODS_PER_POOL pods. `count_key` names the node count
    the user writes (count, minCount) and `created_with` says why that count is the one judged."""
    if max_pods >= MIN_PODS_PER_POOL or max_pods * nodes >= MIN_PODS_PER_POOL:
        return None
    need_nodes = -(-MIN_PODS_PER_POOL // max_pods)
    need_pods = MIN_PODS_PER_POOL if nodes == 0 else -(-MIN_PODS_PER_POOL // nodes)
    return (f"maxPods {max_pods} x {count_key} {nodes} = {max_pods * nodes} pods; AKS refuses a node pool without "
            f"space for at least {MIN_PODS_PER_POOL} pods ({_MAX_PODS.name}), judged on {created_with}; set maxPods "
            f"to {need_pods} or more, or {count_key} to {need_nodes} or more")


def dns_prefix(cluster_name: str) -> str:
    """The cluster's DNS prefix, from its name: AKS DNS prefixes allow letters, digits and '-', at most
    54 characters (the ManagedCluster API's dnsPrefix pattern)."""
    return re.sub(r"[^a-zA-Z0-9-]", "-", cluster_name)[:54].strip("-") or "aks"
