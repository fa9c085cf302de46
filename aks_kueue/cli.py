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


@app.command()
def preview(
    stack: Optional[str] = typer.Option(None, "--stack", help="Read stacks/Pulumi.NAME.yaml (default: dev)."),
    config: Optional[Path] = typer.Option(None, "--config", help="Read a stack file at PATH instead."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
) -> None:
    """Show what `pulumi up` would create for a stack, with no cloud and no credentials.

    Then the capacity model's verdict on its quotas and expected workloads; an error
    finding (quota the pools can never hold) exits 1.
    """
    from aks_kueue.feasibility.adapter import analyse_config
    from aks_kueue.feasibility.report import capacity_json, findings_json, infeasible
    from aks_kueue.preview.render import preview_document, print_tree
    from aks_kueue.preview.run import ProgramError, run_program
    from aks_kueue.preview.stackfile import StackFileError, load_stack, project_root, stack_path

    if stack is not None and config is not None:
        _fail("preview: give either --stack or --config, not both")
    root = project_root()
    try:
        if config is not None:
            match = re.fullmatch(r"Pulumi\.(.+)\.yaml", config.name)
            name = match.group(1) if match else config.stem
            stack_config = load_stack(config, name, root)
        else:
            name = stack or "dev"
            path = stack_path(root, name)
            if not path.exists():
                known = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in path.parent.glob("Pulumi.*.yaml"))
                _fail(f"{path}: no such stack file; known stacks: {', '.join(known) or 'none'}")
            stack_config = load_stack(path, name, root)
        run = run_program(stack_config, root)
        # The program has already accepted these settings, so this parse cannot fail on them.
        analysis = analyse_config(stack_config.config, root)
    except (StackFileError, ProgramError) as error:
        _fail(str(error))
    except typer.Exit:
        raise
    except Exception as error:  # a bug, not bad input: say so briefly
        if os.environ.get("AKS_KUEUE_DEBUG"):
            raise
        _fail(f"preview: internal error: {type(error).__name__}: {error} (set AKS_KUEUE_DEBUG=1 for details)")
    for warning in run.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if as_json:
        document = {**preview_document(run), "capacity": capacity_json(analysis),
                    "findings": findings_json(analysis)}
        sys.stdout.write(json.dumps(document, indent=2) + "\n")
    else:
        print_tree(run, analysis)
    if infeasible(analysis):
        raise typer.Exit(1)


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
            for _, document in read_documents(path):
                obj = load_object(document)
                errors = validate_object(obj)
                results.append({
                    "apiVersion": document.get("apiVersion"), "kind": obj.kind, "name": obj.name or None,
                    "namespace": obj.namespace, "valid": not errors,
                    "errors": [{"field": e.field, "message": e.message} for e in errors],
                })
    except ManifestError as error:
        _fail(f"validate: {error}")
    if as_json:
        sys.stdout.write(json.dumps({"objects": results}, indent=2) + "\n")
    else:
        for result in results:
            where = f"{result['namespace']}/{result['name']}" if result["namespace"] else result["name"]
            typer.echo(f"{'ok     ' if result['valid'] else 'INVALID'} {result['kind']} {where}")
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
    from aks_kueue.kueue.workload_webhook import validate_workload_status

    manifests, invalid = [], []
    try:
        for path in paths:
            # Namespaces may come along for their labels, which namespaceSelectors match.
            for index, document in read_documents(path, also=(("v1", "Namespace"),)):
                if document.get("kind") == "Namespace":
                    manifests.append(document)
                    continue
                obj = load_object(document, f"{path} document {index}")
                errors = validate_object(obj)
                if obj.kind == "Workload":
                    errors += validate_workload_status(obj.manifest)
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


if __name__ == "__main__":
    app()
