"""What "one sentence" means for a finding's message (issue 29), for tests/judge/test_messages.py and the
check `tests/conftest.py` makes of every finding a test builds."""

from __future__ import annotations

import re
from typing import Optional

_QUOTED = re.compile(r'"[^"\n]*"|`[^`\n]*`|(?<![\w])\'[^\'\n]*\'(?![\w])')
_ABBREVIATION = re.compile(r"\b(e\.g|i\.e|etc|vs)$")
_BREAK = re.compile(r"[.!?](?=\s+[A-Z])")


def breaks(message: str) -> Optional[str]:
    """Why `message` is not one sentence, or None when it is (tests/judge/test_messages.py defines it)."""
    text = _QUOTED.sub("Q", message)
    if "\n" in text:
        return "a line break"
    for found in _BREAK.finditer(text):
        if not _ABBREVIATION.search(text[:found.start()]):
            return f"a sentence break at {text[max(0, found.start() - 20):found.end() + 20]!r}"
    depth = 0
    for i, char in enumerate(text):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(char, 0)
        if char == ";" and depth <= 0 and text[i + 1:i + 2] == " ":
            return f"a clause joined by '; ' at {text[max(0, i - 20):i + 20]!r}"
    return None


def check(kind: str, message: str) -> None:
    """Fail, naming the rule, when a finding's message is not one sentence."""
    if why := breaks(message):
        raise AssertionError(f"rule {kind}: a finding's message must be one sentence, and this has {why}: "
                             f"{message!r} (the explanation belongs in the rule's `explanation`)")


def explained(finding) -> str:
    """What a finding says with its documentation: its message, then its rule's (or the day-2 guard kind's)
    explanation, which the one-sentence message leaves to the documentation it points at."""
    from aks_kueue.day2.guard import EXPLANATIONS
    from aks_kueue.judge.rules import RULES

    rule = RULES.get(finding.kind)
    return f"{finding.message} {rule.explanation if rule is not None else EXPLANATIONS.get(finding.kind, '')}"
