"""`aks-kueue preview` and `aks-kueue report`: the program run offline, its capacity and the verdicts."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Optional

import typer

from aks_kueue.cli.app import app
from aks_kueue.cli.common import CONFIG_OPTION, STACK_OPTION, fail, load_stack_config, stack_name

FORMATS = ("text", "json", "markdown")
POLICY_CONFIG_OPTION = typer.Option(
    None, "--policy-config", help="Policy pack config: the JSON of `pulumi preview --policy-pack-config`.")
PREVIOUS_OUTPUTS_OPTION = typer.Option(
    None, "--previous-outputs", help="The stack's last deployment: what `pulumi stack output --json` prints. "
    "The day-2 guard compares this update with it.")
STACK_OUTPUTS_OPTION = typer.Option(
    [], "--stack-outputs", metavar="STACK=FILE", help="Another stack's last outputs (what `pulumi stack output "
    "--json` prints for it), for the StackReferences of a fleet (aks-kueue:fleet); STACK as the fleet key writes "
    "it. Repeatable.")


def stack_outputs_files(values: list[str], command: str) -> dict[str, Path]:
    """--stack-outputs STACK=FILE, each stack once; a malformed flag exits 2."""
    found: dict[str, Path] = {}
    for value in values:
        stack, sep, file = value.partition("=")
        if not sep or not stack or not file:
            fail(f"{command}: --stack-outputs takes STACK=FILE (org/project/stack=outputs.json), not {value!r}")
        if stack in found:
            fail(f"{command}: --stack-outputs names {stack} twice; give each stack's outputs once")
        found[stack] = Path(file)
    return found


def _outcome(stack: Optional[str], config: Optional[Path], policy_config: Optional[Path], command: str,
             previous_outputs: Optional[Path] = None, stack_outputs: Optional[dict[str, Path]] = None):
    """The preview's outcome; a stack file that cannot be used is an invalid outcome, not an exit here,
    so that --json still prints its document."""
    from aks_kueue.preview.outcome import preview
    from aks_kueue.preview.stackfile import StackFileError, project_root

    try:
        try:
            stack_config, root = load_stack_config(stack, config, command)
        except StackFileError as error:
            return preview(None, project_root(), load_error=str(error), stack=stack_name(stack, config))
        return preview(stack_config, root, policy_config, previous_outputs=previous_outputs,
                       stack_outputs=stack_outputs)
    except Exception as error:  # a bug, not bad input: say so briefly
        if os.environ.get("AKS_KUEUE_DEBUG"):
            raise
        fail(f"{command}: aks-kueue failed unexpectedly ({type(error).__name__}: {error}); this is a bug, please "
             "report it (AKS_KUEUE_DEBUG=1 shows where)")


@app.command()
def preview(
    stack: Optional[str] = STACK_OPTION,
    config: Optional[Path] = CONFIG_OPTION,
    policy_config: Optional[Path] = POLICY_CONFIG_OPTION,
    previous_outputs: Optional[Path] = PREVIOUS_OUTPUTS_OPTION,
    stack_outputs: list[str] = STACK_OUTPUTS_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output_format: Optional[str] = typer.Option(
        None, "--format", help="text (a tree and tables), json (one document) or markdown (a PR comment)."),
) -> None:
    """Show what `pulumi up` would create for a stack, with no cloud and no credentials.

    Then the capacity table and the verdicts of every policy of the pack; a mandatory violation exits 1,
    a stack that cannot be used exits 2.
    """
    if output_format is not None and output_format not in FORMATS:
        fail(f"preview: --format must be one of {', '.join(FORMATS)}, not {output_format!r}")
    if as_json and output_format not in (None, "json"):
        fail(f"preview: --json means --format json; it cannot go with --format {output_format}")
    chosen = "json" if as_json else output_format or "text"
    outcome = _outcome(stack, config, policy_config, "preview", previous_outputs,
                       stack_outputs_files(stack_outputs, "preview"))
    _errors(outcome)
    if chosen == "json":
        from aks_kueue.preview.outcome import document

        sys.stdout.write(json.dumps(document(outcome), indent=2) + "\n")
    elif outcome.run is None:
        pass  # nothing to show beyond the errors
    elif chosen == "markdown":
        from aks_kueue.cli.markdown import markdown_summary

        sys.stdout.write(markdown_summary(outcome))
    else:
        from aks_kueue.cli.render import print_outcome

        print_outcome(outcome)
    raise typer.Exit(outcome.exit_code)


def _errors(outcome) -> None:
    """On stderr: why a stack cannot be used (one sentence, or the program's reasons one a line), and
    what the program itself logged as a warning, as `pulumi up` shows it."""
    for error in outcome.errors:
        typer.echo(error, err=True)
    if outcome.refusals:
        typer.echo("the day-2 guard refused this update:", err=True)
    for refusal in outcome.refusals:
        typer.echo(str(refusal), err=True)
    for warning in outcome.run.warnings if outcome.run else ():
        typer.echo(f"warning: {warning}", err=True)


@app.command()
def report(
    out: Path = typer.Option(..., "--out", help="Directory for capacity.png and summary.md (created if missing)."),
    stack: Optional[str] = STACK_OPTION,
    config: Optional[Path] = CONFIG_OPTION,
    policy_config: Optional[Path] = POLICY_CONFIG_OPTION,
    stack_outputs: list[str] = STACK_OUTPUTS_OPTION,
) -> None:
    """Write a chart of quota against capacity (capacity.png) and the PR summary (summary.md).

    Exits 1 after writing both when a policy violation is mandatory, as preview does.
    """
    if out.exists() and not out.is_dir():
        fail(f"report: {out} exists and is not a directory")
    outcome = _outcome(stack, config, policy_config, "report", stack_outputs=stack_outputs_files(stack_outputs,
                                                                                                "report"))
    _errors(outcome)
    if outcome.run is None:
        raise typer.Exit(outcome.exit_code)
    from aks_kueue.cli.chart import draw_capacity_chart
    from aks_kueue.cli.markdown import markdown_summary

    try:
        out.mkdir(parents=True, exist_ok=True)
        chart = draw_capacity_chart(outcome.stack, outcome.judgement.capacity, out / "capacity.png")
        summary = out / "summary.md"
        summary.write_text(markdown_summary(outcome), encoding="utf-8")
    except OSError as error:
        fail(f"report: cannot write to {out}: {error.strerror or error}")
    typer.echo(f"wrote {chart} and {summary}")
    raise typer.Exit(outcome.exit_code)
