"""Generate the VM size catalog from the snapshot of Microsoft's size pages.

    python tools/vm_catalog/generate.py           # write aks_kueue/aks/data/vm-sizes.json
    python tools/vm_catalog/generate.py --check   # exit 1 if the committed file differs

The snapshot (`snapshot/`, see its README) holds verbatim excerpts of the pages
`articles/virtual-machines/sizes/<category>/<series>-series.md` of the repository
MicrosoftDocs/azure-compute-docs: the "Sizes in series" tabs (Basics, Local storage,
Accelerators), the "Feature support" section and the page's notes, each file headed
by the page's path, the commit read and the date. For GPU series, the "Host
specifications" include (`includes/<series>-series-specs.md`) names the GPU model.

Every figure comes from those pages. Where a page lacks one (no cache column, an empty
cell, no feature line), the row says so in `missing` and the value is null; where a page
contradicts itself (`DISPUTED`), likewise, with a note. Misprinted size names are corrected
through `ERRATA`, each checked against the snapshot; both are kept in facts.yaml. No network.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import NamedTuple

import yaml

HERE = Path(__file__).resolve().parent
SNAPSHOT = HERE / "snapshot"
OUTPUT = HERE.parent.parent / "aks_kueue" / "aks" / "data" / "vm-sizes.json"
REPOSITORY = "MicrosoftDocs/azure-compute-docs"
CATEGORIES = ("general-purpose", "compute-optimized", "memory-optimized", "storage-optimized",
              "gpu-accelerated", "high-performance-compute")

FACTS = yaml.safe_load((HERE / "facts.yaml").read_text(encoding="utf-8"))
# Printed size name -> [the size's name, why]: see facts.yaml.
ERRATA: dict[str, list[str]] = FACTS["errata"]
# Series -> [fields set to null, text that must occur in the series' page or include, reason].
DISPUTED: dict[str, list] = FACTS["disputed"]

class GpuFacts(NamedTuple):
    """What the series' "Host specifications" include says of its GPU (facts.yaml says how to read it)."""

    model: str
    memory_gib: float | None
    resource: str
    memory: str  # "total" | "per_gpu"
    evidence: str


GPU_SERIES: dict[str, GpuFacts] = {key: GpuFacts(*facts) for key, facts in FACTS["gpu_series"].items()}

FEATURE_ALIASES = {"ephemeral os disks": "Ephemeral OS Disk", "feature support": ""}


class SnapshotError(ValueError):
    """The snapshot does not read as expected: a page changed shape, or an excerpt was mangled."""


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]

    def column(self, *want: str, avoid: tuple[str, ...] = ()) -> int | None:
        return next((i for i, name in enumerate(self.header)
                     if all(w in name.lower() for w in want) and not any(a in name.lower() for a in avoid)), None)


@dataclass
class Section:
    lines: list[str]

    def tables(self) -> list[Table]:
        """Every table of the section (the Msv3/Mdsv3 High Memory pages give one per disk controller)."""
        out = []
        for is_table, lines in itertools.groupby(self.lines, lambda line: line.lstrip().startswith("|")):
            if is_table:
                header, *body = (_cells(line) for line in lines)
                out.append(Table(header, [r for r in body if not all(re.fullmatch(r":?-{3,}:?", c) for c in r if c)]))
        return out

    def table(self) -> Table | None:
        return next(iter(self.tables()), None)


@dataclass
class Page:
    file: Path
    source: str
    commit: str
    read: str
    text: str
    category: str
    title: str
    page_date: str
    tabs: dict[tuple[str, str], Section]

    @property
    def key(self) -> str:
        return self.file.name.removesuffix("-series.md").removesuffix(".md")


HEADER = re.compile(r"<!-- source: (\S+) commit: ([0-9a-f]{40}) read: (\d{4}-\d{2}-\d{2}) -->")
TAB = re.compile(r"^###\s*\[[^\]]*\]\(#tab/(sizebasic|sizestoragelocal|sizeaccelerators|sizeburstdata)(\w*)\)")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().removeprefix("|").removesuffix("|").split("|")]


def read_page(file: Path) -> Page:
    text = file.read_text(encoding="utf-8")
    first, _, rest = text.partition("\n")
    m = HEADER.fullmatch(first.strip())
    if not m:
        raise SnapshotError(f"{file}: the first line must be the source comment "
                            "'<!-- source: <path> commit: <sha> read: <YYYY-MM-DD> -->'")
    parts = m[1].split("/")
    front = dict(re.findall(r"^(title|ms\.date):(.*)$", rest, re.M))  # the front matter's, the last of each
    return Page(file, m[1], m[2], m[3], rest, category=parts[3] if len(parts) > 3 else "",
                title=front.get("title", "").strip().strip("'\"").strip(), page_date=front.get("ms.date", "").strip(),
                tabs=_tabs(rest))


def _tabs(text: str) -> dict[tuple[str, str], Section]:
    tabs: dict[tuple[str, str], Section] = {}
    current: Section | None = None
    for line in text.splitlines():
        m = TAB.match(line)
        if m:
            current = Section([])
            tabs[(m[1], m[2])] = current
        elif line.startswith(("## ", "### ")) or line.strip() == "---":
            current = None
        elif current is not None:
            current.lines.append(line)
    return tabs


NO_LOCAL = re.compile(r"no local storage|doesn't (include|have) local storage", re.I)
NVME_ONLY = re.compile(r"only work on OS images that support NVMe|works only on OS images that support NVMe")
LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")


def _plain(s: str) -> str:
    return re.sub(r"\s+", " ", LINK.sub(r"\1", s)).strip()


def parse_features(text: str) -> dict[str, str]:
    """Feature name -> the page's wording ("Supported", "Not Supported", "Generation 1 and 2", ...),
    from the "Feature support" section."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.match(r"^##\s+Feature [Ss]upport", line)), len(lines))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(("## ", "### "))), len(lines))
    return feature_lines(lines[start + 1:end])


def feature_lines(lines: list[str]) -> dict[str, str]:
    features: dict[str, str] = {}
    listed_as = None  # "Supported"/"Not Supported" under a "*Supported* features ..." heading line
    for line in lines:
        stripped = line.strip()
        if stripped.startswith(">"):
            continue
        m = re.match(r"^\*(Supported|Unsupported)\* features", stripped)
        if m:
            listed_as = "Supported" if m[1] == "Supported" else "Not Supported"
            continue
        if listed_as and re.match(r"^-\s*\[[^\]]+\]\([^)]*\)\s*$", stripped):
            name = FEATURE_ALIASES.get(_plain(stripped[1:]).lower(), _plain(stripped[1:]))
            features.setdefault(name, listed_as)
            continue
        if stripped.startswith("|"):
            cells = _cells(stripped)
            if len(cells) < 2 or cells[0].lower().startswith("feature name") or re.fullmatch(r"-+", cells[0]):
                continue
            entries = [(cells[0], cells[1])]
        else:  # "Name: value" lines, several to a line with <br>
            chunks = (re.sub(r"^\s*-\s*", "", chunk).strip() for chunk in re.split(r"<br\s*/?>", stripped))
            found = (re.match(r"^(\[[^\]]+\]\([^)]*\)|[^:\[\]]+?)\s*\d?\s*:\s*(.+)$", chunk) for chunk in chunks)
            entries = [(m[1], m[2]) for m in found if m]
        for name, value in entries:
            name = re.sub(r"\d+$", "", _plain(name)).strip()
            name = FEATURE_ALIASES.get(name.lower(), name)
            if name:
                features.setdefault(name, _plain(value))
    return features


def support(value: str | None) -> bool | None:
    """True for "Supported"/"Required" (with or without a qualifier), False for "Not supported"."""
    low = (value or "").lower()
    if low.startswith("not supported"):
        return False
    return True if low.startswith(("supported", "required")) else None


def _number(cell: str) -> float | None:
    s = cell.replace(",", "").strip()
    try:
        return float(s) if s else None
    except ValueError:
        raise SnapshotError(f"not a number: {cell!r}") from None


def _unit_factor(header: str) -> float:
    """Local-disk sizes in GiB. The pages state sizes in GiB ("Storage capacity is shown in units of
    GiB"); a header in TB/TiB is scaled by 1024, one in GB is taken as the page's GiB."""
    return 1024.0 if re.search(r"\((TB|TiB)\)", header) else 1.0


def _either(column: int | None, otherwise: int | None) -> int | None:
    return otherwise if column is None else column


def _name(raw: str) -> str:
    return ERRATA.get(raw, (raw,))[0]


def series_name(title: str) -> str:
    name = re.sub(r"\s*\(Preview\)\s*$", "", title.strip())
    name = re.sub(r"(\s+sizes?\s+series|-series\s+sizes?|-series|\s+size\s+series)\s*$", "", name)
    return re.sub(r"[\s-]+", "_", name.strip())


def notes(text: str) -> list[str]:
    """The page's notes and warnings, as plain sentences, less the boilerplate ones."""
    out = []
    for is_note, block in itertools.groupby(text.splitlines(), lambda line: line.lstrip().startswith(">")):
        if not is_note:
            continue
        lines = (re.sub(r"^\[!\w+\]\s*", "", re.sub(r"^\s*>\s?", "", b)).lstrip("- ").strip() for b in block)
        body = _plain(" ".join(lines)).replace("**", "")
        low = body.lower()
        if (not body or "no accelerators" in low or "include any accelerators" in low or NO_LOCAL.search(body)
                or NVME_ONLY.search(body) or "currently in **preview**" in low):
            continue  # boilerplate, or a fact the series record states as a field
        out.append(body)
    return out


ARM_NAME = re.compile(r"^Standard_[A-Z]+\d+[a-z]*p[a-z]*_")


def architecture(name: str, spec_text: str | None) -> tuple[str | None, str]:
    """CPU architecture and where it comes from: a GPU series' specs include names it
    ("[x86-64]"); otherwise the size name, by the rule of the sizes overview page
    (snapshot/overview.md): a 'p' feature letter means an Arm CPU, no CPU letter Intel x86-64."""
    if spec_text is not None:
        arch = "x64" if "[x86-64]" in spec_text else "Arm64" if "[Arm64]" in spec_text else None
        return arch, "specs include" if arch else "specs include names no instruction set"
    return ("Arm64" if ARM_NAME.match(name) else "x64"), "size name"


def load_pages(root: Path = SNAPSHOT) -> list[Page]:
    return [read_page(file) for category in CATEGORIES for file in sorted((root / category).glob("*.md"))]


def spec_include(page: Page, root: Path = SNAPSHOT) -> str | None:
    file = root / page.category / "includes" / f"{page.key}-series-specs.md"
    return read_page(file).text if file.exists() else None


def page_sizes(page: Page, root: Path = SNAPSHOT) -> list[tuple[dict, list[dict]]]:
    """[(series record, size records)] for one snapshot page: one series, or several on an older
    page that puts each series in its own section with one wide table (no Basics/Local tabs)."""
    return [_tabbed(page, root)] if any(base == "sizebasic" for (base, _) in page.tabs) else _legacy(page)


def _series_record(page: Page, name: str, features: dict[str, str], text: str) -> dict:
    page_notes = notes(text)
    retirement = next((n for n in page_notes if re.search(r"\bretire", n, re.I)), None)
    heading = next((line for line in page.text.splitlines() if line.startswith("# ")), "")
    preview = ("sizes-preview-tag" in text or "currently in **Preview**" in text
               or "(Preview)" in page.title or "(Preview)" in heading)
    return {"name": name, "category": page.category, "page": page.source, "commit": page.commit,
            "page_date": page.page_date, "features": dict(sorted(features.items())), "preview": preview,
            "previous_generation": "previous-gen-header" in page.text, "retirement": retirement,
            "nvme_only_images": bool(NVME_ONLY.search(text)), "notes": [n for n in page_notes if n != retirement]}


def generations(features: dict[str, str]) -> tuple[bool | None, bool | None]:
    """(Generation 1 supported?, Generation 2 supported?) in any of the pages' three wordings:
    "Generation 1 VMs: Supported", "VM Generation Support: Generation 1 and 2", "VM Generation 2: Supported"."""
    if "Generation 1 VMs" in features or "Generation 2 VMs" in features:
        return support(features.get("Generation 1 VMs")), support(features.get("Generation 2 VMs"))
    if "VM Generation Support" in features:
        listed = set(re.findall(r"\b([12])\b", features["VM Generation Support"]))
        return "1" in listed, "2" in listed
    return None, support(features.get("VM Generation 2"))


# A size's field -> the feature line that says it.
FEATURES = {"ephemeral_os_disk": "Ephemeral OS Disk", "premium_storage": "Premium Storage",
            "accelerated_networking": "Accelerated Networking"}
# The fields a row lists in `missing` when its page does not give them.
STATED = ("temp_disk_gib", "temp_disk_count", "cache_disk_gib", *FEATURES, "generation_1", "generation_2",
          "cpu_architecture")


def _finish(row: dict, features: dict[str, str], spec_text: str | None) -> None:
    row.update({key: support(features.get(feature)) for key, feature in FEATURES.items()})
    row["generation_1"], row["generation_2"] = generations(features)
    row["cpu_architecture"], how = architecture(row["name"], spec_text)
    if row["cpu_architecture"] is None:
        row["notes"].append(f"CPU architecture not stated: {how}")
    row["missing"] = sorted(set(row["missing"]) | {key for key in STATED if row[key] is None})


# What a size row says when its page gives no local storage or no accelerators.
NO_STORAGE = {"temp_disk_count": None, "temp_disk_gib": None, "cache_disk_gib": None,
              "local_ssd_count": None, "local_ssd_size": None}
NO_GPU = {"gpus": "0", "gpu_model": None, "gpu_resource": None, "gpu_memory_gib": None}


def _size_row(page: Page, series: dict, raw: str, vcpus: str, memory: str) -> dict:
    name = _name(raw)
    row = {**NO_STORAGE, **NO_GPU, "name": name, "series": series["name"], "category": page.category,
           "vcpus": int(_number(vcpus)), "memory_gib": _number(memory), "missing": [], "notes": []}
    if raw != name:
        row["notes"].append(f"page prints {raw}: {ERRATA[raw][1]}")
    return row


def _legacy(page: Page) -> list[tuple[dict, list[dict]]]:
    """Older pages: '## <series>' sections, each with its feature lines and one wide table whose
    first column is 'Size'. A feature list may sit in its own section before the table(s), and one
    series may have two tables (the Ebdsv5 page's NVMe and SCSI variants): they merge."""
    sections: list[tuple[str, list[str]]] = []
    preamble: list[str] = []
    for line in page.text.splitlines():
        if line.startswith(("## ", "### ")):
            sections.append((line.lstrip("#").strip(), []))
        elif sections:
            sections[-1][1].append(line)
        else:
            preamble.append(line)
    groups: dict[str, tuple[dict, dict[str, dict]]] = {}
    features: dict[str, str] = {}
    for heading, lines in sections:
        first_row = next((i for i, ln in enumerate(lines) if ln.lstrip().startswith("|")), len(lines))
        own = feature_lines(lines[:first_row])  # feature lines come before a section's table
        if own:
            features = own
        table = Section(lines).table()
        if table is None or table.header[0].lower() not in ("size", "size name"):
            continue
        base = re.sub(r"\s*\((NVMe|SCSI)\)\s*$", "", heading, flags=re.I)
        base = re.sub(r"(-series|\s+[Ss]eries)(\s+(products|specifications))?$", "", base.strip())
        name = series_name(base.replace("-series", ""))
        if name not in groups:
            groups[name] = (_series_record(page, name, features, "\n".join(preamble + lines)), {})
        series, rows = groups[name]
        for row in _legacy_rows(page, heading, table, series, features):
            known = rows.setdefault(row["name"].lower(), row)
            if any(known[key] != row[key] for key in ("vcpus", "memory_gib", "temp_disk_gib")):
                raise SnapshotError(f"{page.file}: {row['name']} differs between the tables of {name}")
    if not groups:
        raise SnapshotError(f"{page.file}: neither Basics tabs nor a size table")
    return [(series, list(rows.values())) for series, rows in groups.values()]


def _temp(cell: str) -> float | None:
    # "Remote Storage Only", or "RS*" with the footnote "*RS: ... remote storage only": no temp disk
    return 0.0 if cell.strip().lower() in ("remote storage only", "rs*") else _number(cell)


def _legacy_rows(page: Page, heading: str, table: Table, series: dict, features: dict[str, str]) -> list[dict]:
    vcpu_col = table.column("vcpu")
    mem_col = _either(table.column("memory"), table.column("ram"))
    temp_col = table.column("temp storage", "gib", avoid=("throughput",))
    cache_col = table.column("cache size")
    if vcpu_col is None or mem_col is None:
        raise SnapshotError(f"{page.file}: table under {heading!r} lacks a vCPU or memory column")
    out = []
    for cells in table.rows:
        row = _size_row(page, series, re.sub(r"<sup>.*?</sup>", "", cells[0]).strip(), cells[vcpu_col],
                        cells[mem_col])
        row["temp_disk_gib"] = None if temp_col is None else _temp(cells[temp_col])
        if cache_col is not None:
            m = re.search(r"\((\d[\d,]*)\)", cells[cache_col])
            row["cache_disk_gib"] = _number(m[1]) if m else None
        _finish(row, features, None)
        out.append(row)
    return out


def _tabbed_name(page: Page) -> str:
    """The series name from the page title, or from the H1 where it says more: the Msv3 Medium Memory
    page is titled "Msv3 size series", like no other page, and headed "Msv3 Medium Memory sizes series"."""
    name = series_name(page.title)
    h1 = next((line[2:] for line in page.text.splitlines() if line.startswith("# ")), "")
    longer = series_name(h1)
    return longer if longer.lower().startswith(name.lower() + "_") else name


def _tabbed(page: Page, root: Path) -> tuple[dict, list[dict]]:
    features = parse_features(page.text)
    gpu = GPU_SERIES.get(page.key)
    spec_text = spec_include(page, root)
    if gpu is not None:
        if spec_text is None:
            raise SnapshotError(f"{page.file}: GPU series without its specs include in the snapshot")
        if gpu.evidence not in spec_text:
            raise SnapshotError(f"{page.file}: the specs include no longer says {gpu.evidence!r}")
    series = _series_record(page, _tabbed_name(page), features, page.text)
    if gpu is not None:
        series["gpu"] = {"model": gpu.model or None, "resource": gpu.resource or None,
                         "memory_gib_per_gpu": gpu.memory_gib, "source": f"includes/{page.key}-series-specs.md"}
    suffixes = sorted({s for (base, s) in page.tabs if base == "sizebasic"})
    if not suffixes:
        raise SnapshotError(f"{page.file}: no Basics table")
    sizes: list[dict] = []
    for suffix in suffixes:
        sizes += _group(page, suffix, series, features, gpu, spec_text)
    _disputed(page, series["name"], sizes, spec_text)
    return series, sizes


def _disputed(page: Page, series: str, sizes: list[dict], spec_text: str | None) -> None:
    if series not in DISPUTED:
        return
    fields, evidence, reason = DISPUTED[series]
    if evidence not in page.text + (spec_text or ""):
        raise SnapshotError(f"{page.file}: DISPUTED entry for {series} no longer applies: {evidence!r} not found")
    for size in sizes:
        size.update(dict.fromkeys(fields))
        size["missing"] = sorted(set(size["missing"]) | set(fields))
        size["notes"] = [n for n in size["notes"] if not n.startswith("temp disk size printed as")]
        size["notes"].append(f"{', '.join(fields)} not given: {reason}")


def _group(page: Page, suffix: str, series: dict, features: dict, gpu: GpuFacts | None,
           spec_text: str | None) -> list[dict]:
    basic = _agreed(page, page.tabs[("sizebasic", suffix)], "Basics")
    if basic is None:
        raise SnapshotError(f"{page.file}: the Basics tab has no table")
    vcpu_col = _either(basic.column("vcpu"), basic.column("cores"))
    mem_col = basic.column("memory", avoid=("epc",))
    if vcpu_col is None or mem_col is None:
        raise SnapshotError(f"{page.file}: Basics header {basic.header} has no vCPU or memory column")
    rows = {_name(cells[0]): _size_row(page, series, cells[0], cells[vcpu_col], cells[mem_col]) for cells in basic.rows}
    _local(page, suffix, rows)
    _accelerators(page, suffix, rows, gpu)
    for row in rows.values():
        _finish(row, features, spec_text)
    return list(rows.values())


def _agreed(page: Page, section: Section, tab: str) -> Table | None:
    """The tab's table; the tables that repeat it (NVMe and SCSI variants) must agree with it."""
    tables = section.tables()
    if any(other != tables[0] for other in tables[1:]):
        raise SnapshotError(f"{page.file}: the {tab} tab's tables differ")
    return next(iter(tables), None)


def _local(page: Page, suffix: str, rows: dict[str, dict]) -> None:
    section = page.tabs.get(("sizestoragelocal", suffix))
    if section is None:
        return
    table = _agreed(page, section, "local-storage")
    if table is None:
        if not NO_LOCAL.search("\n".join(section.lines)):
            raise SnapshotError(f"{page.file}: local-storage tab has neither a table nor 'No local storage'")
        for row in rows.values():  # the page says there is none; it says nothing of a cache
            row.update(temp_disk_count=0, temp_disk_gib=0.0)
        return
    # The Mbdsv4 page heads the size "Temp Storage (GiB)".
    size_col = _either(table.column("temp", "size"), table.column("temp storage", "gib", avoid=("disks",)))
    count_col = next((i for i, h in enumerate(table.header) if "temp" in h.lower() and "size" not in h.lower()
                      and ("qty" in h.lower() or "disks" in h.lower())), None)
    cache_col = table.column("cache", "size")
    # Local SSDs besides the temp disk, raw: the L and ND series' "NVMe Disks", the HPC series'
    # "Local Solid State Disks". Their size stays as printed, with its unit (pages mix TB and TiB).
    nvme_count_col = _either(table.column("nvme disks"), table.column("local solid state disks"))
    nvme_size_col = _either(table.column("nvme disk size"), table.column("local solid state disk size"))
    if size_col is None:
        raise SnapshotError(f"{page.file}: local-storage header {table.header} has no temp-disk size column")
    listed = [_name(cells[0]) for cells in table.rows]
    if listed and not set(listed) & set(rows):
        # The table is another series' (the Ebdsv6 page repeats Edsv6's rows): its figures are not
        # these sizes', so the page gives none for them.
        for row in rows.values():
            row["notes"].append(f"the page's local-storage table lists other sizes ({listed[0]}, ...), "
                                "none of this series")
        return
    for cells in table.rows:
        name = _name(cells[0])
        if name not in rows:
            raise SnapshotError(f"{page.file}: local-storage row {cells[0]} is not in the Basics table")
        row = rows[name]
        size = _number(cells[size_col]) if size_col < len(cells) else None
        row["temp_disk_gib"] = None if size is None else size * _unit_factor(table.header[size_col])
        if size is not None and _unit_factor(table.header[size_col]) != 1:
            row["notes"].append(f"temp disk size printed as {cells[size_col]} in a column headed "
                                f"{table.header[size_col]!r}")
        count = _number(cells[count_col]) if count_col is not None and count_col < len(cells) else None
        row["temp_disk_count"] = None if count is None else int(count)
        if cache_col is not None:
            row["cache_disk_gib"] = _number(cells[cache_col])
        if nvme_count_col is not None:
            unit = re.search(r"\((\w+)\)", table.header[nvme_size_col])
            row["local_ssd_count"] = int(_number(cells[nvme_count_col]))
            row["local_ssd_size"] = f"{cells[nvme_size_col]} {unit[1] if unit else ''}".strip()


def _accelerators(page: Page, suffix: str, rows: dict[str, dict], gpu: GpuFacts | None) -> None:
    section = page.tabs.get(("sizeaccelerators", suffix))
    table = section.table() if section is not None else None
    if table is None:
        if gpu is not None:
            raise SnapshotError(f"{page.file}: GPU series without an accelerators table")
        return
    if gpu is None:
        raise SnapshotError(f"{page.file}: accelerators table but no entry in GPU_SERIES")
    count_col = table.column("accelerators")
    mem_col = table.column("memory")
    for cells in table.rows:
        name = _name(cells[0])
        row = rows[name]
        listed = _number(cells[mem_col])
        text = cells[count_col].strip()
        if not text:
            m = re.search(r"\|\s*Accelerators\s*\|\s*(\d+)\s*\|", gpu.evidence)
            if not m:
                raise SnapshotError(f"{page.file}: blank GPU count and no count in the specs include")
            count = Fraction(int(m[1]))
            row["notes"].append(f"GPU count {count} from the series specs include; the size table leaves it blank")
        else:
            count = Fraction(text)
        row["gpus"] = str(count)
        row["gpu_model"] = (gpu.model + (" (partition)" if count < 1 else "")) if gpu.model else None
        row["gpu_resource"] = gpu.resource or None
        if not gpu.model:
            row["missing"] += ["gpu_model", "gpu_resource"]
            row["notes"].append("the page names no GPU model or vendor")
        row["gpu_memory_gib"] = _gpu_memory(page, name, gpu, count, listed)


def _gpu_memory(page: Page, name: str, gpu: GpuFacts, count: Fraction, listed: float | None) -> float | None:
    """Memory of one GPU, or of the size's share of one GPU when the size has a fraction of one."""
    if listed is None:
        return gpu.memory_gib
    if count < 1:
        if gpu.memory_gib is not None and abs(listed - float(gpu.memory_gib * count)) > 0.5:
            raise SnapshotError(f"{page.file}: {name} lists {listed} GB for {count} of a "
                                f"{gpu.memory_gib} GB GPU")
        return listed
    per_gpu = listed / float(count) if gpu.memory == "total" else listed
    if gpu.memory_gib is not None:
        # Pages round (the MI300X size lists 1535 GB for 8 x 192 GB): accept 1%, report the include's figure.
        if abs(per_gpu - gpu.memory_gib) > 0.01 * gpu.memory_gib:
            raise SnapshotError(f"{page.file}: {name} lists {listed} GB for {count} GPUs, which is not "
                                f"{gpu.memory_gib} GB per GPU ({gpu.memory})")
        return float(gpu.memory_gib)
    return per_gpu


def _retirement(series: dict, sizes: list[dict]) -> None:
    """A size is `retiring` if the series' retirement note concerns it: a note that names sizes
    of the series (the Msv2 page retires only its isolated sizes) concerns those; one that names none
    of them concerns the whole series."""
    note = series["retirement"]
    named = set(re.findall(r"Standard_\w+", note or "")) & {s["name"] for s in sizes}
    for size in sizes:
        size["retiring"] = bool(note) and (not named or size["name"] in named)


def build(root: Path = SNAPSHOT) -> dict:
    pages = load_pages(root)
    if not pages:
        raise SnapshotError(f"{root}: no snapshot pages")
    used_errata: set[str] = set()
    series_out: dict[str, dict] = {}
    sizes_out: dict[str, dict] = {}
    for page in pages:
        used_errata.update(raw for raw in ERRATA if raw in page.text)
        for series, sizes in page_sizes(page, root):
            _retirement(series, sizes)
            if series["name"] in series_out:
                raise SnapshotError(f"{page.file}: series {series['name']} also comes from "
                                    f"{series_out[series['name']]['page']}")
            series_out[series["name"]] = series
            for size in sizes:
                key = size["name"].lower()
                if key in sizes_out:
                    raise SnapshotError(f"{page.file}: {size['name']} also listed by series "
                                        f"{sizes_out[key]['series']}")
                sizes_out[key] = size
    stale = set(ERRATA) - used_errata
    if stale:
        raise SnapshotError(f"errata no longer found in the snapshot: {sorted(stale)}; remove them")
    return {
        "source": {"repository": REPOSITORY, "read": max(page.read for page in pages),
                   "generator": "tools/vm_catalog/generate.py", "pages": len(pages)},
        "series": dict(sorted(series_out.items(), key=lambda kv: kv[0].lower())),
        "sizes": sorted(sizes_out.values(), key=lambda s: s["name"].lower()),
    }


def render(catalog: dict) -> str:
    """Deterministic JSON: sorted keys, one series and one size per line (small, reviewable diffs)."""
    def line(obj) -> str:
        return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    series = ",\n".join(f"{json.dumps(k)}:{line(v)}" for k, v in catalog["series"].items())
    sizes = ",\n".join(line(s) for s in catalog["sizes"])
    return f'{{\n"source":{line(catalog["source"])},\n"series":{{\n{series}\n}},\n"sizes":[\n{sizes}\n]\n}}\n'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed catalog, write nothing")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    try:
        text = render(build())
    except SnapshotError as err:
        print(f"vm_catalog: {err}", file=sys.stderr)
        return 2
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"vm_catalog: {args.output} differs from what the snapshot generates; run "
                  "tools/vm_catalog/generate.py", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    catalog = json.loads(text)
    print(f"wrote {args.output}: {len(catalog['sizes'])} sizes in {len(catalog['series'])} series")
    return 0


if __name__ == "__main__":
    sys.exit(main())
