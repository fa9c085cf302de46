"""The generated pages say what the code says: the CLI's command tree and the policy pack."""

from __future__ import annotations

import pytest
import typer.main

from aks_kueue.cli import app
from tests.docs.pages import page
from tools import docs_pages


@pytest.mark.parametrize("path", sorted(docs_pages.PAGES))
def test_the_committed_page_is_what_the_code_generates(path):
    committed = (docs_pages.ROOT / path).read_text()
    assert committed == docs_pages.PAGES[path](), f"{path} drifted from the code; run: venv/bin/python tools/docs_pages.py"


def test_check_names_a_page_that_drifted(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(docs_pages, "ROOT", tmp_path)
    (tmp_path / "docs" / "reference").mkdir(parents=True)
    for path, render in docs_pages.PAGES.items():
        (tmp_path / path).write_text(render())
    assert docs_pages.main(["--check"]) == 0
    (tmp_path / "docs/reference/cli.md").write_text(docs_pages.cli_markdown().replace("--stack", "--stak"))
    assert docs_pages.main(["--check"]) == 1
    assert "docs/reference/cli.md" in capsys.readouterr().err


def test_the_cli_reference_holds_every_command_and_option():
    text = page("reference/cli.md")
    group = typer.main.get_command(app)
    assert group.commands, "no subcommands found"
    for name, command in group.commands.items():
        section = text.split(f"## `aks-kueue {name}`", 1)[1].split("\n## ", 1)[0]
        for param in command.params:
            if param.param_type_name == "option" and not param.hidden:
                for opt in param.opts:
                    assert f"`{opt}`" in section, (name, opt)


def test_the_policy_list_holds_every_policy_with_its_level():
    from aks_kueue.policies import POLICIES

    from aks_kueue.judge.rules import RULES

    policy_table, rule_table = page("reference/policies.md").split("| Rule (finding kind) |", 1)
    rule_table = rule_table.split("\n## ", 1)[0].replace("| [`", "| `")  # each rule's row links to its explanation

    def rows(table: str) -> dict[str, str]:
        return {line.split("`")[1]: line for line in table.splitlines() if line.startswith("| `")}

    assert set(rows(rule_table)) == set(RULES)  # a row per rule
    rows = rows(policy_table)
    assert set(rows) == {policy.name for policy in POLICIES}
    for policy in POLICIES:
        assert f"| {policy.enforcement_level.value} |" in rows[policy.name], policy.name
