"""The documentation as the tests read it: the README, the site's pages and their shell examples."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from tests.conftest import ROOT

DOCS = ROOT / "docs"
SHELLS = ("bash", "sh", "shell")
# Why a shell example is not run by tests/docs/test_examples.py, written on the line before its fence.
NOT_RUN = re.compile(r"<!-- not run: (?P<reason>[^>]*?) -->")
REASONS = {
    "cloud": "needs Azure (its API, or its public price list over curl), the Pulumi CLI, a cluster or kubectl",
    "your files": "names files you have and this repository does not",
    "slow": "an install or a benchmark, run by make targets of their own",
}
CLOUD_TOOLS = ("pulumi", "az", "kubectl", "kubelogin", "helm", "curl")


def sources() -> list[Path]:
    """The README and every page of the site."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def page(name: str) -> str:
    """A page of the site by its path under docs/, e.g. `ci.md`."""
    return (DOCS / name).read_text()


@dataclass(frozen=True)
class Example:
    path: Path
    line: int                 # 1-based line of the opening fence
    language: str
    script: str
    not_run: Optional[str]    # the reason of its `<!-- not run: ... -->` mark, or None

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def examples(path: Path) -> list[Example]:
    """Every fenced shell block of a Markdown file, with the mark on the line before it."""
    lines = path.read_text().splitlines()
    found, index = [], 0
    while index < len(lines):
        opening = re.match(r"^(`{3,})\s*([\w-]*)", lines[index])
        if not opening:
            index += 1
            continue
        fence, language = opening.group(1), opening.group(2)
        end = next(i for i in range(index + 1, len(lines)) if lines[i].startswith(fence))
        if language in SHELLS:
            before = next((lines[i] for i in range(index - 1, -1, -1) if lines[i].strip()), "")
            mark = NOT_RUN.search(before)
            found.append(Example(path, index + 1, language, "\n".join(lines[index + 1:end]) + "\n",
                                 mark.group("reason") if mark else None))
        index = end + 1
    return found


def all_examples() -> list[Example]:
    return [example for path in sources() for example in examples(path)]
