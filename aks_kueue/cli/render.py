"""The preview for people: the resource tree, the stack outputs, the capacity table, the verdicts."""

from __future__ import annotations

import json
from collections import defaultdict

from aks_kueue.preview.outcome import Outcome

VERDICT_STYLE = {"ok": "green", "over": "bold red", "missing": "bold red", "nowhere": "bold red",
                 "not modelled": "dim"}
LEVEL_ORDER = ("mandatory", "advisory")


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


def print_outcome(outcome: Outcome) -> None:
    """The resource tree, the stack outputs, the capacity table, then every verdict once."""
    # rich is imported only for people: a --json preview never loads it.
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
    from rich.tree import Tree

    run = outcome.run
    console = Console()
    tree = Tree(f"[bold]{run.project}[/bold] / stack [bold]{run.stack}[/bold]")
    nodes = {}
    for resource in run.registrations:
        label = f"[cyan]{escape(resource.type)}[/cyan]  {escape(resource.name)}"
        detail = _summary(resource)
        if detail:
            label += f"  [dim]{escape(detail)}[/dim]"
        nodes[resource.urn] = nodes.get(resource.parent, tree).add(label)
    console.print(tree)
    console.print(f"{len(run.registrations)} resources would be created.")
    table = Table(title="Stack outputs", show_header=True)
    table.add_column("output")
    table.add_column("value")
    for key, value in sorted(run.outputs.items()):
        table.add_row(escape(key), escape(value if isinstance(value, str) else json.dumps(value, indent=1)))
    console.print(table)
    print_capacity(console, outcome)
    print_verdicts(console, outcome)


def print_capacity(console, outcome: Outcome) -> None:
    from rich.markup import escape
    from rich.table import Table

    rows = outcome.judgement.capacity if outcome.judgement else []
    table = Table(title="Quota against capacity at the pools' maxCount", show_header=True)
    for column in ("flavor", "resource", "quota (sum)", "capacity", "headroom", "verdict"):
        table.add_column(column, justify="right" if column in ("quota (sum)", "capacity", "headroom") else "left")
    for row in rows:
        shown = row.shown()
        style = VERDICT_STYLE.get(row.verdict, "")
        verdict = escape(row.verdict) + (" (assumed placement)" if row.assumption else "")
        table.add_row(escape(row.flavor), escape(row.resource), shown["quota"], shown["capacity"], shown["headroom"],
                      f"[{style}]{verdict}[/{style}]" if style else verdict)
    console.print(table)


def print_verdicts(console, outcome: Outcome) -> None:
    """Each finding once, under its policy's level, with the key to edit and the fix."""
    from rich.markup import escape

    if not outcome.verdicts and not outcome.other_violations:
        console.print("[green]Policy verdicts: every policy passed.[/green]")
        return
    groups = defaultdict(list)
    for verdict in outcome.verdicts:
        groups[verdict.level].append(verdict)
    for violation in outcome.other_violations:
        groups[violation.enforcement_level].append(violation)
    for level in sorted(groups, key=lambda lv: LEVEL_ORDER.index(lv) if lv in LEVEL_ORDER else len(LEVEL_ORDER)):
        group = groups[level]
        colour = "red" if level == "mandatory" else "yellow"
        console.print(f"[bold {colour}]Policy verdicts, {escape(level)}: {len(group)}[/bold {colour}]")
        for item in group:
            finding = getattr(item, "finding", None)
            if finding is None:
                console.print(f"  [{colour}]{escape(item.policy)}[/{colour}]: {escape(item.message)}")
                continue
            console.print(f"  [{colour}]{escape(item.policy)}[/{colour}] ({escape(finding.object)}) "
                          f"{escape(finding.key)}: {escape(finding.message)}")
            if finding.fix:
                console.print(f"      fix: {escape(finding.fix)}")
