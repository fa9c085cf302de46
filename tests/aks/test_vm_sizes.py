"""The VM size catalog against the shared reference, the new facts, fractional GPUs and MIG resources."""

from __future__ import annotations

import csv
import re
from fractions import Fraction

import pytest

from aks_kueue.aks.device_plugin import REQUESTS
from aks_kueue.aks.pools import EXTERNAL_PLUGIN, DaemonSetLoad, ExplicitNode, Pool
from aks_kueue.aks.nodes import CatalogError, node_resources
from aks_kueue.settings import SettingsError, parse_settings
from aks_kueue.aks.vm_sizes import MIG_INSTANCES_PER_GPU, catalog, lookup, mig_resource
from tests.conftest import REFERENCE, edited, flat, model_of, needs_shared

# The shared note and the size pages word some GPU models differently; the catalog words them as the
# series' specs include does. Every other column of every reference row must match exactly.
MODEL_AS_THE_PAGES_WORD_IT = {
    "NVIDIA T4": "NVIDIA Tesla T4",  # ncast4v3 include: "Nvidia Tesla T4 GPU (16GB)"
    "NVIDIA Tesla V100": "NVIDIA Tesla V100 16GB",  # ncv3 include: "Nvidia Tesla V100 GPU (16GB)"
    "NVIDIA H100 NVL": "NVIDIA H100 PCIe 94GB",  # ncadsh100v5 include: "Nvidia PCIe H100 GPU (94GB)"
    "NVIDIA H200": "NVIDIA H200 141GB",  # nd-h200-v5 include: "Nvidia H200 GPU (141GB)"
}


@needs_shared()
def test_packaged_catalog_holds_every_size_of_the_shared_csv():
    rows = list(csv.DictReader((REFERENCE / "azure-vm-skus.csv").read_text().splitlines()))
    assert len(rows) == 76 and len(catalog()) > 1000
    for row in rows:
        size = lookup(row["sku"])
        assert size is not None, row["sku"]
        assert (size.name, size.family, size.vcpus, size.memory_gib) == (
            row["sku"], row["family"], int(row["vcpus"]), float(row["memory_gib"]))
        model = MODEL_AS_THE_PAGES_WORD_IT.get(row["gpu_model"], row["gpu_model"])
        assert (size.gpus, size.gpu_model, size.gpu_resource) == (
            Fraction(row["gpus"] or "0"), model, row["gpu_resource"])
        assert size.gpu_memory_gib == float(row["gpu_memory_gib"] or 0)


@needs_shared()
def test_the_shared_notes_on_disks_and_retirement_agree_with_the_catalog():
    checked = 0
    for row in csv.DictReader((REFERENCE / "azure-vm-skus.csv").read_text().splitlines()):
        size, notes = lookup(row["sku"]), row["notes"]
        if m := re.search(r"temp disk (\d+) GiB", notes):
            assert size.temp_storage_gib == float(m[1]), row["sku"]
            checked += 1
        if "no temp disk" in notes:
            assert (size.temp_disk_count, size.temp_storage_gib) == (0, 0), row["sku"]
            checked += 1
        if m := re.search(r"ephemeral OS (not supported|supported)", notes):
            assert size.ephemeral_os_disk is (m[1] == "supported"), row["sku"]
            checked += 1
        if "RETIRED 2025-09-30" in notes:
            assert "September 30, 2025" in size.retirement, row["sku"]
            checked += 1
    assert checked == 60


def test_the_v6_sizes_are_known():
    # Microsoft's AKS Kueue sample runs its system pool on Standard_D4ds_v6.
    size = lookup("Standard_D4ds_v6")
    assert (size.family, size.category, size.vcpus, size.memory_gib) == ("Ddsv6", "general-purpose", 4, 16)
    assert (size.temp_disk_count, size.temp_disk_gib, size.temp_storage_gib) == (1, 220, 220)
    assert (size.ephemeral_os_disk, size.premium_storage, size.cpu_architecture) == (True, True, "x64")
    assert size.cache_disk_gib is None and size.missing == ("cache_disk_gib",)
    assert (size.generation_1, size.generation_2, size.accelerated_networking) == (False, True, True)
    assert size.feature("Generation 1 VMs") == "Not Supported" and not size.has_gpu
    assert size.source == "articles/virtual-machines/sizes/general-purpose/ddsv6-series.md"
    for name in ("Standard_D4s_v6", "Standard_D4as_v6", "Standard_D4ps_v6", "Standard_E8ds_v6", "Standard_F4as_v6",
                 "Standard_L8s_v4", "Standard_D4ds_v7", "Standard_HB176rs_v4", "Standard_M416s_8_v2"):
        assert lookup(name) is not None, name
    assert lookup("Standard_D4ps_v6").cpu_architecture == "Arm64"
    assert lookup("Standard_D4s_v6").temp_storage_gib == 0 and lookup("Standard_D4s_v6").ephemeral_os_disk is False


def test_every_category_is_covered_and_loading_is_cached():
    assert catalog() is catalog()
    assert {s.category for s in catalog().values()} == {
        "general-purpose", "compute-optimized", "memory-optimized", "storage-optimized", "gpu-accelerated",
        "high-performance-compute"}


def test_retired_and_retiring_sizes_keep_the_pages_note():
    assert "retired as of September 6th, 2023" in lookup("Standard_NV12").retirement
    assert "November 15, 2029" in lookup("Standard_E8s_v3").retirement
    assert lookup("Standard_M192is_v2").retirement is not None and lookup("Standard_M128s_v2").retirement is None
    assert lookup("Standard_D4ds_v6").retirement is None


def test_gpu_facts_of_the_pages():
    mi300x = lookup("Standard_ND96isr_MI300X_v5")
    assert (mi300x.gpus, mi300x.gpu_resource, mi300x.gpu_vendor, mi300x.gpu_memory_gib) == (8, "amd.com/gpu", "amd", 192)
    assert not mi300x.mig_capable
    v710 = lookup("Standard_NV4ads_V710_v5")
    assert v710.fractional_gpu and v710.gpu_vendor == "amd"
    # NDv2: the page names no GPU model or vendor; the catalog does not guess one.
    nd40 = lookup("Standard_ND40rs_v2")
    assert (nd40.gpus, nd40.gpu_model, nd40.gpu_resource, nd40.gpu_vendor) == (8, "", "", None)
    assert {"gpu_model", "gpu_resource"} <= set(nd40.missing)
    assert {n for n, s in catalog().items() if s.mig_capable} == {
        "standard_nc24ads_a100_v4", "standard_nc48ads_a100_v4", "standard_nc96ads_a100_v4",
        "standard_nd96asr_v4", "standard_nd96amsr_a100_v4",
        "standard_nc40ads_h100_v5", "standard_nc80adis_h100_v5", "standard_ncc40ads_h100_v5",
        "standard_nd96isr_h100_v5", "standard_nd96isr_h200_v5"}


def test_lookup_ignores_case_as_azure_does():
    assert lookup("standard_d8s_v5").name == "Standard_D8s_v5"
    assert lookup("Standard_X99_v9") is None


@pytest.mark.parametrize("name", [n for n, s in catalog().items() if s.fractional_gpu])
def test_fractional_gpu_sizes_count_no_whole_gpu(name):
    size = catalog()[name]
    node = node_resources(Pool(name="vgpu", vm_size=size.name, max_count=2, max_pods=110))
    assert size.gpus < 1 and node.fractional_gpu
    assert node.amounts[size.gpu_resource] == 0
    assert any("not a whole GPU" in line for line in node.explanation)


def test_whole_gpu_sizes_are_not_flagged():
    plugin = DaemonSetLoad("nvidia-device-plugin", dict(REQUESTS))
    node = node_resources(Pool(name="a10", vm_size="Standard_NV36ads_A10_v5", max_count=1, max_pods=110,
                               daemonsets=(plugin,)))
    assert not node.fractional_gpu and node.amounts["nvidia.com/gpu"] == int(lookup("Standard_NV36ads_A10_v5").gpus)


def test_mig_profiles_of_aks_md():
    # aks.md c.4: 1g.5gb gives 7 instances per A100 40GB; the managed-GPU doc shows
    # nvidia.com/mig-1g.10gb: 7 on an NC24ads_A100_v4 (A100 80GB); single MIG1g on 8 A100 is 56.
    assert mig_resource(lookup("Standard_NC24ads_A100_v4"), "MIG1g") == ("nvidia.com/mig-1g.10gb", 7)
    assert mig_resource(lookup("Standard_ND96asr_v4"), "MIG1g", "single") == ("nvidia.com/gpu", 56)
    assert mig_resource(lookup("Standard_ND96asr_v4"), "MIG3g") == ("nvidia.com/mig-3g.20gb", 16)


@pytest.mark.parametrize("name", [n for n, s in catalog().items() if s.mig_capable])
@pytest.mark.parametrize("profile", list(MIG_INSTANCES_PER_GPU))
def test_every_mig_capable_size_has_every_profile(name, profile):
    size = catalog()[name]
    resource, count = mig_resource(size, profile)
    assert resource.startswith(f"nvidia.com/mig-{profile[3]}g.")
    assert count == MIG_INSTANCES_PER_GPU[profile] * size.gpus


def test_mig_on_a_size_without_mig_is_an_error():
    with pytest.raises(ValueError, match="has no MIG profile MIG1g"):
        mig_resource(lookup("Standard_NC8as_T4_v3"), "MIG1g")


def test_mig_pool_advertises_the_mixed_resource_through_settings():
    def mig(config):
        config["aks-kueue:nodePools"][1].update(vmSize="Standard_NC24ads_A100_v4", gpuInstanceProfile="MIG2g")
    node = node_resources(model_of(edited("dev", mig)).pools[1])
    assert node.amounts["nvidia.com/mig-2g.20gb"] == 3 and "nvidia.com/gpu" not in node.amounts


def test_unknown_size_without_capacity_is_a_settings_error_and_a_model_error():
    def unknown(config):
        config["aks-kueue:nodePools"][0]["vmSize"] = "Standard_X99_v9"
    with pytest.raises(SettingsError, match=r"nodePools\[0\]\.vmSize: 'Standard_X99_v9' is not in the VM size"):
        parse_settings(flat(edited("dev", unknown)))
    with pytest.raises(CatalogError, match=r"aks-kueue:nodePools\[0\]\.vmSize: 'Standard_X99_v9'"):
        node_resources(Pool(name="x", vm_size="Standard_X99_v9", max_count=1, max_pods=110,
                                key="aks-kueue:nodePools[0]"))


def test_explicit_capacity_is_used_for_an_unknown_size():
    explicit = ExplicitNode(cpu=8, memory_bytes=32 * 2**30, gpus=2, gpu_resource="nvidia.com/gpu")
    node = node_resources(Pool(name="x", vm_size="Standard_X99_v9", max_count=1, max_pods=110,
                                   explicit=explicit, gpu_device_plugin=EXTERNAL_PLUGIN))
    same = node_resources(Pool(name="d8", vm_size="Standard_D8s_v5", max_count=1, max_pods=110))
    assert (node.amounts["cpu"], node.amounts["memory"]) == (same.amounts["cpu"], same.amounts["memory"])
    assert node.amounts["nvidia.com/gpu"] == 2 and "as stated" in node.explanation[0]
