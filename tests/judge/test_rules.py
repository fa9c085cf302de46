"""The rule registry (`aks_kueue/judge/rules.py`): every rule is complete, every finding the judge
gives is one its own rule registers, and the Markdown the docs show lists every rule and policy."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from aks_kueue.judge import judge, rules
from aks_kueue.judge.rules import RULES, Judging
from tests.conftest import ROOT, model_of, stack_doc

FIXTURES = sorted((ROOT / "tests" / "fixtures" / "feasibility").glob("*.yaml"))


def test_every_rule_says_what_it_checks_where_it_comes_from_and_who_reports_it():
    names = {p.name for p in rules.policies()}
    for kind, each in RULES.items():
        assert each.id == kind and kind == kind.lower() and " " not in kind
        assert each.title.endswith(".") and each.source and each.applies_to, kind
        assert each.policy in names, kind
    # Every policy reports some rule.
    assert names == {each.policy for each in RULES.values()} | {rules.WARNINGS}


def _models():
    yield model_of(stack_doc("prod"), "prod")
    yield model_of(stack_doc("dev"), "dev")
    for path in FIXTURES:
        yield model_of(yaml.safe_load(Path(path).read_text())["config"], path.stem)


def test_each_check_yields_only_the_kinds_registered_to_it():
    registered = defaultdict(set)
    for kind, each in RULES.items():
        registered[each.check].add(kind)
    seen = set()
    for model in _models():
        for check, kinds in registered.items():
            found = {f.kind for f in rules.run(Judging(model), keep=lambda each, c=check: each.check is c)}
            assert found <= kinds, (check.__name__, found - kinds)
            seen |= found
    assert len(seen) > 20  # the fixtures make the checks speak


@pytest.mark.parametrize("path", FIXTURES[:6], ids=lambda p: p.stem)
def test_the_judge_is_the_registry_run_in_order(path):
    model = model_of(yaml.safe_load(path.read_text())["config"], path.stem)
    assert judge(model).findings == rules.run(Judging(model))


def test_a_rule_id_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        rules.rule(next(iter(RULES)), "Again.", "here", "nothing")(lambda model: [])


def test_the_markdown_lists_every_policy_with_its_level_and_config_and_every_rule():
    text = rules.registry_markdown()
    for each in rules.policies():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{each.name}` |"))
        assert f"| {each.level} |" in row
        for key in rules.policy_config(each.name):
            assert f"`{key}`" in row
    for kind, each in RULES.items():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{kind}` |"))
        assert f"`{each.policy}`" in row and each.title.replace("|", "\\|") in row
    assert "production" in next(line for line in text.splitlines() if line.startswith("| `aks-azure-rbac` | `aks-"))
