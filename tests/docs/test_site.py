"""The site builds with `mkdocs build --strict`, and its navigation holds every page."""

from __future__ import annotations

import os
import subprocess
import sys

import yaml

from tests.conftest import ROOT
from tests.docs.pages import DOCS


def nav_pages(entries) -> list[str]:
    pages = []
    for entry in entries:
        for value in (entry.values() if isinstance(entry, dict) else [entry]):
            pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_mkdocs_build_is_strict_and_clean(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr[-4000:]
    for page in ("index.html", "install/index.html", "reference/cli/index.html", "reference/policies/index.html"):
        assert (tmp_path / "site" / page).exists(), page


def test_every_page_is_in_the_navigation():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)  # its !!python/name tags stay text
    listed = nav_pages(config["nav"])
    pages = sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md"))
    assert sorted(listed) == pages
    assert len(listed) == len(set(listed))


def test_the_architecture_page_draws_the_layers():
    text = (DOCS / "architecture.md").read_text()
    diagram = text.split("```mermaid", 1)[1].split("```", 1)[0]
    assert "pure core: imports nothing above it" in diagram
    for layer in ("cli", "preview", "settings", "model", "judge", "admission", "aks", "kueue", "k8s", "replay"):
        assert f"{layer}[" in diagram, layer
