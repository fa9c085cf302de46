"""A finding's message states the fact in one sentence; the explanation lives in its rule's documentation
(issue 29).

"One sentence", precisely (`tests/messages.breaks`): outside quoted text ("...", '...', `...`) the message has
- no sentence break: a '.', '!' or '?' followed by white space and a capital letter, unless the '.' ends an
  abbreviation ("e.g.", "i.e.", "etc.", "vs.");
- no clause joined by "; " outside parentheses: `Finding.__str__` puts "; " between the message and the fix,
  so a message's own "; " reads as the start of the fix;
- no line break.
A number ("15.74", "1.34") has no space after its '.', so it is never a break.

Checked three ways: every finding the judge makes of the shipped stacks, the fleet, the test fixtures and
the contract's example (what users see); every finding any test makes (`tests/conftest.py` checks each as
its rule builds it); and statically every literal message at a call site of the judge and the day-2 guard
(what no test reaches).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator, Optional

import pytest
import yaml

from aks_kueue.judge import judge
from aks_kueue.judge.finding import Finding
from aks_kueue.judge.rules import RULES
from aks_kueue.settings import SettingsError
from tests.conftest import ROOT, SHARED, filled_doc, model_of, stack_doc
from tests.messages import breaks


def test_the_definition():
    for one in ("ClusterQueue team-a asks 24 nvidia.com/gpu of flavor a100, and its pools have 16 at maxCount 2",
                "cpu quota 15.74 is above 12.5 (e.g. Standard_D4s_v5 nodes)",
                'Invalid value: "a. B; c": must be a DNS label',
                "pool t4 (its taint sku=gpu:NoSchedule; no flavor tolerates it) is not reached",
                "namespace 'team-a' is not created"):
        assert breaks(one) is None, one
    for two in ("the quota is 24. Kueue admits nothing above it",
                "the quota is 24! Kueue admits nothing above it",
                "the quota is 24; Kueue admits nothing above it",
                "the quota is 24\nKueue admits nothing above it"):
        assert breaks(two) is not None, two


# --- what users see: the judge over the shipped stacks and the fixtures ----------------------------------------

def _configs() -> Iterator[tuple[str, dict, str]]:
    for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml")):
        name = path.name.split(".")[1]
        yield f"stacks/{path.name}", stack_doc(name), name
        yield f"stacks/{path.name}, placeholders filled", filled_doc(name), name
    for folder in ("feasibility", "stacks"):
        for path in sorted((ROOT / "tests" / "fixtures" / folder).glob("*.yaml")):
            doc = yaml.safe_load(path.read_text())
            yield str(path.relative_to(ROOT)), doc.get("config", doc), "test"
    example = SHARED / "contract" / "Pulumi.example.yaml"
    if example.exists():
        yield "the contract's Pulumi.example.yaml", yaml.safe_load(example.read_text())["config"], "example"


def _fleet() -> Iterator[tuple[str, list[Finding]]]:
    from tests import fleet_stacks

    yield "the fleet's manager", judge(fleet_stacks.manager_model()).findings
    for worker in fleet_stacks.WORKERS:
        yield f"the fleet's {worker}", judge(fleet_stacks.model(worker)).findings


def collected() -> list[tuple[str, Finding]]:
    found: list[tuple[str, Finding]] = []
    for where, config, stack in _configs():
        try:
            found += [(where, f) for f in judge(model_of(config, stack)).findings]
        except SettingsError:
            continue  # a fixture of a config the settings refuse: no model to judge
    for where, findings in _fleet():
        found += [(where, f) for f in findings]
    return found


@pytest.fixture(scope="module")
def findings() -> list[tuple[str, Finding]]:
    return collected()


def test_every_finding_states_its_fact_in_one_sentence(findings):
    assert len({f.kind for _, f in findings}) >= 25  # the corpus reaches a third of the rules
    wrong = sorted({f"{f.kind} ({where}): {why}: {f.message}" for where, f in findings
                    if (why := breaks(f.message))})
    assert not wrong, "\n".join(wrong)


def test_every_rule_explains_itself():
    # `@rule` refuses a rule without one; each is more than its title again: a sentence of its own at least.
    assert not [kind for kind, each in RULES.items() if len(each.explanation) < 40]
    page = (ROOT / "docs" / "reference" / "policies.md").read_text()
    assert all(each.explanation in page for each in RULES.values())


# --- what no fixture reaches: every literal message at a call site ----------------------------------------------

SOURCES = sorted((ROOT / "aks_kueue" / "judge").glob("*.py")) + [ROOT / "aks_kueue" / "day2" / "guard.py"]


def _literal(node: ast.AST) -> Optional[str]:
    """The text of a string literal or f-string, each placeholder as 'x' (a lower-case word cannot start a
    sentence); None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "x" for part in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left), _literal(node.right)
        return None if left is None or right is None else left + right
    return None


def literal_messages(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "message" and (text := _literal(keyword.value)) is not None:
                    yield node.lineno, text


def test_every_message_literal_is_one_sentence():
    assert sum(1 for path in SOURCES for _ in literal_messages(path)) >= 80  # the call sites are found
    wrong = [f"{path.relative_to(ROOT)}:{line}: {why}" for path in SOURCES
             for line, text in literal_messages(path) if (why := breaks(text))]
    assert not wrong, "\n".join(wrong)


def test_every_kind_of_the_day2_guard_explains_itself():
    """The guard's kinds are no rules: they are explained in `guard.EXPLANATIONS`, under an anchor of the same
    page, which every finding of the guard points at."""
    from aks_kueue.day2 import guard

    source = (ROOT / "aks_kueue" / "day2" / "guard.py").read_text()
    kinds = set(re.findall(r'"(day2-[a-z-]+)"', source))
    assert len(kinds) >= 30 and kinds <= set(guard.EXPLANATIONS), sorted(kinds - set(guard.EXPLANATIONS))
    page = (ROOT / guard.DOCUMENTATION).read_text()
    for kind, explanation in guard.EXPLANATIONS.items():
        assert len(explanation) >= 40 and f"### `{kind}` {{#{kind}}}\n\n{explanation}\n" in page, kind
        assert guard.documentation(kind) == f"{guard.DOCUMENTATION}#{kind}"
