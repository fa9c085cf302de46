"""The Azure VM sizes the program knows, read from `data/azure-vm-skus.csv`.

The CSV holds facts from the Azure size-series pages (vCPUs, memory, GPUs). Sizes
whose GPU count is a fraction are GRID vGPU partitions: they are flagged, and never
counted as whole GPUs.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from importlib import resources

MIG_CAPABLE_MODELS = ("A100", "H100", "H200")


@dataclass(frozen=True)
class VmSize:
    name: str
    family: str
    vcpus: int
    memory_gib: float
    gpus: Fraction
    gpu_model: str
    gpu_resource: str

    @property
    def has_gpu(self) -> bool:
        return self.gpus > 0

    @property
    def fractional_gpu(self) -> bool:
        return self.gpus.denominator != 1

    @property
    def gpu_vendor(self) -> str | None:
        if not self.has_gpu:
            return None
        return "amd" if self.gpu_resource.startswith("amd.com/") else "nvidia"

    @property
    def mig_capable(self) -> bool:
        return self.gpu_vendor == "nvidia" and any(m in self.gpu_model for m in MIG_CAPABLE_MODELS)


@lru_cache(maxsize=1)
def catalog() -> dict[str, VmSize]:
    text = resources.files("aks_kueue").joinpath("data/azure-vm-skus.csv").read_text()
    sizes = {}
    for row in csv.DictReader(text.splitlines()):
        sizes[row["sku"].lower()] = VmSize(
            name=row["sku"],
            family=row["family"],
            vcpus=int(row["vcpus"]),
            memory_gib=float(row["memory_gib"]),
            gpus=Fraction(row["gpus"] or "0"),
            gpu_model=row["gpu_model"],
            gpu_resource=row["gpu_resource"],
        )
    return sizes


def lookup(vm_size: str) -> VmSize | None:
    """Azure treats size names case-insensitively, so the lookup does too."""
    return catalog().get(vm_size.lower())
