"""The generator of the dated AKS tables, on excerpts shaped like the real pages."""

from __future__ import annotations

import json

import pytest

from tools import aks_facts

VERSIONS_PAGE = """---
title: Supported Kubernetes Versions in Azure Kubernetes Service (AKS)
ms.date: 08/05/2026
---

## AKS Kubernetes release calendar and upcoming versions

| Kubernetes version | Upstream release | AKS preview | AKS GA | End of life | Platform support |
| ------------------ | ---------------- | ----------- | ------ | ----------- | ---------------- |
| 1.36 | Apr 2026 | May 2026 | Jun 2026 | Jun 2027 | Until 1.40 GA |
| 1.37 | Aug 2026 | Sep 2026 | Oct 2026 | Oct 2027 | Until 1.41 GA |

### LTS versions

| Kubernetes version | Upstream release | AKS preview | AKS GA | End of life | LTS End of life |
| ------------------ | ---------------- | ----------- | ------ | ----------- | --------------- |
| 1.30 | Apr 2024 | Jun 2024 | Jul 2024 | Aug 22, 2025 | Jul 2026 |
| 1.36 | Apr 2026 | May 2026 | Jun 2026 | Jun 2027 | Jun 2028 |
"""

REGIONS_PAGE = """---
ms.date: 09/23/2025
---
#### [All](#tab/all)

| Region | Availability zone support | Paired region | Physical location | Geography | Programmatic name |
|--------|----------------------------|---------------|-------------------|-----------|-------------------|
| :::image type="content" source="media/icon-region-restricted.svg" alt-text="restricted" border="false"::: Australia Central 2 | | Australia Central | Canberra | Australia | australiacentral2 |
| East US | :::image  alt-text="Yes"  type="content" source="media/icon-checkmark.svg"  border="false"::: | West US | Virginia | United States | eastus |
| :::image type="content" source="media/icon-region-coming-soon.svg" alt-text="soon" border="false"::: Denmark East | :::image alt-text="Yes" type="content" source="media/icon-checkmark.svg" border="false"::: | N/A | Copenhagen | Denmark | denmarkeast |

#### [Americas](#tab/americas)

| Region | Availability zone support | Paired region | Physical location | Geography | Programmatic name |
|---|---|---|---|---|---|
| West US | | East US | California | United States | westus |
"""


def test_the_calendar_and_the_lts_table_merge_by_version():
    rows = aks_facts.parse_versions(VERSIONS_PAGE)
    assert [r["minor"] for r in rows] == ["1.30", "1.36", "1.37"]
    assert rows[0] == {"minor": "1.30", "upstreamRelease": "Apr 2024", "aksPreview": "Jun 2024", "aksGa": "Jul 2024",
                       "endOfLife": "Aug 22, 2025", "ltsEndOfLife": "Jul 2026"}
    assert rows[1]["platformSupport"] == "Until 1.40 GA" and rows[1]["ltsEndOfLife"] == "Jun 2028"
    assert "ltsEndOfLife" not in rows[2]


def test_the_all_tab_gives_names_access_and_zones():
    rows = aks_facts.parse_regions(REGIONS_PAGE)
    assert [(r["name"], r["displayName"], r["access"], r["availabilityZones"]) for r in rows] == [
        ("australiacentral2", "Australia Central 2", "restricted", False),
        ("eastus", "East US", "open", True),
        ("denmarkeast", "Denmark East", "coming-soon", True),
    ]


def test_written_files_keep_their_source_date_and_sovereign_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(aks_facts, "VERSIONS_FILE", tmp_path / "versions.json")
    regions_file = tmp_path / "regions.json"
    regions_file.write_text(json.dumps({"sovereignSources": {"china": "src"}, "regions": [
        {"name": "chinanorth3", "cloud": "china"}, {"name": "old", "cloud": "public"}]}))
    monkeypatch.setattr(aks_facts, "REGIONS_FILE", regions_file)
    assert aks_facts.main(["versions", str(_page(tmp_path, VERSIONS_PAGE)), "--as-of", "2026-08-21"]) == 0
    versions = json.loads((tmp_path / "versions.json").read_text())
    assert (versions["pageDate"], versions["asOf"], versions["graceDays"]) == ("2026-08-05", "2026-08-21", 120)
    aks_facts.main(["regions", str(_page(tmp_path, REGIONS_PAGE)), "--as-of", "2026-08-20"])
    written = json.loads(regions_file.read_text())
    assert [r["name"] for r in written["regions"]] == ["australiacentral2", "eastus", "denmarkeast", "chinanorth3"]
    assert written["sovereignSources"] == {"china": "src"} and written["source"] == aks_facts.REGIONS_SOURCE


def test_the_shipped_tables_are_what_the_generator_writes():
    from aks_kueue.aks import kubernetes_versions, regions
    versions = json.loads(aks_facts.VERSIONS_FILE.read_text())
    assert versions["source"] == aks_facts.VERSIONS_SOURCE and versions["graceDays"] == aks_facts.GRACE_DAYS
    assert len(versions["versions"]) == len(kubernetes_versions.load().releases)
    assert json.loads(aks_facts.REGIONS_FILE.read_text())["source"] == regions.load().source


def _page(tmp_path, text):
    path = tmp_path / "page.md"
    path.write_text(text)
    return path


@pytest.mark.parametrize("argv", [["versions"], ["nope", "x.md", "--as-of", "2026-01-01"]])
def test_bad_arguments_are_refused(argv):
    with pytest.raises(SystemExit) as caught:
        aks_facts.main(argv)
    assert caught.value.code == 2
