"""Regenerate the dated AKS fact tables from Microsoft's documentation pages.

The program runs offline, so the tables it checks against live in the repository
(`aks_kueue/aks/data/`) with their source and date. This script turns a local copy of
the Markdown source of the page into the table, so a refresh is one command:

    python tools/aks_facts.py versions path/to/supported-kubernetes-versions.md --as-of 2026-08-21
    python tools/aks_facts.py regions path/to/regions-list.md --as-of 2026-08-20

Sources (public repositories behind learn.microsoft.com):
- versions: MicrosoftDocs/azure-aks-docs, articles/aks/supported-kubernetes-versions.md,
  the tables "AKS Kubernetes release calendar" and "LTS versions".
- regions: MicrosoftDocs/reliability-docs, articles/reliability/regions-list.md, the
  "All" tab of "Azure regions list". The sovereign clouds are not on that page; their
  rows are kept as they are in the data file (see its "sovereign" sources).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "aks_kueue" / "aks" / "data"
VERSIONS_FILE = DATA / "aks-kubernetes-versions.json"
REGIONS_FILE = DATA / "azure-regions.json"

VERSIONS_SOURCE = ("https://learn.microsoft.com/azure/aks/supported-kubernetes-versions "
                   "(MicrosoftDocs/azure-aks-docs, articles/aks/supported-kubernetes-versions.md)")
REGIONS_SOURCE = ("https://learn.microsoft.com/azure/reliability/regions-list "
                  "(MicrosoftDocs/reliability-docs, articles/reliability/regions-list.md)")
# The page's own statement of the cadence: a table older than one release cycle may miss a version.
GRACE_DAYS = 120

_IMAGE = re.compile(r":::image\b.*?:::", re.S)


def table_rows(lines: list[str], header_prefix: str) -> list[list[str]]:
    """The body rows of the first Markdown table whose header starts with `header_prefix`."""
    rows: list[list[str]] = []
    inside = False
    for line in lines:
        text = line.strip()
        if not inside:
            if text.startswith("|") and _cells(text)[0].startswith(header_prefix):
                inside = True
            continue
        if not text.startswith("|"):
            if rows:
                break
            continue
        cells = _cells(text)
        if all(set(c) <= set("-: ") for c in cells):
            continue
        rows.append(cells)
    return rows


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _ms_date(text: str) -> str:
    match = re.search(r"^ms\.date:\s*(\d{2})/(\d{2})/(\d{4})", text, re.M)
    return f"{match[3]}-{match[1]}-{match[2]}" if match else ""


def parse_versions(markdown: str) -> list[dict]:
    """Merge the release calendar and the LTS table by minor version, keeping the page's words."""
    lines = markdown.splitlines()
    calendar = {row[0]: row for row in table_rows(lines, "Kubernetes version")}
    lts_start = next((i for i, line in enumerate(lines) if line.strip().lower().startswith("### lts versions")),
                     None)
    lts = {row[0]: row for row in table_rows(lines[lts_start:], "Kubernetes version")} if lts_start is not None else {}
    versions = []
    for minor in sorted(set(calendar) | set(lts), key=lambda v: tuple(int(p) for p in v.split("."))):
        row = calendar.get(minor) or lts[minor]
        entry = {"minor": minor, "upstreamRelease": row[1], "aksPreview": row[2], "aksGa": row[3],
                 "endOfLife": row[4]}
        if minor in calendar:
            entry["platformSupport"] = calendar[minor][5]
        if minor in lts:
            entry["ltsEndOfLife"] = lts[minor][5]
        versions.append(entry)
    return versions


def parse_regions(markdown: str) -> list[dict]:
    """The "All" tab: programmatic name, display name, access (restricted/coming soon) and zones."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if "(#tab/all)" in line)
    regions = []
    for cells in table_rows(lines[start:], "Region"):
        name_cell = cells[0]
        access = ("restricted" if "icon-region-restricted" in name_cell
                  else "coming-soon" if "icon-region-coming-soon" in name_cell else "open")
        regions.append({
            "name": cells[5].strip(),
            "displayName": _IMAGE.sub("", name_cell).strip(),
            "cloud": "public",
            "access": access,
            "availabilityZones": "icon-checkmark" in cells[1],
            "geography": cells[4],
        })
    return regions


def write_versions(markdown: str, as_of: str) -> dict:
    doc = {
        "source": VERSIONS_SOURCE,
        "pageDate": _ms_date(markdown),
        "asOf": as_of,
        "graceDays": GRACE_DAYS,
        "graceReason": "The page says the Kubernetes community releases a minor version roughly every four "
                       "months; a calendar older than that may miss a newer version.",
        "dateRule": "As the page says: unless a day is given, an end-of-life month means its last day.",
        "versions": parse_versions(markdown),
    }
    VERSIONS_FILE.write_text(json.dumps(doc, indent=2) + "\n")
    return doc


def write_regions(markdown: str, as_of: str) -> dict:
    old = json.loads(REGIONS_FILE.read_text()) if REGIONS_FILE.exists() else {}
    sovereign = [r for r in old.get("regions", []) if r.get("cloud") != "public"]
    doc = {
        "source": REGIONS_SOURCE,
        "pageDate": _ms_date(markdown),
        "asOf": as_of,
        "sovereignSources": old.get("sovereignSources", {}),
        "regions": parse_regions(markdown) + sovereign,
    }
    REGIONS_FILE.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", choices=["versions", "regions"])
    parser.add_argument("page", type=Path, help="the page's Markdown source")
    parser.add_argument("--as-of", required=True, help="the date the page was read, YYYY-MM-DD")
    args = parser.parse_args(argv)
    markdown = args.page.read_text(encoding="utf-8")
    doc = {"versions": write_versions, "regions": write_regions}[args.table](markdown, args.as_of)
    print(f"wrote {len(doc[args.table])} rows", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
