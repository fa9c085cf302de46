"""`aks-kueue preview` and `aks-kueue report`: the program run offline, its capacity and the pack's verdicts."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Optional

import typer

from aks_kueue.cli import app
from aks_kueue.cli.common import CONFIG_OPTION, STACK_OPTION, fail, load_stack_config

FORMATS = ("text", "json", "markdown")
POLICY_CONFIG_OPTION = typer.Option(
    None, "--policy-config", help="Policy pack config: the JSON of `pulumi preview --policy-pack-config`.")
PREVIOUS_OUTPUTS_OPTION = typer.Option(
    None, "--previous-outputs", help="The stack's last deployment: what `pulumi stack output --json` prints. "
    "The day-2 guard compares this update with it.")




def _evaluate_stack(stack: Optional[str], config: Optional[Path], policy_config: Optional[Path], command: str,
                    previous_outputs: Optional[Path] = None):
    """Record the program's resources, analyse capacity, and run the policy pack over the record."""
    from aks_kueue.feasibility.adapter import analyse_config
    from aks_kueue.preview.run import ProgramError, ProgramRefused, read_previous_outputs, run_program
    from aks_kueue.preview.stackfile import StackFileError
    from aks_kueue.preview.verdicts import PolicyConfigError, evaluate_policies, load_policy_config

    try:
        # The policy config is checked first: a typo there should not wait for the program.
        pack_config = load_policy_config(policy_config) if policy_config is not None else None
        previous = read_previous_outputs(previous_outputs) if previous_outputs is not None else None
        stack_config, root = load_stack_config(stack, config, command)
        run = run_program(stack_config, root, previous_outputs=previous)
        # The program has already accepted these settings, so this parse cannot fail on them.
        analysis = analyse_config(stack_config.config, root)
        violations = evaluate_policies(run, pack_config)
    except ProgramRefused as error:
        fail(f"{command}: {error}", 1)
    except (StackFileError, ProgramError, PolicyConfigError) as error:
        fail(str(error))
    except typer.Exit:
        raise
    except Exception as error:  # a bug, not bad input: say so briefly
        if os.environ.get("AKS_KUEUE_DEBUG"):
            raise
        fail(f"{command}: internal error: {type(error).__name__}: {error} (set AKS_KUEUE_DEBUG=1 for details)")
    for warning in run.warnings:
        typer.echo(f"warning: {warning}", err=True)
    return run, analysis, violations


@app.command()
def preview(
    stack: Optional[str] = STACK_OPTION,
    config: Optional[Path] = CONFIG_OPTION,
    policy_config: Optional[Path] = POLICY_CONFIG_OPTION,
    previous_outputs: Optional[Path] = PREVIOUS_OUTPUTS_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output_format: Optional[str] = typer.Option(
        None, "--format", help="text (a tree and tables), json (one document) or markdown (a PR comment)."),
) -> None:
    """Show what `pulumi up` would create for a stack, with no cloud and no credentials.

    Then the capacity table and the verdicts of every policy of the pack; a mandatory violation exits 1.
    """
    if output_format is not None and output_format not in FORMATS:
        fail(f"preview: --format must be one of {', '.join(FORMATS)}, not {output_format!r}")
    if as_json and output_format not in (None, "json"):
        fail(f"preview: --json means --format json; it cannot go with --format {output_format}")
    chosen = "json" if as_json else output_format or "text"
    run, analysis, violations = _evaluate_stack(stack, config, policy_config, "preview", previous_outputs)
    if chosen == "json":
        from aks_kueue.feasibility.report import capacity_json, findings_json
        from aks_kueue.cli.render import preview_document

        document = {**preview_document(run, violations), "capacity": capacity_json(analysis),
                    "findings": findings_json(analysis) + run.day2_findings}
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    elif chosen == "markdown":
        from aks_kueue.cli.markdown import markdown_summary

        sys.stdout.write(markdown_summary(run, analysis, violations))
    else:
        from aks_kueue.cli.render import print_tree

        print_tree(run, analysis, violations)
    _exit_on_verdict(violations)


def _exit_on_verdict(violations) -> None:
    """Exit 1 on a mandatory violation. Feasibility errors reach this through the pack's
    policies (mandatory by default), so a policy config that lowers them decides too."""
    from aks_kueue.preview.verdicts import rejected

    if rejected(violations):
        raise typer.Exit(1)


@app.command()
def report(
    out: Path = typer.Option(..., "--out", help="Directory for capacity.png and summary.md (created if missing)."),
    stack: Optional[str] = STACK_OPTION,
    config: Optional[Path] = CONFIG_OPTION,
    policy_config: Optional[Path] = POLICY_CONFIG_OPTION,
) -> None:
    """Write a chart of quota against capacity (capacity.png) and the PR summary (summary.md).

    Exits 1 after writing both when a policy violation is mandatory, as preview does.
    """
    if out.exists() and not out.is_dir():
        fail(f"report: {out} exists and is not a directory")
    run, analysis, violations = _evaluate_stack(stack, config, policy_config, "report")
    from aks_kueue.cli.chart import draw_capacity_chart
    from aks_kueue.cli.markdown import markdown_summary

    try:
        out.mkdir(parents=True, exist_ok=True)
        chart = draw_capacity_chart(run.stack, analysis.capacity, out / "capacity.png")
        summary = out / "summary.md"
        summary.write_text(markdown_summary(run, analysis, violations), encoding="utf-8")
    except OSError as error:
        fail(f"report: cannot write to {out}: {error.strerror or error}")
    typer.echo(f"wrote {chart} and {summary}")
    _exit_on_verdict(violations)


