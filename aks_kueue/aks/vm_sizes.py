"""The Azure VM sizes the program knows, read from `data/azure-vm-skus.csv`.

The CSV holds facts from the Azure size-series pages (vCPUs, memory, GPUs). Sizes
whose GPU count is a fraction are GRID vGPU partitions: they are flagged, and never
counted as whole GPUs.

MIG: a pool's `gpuInstanceProfile` splits each GPU into instances. What a node then
advertises depends on the device plugin's MIG strategy: `single` keeps `nvidia.com/gpu`
(one per instance), `mixed` advertises `nvidia.com/mig-<profile>`. The program's own
device plugin runs MIG pools with `mixed` (`device_plugin.py`).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from importlib import resources

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
    name: str
    family: str
    vcpus: int
    memory_gib: float
    gpus: Fraction
    gpu_model: str
    gpu_resource: str
    gpu_memory_gib: float = 0

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
    text = resources.files("aks_kueue.aks").joinpath("data/azure-vm-skus.csv").read_text()
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
            gpu_memory_gib=float(row["gpu_memory_gib"] or 0),
        )
    return sizes


def lookup(vm_size: str) -> VmSize | None:
    """Azure treats size names case-insensitively, so the lookup does too."""
    return catalog().get(vm_size.lower())


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
