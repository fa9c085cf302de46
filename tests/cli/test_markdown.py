"""`aks-kueue preview --format markdown`: the PR comment's summary."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.cli.markdown import cell
from aks_kueue.preview.verdicts import resource_label, split_fix
from tests.conftest import ROOT
from tests.policies.fakes import fake_pack, real_pack, violation  # noqa: F401  (fake_pack is a fixture)

OVER = ROOT / "tests" / "fixtures" / "feasibility" / "quota-above-capacity.yaml"
runner = CliRunner()


def preview(*args):
    result = runner.invoke(app, ["preview", *map(str, args)])
    return result.exit_code, result.stdout


def table(markdown: str, heading: str) -> list[list[str]]:
    """The body rows of the tables under a `### heading`, cells split on unescaped pipes."""
    section = markdown.split(f"### {heading}", 1)[1].split("\n### ", 1)[0]
    lines = section.splitlines()
    # A table is a header line, a |---| line, then its rows.
    headers = {i - 1 for i, line in enumerate(lines) if re.fullmatch(r"\|[-:| ]+\|", line)}
    rows = [line for i, line in enumerate(lines)
            if line.startswith("|") and i not in headers and i - 1 not in headers]
    return [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows]


def test_summary_of_a_rejected_stack(fake_pack):
    fake_pack.violations = [
        violation("kueue-quota-fits-capacity", "mandatory", "3 GPUs | 2 on t4; fix: lower the nominalQuota by 1",
                  urn_of_type=":ClusterQueue"),
        violation("aks-network-policy", "advisory", "no network policy"),
    ]
    code, markdown = preview("--config", OVER, "--format", "markdown")
    _, raw = preview("--config", OVER, "--json")
    doc = json.loads(raw)
    assert code == 1
    header = markdown.splitlines()[0]
    assert header.startswith("## ") and "`quota-above-capacity`" in header
    assert "rejected: 1 mandatory violation" in header and "1 advisory" in header
    # Resources by type, counted from the same run's JSON.
    counts = Counter(r["type"] for r in doc["resources"])
    assert {row[0].strip("`"): int(row[1]) for row in table(markdown, "Resources")} == counts
    # The capacity table: every row of the analysis, with its figures and verdict.
    expected = [[r["flavor"], r["resource"], r["quota"], r["capacity"] or "-", r["headroom"] or "-"]
                for r in doc["capacity"]["flavors"]]
    rows = table(markdown, "Quota against capacity")
    assert [row[:5] for row in rows] == expected
    assert [row[5].strip("*") for row in rows] == [r["verdict"] for r in doc["capacity"]["flavors"]]
    assert "**over**" in [row[5] for row in rows]
    # Violations: the pipe in the message is escaped, the fix hint has its own column.
    violations = table(markdown, "Policy violations")
    cluster_queue = next(r for r in doc["resources"] if r["type"].endswith(":ClusterQueue"))
    assert violations[0] == ["`kueue-quota-fits-capacity`", f"ClusterQueue {cluster_queue['name']}",
                             "3 GPUs | 2 on t4", "lower the nominalQuota by 1"]
    assert violations[1] == ["`aks-network-policy`", "the stack", "no network policy", ""]
    assert markdown.index("**mandatory** (1)") < markdown.index("**advisory** (1)")


def test_summary_of_a_passing_stack(fake_pack):
    code, markdown = preview("--stack", "prod", "--format", "markdown")
    assert code == 0
    assert markdown.splitlines()[0] == "## aks-kueue preview of stack `prod`: :white_check_mark: passes every mandatory policy"
    assert "Every policy of the pack passed." in markdown
    assert "**over**" not in markdown and "{" not in markdown  # no JSON, no rich markup leaking in


def test_feasibility_fixes_become_hints_through_the_real_pack():
    real_pack()
    code, markdown = preview("--config", OVER, "--format", "markdown")
    _, raw = preview("--config", OVER, "--json")
    fix = json.loads(raw)["findings"][0]["fix"]
    assert code == 1
    hints = [row[3] for row in table(markdown, "Policy violations")]
    assert any(hint and (hint in fix or fix in hint) for hint in hints), hints


@pytest.mark.parametrize("message, known, expected", [
    ("quota 3 on 2; fix: lower it", [], ("quota 3 on 2", "lower it")),
    ("quota 3 on 2. Fix: lower it", [], ("quota 3 on 2", "lower it")),
    ("quota 3 on 2\nhint: lower it", [], ("quota 3 on 2", "lower it")),
    ("quota 3 on 2; lower those quotas by 1", ["lower those quotas by 1"], ("quota 3 on 2", "lower those quotas by 1")),
    ("no network policy", ["lower it"], ("no network policy", None)),
    ("fix: nothing before the hint", [], ("fix: nothing before the hint", None)),
    ("a prefix (suffix)", ["fix"], ("a prefix (suffix)", None)),  # a fix word mid-sentence is no hint
])
def test_split_fix(message, known, expected):
    assert split_fix(message, known) == expected


def test_cells_and_labels():
    assert cell("a | b\nc") == "a \\| b<br>c"
    urn = "urn:pulumi:dev::aks-kueue::aksKueue:index:KueueQueues$kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue::cq"
    assert resource_label(urn) == "ClusterQueue cq"
    assert resource_label(None) == "the stack"
