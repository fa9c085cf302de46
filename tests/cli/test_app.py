"""The `aks-kueue` process ends as soon as its command has, with the command's exit code and all
of its output."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _exit_now(code: str) -> subprocess.CompletedProcess:
    script = ("import sys\nfrom aks_kueue.cli.app import exit_now\n"
              "sys.stdout.write('unflushed out'); sys.stderr.write('unflushed err')\n"
              f"exit_now({code})\n")
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("code, status", [("None", 0), ("0", 0), ("2", 2), ("True", 1)])
def test_the_exit_code_is_sys_exits_and_the_output_is_flushed(code, status):
    done = _exit_now(code)
    assert (done.returncode, done.stdout, done.stderr) == (status, "unflushed out", "unflushed err")


def test_a_message_goes_to_stderr_with_status_1():
    done = _exit_now("'no such thing'")
    assert (done.returncode, done.stdout, done.stderr) == (1, "unflushed out", "unflushed errno such thing\n")


def test_an_unusable_stack_still_prints_its_whole_document_and_exits_2():
    done = subprocess.run([sys.executable, "-m", "aks_kueue.cli", "preview", "--stack", "no-such-stack", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert json.loads(done.stdout)["result"] == "invalid"
    assert "no such stack file" in done.stderr
