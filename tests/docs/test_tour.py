"""The README's tour says what the commands print, and writes nothing into the repository's root (issue 28:
it claimed two invalid Kueue examples where validate prints one, and left report/, sample.yaml and
validate.json beside the sources)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from aks_kueue.cli import app
from tests.conftest import ROOT
from tests.docs.pages import examples
from tests.docs.test_examples import layout, script_of

README = ROOT / "README.md"
# The README's line: `validate ... --json > ...   # exit 1: N of Kueue's own M examples is invalid`
CLAIM = re.compile(r"validate tests/fixtures/kueue-examples .*# exit 1: (\d+) of Kueue's own (\d+) examples (?:is|are) "
                   r"invalid")


def test_the_readme_counts_the_invalid_kueue_examples_as_validate_prints_them():
    invalid, total = map(int, CLAIM.search(README.read_text()).groups())
    done = CliRunner().invoke(app, ["validate", str(ROOT / "tests" / "fixtures" / "kueue-examples"), "--json"])
    summary = json.loads(done.stdout)["summary"]
    assert done.exit_code == 1 and (summary["invalid"], summary["objects"]) == (invalid, total)


def test_the_tour_writes_only_into_tour(tmp_path):
    cwd = layout(tmp_path)
    before = {entry.name for entry in cwd.iterdir()}
    env = {**os.environ, "PATH": f"{Path(sys.prefix) / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "COLUMNS": "120", "NO_COLOR": "1"}
    run = [e for e in examples(README) if e.not_run is None]
    assert len(run) >= 4
    for example in run:
        done = subprocess.run(["bash", "-c", script_of(example)], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=240)
        assert done.returncode == 0, (example.id, done.stderr[-2000:])
    assert {entry.name for entry in cwd.iterdir()} - before == {"tour"}
    assert {p.name for p in (cwd / "tour").iterdir()} >= {"report", "sample.yaml", "validate.json"}
