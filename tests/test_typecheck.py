"""mypy on the program and the package, held to a ratchet: the count of errors may fall, never rise.

The configuration (which packages, the cache) is `[tool.mypy]` in pyproject.toml, so that
`venv/bin/mypy` at the root reports what this test counts. The cache lives in `.mypy_cache`
(ignored by git): a warm run takes a second or two, a cold one (a fresh clone, CI) under a minute.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT

# The errors `mypy` finds today. When a change fixes some, lower this to the new count (the test
# says so); a change that adds one fixes it instead (or, for a real limit of a library's types,
# says why in a `# type: ignore[code]` on that line).
RATCHET = 8
# A cold run on a busy machine takes about a minute; ten is a hang, not a slow run.
TIMEOUT_SECONDS = 600

_FOUND = re.compile(r"^Found (\d+) errors? in \d+ files?", re.MULTILINE)
_SUCCESS = re.compile(r"^Success: no issues found", re.MULTILINE)


def error_count(output: str) -> int:
    """The count mypy's summary line states; a ValueError when there is none (mypy could not run)."""
    if found := _FOUND.search(output):
        return int(found[1])
    if _SUCCESS.search(output):
        return 0
    raise ValueError(f"mypy printed no summary line; it could not check the tree:\n{output[-4000:]}")


def test_the_count_is_read_from_the_summary_line():
    assert error_count("a.py:1: error: x  [misc]\nFound 1 error in 1 file (checked 3 source files)\n") == 1
    assert error_count("Found 12 errors in 3 files (checked 9 source files)") == 12
    assert error_count("Success: no issues found in 183 source files") == 0
    with pytest.raises(ValueError, match="could not check"):
        error_count("mypy: error: Duplicate module named '__main__'")


def test_mypy_finds_no_more_errors_than_the_ratchet():
    run = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True,
                         timeout=TIMEOUT_SECONDS)
    output = run.stdout + run.stderr
    count = error_count(output)
    errors = [line for line in output.splitlines() if ": error:" in line]
    assert count <= RATCHET, (
        f"mypy finds {count} errors, more than the {RATCHET} this tree had: fix the new ones (run "
        f"`venv/bin/mypy` at the root). The errors:\n" + "\n".join(errors[:200]))
    assert count == RATCHET, (
        f"mypy finds {count} errors, fewer than the ratchet: lower RATCHET in tests/test_typecheck.py to {count}.")
