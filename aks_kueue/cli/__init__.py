"""The `aks-kueue` command."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Offline tools for the aks-kueue Pulumi program.")


def _fail(message: str, code: int = 2) -> None:
    typer.echo(message, err=True)
    raise typer.Exit(code)


@app.callback()
def main() -> None:
    """aks-kueue: AKS, Kueue and quota checks, offline."""


FORMATS = ("text", "json", "markdown")


def _stack_config(stack: Optional[str], config: Optional[Path], command: str):
    """The stack file named by --stack (default dev) or --config, as the Pulumi CLI loads it."""
    from aks_kueue.preview.stackfile import load_stack, project_root, stack_path

    if stack is not None and config is not None:
        _fail(f"{command}: give either --stack or --config, not both")
    root = project_root()
    if config is not None:
        match = re.fullmatch(r"Pulumi\.(.+)\.yaml", config.name)
        return load_stack(config, match.group(1) if match else config.stem, root), root
    name = stack or "dev"
    path = stack_path(root, name)
    if not path.exists():
        known = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in path.parent.glob("Pulumi.*.yaml"))
        _fail(f"{path}: no such stack file; known stacks: {', '.join(known) or 'none'}")
    return load_stack(path, name, root), root


def _evaluate_stack(stack: Optional[str], config: Optional[Path], policy_config: Optional[Path], command: str):
    """Record the program's resources, analyse capacity, and run the policy pack over the record."""
    from aks_kueue.feasibility.adapter import analyse_config
    from aks_kueue.preview.run import ProgramError, run_program
    from aks_kueue.preview.stackfile import StackFileError
    from aks_kueue.preview.verdicts import PolicyConfigError, evaluate_policies, load_policy_config

    try:
        # The policy config is checked first: a typo there should not wait for the program.
        pack_config = load_policy_config(policy_config) if policy_config is not None else None
        stack_config, root = _stack_config(stack, config, command)
        run = run_program(stack_config, root)
        # The program has already accepted these settings, so this parse cannot fail on them.
        analysis = analyse_config(stack_config.config, root)
        violations = evaluate_policies(run, pack_config)
    except (StackFileError, ProgramError, PolicyConfigError) as error:
        _fail(str(error))
    except typer.Exit:
        raise
    except Exception as error:  # a bug, not bad input: say so briefly
        if os.environ.get("AKS_KUEUE_DEBUG"):
            raise
        _fail(f"{command}: internal error: {type(error).__name__}: {error} (set AKS_KUEUE_DEBUG=1 for details)")
    for warning in run.warnings:
        typer.echo(f"warning: {warning}", err=True)
    return run, analysis, violations


STACK_OPTION = typer.Option(None, "--stack", help="Read stacks/Pulumi.NAME.yaml (default: dev).")
CONFIG_OPTION = typer.Option(None, "--config", help="Read a stack file at PATH instead.")
POLICY_CONFIG_OPTION = typer.Option(
    None, "--policy-config", help="Policy pack config: the JSON of `pulumi preview --policy-pack-config`.")


@app.command()
def preview(
    stack: Optional[str] = STACK_OPTION,
    config: Optional[Path] = CONFIG_OPTION,
    policy_config: Optional[Path] = POLICY_CONFIG_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    output_format: Optional[str] = typer.Option(
        None, "--format", help="text (a tree and tables), json (one document) or markdown (a PR comment)."),
) -> None:
    """Show what `pulumi up` would create for a stack, with no cloud and no credentials.

    Then the capacity table and the verdicts of every policy of the pack; a mandatory violation exits 1.
    """
    if output_format is not None and output_format not in FORMATS:
        _fail(f"preview: --format must be one of {', '.join(FORMATS)}, not {output_format!r}")
    if as_json and output_format not in (None, "json"):
        _fail(f"preview: --json means --format json; it cannot go with --format {output_format}")
    chosen = "json" if as_json else output_format or "text"
    run, analysis, violations = _evaluate_stack(stack, config, policy_config, "preview")
    if chosen == "json":
        from aks_kueue.feasibility.report import capacity_json, findings_json
        from aks_kueue.cli.render import preview_document

        document = {**preview_document(run, violations), "capacity": capacity_json(analysis),
                    "findings": findings_json(analysis)}
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
        _fail(f"report: {out} exists and is not a directory")
    run, analysis, violations = _evaluate_stack(stack, config, policy_config, "report")
    from aks_kueue.cli.chart import draw_capacity_chart
    from aks_kueue.cli.markdown import markdown_summary

    try:
        out.mkdir(parents=True, exist_ok=True)
        chart = draw_capacity_chart(run.stack, analysis.capacity, out / "capacity.png")
        summary = out / "summary.md"
        summary.write_text(markdown_summary(run, analysis, violations), encoding="utf-8")
    except OSError as error:
        _fail(f"report: cannot write to {out}: {error.strerror or error}")
    typer.echo(f"wrote {chart} and {summary}")
    _exit_on_verdict(violations)


@app.command()
def validate(
    paths: list[Path] = typer.Argument(..., help="Kueue YAML files: several documents or a kind: List each."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
) -> None:
    """Check Kueue objects as a Kueue v0.19 installation would accept or reject them."""
    from aks_kueue.kueue.manifests import ManifestError, read_documents
    from aks_kueue.kueue.validate import load_object, validate_object

    results = []
    try:
        for path in paths:
            for _, document in read_documents(path, also=(("v1", "Namespace"),)):
                if document.get("kind") == "Namespace":
                    continue  # not a Kueue object; simulate reads its labels
                obj = load_object(document)
                errors = validate_object(obj)
                results.append({
                    "apiVersion": document.get("apiVersion"), "kind": obj.kind, "name": obj.name or None,
                    "namespace": obj.namespace, "valid": not errors,
                    "errors": [{"field": e.field, "message": e.message} for e in errors],
                })
    except ManifestError as error:
        _fail(f"validate: {error}")
    if not results:
        typer.echo("validate: no Kueue objects in the given files", err=True)
    if as_json:
        sys.stdout.write(json.dumps({"objects": results}, indent=2) + "\n")
    else:
        for result in results:
            where = f"{result['namespace']}/{result['name']}" if result["namespace"] else result["name"]
            typer.echo(f"{'ok     ' if result['valid'] else 'INVALID'} {result['kind']} {where or '(no name)'}")
            for error in result["errors"]:
                typer.echo(f"        {error['field']}: {error['message']}" if error["field"]
                           else f"        {error['message']}")
    if not all(r["valid"] for r in results):
        raise typer.Exit(1)


@app.command()
def simulate(
    paths: list[Path] = typer.Argument(..., help="Kueue YAML: flavors, cohorts, queues, priority classes, Workloads."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
) -> None:
    """Run pending Workloads through the admission core in file order; Fit ones are admitted."""
    from aks_kueue.admission.simulate import simulate as run_simulation
    from aks_kueue.kueue.manifests import ManifestError, read_documents
    from aks_kueue.kueue.validate import load_object, validate_object
    from aks_kueue.kueue.structural import FieldError
    from aks_kueue.kueue.workload_webhook import validate_workload_status

    manifests, invalid = [], []
    seen: dict[tuple, str] = {}
    try:
        for path in paths:
            # Namespaces may come along for their labels, which namespaceSelectors match.
            for index, document in read_documents(path, also=(("v1", "Namespace"),)):
                if document.get("kind") == "Namespace":
                    manifests.append(document)
                    continue
                obj = load_object(document, f"{path} document {index}")
                errors = validate_object(obj)
                if obj.kind == "Workload" and not errors:
                    errors = validate_workload_status(obj.manifest)
                key = (obj.kind, obj.namespace, obj.name)
                if key in seen:
                    # The API server would refuse the second one: it already exists.
                    errors = [*errors, FieldError("metadata.name", f"Duplicate value: {seen[key]} already "
                                                                   f"defines {obj.describe()}")]
                seen.setdefault(key, obj.source)
                invalid.extend(f"{obj.source}: {obj.describe()}: {e.field + ': ' if e.field else ''}{e.message}"
                               for e in errors)
                manifest = dict(obj.defaulted or obj.manifest)
                if "status" in obj.manifest:
                    # A create drops status, but here it says what is already admitted.
                    manifest["status"] = obj.manifest["status"]
                manifests.append(manifest)
    except ManifestError as error:
        _fail(f"simulate: {error}")
    if invalid:
        _fail("simulate: Kueue would reject these objects; fix them first:\n  " + "\n  ".join(invalid), 1)
    if not manifests:
        typer.echo("simulate: no Kueue objects in the given files; nothing to decide", err=True)
    decisions = run_simulation(manifests)
    if as_json:
        sys.stdout.write(json.dumps({"workloads": decisions}, indent=2) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("workload", "clusterQueue", "mode", "borrowing", "flavors", "message")
    for d in decisions:
        flavors = "; ".join(f"{ps['name']}×{ps['count']}: " + ", ".join(f"{r}={f}" for r, f in ps["flavors"].items())
                            for ps in d["podSets"])
        table.add_row(f"{d['namespace']}/{d['name']}", d["clusterQueue"] or "-", d["mode"],
                      "yes" if d["borrowing"] else "no", flavors, d["message"])
    Console(width=200).print(table)


