"""The Azure VM sizes the program knows, read from `data/vm-sizes.json`.

The catalog is generated (`tools/vm_catalog/generate.py`) from a dated snapshot of
Microsoft's size pages (MicrosoftDocs/azure-compute-docs,
`articles/virtual-machines/sizes/<category>/<series>-series.md`): vCPUs, memory, GPUs, local
disks and the series' feature support. A fact the page does not give is None, and the size
lists it in `missing`; nothing is guessed.

Sizes whose GPU count is a fraction are GRID vGPU partitions: they are flagged, and never
counted as whole GPUs.

MIG: a pool's `gpuInstanceProfile` splits each GPU into instances. What a node then
advertises depends on the device plugin's MIG strategy: `single` keeps `nvidia.com/gpu`
(one per instance), `mixed` advertises `nvidia.com/mig-<profile>`. The program's own
device plugin runs MIG pools with `mixed` (`device_plugin.py`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any

CATALOG_FILE = "data/vm-sizes.json"
MIG_CAPABLE_MODELS = ("A100", "H100", "H200")
# Instances per GPU for each AKS MIG profile (learn.microsoft.com/azure/aks/gpu-multi-instance).
MIG_INSTANCES_PER_GPU = {"MIG1g": 7, "MIG2g": 3, "MIG3g": 2, "MIG4g": 1, "MIG7g": 1}
# NVIDIA's profile names by GPU memory (GiB per GPU in the catalog). 40 GiB (A100 40GB) and the
# 1g.10gb of the A100 80GB are in aks.md c.4; the rest follow NVIDIA's MIG user guide.
MIG_PROFILE_NAMES = {
    40: {"MIG1g": "1g.5gb", "MIG2g": "2g.10gb", "MIG3g": "3g.20gb", "MIG4g": "4g.20gb", "MIG7g": "7g.40gb"},
    80: {"MIG1g": "1g.10gb", "MIG2g": "2g.20gb", "MIG3g": "3g.40gb", "MIG4g": "4g.40gb", "MIG7g": "7g.80gb"},
    94: {"MIG1g": "1g.12gb", "MIG2g": "2g.24gb", "MIG3g": "3g.47gb", "MIG4g": "4g.47gb", "MIG7g": "7g.94gb"},
    141: {"MIG1g": "1g.18gb", "MIG2g": "2g.35gb", "MIG3g": "3g.71gb", "MIG4g": "4g.71gb", "MIG7g": "7g.141gb"},
}


@dataclass(frozen=True)
class VmSize:
    """One size. For the new facts, None means "the size's page does not say" (see `missing`)."""

    name: str
    family: str  # the series as its page names it: "Dsv6", "NCasT4_v3", "Msv3_High_Memory"
    vcpus: int
    memory_gib: float
    gpus: Fraction
    gpu_model: str  # "" when the size has no GPU or its page names none
    gpu_resource: str  # the Kubernetes extended resource: nvidia.com/gpu, amd.com/gpu; "" as above
    gpu_memory_gib: float = 0  # of one GPU, or of the size's share of one
    category: str = ""  # general-purpose, compute-optimized, memory-optimized, storage-optimized,
    #                     gpu-accelerated, high-performance-compute
    temp_disk_count: int | None = None  # 0: the page says the series has no local storage
    temp_disk_gib: float | None = None  # size of each temp disk (older pages: the one temp disk)
    cache_disk_gib: float | None = None  # host cache for data disks; most current pages give none
    local_ssd_count: int | None = None  # raw local SSDs besides the temp disk (L, ND, HB/HX series)
    local_ssd_size: str | None = None  # the page's figure as printed, with its unit. Pages differ on
    #   whether it is each disk's (Lsv3: 1 x "1.92 TB") or all of them (ND H100 v5: 8 disks, "28 TiB")
    ephemeral_os_disk: bool | None = None
    premium_storage: bool | None = None
    accelerated_networking: bool | None = None  # True also where the page says "Required"
    generation_1: bool | None = None  # Hyper-V generation 1 images
    generation_2: bool | None = None  # Hyper-V generation 2 images
    cpu_architecture: str | None = None  # "x64" or "Arm64"
    preview: bool = False
    previous_generation: bool = False
    retirement: str | None = None  # the page's retirement note, when it concerns this size
    nvme_only_images: bool = False  # the page says the series runs only OS images with NVMe support
    features: tuple[tuple[str, str], ...] = ()  # the series' "Feature support" lines, as worded
    missing: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    source: str = ""  # the page's path in MicrosoftDocs/azure-compute-docs

    @property
    def has_gpu(self) -> bool:
        return self.gpus > 0

    @property
    def fractional_gpu(self) -> bool:
        return self.gpus.denominator != 1

    @property
    def gpu_vendor(self) -> str | None:
        """"amd" or "nvidia" from the GPU's resource; None without a GPU or when the page names none."""
        vendors = ("amd", "nvidia") if self.has_gpu else ()
        return next((vendor for vendor in vendors if self.gpu_resource.startswith(f"{vendor}.com/")), None)

    @property
    def mig_capable(self) -> bool:
        return self.gpu_vendor == "nvidia" and any(m in self.gpu_model for m in MIG_CAPABLE_MODELS)

    @property
    def temp_storage_gib(self) -> float | None:
        """All local temp storage: disks x size where the page gives a count, else the one figure."""
        if self.temp_disk_gib is None:
            return None
        return self.temp_disk_gib * (self.temp_disk_count if self.temp_disk_count is not None else 1)

    def feature(self, name: str) -> str | None:
        """The series' support status for a feature as the page words it, e.g. feature("Live Migration")."""
        return dict(self.features).get(name)


# The row's facts VmSize keeps under the same name and as they are.
_ROW_FIELDS = ("vcpus", "memory_gib", "category", "temp_disk_count", "temp_disk_gib", "cache_disk_gib",
               "local_ssd_count", "local_ssd_size", "ephemeral_os_disk", "premium_storage", "accelerated_networking",
               "generation_1", "generation_2", "cpu_architecture")


def _size(row: dict[str, Any], series: dict[str, Any]) -> VmSize:
    return VmSize(
        name=row["name"],
        family=row["series"],
        gpus=Fraction(row["gpus"]),
        gpu_model=row["gpu_model"] or "",
        gpu_resource=row["gpu_resource"] or "",
        gpu_memory_gib=row["gpu_memory_gib"] or 0,
        **{name: row[name] for name in _ROW_FIELDS},
        preview=series["preview"],
        previous_generation=series["previous_generation"],
        retirement=series["retirement"] if row["retiring"] else None,
        nvme_only_images=series["nvme_only_images"],
        features=tuple(series["features"].items()),
        missing=tuple(row["missing"]),
        notes=tuple(row["notes"]),
        source=series["page"],
    )


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return json.loads(resources.files("aks_kueue.aks").joinpath(CATALOG_FILE).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _rows() -> dict[str, dict[str, Any]]:
    return {row["name"].lower(): row for row in _data()["sizes"]}


@lru_cache(maxsize=None)
def _parsed(key: str) -> VmSize:
    """One size, built when first asked for: a stack names a few of the catalog's thousand."""
    row = _rows()[key]
    return _size(row, _data()["series"][row["series"]])


@lru_cache(maxsize=1)
def catalog() -> dict[str, VmSize]:
    """Every size, keyed by its lower-cased name."""
    return {key: _parsed(key) for key in _rows()}


def lookup(vm_size: str) -> VmSize | None:
    """Azure treats size names case-insensitively, so the lookup does too."""
    key = vm_size.lower()
    return _parsed(key) if key in _rows() else None


def mig_resource(size: VmSize, profile: str, strategy: str = "mixed") -> tuple[str, int]:
    """The resource a MIG node advertises and how many: (name, instances x GPUs)."""
    names = MIG_PROFILE_NAMES.get(round(size.gpu_memory_gib))
    if not size.mig_capable or names is None or profile not in names:
        raise ValueError(f"{size.name} ({size.gpu_model}) has no MIG profile {profile}; MIG needs an "
                         "NVIDIA A100, H100 or H200 size and one of " + ", ".join(MIG_INSTANCES_PER_GPU))
    count = MIG_INSTANCES_PER_GPU[profile] * int(size.gpus)
    if strategy == "single":
        return "nvidia.com/gpu", count
    if strategy == "mixed":
        return f"nvidia.com/mig-{names[profile]}", count
    raise ValueError(f"MIG strategy {strategy!r} is not one of single, mixed")
