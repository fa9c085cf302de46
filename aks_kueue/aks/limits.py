"""Limits AKS enforces when a cluster, a node pool or a maintenance window is created, each kept
with where it is written and the sentence (or schema line) that says so.

The table is `data/aks-limits.json`: every entry has its citation (the page or schema by URL, and
the words there), a note where the choice needs one, and the sources' dates. A number here is a
`Cited` integer and a range a `Range`: both carry their `Citation`, and `tests/aks/test_limits.py`
fails on any limit of this module without one, or whose quote does not state its number.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any, Optional

from aks_kueue.k8s.field import FieldError

DATA_FILE = "data/aks-limits.json"


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

    def problem(self, value: int) -> Optional[FieldError]:
        """What is wrong with `value`; None when it is inside."""
        if self.minimum <= value <= self.maximum:
            return None
        unit = f" {self.unit}" if self.unit else ""
        return FieldError("", f"{value} is not valid: the AKS API takes {self.field} from {self.minimum} to "
                              f"{self.maximum}{unit} ({self.citation.name})", "write a value in that range")


def _limit(row: dict[str, Any]) -> Any:
    """One entry of the table: a Range, a Cited number, a bare Citation, or a text."""
    if "text" in row:
        return row["text"]
    citation = Citation(**row["citation"])
    if "range" in row:
        return Range(**row["range"], citation=citation)
    return Cited(row["value"], citation) if "value" in row else citation


_TABLE = {name: _limit(row) for name, row in json.loads(
    resources.files("aks_kueue.aks").joinpath(DATA_FILE).read_text(encoding="utf-8"))["limits"].items()}
# The names callers use, one per entry of the table.
MAX_NODE_POOLS: Cited = _TABLE["MAX_NODE_POOLS"]
MAX_NODES_PER_CLUSTER: Cited = _TABLE["MAX_NODES_PER_CLUSTER"]
MAX_NODES_PER_POOL: Cited = _TABLE["MAX_NODES_PER_POOL"]
SYSTEM_POOL_MIN_VCPUS: Cited = _TABLE["SYSTEM_POOL_MIN_VCPUS"]
SYSTEM_POOL_MIN_MEMORY_GIB: Cited = _TABLE["SYSTEM_POOL_MIN_MEMORY_GIB"]
SYSTEM_POOL_OS_TYPE: str = _TABLE["SYSTEM_POOL_OS_TYPE"]
USER_POOL_MIN_VCPUS: Cited = _TABLE["USER_POOL_MIN_VCPUS"]
USER_POOL_MIN_MEMORY_GIB: Cited = _TABLE["USER_POOL_MIN_MEMORY_GIB"]
MIN_MAX_PODS: Cited = _TABLE["MIN_MAX_PODS"]
MAX_MAX_PODS: Cited = _TABLE["MAX_MAX_PODS"]
MIN_PODS_PER_POOL: Cited = _TABLE["MIN_PODS_PER_POOL"]
POD_FLOOR_NODE_COUNT: Citation = _TABLE["POD_FLOOR_NODE_COUNT"]
MAX_AUTHORIZED_IP_RANGES: Cited = _TABLE["MAX_AUTHORIZED_IP_RANGES"]
CILIUM_NEEDS_CILIUM_POLICY: Citation = _TABLE["CILIUM_NEEDS_CILIUM_POLICY"]
CILIUM_REPLACES_ENGINES: Citation = _TABLE["CILIUM_REPLACES_ENGINES"]
INTERVAL_DAYS: Range = _TABLE["INTERVAL_DAYS"]
INTERVAL_WEEKS: Range = _TABLE["INTERVAL_WEEKS"]
ABSOLUTE_INTERVAL_MONTHS: Range = _TABLE["ABSOLUTE_INTERVAL_MONTHS"]
RELATIVE_INTERVAL_MONTHS: Range = _TABLE["RELATIVE_INTERVAL_MONTHS"]
DAY_OF_MONTH: Range = _TABLE["DAY_OF_MONTH"]
DURATION_HOURS: Range = _TABLE["DURATION_HOURS"]
DRAIN_TIMEOUT_MINUTES: Range = _TABLE["DRAIN_TIMEOUT_MINUTES"]
NODE_SOAK_MINUTES: Range = _TABLE["NODE_SOAK_MINUTES"]
NODE_RESOURCE_GROUP_MAX_LENGTH: Cited = _TABLE["NODE_RESOURCE_GROUP_MAX_LENGTH"]
AZURE_NPM_NEEDS_AZURE_CNI: Citation = _TABLE["AZURE_NPM_NEEDS_AZURE_CNI"]
NODE_IMAGE_CHANNEL_SETS_NODE_OS: Citation = _TABLE["NODE_IMAGE_CHANNEL_SETS_NODE_OS"]
AUTOSCALER_PROFILE_UNITS: Citation = _TABLE["AUTOSCALER_PROFILE_UNITS"]


def pod_floor_problem(max_pods: int, nodes: int, count_key: str, created_with: str) -> Optional[FieldError]:
    """What is wrong with a pool of `nodes` nodes of `max_pods` pods against AKS's pod floor;
    None when the pool has space for MIN_PODS_PER_POOL pods. `count_key` names the node count
    the user writes (count, minCount) and `created_with` says why that count is the one judged."""
    if max_pods >= MIN_PODS_PER_POOL or max_pods * nodes >= MIN_PODS_PER_POOL:
        return None
    need_nodes = -(-MIN_PODS_PER_POOL // max_pods)
    need_pods = MIN_PODS_PER_POOL if nodes == 0 else -(-MIN_PODS_PER_POOL // nodes)
    return FieldError("", f"maxPods {max_pods} x {count_key} {nodes} = {max_pods * nodes} pods; AKS refuses a node "
                          f"pool without space for at least {MIN_PODS_PER_POOL} pods "
                          f"({MIN_PODS_PER_POOL.citation.name}), judged on {created_with}",
                      f"set maxPods to {need_pods} or more, or {count_key} to {need_nodes} or more")


def dns_prefix(cluster_name: str) -> str:
    """The cluster's DNS prefix, from its name: AKS DNS prefixes allow letters, digits and '-', at most
    54 characters (the ManagedCluster API's dnsPrefix pattern)."""
    return re.sub(r"[^a-zA-Z0-9-]", "-", cluster_name)[:54].strip("-") or "aks"
