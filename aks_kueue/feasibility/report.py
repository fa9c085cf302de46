"""The analysis for people (a rich table) and for tools (the preview's JSON keys)."""

from __future__ import annotations

from typing import Any

from aks_kueue.feasibility.analysis import Analysis
from aks_kueue.feasibility.findings import ERROR

VERDICT_STYLE = {"ok": "green", "over": "bold red", "missing": "bold red", "nowhere": "bold red",
                 "not modelled": "dim"}


def capacity_json(analysis: Analysis) -> dict[str, Any]:
    """Per flavor and resource, plus per pool the node figures and how each was derived."""
    return {
        "flavors": [row.to_json() for row in analysis.capacity],
        "pools": [{"name": pool.name, "vmSize": pool.spec.vm_size, "maxCount": pool.spec.max_count,
                   "perNode": dict(pool.node.amounts), "explanation": list(pool.node.explanation)}
                  for pool in analysis.pools],
        "units": "perNode amounts are Kueue's: cpu in millicores, memory in bytes, others counts",
    }


def findings_json(analysis: Analysis) -> list[dict[str, Any]]:
    return [finding.to_json() for finding in analysis.findings]


def infeasible(analysis: Analysis) -> bool:
    return any(finding.severity == ERROR for finding in analysis.findings)


def print_capacity(console, analysis: Analysis) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="Quota against capacity at the pools' maxCount", show_header=True)
    for column in ("flavor", "resource", "quota (sum)", "capacity", "headroom", "verdict"):
        table.add_column(column, justify="right" if column in ("quota (sum)", "capacity", "headroom") else "left")
    for row in analysis.capacity:
        data = row.to_json()
        style = VERDICT_STYLE.get(row.verdict, "")
        table.add_row(escape(row.flavor), escape(row.resource), data["quota"], data["capacity"] or "-",
                      data["headroom"] or "-", f"[{style}]{escape(row.verdict)}[/{style}]" if style else row.verdict)
    console.print(table)
    if not analysis.findings:
        console.print("Feasibility: no findings.")
        return
    console.print(f"Feasibility: {len(analysis.findings)} finding(s).")
    for finding in analysis.findings:
        colour = "red" if finding.severity == ERROR else "yellow"
        console.print(f"[{colour}]{finding.severity}[/{colour}] {escape(finding.field)}: "
                      f"{escape(finding.message)}\n    fix: {escape(finding.fix)}")
