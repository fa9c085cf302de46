"""`make`'s first install says what it is doing. Reported: the first `make preview` was silent for about
150 s while pip installed, its output filtered down to a few lines."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT

# A stand-in for python3: `-m venv DIR` makes DIR/bin/python, a pip that talks, then works quietly.
FAKE_PYTHON = """#!/usr/bin/env bash
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  cat > "$3/bin/python" <<'PIP'
#!/usr/bin/env bash
echo "Collecting pulumi-azure-native"
echo "  Downloading pulumi_azure_native-3.29.0-py3-none-any.whl (610.3 MB)"
sleep 2.5
echo "Successfully installed pulumi-azure-native-3.29.0"
exit ${FAKE_PIP_STATUS:-0}
PIP
  chmod +x "$3/bin/python"
fi
"""


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("status", [0, 1])
def test_the_first_install_shows_pips_output_and_a_line_while_it_works(tmp_path, status):
    fake = tmp_path / "python3"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    venv = tmp_path / "venv"
    done = subprocess.run(["make", "-s", "install", f"PYTHON={fake}", f"VENV={venv}", "PROGRESS_EVERY=1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "FAKE_PIP_STATUS": str(status)})
    out = done.stdout
    assert "Downloading pulumi_azure_native-3.29.0-py3-none-any.whl (610.3 MB)" in out  # pip's lines, unfiltered
    assert out.count("... pip is still installing") >= 1
    assert out.index("Collecting") < out.index("... pip is still installing (1 s so far)") < out.index(
        "Successfully installed")
    # pip's exit status is the recipe's: a failed install is not marked done.
    assert (done.returncode == 0) is (status == 0)
    assert (venv / "bin" / ".installed").exists() is (status == 0)


FAKE_PULUMI = """#!/usr/bin/env bash
echo "$@" >> "$PULUMI_CALLS"
"""


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_up_prepares_the_pack_virtualenv_once_then_runs_pulumi_up_with_the_pack(tmp_path):
    """Issue 28: `pulumi up --policy-pack policy` does not install a local pack's requirements (docs/deploy.md cites
    the Pulumi source), so the documented deploy is one command that does: `make up STACK=...`."""
    python, pulumi, calls = tmp_path / "python3", tmp_path / "pulumi", tmp_path / "calls"
    python.write_text(FAKE_PYTHON)
    pulumi.write_text(FAKE_PULUMI)
    for tool in (python, pulumi):
        tool.chmod(0o755)
    venv = tmp_path / "policy-venv"

    def up(stack: str, path: str):
        return subprocess.run(["make", "-s", "up", f"STACK={stack}", f"PYTHON={python}", f"POLICY_VENV={venv}",
                               f"PULUMI={pulumi}"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                              env={"PATH": path, "PULUMI_CALLS": str(calls), "FAKE_PIP_STATUS": "0"})

    first = up("prod", f"{tmp_path}:/usr/bin:/bin")
    assert first.returncode == 0, first.stderr
    assert "Successfully installed" in first.stdout and (venv / ".installed").exists()
    # prod has a policy config of its own (policy/config/prod.json); dev has none.
    second = up("dev", f"{tmp_path}:/usr/bin:/bin")
    assert second.returncode == 0 and "Successfully installed" not in second.stdout  # the virtualenv is kept
    assert calls.read_text().splitlines() == [
        "up --stack prod --policy-pack policy --policy-pack-config policy/config/prod.json",
        "up --stack dev --policy-pack policy"]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_up_without_the_pulumi_cli_says_so(tmp_path):
    venv = tmp_path / "policy-venv"
    venv.mkdir()
    (venv / ".installed").touch()
    done = subprocess.run(["make", "-s", "up", "STACK=dev", f"POLICY_VENV={venv}", f"PULUMI={tmp_path / 'none'}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode != 0
    assert "make up runs the Pulumi CLI, which is not on PATH: install it" in done.stderr
