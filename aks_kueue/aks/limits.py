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

    def problem(self, value: int) -> Optional[str]:
        """What is wrong with `value`, in the settings-error style; None when it is inside."""
        if self.minimum <= value <= self.maximum:
            return None
        unit = f" {self.unit}" if self.unit else ""
        return (f"{value} is not valid: the AKS API takes {self.field} from {self.minimum} to {self.maximum}{unit} "
                f"({self.citation.name}); write a value in that range")


def _limit(row: dict[str, Any]) -> Any:
    """One entry of the table: a Range, a Cited number, a bare Citation, or a text."""
    if "text" in row:
        return row["text"]
    citation = Citation(**row["citation"])
    if "range" in row:
        return Range(**row["range"], citation=citation)
    return Cited(row["value"], citation) if "value" in row else citation


# Every entry of the table is a name of this module, spelled as its key there (`limits.MAX_NODE_POOLS`,
# `limits.INTERVAL_DAYS`): a Cited number, a Range, a bare Citation or a text.
globals().update({name: _limit(row) for name, row in json.loads(
    resources.files("aks_kueue.aks").joinpath(DATA_FILE).read_text(encoding="utf-8"))["limits"].items()})
MIN_PODS_PER_POOL: Cited  # one of them, named here for pod_floor_problem


def pod_floor_problem(max_pods: int, nodes: int, count_key: str, created_with: str) -> Optional[str]:
    """What is wrong with a pool of `nodes` nodes of `max_pods` pods against AKS's pod floor;
    None when the pool has space for MIN_PODS_PER_POOL pods. `count_key` names the node count
    the user writes (count, minCount) and `created_with` says why that count is the one judged."""
    if max_pods >= MIN_PODS_PER_POOL or max_pods * nodes >= MIN_PODS_PER_POOL:
        return None
    need_nodes = -(-MIN_PODS_PER_POOL // max_pods)
    need_pods = MIN_PODS_PER_POOL if nodes == 0 else -(-MIN_PODS_PER_POOL // nodes)
    return (f"maxPods {max_pods} x {count_key} {nodes} = {max_pods * nodes} pods; AKS refuses a node pool without "
            f"space for at least {MIN_PODS_PER_POOL} pods ({MIN_PODS_PER_POOL.citation.name}), judged on "
            f"{created_with}; set maxPods to {need_pods} or more, or {count_key} to {need_nodes} or more")


def dns_prefix(cluster_name: str) -> str:
    """The cluster's DNS prefix, from its name: AKS DNS prefixes allow letters, digits and '-', at most
    54 characters (the ManagedCluster API's dnsPrefix pattern)."""
    return re.sub(r"[^a-zA-Z0-9-]", "-", cluster_name)[:54].strip("-") or "aks"
