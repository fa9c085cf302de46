"""The VM size catalog against the shared reference, fractional GPUs and MIG resources."""

from __future__ import annotations

import csv
from fractions import Fraction

import pytest

from aks_kueue.aks.pools import ExplicitNode, Pool
from aks_kueue.aks.nodes import CatalogError, node_resources
from aks_kueue.settings import SettingsError, parse_settings
from aks_kueue.aks.vm_sizes import MIG_INSTANCES_PER_GPU, catalog, lookup, mig_resource
from tests.conftest import REFERENCE, edited, flat, model_of, needs_shared


@needs_shared()
def test_packaged_catalog_matches_the_shared_csv():
    rows = list(csv.DictReader((REFERENCE / "azure-vm-skus.csv").read_text().splitlines()))
    assert len(rows) == len(catalog())
    for row in rows:
        size = lookup(row["sku"])
        assert size is not None, row["sku"]
        assert (size.name, size.family, size.vcpus, size.memory_gib) == (
            row["sku"], row["family"], int(row["vcpus"]), float(row["memory_gib"]))
        assert (size.gpus, size.gpu_model, size.gpu_resource) == (
            Fraction(row["gpus"] or "0"), row["gpu_model"], row["gpu_resource"])
        assert size.gpu_memory_gib == float(row["gpu_memory_gib"] or 0)


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
    node = node_resources(Pool(name="a10", vm_size="Standard_NV36ads_A10_v5", max_count=1, max_pods=110))
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
                                   explicit=explicit))
    same = node_resources(Pool(name="d8", vm_size="Standard_D8s_v5", max_count=1, max_pods=110))
    assert (node.amounts["cpu"], node.amounts["memory"]) == (same.amounts["cpu"], same.amounts["memory"])
    assert node.amounts["nvidia.com/gpu"] == 2 and "as stated" in node.explanation[0]
