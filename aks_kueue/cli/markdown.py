"""The preview as a pull-request comment: verdict, resources by type, capacity, violations."""

from __future__ import annotations

from collections import Counter
from typing import Any

from aks_kueue.preview.verdicts import MANDATORY, by_level, rejected, resource_label, split_fix

_VERDICT_MARK = {"ok": "ok", "over": "**over**", "missing": "**missing**", "nowhere": "**nowhere**"}


def cell(text: Any) -> str:
    """A value that cannot break a Markdown table row."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def verdict_line(stack: str, violations: list[dict[str, Any]]) -> str:
    counts = Counter(v["enforcementLevel"] for v in violations)
    mandatory, advisory = counts.get(MANDATORY, 0), sum(counts.values()) - counts.get(MANDATORY, 0)
    if rejected(violations):
        verdict = f":x: rejected: {mandatory} mandatory violation{'s' if mandatory != 1 else ''}"
    else:
        verdict = ":white_check_mark: passes every mandatory policy"
    if advisory:
        verdict += f", {advisory} advisory"
    return f"## aks-kueue preview of stack {code(stack)}: {verdict}"


def resources_section(run) -> list[str]:
    counts = Counter(r.type for r in run.registrations)
    lines = [f"### Resources ({len(run.registrations)})", "", "| type | count |", "|---|---:|"]
    lines += [f"| {cell(code(kind))} | {n} |" for kind, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return lines


def capacity_section(analysis) -> list[str]:
    lines = ["### Quota against capacity at the pools' maxCount", ""]
    if analysis is None or not analysis.capacity:
        return lines + ["No ClusterQueue or Cohort sets a quota."]
    lines += ["| flavor | resource | quota (sum) | capacity | headroom | verdict |", "|---|---|---:|---:|---:|---|"]
    for row in analysis.capacity:
        data = row.to_json()
        lines.append(f"| {cell(row.flavor)} | {cell(row.resource)} | {cell(data['quota'])} | "
                     f"{cell(data['capacity'] or '-')} | {cell(data['headroom'] or '-')} | "
                     f"{_VERDICT_MARK.get(row.verdict, cell(row.verdict))} |")
    return lines


def violations_section(violations: list[dict[str, Any]], known_fixes: list[str]) -> list[str]:
    lines = ["### Policy violations", ""]
    if not violations:
        return lines + ["Every policy of the pack passed."]
    for level, group in by_level(violations).items():
        lines += [f"**{cell(level)}** ({len(group)})", "", "| policy | resource | message | fix |", "|---|---|---|---|"]
        for violation in group:
            text, fix = split_fix(violation["message"], known_fixes)
            lines.append(f"| {cell(code(violation['policy']))} | {cell(resource_label(violation.get('urn')))} | "
                         f"{cell(text)} | {cell(fix or '')} |")
        lines.append("")
    return lines[:-1]


def markdown_summary(run, analysis, violations: list[dict[str, Any]]) -> str:
    """One stack's summary; several stacks' summaries can be joined into one comment."""
    fixes = [finding.fix for finding in analysis.findings] if analysis is not None else []
    sections = [[verdict_line(run.stack, violations)], resources_section(run), capacity_section(analysis),
                violations_section(violations, fixes)]
    return "\n\n".join("\n".join(section) for section in sections) + "\n"
