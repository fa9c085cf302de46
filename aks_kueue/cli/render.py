"""The preview as the contract's JSON document, or as a tree for people."""

from __future__ import annotations

from typing import Any

import json

from aks_kueue.preview.run import ProgramRun


def preview_document(run: ProgramRun, violations: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "project": run.project,
        "stack": run.stack,
        "resources": [
            {"urn": r.urn, "type": r.type, "name": r.name, "parent": r.parent, "dependsOn": r.depends_on,
             "provider": r.provider, "inputs": r.inputs, "options": r.options}
            for r in run.registrations
        ],
        "violations": violations,
        "outputs": run.outputs,
    }


def _summary(resource) -> str:
    inputs = resource.inputs
    if resource.type.endswith(":AgentPool"):
        taints = ", ".join(inputs.get("nodeTaints") or []) or "no taints"
        return (f"{inputs.get('vmSize')}, {inputs.get('minCount')}..{inputs.get('maxCount')} nodes, {taints}")
    if resource.type.endswith(":ManagedCluster"):
        return f"Kubernetes {inputs.get('kubernetesVersion')}, tier {inputs.get('sku', {}).get('tier')}"
    if resource.type.endswith(":Extension"):
        return f"{inputs.get('extensionType')} {inputs.get('version') or inputs.get('releaseTrain')}"
    if resource.type.endswith(":Release"):
        return f"{inputs.get('chart')} {inputs.get('version')} in {inputs.get('namespace')}"
    return ""


def print_tree(run: ProgramRun, analysis=None, violations: list[dict[str, Any]] | None = None) -> None:
    """The resource tree, the stack outputs, the capacity table when there is an analysis,
    then the policy verdicts."""
    # rich is imported only for people: a --json preview never loads it.
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table
    from rich.tree import Tree

    console = Console()
    tree = Tree(f"[bold]{run.project}[/bold] / stack [bold]{run.stack}[/bold]")
    nodes = {}
    for resource in run.registrations:
        label = f"[cyan]{escape(resource.type)}[/cyan]  {escape(resource.name)}"
        detail = _summary(resource)
        if detail:
            label += f"  [dim]{escape(detail)}[/dim]"
        parent = nodes.get(resource.parent, tree)
        nodes[resource.urn] = parent.add(label)
    console.print(tree)
    console.print(f"{len(run.registrations)} resources would be created.")
    table = Table(title="Stack outputs", show_header=True)
    table.add_column("output")
    table.add_column("value")
    for key, value in sorted(run.outputs.items()):
        text = value if isinstance(value, str) else json.dumps(value, indent=1)
        table.add_row(escape(key), escape(text))
    console.print(table)
    if analysis is not None:
        from aks_kueue.feasibility.report import print_capacity

        print_capacity(console, analysis)
    fixes = [finding.fix for finding in analysis.findings] if analysis is not None else []
    print_verdicts(console, violations or [], fixes)


def print_verdicts(console, violations: list[dict[str, Any]], known_fixes: list[str]) -> None:
    """The pack's violations grouped by enforcement level, each with its fix hint."""
    from rich.markup import escape

    from aks_kueue.preview.verdicts import MANDATORY, by_level, resource_label, split_fix

    if not violations:
        console.print("[green]Policy verdicts: every policy passed.[/green]")
        return
    for level, group in by_level(violations).items():
        colour = "red" if level == MANDATORY else "yellow"
        console.print(f"[bold {colour}]Policy verdicts, {escape(level)}: {len(group)}[/bold {colour}]")
        for violation in group:
            text, fix = split_fix(violation["message"], known_fixes)
            console.print(f"  [{colour}]{escape(violation['policy'])}[/{colour}] "
                          f"({escape(resource_label(violation.get('urn')))}): {escape(text)}")
            if fix:
                console.print(f"      fix: {escape(fix)}")
