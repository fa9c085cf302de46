"""The VM catalog generator on real snapshot pages, and the committed catalog against the snapshot."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tools.vm_catalog import generate as gen

SNAPSHOT = gen.SNAPSHOT
COMMITTED = Path(gen.OUTPUT)


def sizes_of(relpath: str) -> dict[str, dict]:
    page = gen.read_page(SNAPSHOT / relpath)
    return {size["name"]: size for _, sizes in gen.page_sizes(page) for size in sizes}


def series_of(relpath: str) -> dict[str, dict]:
    page = gen.read_page(SNAPSHOT / relpath)
    return {series["name"]: series for series, _ in gen.page_sizes(page)}


@pytest.fixture(scope="module")
def built() -> dict:
    return gen.build()


# --- one page of each kind ---------------------------------------------------------------------

def test_a_general_purpose_v6_page():
    sizes = sizes_of("general-purpose/ddsv6-series.md")
    assert series_of("general-purpose/ddsv6-series.md").keys() == {"Ddsv6"}
    d4 = sizes["Standard_D4ds_v6"]
    assert (d4["vcpus"], d4["memory_gib"], d4["temp_disk_count"], d4["temp_disk_gib"]) == (4, 16.0, 1, 220.0)
    assert (d4["ephemeral_os_disk"], d4["premium_storage"], d4["cpu_architecture"]) == (True, True, "x64")
    assert d4["gpus"] == "0" and d4["gpu_resource"] is None
    # The v6 page has no host-cache column: the row says so rather than guessing.
    assert d4["cache_disk_gib"] is None and d4["missing"] == ["cache_disk_gib"]
    d128 = sizes["Standard_D128ds_v6"]
    assert (d128["temp_disk_count"], d128["temp_disk_gib"]) == (4, 1760.0)  # four NVMe temp disks of 1760 GiB
    assert len(sizes) == 9


def test_a_page_without_temp_disk_and_an_arm_page():
    dsv6 = sizes_of("general-purpose/dsv6-series.md")["Standard_D4s_v6"]
    assert (dsv6["temp_disk_count"], dsv6["temp_disk_gib"], dsv6["ephemeral_os_disk"]) == (0, 0.0, False)
    epds = sizes_of("memory-optimized/epdsv6-series.md")["Standard_E2pds_v6"]
    assert epds["cpu_architecture"] == "Arm64" and epds["temp_disk_gib"] == 110.0
    assert series_of("memory-optimized/epdsv6-series.md")["Epdsv6"]["nvme_only_images"] is True


def test_a_gpu_page_with_fractional_partitions():
    sizes = sizes_of("gpu-accelerated/nvadsa10v5-series.md")
    sixth = sizes["Standard_NV6ads_A10_v5"]
    assert (sixth["gpus"], sixth["gpu_memory_gib"], sixth["gpu_resource"]) == ("1/6", 4.0, "nvidia.com/gpu")
    assert sixth["gpu_model"] == "NVIDIA A10 (partition)"
    assert (sizes["Standard_NV36ads_A10_v5"]["gpus"], sizes["Standard_NV36ads_A10_v5"]["gpu_model"]) == ("1", "NVIDIA A10")
    assert (sizes["Standard_NV72ads_A10_v5"]["gpus"], sizes["Standard_NV72ads_A10_v5"]["gpu_memory_gib"]) == ("2", 24.0)
    series = series_of("gpu-accelerated/nvadsa10v5-series.md")["NVadsA10_v5"]
    assert series["gpu"]["source"] == "includes/nvadsa10v5-series-specs.md"


def test_an_amd_gpu_page():
    mi300x = sizes_of("gpu-accelerated/ndmi300xv5-series.md")["Standard_ND96isr_MI300X_v5"]
    # The page lists 1535 GB for the 8 GPUs; the specs include's 192 GB per GPU is what the row gives.
    assert (mi300x["gpus"], mi300x["gpu_resource"], mi300x["gpu_memory_gib"]) == ("8", "amd.com/gpu", 192.0)
    assert mi300x["gpu_model"] == "AMD Instinct MI300X"


def test_pages_missing_a_figure_say_so():
    # Edsv7 (preview) lists no Ephemeral OS Disk line and no cache column.
    e8 = sizes_of("memory-optimized/edsv7-series.md")["Standard_E8ds_v7"]
    assert e8["ephemeral_os_disk"] is None and e8["missing"] == ["cache_disk_gib", "ephemeral_os_disk"]
    assert series_of("memory-optimized/edsv7-series.md")["Edsv7"]["preview"] is True
    # The RTX PRO 6000 page leaves the temp-disk count blank.
    rtx = sizes_of("gpu-accelerated/nc-rtxpro6000-bse-v6-series.md")["Standard_NC128ds_xl_RTXPRO6000BSE_v6"]
    assert rtx["temp_disk_count"] is None and "temp_disk_count" in rtx["missing"] and rtx["temp_disk_gib"] == 1024.0
    # NDv2 names no GPU model or vendor; the count comes from the specs include.
    nd40 = sizes_of("gpu-accelerated/ndv2-series.md")["Standard_ND40rs_v2"]
    assert (nd40["gpus"], nd40["gpu_model"], nd40["gpu_resource"]) == ("8", None, None)
    assert {"gpu_model", "gpu_resource"} <= set(nd40["missing"])
    # Ebdsv6's local-storage tab lists the Edsv6 sizes: no temp-disk figures for Ebdsv6.
    ebd = sizes_of("memory-optimized/ebdsv6-series.md")["Standard_E2bds_v6"]
    assert ebd["temp_disk_gib"] is None and "lists other sizes" in ebd["notes"][0]


def test_a_page_contradicting_its_include_gives_neither_figure():
    gb200 = sizes_of("gpu-accelerated/nd-gb200-v6-series.md")["Standard_ND128isr_NDR_GB200_v6"]
    assert gb200["temp_disk_gib"] is None and "16 TiB" in gb200["notes"][-1]


def test_a_legacy_page_with_two_series():
    series = series_of("memory-optimized/ev3-esv3-series.md")
    assert series.keys() == {"Ev3", "Esv3"}
    assert "November 15, 2029" in series["Esv3"]["retirement"]
    sizes = sizes_of("memory-optimized/ev3-esv3-series.md")
    e64is = sizes["Standard_E64is_v3"]
    assert (e64is["vcpus"], e64is["memory_gib"], e64is["temp_disk_gib"], e64is["cache_disk_gib"]) == (64, 432.0, 864.0, 1600.0)
    assert (sizes["Standard_E2_v3"]["ephemeral_os_disk"], e64is["ephemeral_os_disk"]) == (False, True)
    # "VM Generation Support: Generation 1" and "...: Generation 1 and 2"
    assert (sizes["Standard_E2_v3"]["generation_1"], sizes["Standard_E2_v3"]["generation_2"]) == (True, False)
    assert (e64is["generation_1"], e64is["generation_2"]) == (True, True)


def test_errata_correct_a_fused_footnote_and_say_so():
    d2a = sizes_of("general-purpose/dav4-series.md")["Standard_D2a_v4"]
    assert "Standard_D2a_v41" in d2a["notes"][0]


def test_retirement_of_some_sizes_only():
    sizes, = (s for _, s in gen.page_sizes(gen.read_page(SNAPSHOT / "memory-optimized/msv2-mm-series.md")))
    series, = (s for s, _ in gen.page_sizes(gen.read_page(SNAPSHOT / "memory-optimized/msv2-mm-series.md")))
    gen._retirement(series, sizes)
    retiring = {s["name"] for s in sizes if s["retiring"]}
    assert retiring == {"Standard_M192is_v2", "Standard_M192ims_v2"}


# --- the snapshot as a whole --------------------------------------------------------------------

def test_the_committed_catalog_is_what_the_snapshot_generates(built):
    assert COMMITTED.read_text(encoding="utf-8") == gen.render(built)
    assert gen.main(["--check"]) == 0


def test_output_is_deterministic(built):
    assert gen.render(gen.build()) == gen.render(built)


# A page's own misspelling in a tab the generator does not read (the HBv5 backend-network tab).
NOT_SIZES = {"Standard_HB368_336rsv5", "Standard_HB368_288rsv5"}


def table_names(text: str) -> set[str]:
    names = set()
    for line in text.splitlines():
        m = re.match(r"^\|\s*(Standard_[A-Za-z0-9_-]+)", line)
        if m:
            names.add(gen.ERRATA.get(m[1], (m[1],))[0])
    return names


def test_every_size_of_every_page_read_is_in_the_catalog(built):
    catalog = {s["name"] for s in built["sizes"]}
    pages = gen.load_pages()
    listed = set().union(*(table_names(p.text) for p in pages)) - NOT_SIZES
    assert listed - catalog == set()
    assert catalog - listed == set()
    assert len(pages) == built["source"]["pages"] == 162
    assert {p.category for p in pages} == set(gen.CATEGORIES)


def test_every_gpu_size_names_its_resource_but_ndv2(built):
    for size in built["sizes"]:
        if size["gpus"] != "0" and size["series"] != "NDv2":
            assert size["gpu_resource"] in ("nvidia.com/gpu", "amd.com/gpu"), size["name"]
            assert size["gpu_model"] and size["gpu_memory_gib"], size["name"]


def test_series_records_name_their_page(built):
    for name, series in built["series"].items():
        assert series["page"].startswith("articles/virtual-machines/sizes/" + series["category"] + "/")
        assert re.fullmatch(r"[0-9a-f]{40}", series["commit"]), name


# --- the generator refuses what it cannot read --------------------------------------------------

@pytest.fixture
def copy(tmp_path) -> Path:
    root = tmp_path / "snapshot"
    shutil.copytree(SNAPSHOT, root)
    return root


def test_a_stale_erratum_is_refused(copy):
    page = copy / "general-purpose/dav4-series.md"
    page.write_text(page.read_text().replace("Standard_D2a_v41", "Standard_D2a_v4"))
    with pytest.raises(gen.SnapshotError, match="errata no longer found.*Standard_D2a_v41"):
        gen.build(copy)


def test_a_stale_dispute_is_refused(copy):
    page = copy / "gpu-accelerated/includes/nd-gb200-v6-series-specs.md"
    page.write_text(page.read_text().replace("16 TiB (NVMe)", "64 TiB (NVMe)"))
    with pytest.raises(gen.SnapshotError, match="DISPUTED entry for ND_GB200_v6"):
        gen.build(copy)


def test_a_page_without_its_source_line_is_refused(copy):
    page = copy / "general-purpose/ddsv6-series.md"
    page.write_text(page.read_text().split("\n", 1)[1])
    with pytest.raises(gen.SnapshotError, match="first line must be the source comment"):
        gen.build(copy)


def test_a_basics_table_without_vcpus_is_refused(copy):
    page = copy / "general-purpose/ddsv6-series.md"
    page.write_text(page.read_text().replace("| vCPUs (Qty.) |", "| Threads |"))
    with pytest.raises(gen.SnapshotError, match="no vCPU or memory column"):
        gen.build(copy)


def test_a_size_in_two_pages_is_refused(copy):
    page = copy / "general-purpose/ddsv6-series.md"
    page.write_text(page.read_text().replace("Standard_D2ds_v6", "Standard_D2s_v6"))
    with pytest.raises(gen.SnapshotError, match="Standard_D2s_v6 also listed"):
        gen.build(copy)


def test_check_reports_a_drifted_catalog(tmp_path, capsys):
    stale = tmp_path / "vm-sizes.json"
    stale.write_text(json.dumps({"sizes": []}))
    assert gen.main(["--check", "--output", str(stale)]) == 1
    assert "differs from what the snapshot generates" in capsys.readouterr().err
