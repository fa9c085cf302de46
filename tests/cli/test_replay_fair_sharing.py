"""`aks-kueue replay` with a Kueue Configuration that turns fair sharing on: the mode that decided,
the entry order it gives, and each ClusterQueue's share in the JSON, the text and the picture."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app

FIXTURES = Path(__file__).parents[1] / "fixtures" / "replay"
QUEUES, TRACE = FIXTURES / "fair-sharing.yaml", FIXTURES / "fair-sharing.jsonl"


def run(*args):
    result = CliRunner().invoke(app, ["replay", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def without_configuration(tmp_path: Path) -> Path:
    documents = [d for d in yaml.safe_load_all(QUEUES.read_text()) if d.get("kind") != "Configuration"]
    path = tmp_path / "classical.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    return path


def test_fair_sharing_orders_the_entries_by_share(tmp_path):
    # At 60 s b1 (50) and c1 (75) arrive together, c1 first in the trace, with 90 cores left. Classical:
    # same priority and time, so the trace order: c1 is admitted and b1 no longer fits. Fair sharing:
    # team-b's share with b1 would be (10 + 50) / 100, team-c's with c1 75 / 100, so b1 goes first and
    # c1 waits until b1 ends (at 60 + 3600 s, then the requeue a second later). Cycles take no time here
    # (--cycle-time 0), so that the times are the decisions' alone.
    code, out, err = run(TRACE, "--queues", QUEUES, "--compare-queues", without_configuration(tmp_path),
                         "--cycle-time", "0", "--json")
    assert code == 0, err
    fair, classical = json.loads(out)["configurations"]
    assert fair["admission"]["mode"] == "FairSharing" and classical["admission"]["mode"] == "Classical"
    assert fair["admission"]["preemptionStrategies"] == ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
    admitted = {w["name"]: w["admitted"] for w in fair["workloads"]}
    assert (admitted["b1"], admitted["c1"]) == (60.0, 3661.0)
    admitted = {w["name"]: w["admitted"] for w in classical["workloads"]}
    assert (admitted["c1"], admitted["b1"]) == (60.0, 3661.0)
    shares = {q["name"]: q["fairSharing"] for q in fair["clusterQueues"]}
    # team-b borrows 60 of the 100 its cohort can lend: 600 per mille, until b1 ends at 3660 s.
    assert shares["team-b"]["weightedShare"]["max"] == 600 and shares["team-b"]["weight"] == 1.0
    assert shares["team-c"]["weightedShare"]["max"] == 750
    assert all("fairSharing" not in q for q in classical["clusterQueues"])
    assert any("fair sharing algorithm" in line for line in fair["assumptions"])


def test_text_markdown_and_picture_show_the_shares(tmp_path):
    code, out, err = run(TRACE, "--queues", QUEUES, "--out", tmp_path / "out")
    assert code == 0, err
    assert "fair sharing: weightedShare" in out and "team-b" in out
    assert (tmp_path / "out" / "replay.png").stat().st_size > 0
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "Fair sharing, weightedShare per ClusterQueue" in summary and "| team-c | 1 | 0 | 750 |" in summary
