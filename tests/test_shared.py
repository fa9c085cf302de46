"""Without ../shared: .ci/run refuses at once with a sentence, and a local run's summary lists the
tests that skipped and why."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests.conftest import ROOT, SHARED, needs_shared


def test_ci_refuses_to_start_without_shared(tmp_path):
    done = subprocess.run(["bash", str(ROOT / ".ci" / "run")], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "AKS_KUEUE_SHARED": str(tmp_path / "nowhere")}, timeout=30)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f".ci/run: {tmp_path / 'nowhere'} is missing")
    assert "check them out there and run again" in done.stderr


def test_a_run_without_shared_says_which_tests_skipped_and_why(tmp_path):
    env = {**os.environ, "AKS_KUEUE_SHARED": str(tmp_path / "nowhere")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "tests/aks/test_vm_sizes.py", "-m", "shared"],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
    summary = done.stdout[done.stdout.index("tests skipped without ../shared"):]
    assert f"2 tests did not run: {tmp_path / 'nowhere'} is not beside the repository" in summary
    assert "tests/aks/test_vm_sizes.py::" in summary


@needs_shared()
def test_the_shared_tests_run_here():
    """CI has ../shared, so the marked tests run there (this one among them)."""
    assert (SHARED / "reference").is_dir() and (SHARED / "contract").is_dir()
    assert shutil.which("bash")
