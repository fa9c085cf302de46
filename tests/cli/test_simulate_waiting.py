"""simulate's text labels a Preempt with nothing to preempt in Kueue's words, the reason of the QuotaReserved
condition Kueue v0.19.2 gives it, Pending (issue 28: it said "Preempt" while its message said "Nothing can be
preempted for it"). The JSON keeps the flavor assigner's mode, as the contract has it."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from aks_kueue.cli import app
from tests.conftest import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "simulate" / "nothing-to-preempt.yaml"


def test_a_preempt_without_targets_reads_pending_and_the_json_keeps_preempt():
    text = CliRunner().invoke(app, ["simulate", str(FIXTURE)], env={"COLUMNS": "160"})
    assert text.exit_code == 0
    row = next(line for line in text.stdout.splitlines() if "default/waiting" in line)
    assert "Pending" in row and "Preempt" not in row
    words = " ".join(text.stdout.replace("│", " ").split())
    assert words.count("can be preempted") == 1  # said once, by the core's message
    doc = json.loads(CliRunner().invoke(app, ["simulate", str(FIXTURE), "--json"]).stdout)
    (waiting,) = doc["workloads"]
    assert waiting["mode"] == "Preempt" and waiting["preemptionTargets"] == []
    assert doc["summary"]["Preempt"] == 1
