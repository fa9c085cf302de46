"""The preview for people, in the order a reviewer reads it: the verdict and every policy verdict, the
capacity table, then a compact resource tree and the stack outputs in brief.

What many findings say alike is said once: the checks only Azure can answer come under one heading
(each with its command), and the day-2 guard's "unguarded" notice is one short line in the header.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Optional

from aks_kueue.preview.outcome import UNGUARDED, Outcome

VERDICT_STYLE = {"ok": "green", "over": "bold red", "missing": "bold red", "nowhere": "bold red",
                 "not modelled": "dim"}
LEVEL_ORDER = ("mandatory", "advisory")
# Findings of these kinds share one heading; each item keeps its key, message and fix.
GROUPED = {"check-in-azure": "checks only Azure can answer: run each command against the subscription before the "
                             "first pulumi up"}
# Grouped kinds the text preview folds into one line ({n}: how many), and the flag of `preview` that unfolds them.
FOLDED = {"check-in-azure": "{n} checks only Azure can answer, to run against the subscription before the first "
                            "pulumi up; --show-azure-checks lists each with its az command"}
# Component resources: the tree's inner nodes. Everything else is grouped under its component by type.
COMPONENT_PREFIX = "aksKueue:"
# The record the day-2 guard reads back on the next update: for machines, shown with --show-outputs.
INTERNAL_OUTPUTS = {"day2": "the day-2 guard's record for the next update"}
OUTPUT_VALUE_WIDTH = 70


def _at(value, *path):
    """A field of the record's inputs; a secret part (`[secret]`) stands for everything below it."""
    for key in path:
        if not isinstance(value, dict):
            return value if isinstance(value, str) else None
        value = value.get(key)
    return value


def _summary(resource) -> str:
    inputs = resource.inputs
    if resource.type.endswith(":AgentPool"):
        taints = _at(inputs, "nodeTaints")
        taints = (", ".join(map(str, taints)) if isinstance(taints, list) else taints) or "no taints"
        return f"{_at(inputs, 'vmSize')}, {_at(inputs, 'minCount')}..{_at(inputs, 'maxCount')} nodes, {taints}"
    if resource.type.endswith(":ManagedCluster"):
        return f"Kubernetes {_at(inputs, 'kubernetesVersion')}, tier {_at(inputs, 'sku', 'tier')}"
    if resource.type.endswith(":Extension"):
        return f"{inputs.get('extensionType')} {inputs.get('version') or inputs.get('releaseTrain')}"
    if resource.type.endswith(":Release"):
        return f"{inputs.get('chart')} {inputs.get('version')} in {inputs.get('namespace')}"
    return ""


def print_outcome(outcome: Outcome, show_outputs: bool = False, console=None, unfold: bool = False) -> None:
    """Headline, verdicts, capacity, resources, outputs; `unfold` lists the folded groups item by item."""
    # rich is imported only for people: a --json preview never loads it.
    from rich.console import Console

    console = console or Console()
    print_headline(console, outcome)
    print_verdicts(console, outcome, unfold)
    print_capacity(console, outcome)
    print_resources(console, outcome)
    print_outputs(console, outcome, show_outputs)


def verdict_text(outcome: Outcome, refused: str = "REFUSED by the day-2 guard ({})", rejected: str = "REJECTED: {}",
                 passes: str = "passes every mandatory policy") -> str:
    """Refused by the guard, else rejected by a mandatory policy, else passing; then the advisory
    count. `refused` and `rejected` take the count in words ("2 changes", "1 mandatory violation")."""
    mandatory = sum(1 for v in outcome.violations if v.enforcement_level == "mandatory")
    advisory = len(outcome.violations) - mandatory
    if outcome.refusals:
        changes = len(outcome.refusals)
        text = refused.format(f"{changes} change{'s' if changes != 1 else ''}")
    elif mandatory:
        text = rejected.format(f"{mandatory} mandatory violation{'s' if mandatory != 1 else ''}")
    else:
        text = passes
    return text + (f", {advisory} advisory" if advisory else "")


def print_headline(console, outcome: Outcome) -> None:
    from rich.markup import escape

    headline = f"aks-kueue preview of stack {outcome.stack}: {verdict_text(outcome)}"  # what a reviewer reads first
    colour = "red" if outcome.exit_code else "green"
    console.print(f"[bold {colour}]{escape(headline)}[/bold {colour}]")
    registered = "registered had the guard let it through" if outcome.refusals else "registered"
    facts = [f"{len(outcome.run.registrations) if outcome.run else 0} resources would be {registered}"]
    if any(f.kind == UNGUARDED for f in outcome.findings):
        facts.append("unguarded: no --previous-outputs, so a replacement, a deletion or an install switch is not "
                     "refused here")
    console.print(escape("; ".join(facts)), highlight=False)
    console.print()


@dataclass
class _VerdictGroup:
    level: str
    policy: str
    heading: str
    items: list[Any] = field(default_factory=list)
    grouped: bool = False


def verdict_groups(outcome: Outcome) -> list[_VerdictGroup]:
    """The verdicts by level (mandatory first), alike findings under one heading, in the judge's order."""
    groups: list[_VerdictGroup] = []
    by_heading: dict[tuple, _VerdictGroup] = {}
    for verdict in outcome.verdicts:
        finding = verdict.finding
        if finding.kind in GROUPED:
            key = (verdict.level, verdict.policy, finding.kind, finding.object)
            if key not in by_heading:
                by_heading[key] = _VerdictGroup(verdict.level, verdict.policy,
                                                f"{finding.object}: {GROUPED[finding.kind]}", grouped=True)
                groups.append(by_heading[key])
            by_heading[key].items.append(verdict)
        else:
            groups.append(_VerdictGroup(verdict.level, verdict.policy, "", [verdict]))
    for violation in outcome.other_violations:
        groups.append(_VerdictGroup(violation.enforcement_level, violation.policy, "", [violation]))
    rank = {level: i for i, level in enumerate(LEVEL_ORDER)}
    return sorted(groups, key=lambda g: rank.get(g.level, len(LEVEL_ORDER)))


def print_verdicts(console, outcome: Outcome, unfold: bool = False) -> None:
    """The day-2 guard's refusals and notices, then each finding once, under its policy's level, with the
    key to edit and the fix; a group of FOLDED kinds is one line naming its flag unless `unfold`."""
    from rich.markup import escape

    def say(head: str, f, fix: str = "      fix: {}", why: str = "      why: {}") -> None:
        console.print(f"{head}{escape(f.key)}: {escape(f.message)}", highlight=False)
        if f.fix:
            console.print(fix.format(escape(f.fix)), highlight=False)
        if f.documentation:  # where its rule explains it: the one-sentence message leaves that out
            console.print(why.format(escape(f.documentation)), highlight=False)

    for note in outcome.previous_notes:
        console.print(f"[bold yellow]{escape(str(note))}[/bold yellow]")
    notices = [f for f in (outcome.run.day2_findings if outcome.run else []) if f.kind != UNGUARDED]
    for colour, title, items in (("red", f"refused ({len(outcome.refusals)})", outcome.refusals),
                                 ("yellow", f"{len(notices)} notice{'s' if len(notices) != 1 else ''}", notices)):
        if items:
            console.print(f"[bold {colour}]Day-2 guard: {title}[/bold {colour}]")
        for f in items:
            say(f"  [{colour}]{escape(f.object)}[/{colour}] ", f)
    groups = verdict_groups(outcome)
    if not groups:
        console.print("[green]Policy verdicts: every policy passed.[/green]")
        console.print()
        return
    counts = Counter(group.level for group in groups for _ in group.items)
    level = None
    for group in groups:
        colour = "red" if group.level == "mandatory" else "yellow"
        if group.level != level:
            level = group.level
            console.print(f"[bold {colour}]Policy verdicts, {escape(level)} ({counts[level]})[/bold {colour}]")
        if group.grouped:
            finding = group.items[0].finding
            if finding.kind in FOLDED and not unfold:
                folded = FOLDED[finding.kind].format(n=len(group.items))
                console.print(f"  [{colour}]{escape(group.policy)}[/{colour}] {escape(finding.object)}: "
                              f"{escape(folded)}", highlight=False)
                continue
            console.print(f"  [{colour}]{escape(group.policy)}[/{colour}] {escape(group.heading)} "
                          f"({len(group.items)})")
            for verdict in group.items:
                say("    ", verdict.finding, "      [dim]{}[/dim]", "      [dim]why: {}[/dim]")
            continue
        item = group.items[0]
        finding = getattr(item, "finding", None)
        if finding is None:
            console.print(f"  [{colour}]{escape(item.policy)}[/{colour}]: {escape(item.message)}", highlight=False)
            continue
        say(f"  [{colour}]{escape(item.policy)}[/{colour}] ({escape(finding.object)}) ", finding)
    console.print()


def print_capacity(console, outcome: Outcome) -> None:
    from rich.markup import escape
    from rich.table import Table

    rows = outcome.judgement.capacity if outcome.judgement else []
    fleet = outcome.judgement.fleet_quota if outcome.judgement else None
    if fleet is not None:
        print_fleet_quota(console, fleet)
        return
    if not rows:
        console.print("Quota against capacity: no ClusterQueue or Cohort sets a quota.")
        return
    table = Table(title="Quota against capacity at the pools' maxCount", show_header=True, title_justify="left")
    for column in ("flavor", "resource", "quota (sum)", "capacity", "headroom", "verdict"):
        table.add_column(column, justify="right" if column in ("quota (sum)", "capacity", "headroom") else "left",
                         no_wrap=True)
    for row in rows:
        style = VERDICT_STYLE.get(row.verdict, "")
        verdict = escape(row.verdict) + (" (assumed placement)" if row.assumption else "") \
            + (" (transformed units)" if row.transformation else "")
        table.add_row(escape(row.flavor), escape(row.resource), *row.shown().values(),
                      f"[{style}]{verdict}[/{style}]" if style else verdict)
    console.print(table)
    console.print()


def fleet_quota_lines(rows) -> tuple[str, list[tuple[str, str, str, str]]]:
    """A MultiKueue manager's quota against its workers': the title and (resource, manager, workers, ratio)
    rows, in the words the text and the Markdown previews share."""
    from aks_kueue.judge.finding import show

    if not rows:
        return "MultiKueue manager: its ClusterQueues set no quota.", []
    read, listed = rows[0].workers_read, rows[0].workers_listed
    title = (f"Manager quota against its {read} of {listed} workers' (a MultiKueue manager runs no jobs: its quota is "
             "backed by the workers', kueue-multikueue-fleet)" if read else
             f"Manager quota (a MultiKueue manager runs no jobs; none of its {listed} workers' outputs were read, so "
             "nothing backs it here: give them with --stack-outputs)")
    return title, [(row.resource, show(row.resource, row.manager),
                     show(row.resource, row.workers) if read else "not read",
                     f"{float(row.ratio):.2f}x" if row.ratio is not None else ("none" if read else "-"))
                    for row in rows]


def print_fleet_quota(console, rows) -> None:
    from rich.markup import escape
    from rich.table import Table

    title, lines = fleet_quota_lines(rows)
    if not lines:
        console.print(escape(title))
        console.print()
        return
    table = Table(title=escape(title), show_header=True, title_justify="left")
    for column in ("resource", "manager (sum)", "workers (sum)", "manager / workers"):
        table.add_column(column, justify="left" if column == "resource" else "right", no_wrap=True)
    for line in lines:
        table.add_row(*map(escape, line))
    console.print(table)
    console.print()


def short_type(type_token: str) -> str:
    """`azure-native:containerservice:AgentPool` -> AgentPool; `pulumi:providers:kubernetes` -> kubernetes provider."""
    if type_token.startswith("pulumi:providers:"):
        return f"{type_token.rsplit(':', 1)[-1]} provider"
    return type_token.rsplit(":", 1)[-1]


def _short_name(name: str, parent: Optional[str], kind: str) -> str:
    """A child's name without its component's prefix and its kind: `queues-resourceflavor-a100` -> a100."""
    if parent and name.startswith(f"{parent}-"):
        name = name[len(parent) + 1:]
    lowered = kind.lower()
    if name.lower().startswith(f"{lowered}-"):
        name = name[len(lowered) + 1:]
    return name or kind


def print_resources(console, outcome: Outcome) -> None:
    """Components as a tree; under each, its resources by type, one line per type (a pool, the cluster, an
    install, a chart each on its own line with what it is)."""
    from rich.markup import escape
    from rich.tree import Tree

    run = outcome.run
    if run is None:
        return  # the program did not run: nothing was registered
    counts = Counter(short_type(r.type) for r in run.registrations)
    tree = Tree(f"[bold]Resources[/bold] ({len(run.registrations)}, {len(counts)} types)")
    by_urn = {r.urn: r for r in run.registrations}
    nodes: dict[Optional[str], Any] = {}
    leaves: dict[Optional[str], dict[str, list]] = defaultdict(lambda: defaultdict(list))

    def node(urn: Optional[str]):
        if urn not in by_urn or not by_urn[urn].type.startswith(COMPONENT_PREFIX):
            return tree
        if urn not in nodes:
            component = by_urn[urn]
            nodes[urn] = node(component.parent).add(
                f"[cyan]{escape(short_type(component.type))}[/cyan] {escape(component.name)}")
        return nodes[urn]

    for resource in run.registrations:
        if resource.type.startswith(COMPONENT_PREFIX):
            node(resource.urn)
        elif resource.type != "pulumi:pulumi:Stack":
            parent = resource.parent if resource.parent in by_urn else None
            leaves[parent][short_type(resource.type)].append(resource)
    for parent, kinds in leaves.items():
        at = node(parent)
        parent_name = by_urn[parent].name if parent in by_urn else None
        for kind, resources in kinds.items():
            detailed = [(r, _summary(r)) for r in resources]
            names = [_short_name(r.name, parent_name, kind) for r in resources]
            if any(detail for _, detail in detailed):
                for (r, detail), name in zip(detailed, names):
                    at.add(f"{escape(kind)} {escape(name)}" + (f"  [dim]{escape(detail)}[/dim]" if detail else ""))
            else:
                count = f" ×{len(resources)}" if len(resources) > 1 else ""
                at.add(f"{escape(kind)}{count}: {escape(', '.join(names))}")
    console.print(tree)
    console.print()


def output_summary(value: Any, width: int = OUTPUT_VALUE_WIDTH) -> str:
    """A stack output in one line: a value as it is, a map by its keys, a list by its length."""
    if isinstance(value, dict):
        text = f"{{{', '.join(map(str, value))}}}"
    elif isinstance(value, list):
        text = f"[{len(value)} item{'s' if len(value) != 1 else ''}]"
    else:
        text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def print_outputs(console, outcome: Outcome, show_outputs: bool = False) -> None:
    """The stack outputs in brief, the day-2 record named but not shown; in full with --show-outputs."""
    from rich.markup import escape
    from rich.table import Table

    if outcome.run is None:
        return  # the program did not run: it has no outputs
    outputs = outcome.run.outputs
    if show_outputs:
        table = Table(title="Stack outputs", show_header=True, title_justify="left")
        table.add_column("output", no_wrap=True)
        table.add_column("value")
        for key, value in sorted(outputs.items()):
            table.add_row(escape(key), escape(value if isinstance(value, str) else json.dumps(value, indent=1)))
        console.print(table)
        return
    table = Table(title="Stack outputs (in full: --show-outputs)", show_header=False, title_justify="left", box=None)
    table.add_column("output", no_wrap=True, style="cyan", min_width=max(map(len, outputs), default=0))
    table.add_column("value", overflow="ellipsis", no_wrap=True)
    for key, value in sorted(outputs.items()):
        shown = f"({INTERNAL_OUTPUTS[key]})" if key in INTERNAL_OUTPUTS else output_summary(value)
        table.add_row(escape(key), escape(shown))
    console.print(table)


def lines(outcome: Outcome, width: int = 100, show_outputs: bool = False, unfold: bool = False) -> list[str]:
    """The text preview as plain lines at `width` columns (for tests and the README's figures)."""
    from io import StringIO

    from rich.console import Console

    buffer = StringIO()
    print_outcome(outcome, show_outputs, Console(file=buffer, width=width, color_system=None, legacy_windows=False),
                  unfold)
    return buffer.getvalue().splitlines()
