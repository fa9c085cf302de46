"""The Azure region table."""

from __future__ import annotations

from datetime import date

from aks_kueue.aks import regions
from aks_kueue.aks.regions import Access, Cloud
from aks_kueue.kueue import catalog


def test_the_table_is_dated_and_sourced():
    table = regions.load()
    assert table.as_of == date(2026, 8, 20)
    assert table.source.startswith("https://learn.microsoft.com/azure/reliability/regions-list")


def test_the_public_regions_of_the_list_and_the_sovereign_clouds():
    by_cloud = {cloud: [r for r in regions.load().regions.values() if r.cloud is cloud] for cloud in Cloud}
    assert len(by_cloud[Cloud.PUBLIC]) == 57
    assert {r.name for r in by_cloud[Cloud.US_GOVERNMENT]} >= {"usgovvirginia", "usgovarizona", "usgovtexas"}
    assert {r.name for r in by_cloud[Cloud.CHINA]} == {"chinaeast", "chinaeast2", "chinaeast3", "chinanorth",
                                                       "chinanorth2", "chinanorth3"}


def test_names_compare_as_arm_does():
    assert regions.lookup("East US 2").name == "eastus2"
    assert regions.lookup("WESTEUROPE").display_name == "West Europe"
    assert regions.lookup("eastus3") is None


def test_zones_and_access_as_the_list_gives_them():
    assert regions.lookup("eastus").availability_zones is True
    assert regions.lookup("westus").availability_zones is False
    assert regions.lookup("usgovvirginia").availability_zones is None   # not in the source: not judged
    assert regions.lookup("francesouth").access is Access.RESTRICTED
    assert regions.lookup("swedencentral").access is Access.OPEN


def test_the_managed_kueue_regions_are_regions():
    assert all(regions.lookup(name) for name in catalog.MANAGED_REGIONS)
