"""`aks-kueue preview --format markdown`: the PR comment's summary."""

from __future__ import annotations

import json
import re
from collections import Counter

from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.cli.markdown import cell
from tests.conftest import ROOT
from tests.policies.fakes import violation

OVER = ROOT / "tests" / "fixtures" / "feasibility" / "quota-above-capacity.yaml"
runner = CliRunner()


def preview(*args):
    result = runner.invoke(app, ["preview", *map(str, args)])
    return result.exit_code, result.stdout


def table(markdown: str, heading: str) -> list[list[str]]:
    """The body rows of the tables under a `### heading`, cells split on unescaped pipes."""
    section = markdown.split(f"### {heading}", 1)[1].split("\n### ", 1)[0].split("\n<!-- ", 1)[0]
    lines = section.splitlines()
    # A table is a header line, a |---| line, then its rows.
    headers = {i - 1 for i, line in enumerate(lines) if re.fullmatch(r"\|[-:| ]+\|", line)}
    rows = [line for i, line in enumerate(lines)
            if line.startswith("|") and i not in headers and i - 1 not in headers]
    return [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


def test_summary_of_a_rejected_stack():
    code, markdown = preview("--config", OVER, "--format", "markdown")
    _, raw = preview("--config", OVER, "--json")
    doc = json.loads(raw)
    assert code == 1 and doc["result"] == "rejected"
    header = markdown.splitlines()[0]
    assert header.startswith("## ") and "`quota-above-capacity`" in header
    mandatory = sum(v["enforcementLevel"] == "mandatory" for v in doc["violations"])
    assert f"rejected: {mandatory} mandatory violation" in header
    # Resources by type, counted from the same run's JSON, folded at the end.
    counts = Counter(r["type"] for r in doc["resources"])
    folded = markdown.split("<details><summary>Resources: ", 1)[1]
    assert {row[0].strip("`"): int(row[1]) for row in table("### Resources" + folded, "Resources")} == counts
    assert folded.rstrip().endswith("</details>")
    # The capacity table: every row of the judgement, with its verdict.
    rows = table(markdown, "Quota against capacity")
    assert [(row[0], row[1]) for row in rows] == [(r["flavor"], r["resource"]) for r in doc["capacity"]["flavors"]]
    assert [row[5].strip("*") for row in rows] == [r["verdict"] for r in doc["capacity"]["flavors"]]
    assert "**over**" in [row[5] for row in rows]
    # Each finding once, with the key to edit and the fix in columns of their own.
    verdicts = table(markdown, "Policy verdicts")
    quota = next(f for f in doc["findings"] if f["kind"] == "quota-above-capacity")
    assert ["`kueue-quota-fits-capacity`", quota["object"], f"`{quota['key']}`", quota["message"], quota["fix"]] \
        in verdicts
    assert len(verdicts) == len(doc["violations"])
    assert markdown.index("**mandatory**") < markdown.index("**advisory**")


def test_warnings_are_in_the_summary():
    """Stack warnings are findings of severity warning, reported by the advisory aks-kueue-warnings: a placeholder
    of a development stack; in a production one it is mandatory (issue 28)."""
    _, markdown = preview("--stack", "dev", "--format", "markdown")
    verdicts = table(markdown, "Policy verdicts")
    assert any(row[0] == "`aks-kueue-warnings`" and "documentation range" in row[3] for row in verdicts)
    _, markdown = preview("--stack", "prod", "--format", "markdown")
    verdicts = table(markdown, "Policy verdicts")
    assert any(row[0] == "`aks-kueue-no-placeholders`" and "documentation range" in row[3] for row in verdicts)
    assert not any(row[0] == "`aks-kueue-warnings`" and "documentation range" in row[3] for row in verdicts)


def test_summary_of_a_passing_stack(fake_pack):
    code, markdown = preview("--stack", "prod", "--format", "markdown")
    assert code == 0
    assert markdown.splitlines()[0] == "## aks-kueue preview of stack `prod`: :white_check_mark: passes every mandatory policy"
    assert "**over**" not in markdown and '{"' not in markdown and "[bold" not in markdown  # no JSON, no rich markup


def test_a_violation_that_is_no_finding_is_shown_too(fake_pack):
    fake_pack.violations = [violation("kueue-quota-fits-capacity", "advisory", "can't run | during preview")]
    code, markdown = preview("--stack", "dev", "--format", "markdown")
    assert code == 0
    assert ["`kueue-quota-fits-capacity`", "", "", "can't run | during preview", ""] in table(markdown,
                                                                                          "Policy verdicts")


def test_cells():
    assert cell("a | b\nc") == "a \\| b<br>c"


def test_the_comment_leads_with_the_verdicts_and_folds_the_resources():
    """Reported: the comment put a 34-row resource-type table before the verdicts."""
    from aks_kueue.cli.common import load_stack_config
    from aks_kueue.cli.markdown import REPLAY_SLOT, markdown_summary
    from aks_kueue.preview.outcome import preview as run

    config, root = load_stack_config("prod", None)
    outcome = run(config, root)
    markdown = markdown_summary(outcome)
    order = [markdown.index(part) for part in ("## aks-kueue preview of stack `prod`", "### Policy verdicts",
                                               "### Quota against capacity", REPLAY_SLOT,
                                               "<details><summary>Resources: 65 registered")]
    assert order == sorted(order)
    # The nine checks only Azure can answer are one folded block, not nine rows among the verdicts.
    assert markdown.count("<details><summary>Azure subscription: 9 checks only Azure can answer") == 1
    # The replay comparison, when there is one, stands in the slot, after the capacity table.
    with_replay = markdown_summary(outcome, replay="| queue | p50 wait |\n|---|---|\n| team-a | 3m |\n")
    assert REPLAY_SLOT not in with_replay
    assert with_replay.index("### Quota against capacity") < with_replay.index("### Replay") \
        < with_replay.index("<details><summary>Resources")
