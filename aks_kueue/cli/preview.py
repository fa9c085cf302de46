"""`aks-kueue preview` and `aks-kueue report`: the program run offline, its capacity and the verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import typer

from aks_kueue.cli.app import app
from aks_kueue.cli.common import CONFIG_OPTION, STACK_OPTION, fail, load_stack_config, stack_name, unexpected, warn
from aks_kueue.cli.output import (JSON, JSON_OPTION, MARKDOWN, TEXT, Output, option_values, print_document,
                                  register_document)

FORMATS = (TEXT, JSON, MARKDOWN)
POLICY_CONFIG_OPTION = typer.Option(
    None, "--policy-config", "--policy-pack-config", metavar="PATH",
    help="Policy pack config: the JSON file of `pulumi preview --policy-pack-config` (either name is accepted).")
PREVIOUS_OUTPUTS_OPTION = typer.Option(
    None, "--previous-outputs", metavar="FILE",
    help="The stack's last deployment: what `pulumi stack output --json --show-secrets` prints. The day-2 guard "
         "compares this update with it.")


def _empty(argv: Sequence[str]) -> dict:
    """The preview's document when its command line cannot be used."""
    from aks_kueue.preview.outcome import Outcome, document

    config = next(iter(option_values(argv, "--config")), None)
    stack = stack_name(next(iter(option_values(argv, "--stack", "-s")), None), Path(config) if config else None)
    return document(Outcome(project="aks-kueue", stack=stack))


register_document("preview", _empty)
register_document("report", _empty)

STACK_OUTPUTS_OPTION = typer.Option(
    [], "--stack-outputs", metavar="STACK=FILE", help="Another stack's last outputs (what `pulumi stack output "
    "--json` prints for it), for the StackReferences of a fleet (aks-kueue:fleet); STACK as the fleet key writes "
    "it. Repeatable.")


def stack_outputs_files(values: list[str], output: Output) -> dict[str, Path]:
    """--stack-outputs STACK=FILE, each stack once; a malformed flag exits 2 through `output`."""
    from aks_kueue.preview.errors import InputError

    found: dict[str, Path] = {}
    for value in values:
        stack, sep, file = value.partition("=")
        if not sep or not stack or not file:
            output.fail([InputError(f"--stack-outputs takes STACK=FILE (org/project/stack=outputs.json), not "
                                    f"{value!r}")])
        if stack in found:
            output.fail([InputError(f"--stack-outputs names {stack} twice; give each stack's outputs once")])
        found[stack] = Path(file)
    return found


def _outcome(stack: Optional[str], config: Optional[Path], policy_config: Optional[Path], command: str,
             previous_outputs: Optional[Path] = None, stack_outputs: Optional[dict[str, Path]] = None):
    """The preview's outcome; a stack file that cannot be used is an invalid outcome, not an exit here,
    so that --json still prints its document."""
    from aks_kueue.k8s.loader import LoadError
    from aks_kueue.preview.outcome import preview
    from aks_kueue.preview.stackfile import project_root

    try:
        try:
            stack_config, root = load_stack_config(stack, config)
        except LoadError as error:
            return preview(None, project_root(), load_error=error, stack=stack_name(stack, config))
        return preview(stack_config, root, policy_config, previous_outputs=previous_outputs,
                       source=stack_config.path, stack_outputs=stack_outputs)
    except Exception as error:  # a bug, not bad input: say so briefly
        fail(f"{command}: {unexpected(error)}")


@app.command()
def preview(
    stack: Optional[str] = STACK_OPTION,
    config: Optional[Path] = CONFIG_OPTION,
    policy_config: Optional[Path] = POLICY_CONFIG_OPTION,
    previous_outputs: Optional[Path] = PREVIOUS_OUTPUTS_OPTION,
    stack_outputs: list[str] = STACK_OUTPUTS_OPTION,
    as_json: bool = JSON_OPTION,
    output_format: Optional[str] = typer.Option(
        None, "--format", "-o", "--output", metavar="FORMAT",
        help="text (the verdicts, the capacity table, then the resources), json (one document; the same as "
             "--json) or markdown (a PR comment)."),
    show_outputs: bool = typer.Option(
        False, "--show-outputs", help="Print every stack output in full, the day-2 guard's `day2` record included."),
    show_azure_checks: bool = typer.Option(
        False, "--show-azure-checks", help="List each check only Azure can answer (resource providers, VM sizes "
                                           "offered, vCPU quota) with the az command that answers it; the text "
                                           "preview folds them into one line otherwise (--json always has them)."),
) -> None:
    """Show what `pulumi up` would create for a stack, with no cloud and no credentials.

    First the verdicts of every policy of the pack and the capacity table, then the resources and the stack
    outputs. A mandatory violation or a refusal of the day-2 guard exits 1, a stack that cannot be used exits 2.
    """
    output = Output("preview", as_json or output_format == JSON, _empty(["--stack", stack_name(stack, config)]))
    chosen = output.format(as_json, output_format, FORMATS, flag="--format")
    outcome = _outcome(stack, config, policy_config, "preview", previous_outputs,
                       stack_outputs_files(stack_outputs, output))
    _errors(outcome, "preview", shown=chosen == TEXT and outcome.run is not None)
    if chosen == JSON:
        from aks_kueue.preview.outcome import document

        print_document(document(outcome))
    elif outcome.run is None:
        pass  # nothing to show beyond the errors
    elif chosen == MARKDOWN:
        from aks_kueue.cli.markdown import markdown_summary

        typer.echo(markdown_summary(outcome), nl=False)
    else:
        from aks_kueue.cli.render import print_outcome

        print_outcome(outcome, show_outputs=show_outputs, unfold=show_azure_checks)
    raise typer.Exit(outcome.exit_code)


def _errors(outcome, command: str, shown: bool = False) -> None:
    """On stderr: why a stack cannot be used (one sentence, or the program's reasons one a line), the
    day-2 guard's refusals, and what the program itself logged as a warning, as `pulumi up` shows it.
    A warning the verdicts already show is not repeated; nor are the refusals when the text preview
    (`shown`) leads with them. An error that names no file is about the command line: the command's name
    comes first, as every command's flag errors say it."""
    if outcome.errors_header:
        typer.echo(outcome.errors_header, err=True)
    for error in outcome.errors:
        typer.echo(str(error) if error.file else f"{command}: {error}", err=True)
    if shown and outcome.refusals:
        typer.echo(f"preview: the day-2 guard refused this update ({len(outcome.refusals)} changes, above)", err=True)
    elif not shown:
        warn(outcome.previous_notes)
        if outcome.refusals:
            typer.echo("the day-2 guard refused this update:", err=True)
        for refusal in outcome.refusals:
            typer.echo(str(refusal), err=True)
    said = {str(f) for f in outcome.findings}
    warn(w for w in (outcome.run.warnings if outcome.run else ()) if w not in said)


@app.command()
def report(
    out: Path = typer.Option(..., "--out", metavar="DIR",
                             help="Directory for capacity.png and summary.md (created if missing)."),
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
    outcome = _outcome(stack, config, policy_config, "report",
                       stack_outputs=stack_outputs_files(stack_outputs, Output("report", False, {})))
    _errors(outcome, "report")
    if outcome.run is None:
        raise typer.Exit(outcome.exit_code)
    from aks_kueue.cli.chart import MANAGER_NOTE, NO_QUOTA, draw_capacity_chart
    from aks_kueue.cli.markdown import markdown_summary

    try:
        out.mkdir(parents=True, exist_ok=True)
        empty = MANAGER_NOTE if outcome.judgement.fleet_quota is not None else NO_QUOTA
        chart = draw_capacity_chart(outcome.stack, outcome.judgement.capacity, out / "capacity.png", empty)
        summary = out / "summary.md"
        summary.write_text(markdown_summary(outcome), encoding="utf-8")
    except OSError as error:
        fail(f"report: cannot write to {out}: {error.strerror or error}")
    typer.echo(f"wrote {chart} and {summary}")
    raise typer.Exit(outcome.exit_code)
