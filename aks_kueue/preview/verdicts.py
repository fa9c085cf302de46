"""The policy pack's verdicts on a recorded preview: its config file, the run, the exit rule.

The policies themselves live in `aks_kueue.policies`; this module only feeds them the
record and reads their answers, so the offline preview and `pulumi preview --policy-pack
policy` reach the same verdicts.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

MANDATORY = "mandatory"
ADVISORY = "advisory"

Violation = dict[str, Any]


class PolicyConfigError(Exception):
    """The --policy-config file cannot be used; the message is a sentence for the user."""


def load_policy_config(path: Path) -> dict[str, Any]:
    """The JSON of `pulumi preview --policy-pack-config`, checked by the pack itself."""
    from aks_kueue.k8s.loader import LoadError, loads_json, read_text

    try:
        # Bounded like every file the program reads: size, nesting, duplicated keys.
        config = loads_json(read_text(path, what="the policy config (JSON)"), str(path))
    except LoadError as error:
        raise PolicyConfigError(f"{error.source}: cannot read the policy config: {error.reason}") from None
    from aks_kueue.policies import policy_config_error

    problem = policy_config_error(config)
    if problem:
        raise PolicyConfigError(f"{path}: {problem}")
    return config


def evaluate_policies(run, config: dict[str, Any] | None) -> list[Violation]:
    """Every policy of the pack over the recorded resources, mandatory ones first."""
    # Imported on use: the pack pulls in the capacity model and the admission core.
    from aks_kueue.policies import evaluate

    violations = list(evaluate(run, config))
    return sorted(violations, key=lambda v: (v["enforcementLevel"] != MANDATORY, v["policy"]))


def rejected(violations: Iterable[Violation]) -> bool:
    """The contract's exit rule: any mandatory violation rejects the stack (exit 1)."""
    return any(v["enforcementLevel"] == MANDATORY for v in violations)


# "...; fix: raise maxCount", "... Fix: raise maxCount", or the hint on its own line.
_FIX_MARKER = re.compile(r"(?:^|[;.]\s+|\n\s*)(?:fix|hint|to fix)\s*:\s*", re.IGNORECASE)


def split_fix(message: str, known_fixes: Iterable[str] = ()) -> tuple[str, str | None]:
    """A violation's message and its fix hint, when the message carries one.

    A hint is either marked ("fix: ...") or is the fix of a feasibility finding that
    ends the message (the pack words its feasibility violations from those findings).
    """
    match = _FIX_MARKER.search(message)
    if match:
        text, fix = message[:match.start()].rstrip(" ;."), message[match.end():].strip()
        if text and fix:
            return text, fix
    ending = message.rstrip(" .")
    for fix in sorted((f.rstrip(" .") for f in known_fixes if f), key=len, reverse=True):
        text = ending[:-len(fix)].rstrip(" ;.,\n") if fix and ending.endswith(fix) else ""
        if text:
            return text, fix
    return message, None


def by_level(violations: Iterable[Violation]) -> dict[str, list[Violation]]:
    """Violations grouped by enforcement level, mandatory first; empty levels left out."""
    groups: dict[str, list[Violation]] = {}
    for violation in sorted(violations, key=lambda v: v["enforcementLevel"] != MANDATORY):
        groups.setdefault(violation["enforcementLevel"], []).append(violation)
    return groups


def resource_label(urn: str | None) -> str:
    """`Kind name` from a URN (`ClusterQueue queues-cq-team-a`), short enough for a table;
    the stack when there is no URN."""
    if not urn:
        return "the stack"
    parts = urn.split("::")
    if len(parts) < 4:
        return urn
    return f"{parts[-2].rsplit('$', 1)[-1].rsplit(':', 1)[-1]} {parts[-1]}"
