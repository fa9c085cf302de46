"""`aks-kueue simulate`: pending Workloads run through the admission core in file order."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from aks_kueue.cli.app import app
from aks_kueue.cli.common import fail


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
        fail(f"simulate: {error}")
    if invalid:
        fail("simulate: Kueue would reject these objects; fix them first:\n  " + "\n  ".join(invalid), 1)
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


