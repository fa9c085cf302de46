"""The Kubernetes versions AKS offers, judged against its dated release calendar.

`data/aks-kubernetes-versions.json` is Microsoft's AKS release calendar and LTS table
(learn.microsoft.com/azure/aks/supported-kubernetes-versions), cell for cell, with the
date it was read (`asOf`). `tools/aks_facts.py versions PAGE.md --as-of DATE` rewrites it
from the page's Markdown source.

On a given day a minor version is at one stage of its AKS life:

- planned, before its AKS preview month: AKS refuses it (an error here);
- preview, from the preview month to GA: AKS creates clusters, without SLA (a warning);
- supported, GA to end of life (community support): accepted;
- LTS only, end of life to LTS end of life: AKS creates clusters on it only with LTS (tier
  Premium, support plan AKSLongTermSupport) and keeps existing ones on platform support (a
  warning);
- retired, after LTS end of life: AKS neither creates nor keeps clusters on it (an error);
- unknown, not in the calendar: an error while the calendar is fresh; a version newer than a
  stale calendar is a warning.

Months are read as the page says: an end-of-life month ends on its last day, unless a day
is given; a preview or GA month counts from its first day. A calendar is stale `graceDays`
after `asOf` (120 days: the page's "roughly every four months" between minor versions);
then every judgement says so and how to refresh it.

Patch versions ("1.34.7") are not judged here: AKS adds and removes patches weekly
(`az aks get-versions --location REGION -o table` lists them); only the minor is.
"""

from __future__ import annotations

import calendar as _months
import json
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from enum import Enum
from functools import lru_cache
from importlib import resources
from typing import Optional

DATA_FILE = "data/aks-kubernetes-versions.json"
_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")
_LTS_SETTINGS = "tier Premium and support plan AKSLongTermSupport"


def today() -> date:
    """The day versions are judged on: the one clock of this module (tests replace it)."""
    return date.today()


class Stage(str, Enum):
    PLANNED = "planned"
    PREVIEW = "preview"
    SUPPORTED = "supported"
    LTS_ONLY = "lts-only"
    RETIRED = "retired"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Day:
    """A calendar cell: the words on the page and the day they stand for."""

    text: str
    day: date


def _parse_cell(text: str, *, end_of_month: bool) -> Day:
    for fmt in ("%b %d, %Y", "%B %d, %Y", "%b %Y", "%B %Y"):
        try:
            day = datetime.strptime(text, fmt).date()
        except ValueError:
            continue
        if end_of_month and "%d" not in fmt:
            day = day.replace(day=_months.monthrange(day.year, day.month)[1])
        return Day(text, day)
    raise ValueError(f"calendar cell {text!r} is not a month or a day")


@dataclass(frozen=True)
class MinorRelease:
    minor: int
    preview: Day
    ga: Day
    end_of_life: Day
    lts_end_of_life: Optional[Day]
    platform_support: str

    @property
    def name(self) -> str:
        return f"1.{self.minor}"

    def stage(self, on: date) -> Stage:
        if on < self.preview.day:
            return Stage.PLANNED
        if on < self.ga.day:
            return Stage.PREVIEW
        if on <= self.end_of_life.day:
            return Stage.SUPPORTED
        if self.lts_end_of_life is not None and on <= self.lts_end_of_life.day:
            return Stage.LTS_ONLY
        return Stage.RETIRED


@dataclass(frozen=True)
class Calendar:
    source: str
    page_date: str
    as_of: date
    grace_days: int
    releases: tuple[MinorRelease, ...]

    def release(self, minor: int) -> Optional[MinorRelease]:
        return next((r for r in self.releases if r.minor == minor), None)

    def supported(self, on: date) -> list[str]:
        return [r.name for r in self.releases if r.stage(on) is Stage.SUPPORTED]

    def stale(self, on: date) -> bool:
        return on > self.as_of + timedelta(days=self.grace_days)

    def refresh_hint(self) -> "Note":
        return Note(f"the AKS release calendar this program checks against (aks_kueue/aks/{DATA_FILE}) was read on "
                    f"{self.as_of.isoformat()}, more than {self.grace_days} days ago",
                    "refresh it from https://learn.microsoft.com/azure/aks/supported-kubernetes-versions with "
                    "`python tools/aks_facts.py versions PAGE.md --as-of DATE`")


@lru_cache(maxsize=1)
def load() -> Calendar:
    doc = json.loads(resources.files("aks_kueue.aks").joinpath(DATA_FILE).read_text())
    releases = (MinorRelease(
        minor=int(row["minor"].split(".")[1]),
        preview=_parse_cell(row["aksPreview"], end_of_month=False), ga=_parse_cell(row["aksGa"], end_of_month=False),
        end_of_life=_parse_cell(row["endOfLife"], end_of_month=True),
        lts_end_of_life=_parse_cell(row["ltsEndOfLife"], end_of_month=True) if row.get("ltsEndOfLife") else None,
        platform_support=row.get("platformSupport", "")) for row in doc["versions"])
    return Calendar(source=doc["source"], page_date=doc.get("pageDate", ""),
                    as_of=date.fromisoformat(doc["asOf"]), grace_days=int(doc["graceDays"]),
                    releases=tuple(sorted(releases, key=lambda r: r.minor)))


@dataclass(frozen=True)
class Note:
    """A warning about a version: what is so (one sentence) and what to do."""

    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.message}; {self.fix}"


@dataclass(frozen=True)
class VersionVerdict:
    """What AKS would make of a version: an error (it refuses it) and warnings (it takes it, with a catch)."""

    stage: Stage
    error: Optional[str] = None
    warnings: tuple[Note, ...] = ()


def parse(version: str) -> Optional[tuple[int, int, Optional[int]]]:
    """(major, minor, patch) of "1.34.7", the patch None for "1.34"; None for anything else."""
    match = _VERSION.fullmatch(version)
    return None if match is None else (int(match[1]), int(match[2]), None if match[3] is None else int(match[3]))


def _choices(names: list[str]) -> str:
    if not names:
        return "none"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def judge_version(version: str, on: Optional[date] = None, cal: Optional[Calendar] = None,
                  at_least: int = 0) -> VersionVerdict:
    """Judge `version` ("1.34" or "1.34.7") on day `on` against the calendar.

    `at_least` is the caller's own lowest minor: the versions a message proposes instead
    are the supported ones at or above it.
    """
    on = on or today()
    cal = cal or load()
    parsed = parse(version)
    if parsed is None or not version.startswith("1."):
        raise ValueError(f"{version!r} is not a Kubernetes version")
    minor = parsed[1]
    supported = [name for name in cal.supported(on) if int(name.split(".")[1]) >= at_least]
    choices = f"one AKS supports on {on.isoformat()}: {_choices(supported)}"
    use = f"use {choices}"
    stale = (cal.refresh_hint(),) if cal.stale(on) else ()
    release = cal.release(minor)
    if release is None:
        newest = cal.releases[-1].minor
        if minor > newest and cal.stale(on):
            return VersionVerdict(Stage.UNKNOWN, warnings=(Note(
                f"Kubernetes {version} is newer than every version in the AKS release calendar, so it was not "
                "checked", "confirm AKS offers it in your region with `az aks get-versions --location REGION -o "
                "table`"), *stale))
        listed = f"1.{cal.releases[0].minor} to 1.{newest}"
        return VersionVerdict(Stage.UNKNOWN, error=(
            f"Kubernetes {version} is not in the AKS release calendar of {cal.as_of.isoformat()} (it lists "
            f"{listed}), so AKS would refuse it; {use}"), warnings=stale)
    stage = release.stage(on)
    if stage is Stage.PLANNED:
        return VersionVerdict(stage, error=(
            f"Kubernetes {version} is not offered by AKS yet: its preview is planned for {release.preview.text} "
            f"and GA for {release.ga.text}; {use}"), warnings=stale)
    if stage is Stage.RETIRED:
        ended = release.lts_end_of_life or release.end_of_life
        return VersionVerdict(stage, error=(
            f"Kubernetes {version} reached the end of AKS support ({ended.text}), so AKS neither creates nor "
            f"keeps clusters on it; {use}"), warnings=stale)
    notes: list[Note] = []
    if stage is Stage.PREVIEW:
        notes.append(Note(f"Kubernetes {version} is in preview on AKS until its GA ({release.ga.text})",
                          f"for production, {use}"))
    elif stage is Stage.LTS_ONLY:
        lts_end = release.lts_end_of_life.text if release.lts_end_of_life else "?"
        platform = f" ({release.platform_support[:1].lower()}{release.platform_support[1:]})" \
            if release.platform_support else ""
        notes.append(Note(
            f"Kubernetes {version} left AKS community support at the end of {release.end_of_life.text}, and AKS "
            f"creates new clusters on it only with long-term support until {lts_end} ({_LTS_SETTINGS}, which "
            f"this program does not set), keeping existing ones on platform support only{platform}",
            f"upgrade to {choices}"))
    return VersionVerdict(stage, warnings=(*notes, *stale))
