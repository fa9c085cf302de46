"""`aks-kueue validate`: Kueue objects judged as a Kueue v0.19.2 installation would."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from aks_kueue.cli.app import app
from aks_kueue.cli.common import fail


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
        fail(f"validate: {error}")
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


