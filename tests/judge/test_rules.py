"""The rule registry (`aks_kueue/judge/rules.py`): every rule is complete, every finding the judge
gives is one its own rule registers, and the Markdown the docs show lists every rule and policy."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from aks_kueue.judge import judge, rules
from aks_kueue.judge.finding import ERROR, WARNING, Finding
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
        row = _rule_row(text, kind)
        assert f"`{each.policy}`" in row and each.title.replace("|", "\\|") in row
        assert f"| {each.severity} |" in row or each.graded and f"| {each.severity} or warning: " in row
    assert "production" in _rule_row(text, "aks-azure-rbac")
    # A warning-only rule of a mandatory policy says it warns (its findings go to aks-kueue-warnings).
    assert "| warning |" in _rule_row(text, "fleet-token-rotating")


def _rule_row(text: str, kind: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f'| [`{kind}`](#{kind}) |'))


def test_each_rule_is_documented_at_an_anchor_of_the_generated_policy_list():
    page = (ROOT / rules.DOCUMENTATION).read_text()
    for kind, each in RULES.items():
        path, anchor = each.documentation.split("#")
        assert path == rules.DOCUMENTATION and anchor == kind
        # The anchor is the heading of the rule's explanation.
        section = page.split(f"### `{kind}` {{#{anchor}}}\n", 1)[1].split("\n### ", 1)[0]
        assert each.title in section and each.explanation in section, kind


def test_a_finding_takes_its_severity_from_its_rule():
    plain = RULES["quota-above-capacity"]
    found = rules.finding(plain.id, object="ClusterQueue a", key="aks-kueue:queues", message="over", fix="lower it")
    assert found.kind == plain.id and found.severity == plain.severity == ERROR
    assert (found.object, found.key, found.message, found.fix, dict(found.numbers)) == (
        "ClusterQueue a", "aks-kueue:queues", "over", "lower it", {})
    # A rule that declares one severity cannot be given another at a call site...
    with pytest.raises(ValueError, match="declares no `graded`"):
        rules.finding(plain.id, object="a", key="k", message="m", severity=WARNING)
    # ...a graded one can, and says why its findings differ.
    graded = RULES["fleet-team-missing"]
    assert graded.graded and rules.finding(graded.id, object="a", key="k", message="m", severity=WARNING).severity \
        == WARNING
    # A baseline rule is graded by the environment.
    assert all(each.graded == rules.BASELINE_GRADED for each in RULES.values() if each.baseline)


def test_a_rule_declares_its_severity_and_explanation():
    with pytest.raises(TypeError, match="declares no severity"):
        rules.rule("a-new-rule", "Holds.", "here", "nothing")
    with pytest.raises(TypeError, match="declares no explanation"):
        rules.rule("a-new-rule", "Holds.", "here", "nothing", severity=ERROR, explanation=" ")
    assert "a-new-rule" not in RULES


def test_a_finding_is_built_by_keyword_only():
    with pytest.raises(TypeError):
        Finding("k", ERROR, "o", "key", "message")  # type: ignore[misc]


def test_each_finding_of_the_fixtures_has_a_severity_its_rule_declares():
    seen = set()
    for model in _models():
        for found in rules.run(Judging(model)):
            each = RULES[found.kind]
            assert found.severity == each.severity or each.graded, (found.kind, found.severity)
            seen.add(found.severity)
    assert seen == {ERROR, WARNING}
