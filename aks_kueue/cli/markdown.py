"""The preview as a pull-request comment: verdict, resources by type, capacity, verdicts."""

from __future__ import annotations

from collections import Counter
from typing import Any

from aks_kueue.preview.outcome import Outcome

_VERDICT_MARK = {"ok": "ok", "over": "**over**", "missing": "**missing**", "nowhere": "**nowhere**"}


def cell(text: Any) -> str:
    """A value that cannot break a Markdown table row."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def verdict_line(outcome: Outcome) -> str:
    counts = Counter(v.enforcement_level for v in outcome.violations)
    mandatory = counts.get("mandatory", 0)
    advisory = sum(counts.values()) - mandatory
    if mandatory:
        verdict = f":x: rejected: {mandatory} mandatory violation{'s' if mandatory != 1 else ''}"
    else:
        verdict = ":white_check_mark: passes every mandatory policy"
    if advisory:
        verdict += f", {advisory} advisory"
    return f"## aks-kueue preview of stack {code(outcome.stack)}: {verdict}"


def resources_section(outcome: Outcome) -> list[str]:
    registrations = outcome.run.registrations
    counts = Counter(r.type for r in registrations)
    lines = [f"### Resources ({len(registrations)})", "", "| type | count |", "|---|---:|"]
    lines += [f"| {cell(code(kind))} | {n} |" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return lines


def capacity_section(outcome: Outcome) -> list[str]:
    lines = ["### Quota against capacity at the pools' maxCount", ""]
    rows = outcome.judgement.capacity if outcome.judgement else []
    if not rows:
        return lines + ["No ClusterQueue or Cohort sets a quota."]
    lines += ["| flavor | resource | quota (sum) | capacity | headroom | verdict |", "|---|---|---:|---:|---:|---|"]
    for row in rows:
        shown = row.shown()
        verdict = (_VERDICT_MARK.get(row.verdict, cell(row.verdict))
                   + (" (assumed placement)" if row.assumption else "")
                   + (" (transformed units)" if row.transformation else ""))
        lines.append(f"| {cell(row.flavor)} | {cell(row.resource)} | {cell(shown['quota'])} | "
                     f"{cell(shown['capacity'])} | {cell(shown['headroom'])} | {verdict} |")
    return lines


def verdicts_section(outcome: Outcome) -> list[str]:
    lines = ["### Policy verdicts", ""]
    if not outcome.verdicts and not outcome.other_violations:
        return lines + ["Every policy of the pack passed."]
    for level in ("mandatory", "advisory"):
        group = [v for v in outcome.verdicts if v.level == level]
        others = [v for v in outcome.other_violations if v.enforcement_level == level]
        if not group and not others:
            continue
        lines += [f"**{level}** ({len(group) + len(others)})", "",
                  "| policy | object | key to edit | message | fix |", "|---|---|---|---|---|"]
        for verdict in group:
            f = verdict.finding
            lines.append(f"| {cell(code(verdict.policy))} | {cell(f.object)} | {cell(code(f.key))} | "
                         f"{cell(f.message)} | {cell(f.fix)} |")
        for violation in others:
            lines.append(f"| {cell(code(violation.policy))} | | | {cell(violation.message)} | |")
        lines.append("")
    return lines[:-1]


def markdown_summary(outcome: Outcome) -> str:
    """One stack's summary; several stacks' summaries can be joined into one comment."""
    sections = [[verdict_line(outcome)], resources_section(outcome), capacity_section(outcome),
                verdicts_section(outcome)]
    return "\n\n".join("\n".join(section) for section in sections) + "\n"
