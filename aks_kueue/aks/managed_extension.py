"""What is documented about the AKS managed Kueue extension (`microsoft.kueue`), and how this
program models what is not (`../shared/reference/aks.md` section d).

Documented: it generates an `aks-cpu` ResourceFlavor for eligible CPU user nodes and the
priority classes `aks-low-priority` (100), `aks-medium-priority` (500) and
`aks-high-priority` (1000), and it owns every Kueue object whose name starts with `aks-`.
Not documented: which CPU pools count as eligible, the GPU flavors' names and node labels
(one third-party source shows names like `aks-h200-ndisr-v5` selecting
`kubernetes.azure.com/sku-gpu-name`). So a generated flavor is modelled as landing on every
pool it could land on, and only a quota above all of them together is rejected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

from aks_kueue.aks.pools import Pool
from aks_kueue.aks.vm_sizes import lookup
from aks_kueue.kueue.catalog import MANAGED_REGIONS  # noqa: F401 (the install rules read it here)
from aks_kueue.versions import (MANAGED_KUEUE_DEFAULT_RELEASE_TRAIN, MANAGED_KUEUE_EXAMPLE_VERSION,
                                MANAGED_KUEUE_EXTENSION_TYPE)

# The microsoft.kueue versions this program knows Microsoft publishes, each with where it is
# published: the one kueue-overview's pinned install names (`../shared/reference/aks.md` d).
# Azure refuses a version it does not publish, but publishes new ones before this table knows
# them, so a version outside it is a warning with the command that lists the published ones.
KNOWN_VERSIONS: dict[str, str] = {
    MANAGED_KUEUE_EXAMPLE_VERSION: "learn.microsoft.com/azure/aks/kueue-overview?pivots=extension, the pinned "
                                   "install `az k8s-extension create ... --version 0.19.6-aks.0.4.4`",
}
# Its versions are on the preview train (an inference, `docs/deploy.md`, "Limits of the managed
# extension"); the command filters by train, so it names that one.
LIST_VERSIONS_COMMAND = ("az k8s-extension extension-types list-versions-by-cluster --resource-group <rg> "
                         "--cluster-name <cluster> --cluster-type managedClusters --extension-type "
                         f"{MANAGED_KUEUE_EXTENSION_TYPE} --release-train {MANAGED_KUEUE_DEFAULT_RELEASE_TRAIN}")
RESERVED_PREFIX = "aks-"
CPU_FLAVOR = "aks-cpu"
PRIORITY_CLASSES = {"aks-low-priority": 100, "aks-medium-priority": 500, "aks-high-priority": 1000}


@dataclass(frozen=True)
class GeneratedFlavor:
    """A flavor the extension generates: the pools it could land on, and what that assumes."""

    name: str
    pools: tuple[Pool, ...]
    assumption: str


def generated_flavor(name: str, pools: Sequence[Pool]) -> Optional[GeneratedFlavor]:
    """The pools a generated flavor could land on; None for a name the extension does not own."""
    if not name.startswith(RESERVED_PREFIX):
        return None
    if name == CPU_FLAVOR:
        cpu = tuple(p for p in pools if p.gpu_vendor is None)
        return GeneratedFlavor(name, cpu, "the extension generates aks-cpu for eligible CPU user nodes; which pools "
                                          "are eligible is not documented, so every CPU user pool is counted")
    gpu = [p for p in pools if p.gpu_vendor is not None]
    words = set(re.split(r"[-_]", name.lower()[len(RESERVED_PREFIX):]))
    named = tuple(p for p in gpu if _gpu_words(p) & words)
    return GeneratedFlavor(name, named or tuple(gpu),
                           "the extension's GPU flavor names and node labels are not documented, so "
                           + (f"{name} is counted on the GPU pools whose GPU model its name gives"
                              if named else f"{name} is counted on every GPU pool"))


def _gpu_words(pool: Pool) -> set[str]:
    """Lower-case tokens of the pool's GPU model ("NVIDIA H100 PCIe 94GB" -> {"h100", "pcie", "94gb"})."""
    size = lookup(pool.vm_size)
    model = size.gpu_model if size is not None else ""
    return {w for w in re.split(r"[\s()/-]+", model.lower()) if w and w not in ("nvidia", "amd", "tesla")}

