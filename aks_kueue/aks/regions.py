"""The Azure regions, read from `data/azure-regions.json`.

Public cloud: Microsoft's "Azure regions list" (learn.microsoft.com/azure/reliability/regions-list),
the programmatic name, whether access is restricted or the region is still coming, and
whether it has availability zones; `tools/aks_facts.py regions PAGE.md --as-of DATE`
rewrites those rows from the page's Markdown source. The sovereign clouds (Azure
Government, Azure operated by 21Vianet) are not on that page; their rows and sources are
in the same file. `asOf` is the day the page was read: a region opened since then is not
known until the file is refreshed.

ARM accepts a display name ("East US") where it wants a location and reports the
programmatic name ("eastus"), so names are compared with spaces removed, in lower case.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from enum import Enum
from functools import lru_cache
from importlib import resources
from typing import Optional

DATA_FILE = "data/azure-regions.json"


class Cloud(str, Enum):
    """The value `azure-native:environment` takes for each cloud (public is its default)."""

    PUBLIC = "public"
    US_GOVERNMENT = "usgovernment"
    CHINA = "china"


class Access(str, Enum):
    OPEN = "open"
    RESTRICTED = "restricted"      # only for approved subscriptions (region access request)
    COMING_SOON = "coming-soon"    # listed, not open yet on the list's date


@dataclass(frozen=True)
class Region:
    name: str
    display_name: str
    cloud: Cloud
    access: Access
    availability_zones: Optional[bool]   # None: the source does not say
    geography: str


@dataclass(frozen=True)
class RegionList:
    source: str
    as_of: date
    regions: dict[str, Region]


def normalise(name: str) -> str:
    return name.replace(" ", "").lower()


@lru_cache(maxsize=1)
def load() -> RegionList:
    doc = json.loads(resources.files("aks_kueue.aks").joinpath(DATA_FILE).read_text(encoding="utf-8"))
    regions = {row["name"]: Region(name=row["name"], display_name=row["displayName"], cloud=Cloud(row["cloud"]),
                                   access=Access(row["access"]), availability_zones=row["availabilityZones"],
                                   geography=row["geography"]) for row in doc["regions"]}
    return RegionList(source=doc["source"], as_of=date.fromisoformat(doc["asOf"]), regions=regions)


def lookup(name: str) -> Optional[Region]:
    return load().regions.get(normalise(name))


def names() -> list[str]:
    return sorted(load().regions)
