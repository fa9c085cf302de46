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
    """Show what `pulumi up` would create for a stack, with no cloud and no credentials."""
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
        sys.stdout.write(json.dumps(preview_document(run), indent=2) + "\n")
    else:
        print_tree(run)


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


if __name__ == "__main__":
    app()
