"""Every shell example of the README and the site runs, offline, as written.

Each fenced bash or sh block runs as one bash script (`set -eo pipefail`) in a temporary
directory that holds the project's layout as links (stacks, fixtures, traces, policy config,
`venv/`), so what a block writes stays there. A command whose comment begins `# exit N` must
exit N; every other command must exit 0. A block marked `<!-- not run: REASON -->` on the line
before it is not run: docs/architecture.md ("The documentation") lists the reasons.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.docs.pages import CLOUD_TOOLS, REASONS, Example, all_examples

EXAMPLES = all_examples()
RUN = [example for example in EXAMPLES if example.not_run is None]
EXPECTED_EXIT = re.compile(r"^(?P<command>.*?\S)\s+# exit (?P<code>\d+)\b.*$")


def script_of(example: Example) -> str:
    """The block as bash runs it: each `# exit N` command checked for exactly that code."""
    lines = ["set -eo pipefail"]
    for line in example.script.splitlines():
        expected = EXPECTED_EXIT.match(line)
        if expected:
            command, code = expected.group("command"), expected.group("code")
            lines.append(f"rc=0; {command} || rc=$?; if [ \"$rc\" != {code} ]; then "
                         f"echo {shlex.quote(f'expected exit {code}: {command}')} \"got $rc\" >&2; exit 1; fi")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def layout(tmp: Path) -> Path:
    """The project's top level as links, with `venv` the environment running these tests."""
    for entry in ROOT.iterdir():
        if entry.name not in ("venv", ".git", "site", "report", "tour"):
            (tmp / entry.name).symlink_to(entry)
    (tmp / "venv").symlink_to(Path(sys.prefix))
    return tmp


@pytest.mark.parametrize("example", RUN, ids=[example.id for example in RUN])
def test_the_example_runs(example, tmp_path):
    cwd = layout(tmp_path)
    env = {**os.environ, "PATH": f"{Path(sys.prefix) / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "COLUMNS": "120", "NO_COLOR": "1"}
    done = subprocess.run(["bash", "-c", script_of(example)], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, f"{example.id} failed ({done.returncode}):\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


def _commands(script: str) -> list[list[str]]:
    """The words of each command line of a script, a quoted string that spans lines kept in its command."""
    found, pending = [], ""
    for line in script.splitlines():
        pending = f"{pending}\n{line}" if pending else line
        try:
            found.append(shlex.split(pending, comments=True))
        except ValueError:  # an open quote: the command goes on on the next line
            continue
        pending = ""
    assert not pending, f"an unclosed quote in {script!r}"
    return found


def test_the_examples_that_run_are_the_offline_commands():
    assert len(RUN) >= 8, [example.id for example in RUN]
    for example in RUN:
        words = {words[0] for words in _commands(example.script) if words}
        assert not words & set(CLOUD_TOOLS), (example.id, "calls a cloud tool; mark it <!-- not run: cloud -->")


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.not_run], ids=[e.id for e in EXAMPLES if e.not_run])
def test_a_block_not_run_says_why(example):
    assert example.not_run in REASONS, f"{example.id}: reason {example.not_run!r} is not one of {sorted(REASONS)}"
    if example.not_run == "cloud":
        commands = re.findall(r"(?:^|[|&;]\s*)([\w./-]+)", example.script, flags=re.M)
        assert set(commands) & set(CLOUD_TOOLS), f"{example.id} is marked cloud but calls none of {CLOUD_TOOLS}"


def test_the_exit_rule_can_fail(tmp_path):
    example = Example(ROOT / "README.md", 1, "bash", "true   # exit 1\n", None)
    done = subprocess.run(["bash", "-c", script_of(example)], capture_output=True, text=True)
    assert done.returncode == 1 and "expected exit 1: true got 0" in done.stderr
