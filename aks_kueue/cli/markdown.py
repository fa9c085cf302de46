"""The preview as a pull-request comment, in the order a reviewer reads it: the verdict, the day-2
guard, the policy verdicts, the capacity table, the replay comparison when there is one, then the
resources folded in a `<details>` block.

The replay comparison comes from `aks-kueue replay`: given here (`markdown_summary(..., replay=)`), or
put in later where `REPLAY_SLOT` stands (`.github/scripts/offline-previews.sh` puts a stack's
`replay/<stack>.md` there when the run has one). The slot is an HTML comment: invisible when empty.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Optional, Sequence

from aks_kueue.cli.render import verdict_text
from aks_kueue.preview.outcome import UNGUARDED, Outcome

REPLAY_SLOT = "<!-- aks-kueue:replay -->"

_VERDICT_MARK = {"ok": "ok", "over": "**over**", "missing": "**missing**", "nowhere": "**nowhere**"}


def cell(text: Any) -> str:
    """A value that cannot break a Markdown table row."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", "").replace("\n", "<br>")


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "") -> list[str]:
    """A Markdown table, each value written with `cell`; `align` gives each column's alignment ("l" or "r",
    left where it stops). A None value is an empty cell written `| |`, an empty string one written `|  |`."""
    def line(values: Sequence[Any]) -> str:
        return "|" + "|".join(" " if v is None else f" {cell(v)} " for v in values) + "|"

    return [line(columns), "|" + "".join("---:|" if a == "r" else "---|" for a in align.ljust(len(columns), "l")),
            *map(line, rows)]


def code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def verdict_line(outcome: Outcome) -> str:
    text = verdict_text(outcome, ":x: refused by the day-2 guard: {}", ":x: rejected: {}",
                        ":white_check_mark: passes every mandatory policy")
    return f"## aks-kueue preview of stack {code(outcome.stack)}: {text}"


def day2_section(outcome: Outcome) -> list[str]:
    """The guard's refusals and notices; one line when the preview had no previous outputs."""
    lines: list[str] = []
    for note in outcome.previous_notes:
        lines += [f"> :warning: {cell(note.message)}; {cell(note.fix)}", ""]
    items = [("refused", f) for f in outcome.refusals]
    items += [("notice", f) for f in (outcome.run.day2_findings if outcome.run else []) if f.kind != UNGUARDED]
    if items:
        lines += ["### Day-2 guard", "", *table(("verdict", "object", "key to edit", "message", "fix"), [
            ("**refused**" if what == "refused" else "notice", f.object, code(f.key), f.message, f.fix)
            for what, f in items])]
    if any(f.kind == UNGUARDED for f in outcome.findings):
        lines.append("_Day-2 guard: unguarded here (no previous outputs), so a replacement, a deletion or an install "
                     "switch is not refused by this preview; `pulumi up` compares with the stack's last deployment._")
    return lines[:-1] if lines and lines[-1] == "" else lines


def resources_section(outcome: Outcome) -> list[str]:
    """The resources by type, folded: a reviewer opens them when the verdicts call for it."""
    registrations = outcome.run.registrations if outcome.run is not None else []
    counts = Counter(r.type for r in registrations)
    registered = "registered had the guard let it through" if outcome.refusals else "registered"
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ["<details><summary>Resources: " f"{len(registrations)} {registered}, {len(counts)} types</summary>", "",
            *table(("type", "count"), [(code(kind), n) for kind, n in ranked], "lr"), "", "</details>"]


def replay_section(replay: Optional[str]) -> list[str]:
    """The replay comparison, or the slot where the workflow puts it."""
    if replay is None:
        return [REPLAY_SLOT]
    return ["### Replay", "", replay.strip()]


def capacity_section(outcome: Outcome) -> list[str]:
    fleet = outcome.judgement.fleet_quota if outcome.judgement else None
    if fleet is not None:
        from aks_kueue.cli.render import fleet_quota_lines

        title, rows_of = fleet_quota_lines(fleet)
        return ["### Quota against the workers' (MultiKueue manager)", "", title, *(
            ["", *table(("resource", "manager (sum)", "workers (sum)", "manager / workers"), rows_of, "lrrr")]
            if rows_of else [])]
    lines = ["### Quota against capacity at the pools' maxCount", ""]
    rows = outcome.judgement.capacity if outcome.judgement else []
    if not rows:
        return lines + ["No ClusterQueue or Cohort sets a quota."]
    return lines + table(("flavor", "resource", "quota (sum)", "capacity", "headroom", "verdict"), [
        (row.flavor, row.resource, *row.shown().values(), _VERDICT_MARK.get(row.verdict, row.verdict)
         + (" (assumed placement)" if row.assumption else "") + (" (transformed units)" if row.transformation else ""))
        for row in rows], "llrrr")


def verdicts_section(outcome: Outcome) -> list[str]:
    """Each finding once, by level, mandatory first; alike reminders (the checks only Azure can answer)
    folded under one summary line."""
    from aks_kueue.cli.render import GROUPED, LEVEL_ORDER, verdict_groups

    lines = ["### Policy verdicts", ""]
    if not outcome.verdicts and not outcome.other_violations:
        return lines + ["Every policy of the pack passed."]

    def rows(items) -> list[str]:
        return table(("policy", "object", "key to edit", "message", "fix"), [
            (code(i.policy), None, None, i.message, None) if getattr(i, "finding", None) is None  # the runtime's own
            else (code(i.policy), i.finding.object, code(i.finding.key), i.finding.message, i.finding.fix)
            for i in items])

    groups = verdict_groups(outcome)
    for level in LEVEL_ORDER:
        ours = [g for g in groups if g.level == level]
        plain = [g.items[0] for g in ours if not g.grouped]
        lines += [f"**{level}** ({sum(len(g.items) for g in ours)})", ""] if ours else []
        lines += [*rows(plain), ""] if plain else []
        for items in (g.items for g in ours if g.grouped):
            f = items[0].finding
            lines += [f"<details><summary>{cell(f.object)}: {len(items)} {cell(GROUPED[f.kind])}</summary>", "",
                      *rows(items), "", "</details>", ""]
    return lines[:-1]


def markdown_summary(outcome: Outcome, replay: Optional[str] = None) -> str:
    """One stack's summary; several stacks' summaries can be joined into one comment. `replay`: the replay
    comparison in Markdown (`aks-kueue replay`), shown after the capacity table."""
    sections = [[verdict_line(outcome)], day2_section(outcome), verdicts_section(outcome), capacity_section(outcome),
                replay_section(replay), resources_section(outcome)]
    return "\n\n".join("\n".join(section) for section in sections if section) + "\n"
