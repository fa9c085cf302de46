"""`aks-kueue validate`: objects judged as a Kueue v0.19.2 installation would.

Kueue's objects get the CRD schema, its CEL rules and Kueue's webhooks; jobs get the
webhooks Kueue registers for their integration, and the Workload Kueue would build for
them is checked too; a Kueue Configuration is checked as Kueue reads it at startup.
Everything else is skipped with a note.
"""

from __future__ import annotations

from typing import Any, Optional

import typer

from aks_kueue.cli.app import app
from aks_kueue.cli.common import warn
from aks_kueue.cli.inputs import (INTEGRATIONS_OPTION, NAMESPACE_OPTION, PATHS_ARGUMENT, STACK_OPTION, Output,
                                  configuration_errors, read_command_inputs, skipped_entry, skipped_other)
from aks_kueue.cli.output import JSON, JSON_OPTION, OUTPUT_OPTION, RESULTS, print_document, register_document


DUPLICATE_CONSEQUENCE = ("; the API server keeps one object per name, so applied together the second replaces the "
                         "first (kubectl apply) or is refused as AlreadyExists (kubectl create)")


def _summary(objects: list[dict], skipped: list[dict]) -> dict[str, int]:
    valid = sum(1 for o in objects if o["valid"])
    return {"objects": len(objects), "valid": valid, "invalid": len(objects) - valid, "skipped": len(skipped)}


def _empty(_argv=()) -> dict[str, Any]:
    return {"objects": [], "skipped": [], "summary": _summary([], [])}


register_document("validate", _empty)


@app.command()
def validate(
    paths: list[str] = PATHS_ARGUMENT,
    namespace: str = NAMESPACE_OPTION,
    integrations: Optional[str] = INTEGRATIONS_OPTION,
    stack: Optional[str] = STACK_OPTION,
    as_json: bool = JSON_OPTION,
    output_format: Optional[str] = OUTPUT_OPTION,
) -> None:
    """Check Kueue objects and jobs as a Kueue v0.19 installation would accept or reject them."""
    from aks_kueue.kueue.jobs import JobOutcome
    from aks_kueue.kueue.manifests import Category, category
    from aks_kueue.kueue.validate import duplicates, load_object, validate_object

    output = Output("validate", as_json or output_format == JSON, _empty())
    as_json = output.format(as_json, output_format) == JSON
    inputs = read_command_inputs(paths, namespace, integrations, stack, output)
    documents, warnings, jobs = inputs.documents, inputs.warnings, inputs.jobs

    objects: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    loaded = {}  # each Kueue object, for the duplicates check across every file read
    for document in documents:
        manifest = document.manifest
        kind = category(manifest)
        entry = {"apiVersion": document.api_version, "kind": document.kind, "name": document.name,
                 "namespace": None, "valid": True, "file": document.file, "document": document.index, "errors": []}
        if kind is Category.KUEUE:
            obj = loaded[id(manifest)] = load_object(manifest, document.where)
            errors = validate_object(obj)
            entry.update(kind=obj.kind or document.kind, namespace=obj.namespace)
        elif kind is Category.CONFIGURATION:
            errors = configuration_errors(document, warnings)
        elif kind is Category.JOB:
            result = jobs[id(manifest)]
            errors = result.errors
            entry["namespace"] = result.source.namespace
            warnings += [f"{document.where}: {note}" for note in result.notes]
            if not result.errors and result.outcome in (JobOutcome.NOT_MANAGED, JobOutcome.UNSUPPORTED):
                skipped.append(skipped_entry(document, result.reason, result.outcome is JobOutcome.UNSUPPORTED))
                continue
            if not result.errors and result.outcome is JobOutcome.BLOCKED:
                warnings.append(f"{document.where}: {result.reason}")
        else:
            skipped.append(skipped_other(document, inputs.options))
            continue
        entry.update(valid=not errors, errors=[{"field": e.field, "message": e.text} for e in errors])
        objects.append(entry)
        if id(manifest) in loaded:
            entry["object"] = loaded[id(manifest)]
    # Within one file (it is applied as one, kubectl apply -f), and against the stack's own objects (--stack: the
    # program creates them); the files of a folder are often examples apart, so not against each other.
    own = [entry for entry in objects if entry["file"] == inputs.stack_source and "object" in entry]
    for file in dict.fromkeys(entry["file"] for entry in objects):
        ours = [entry for entry in objects if entry["file"] == file and "object" in entry]
        before = own if file != inputs.stack_source else []
        for twice in duplicates([entry["object"] for entry in [*before, *ours]], DUPLICATE_CONSEQUENCE):
            entry = next(e for e in ours if e["object"] is twice.object)
            entry["valid"] = False
            entry["errors"].append({"field": twice.field, "message": twice.text})
    for entry in objects:
        entry.pop("object", None)

    summary = _summary(objects, skipped)
    warn(warnings)
    if not objects:
        typer.echo("validate: no Kueue objects in the given files", err=True)
    code = 1 if summary["invalid"] else 0
    if as_json:
        print_document({"objects": objects, "skipped": skipped, "summary": summary, "result": RESULTS[code]})
    else:
        _print_text(objects, skipped, summary, inputs.stack_source)
    raise typer.Exit(code)


def _print_text(objects: list[dict], skipped: list[dict], summary: dict[str, int], stack_source: Optional[str]) -> None:
    own = [o for o in objects if stack_source is not None and o["file"] == stack_source]
    if own and all(o["valid"] for o in own):  # the stack's own objects, said once unless one is invalid
        typer.echo(f"ok      {stack_source}: {len(own)} queue objects")
        objects = [o for o in objects if o["file"] != stack_source]
    skipped = [s for s in skipped if stack_source is None or s["file"] != stack_source]
    for result in objects:
        where = f"{result['namespace']}/{result['name']}" if result["namespace"] else result["name"]
        typer.echo(f"{'ok     ' if result['valid'] else 'INVALID'} {result['kind']} {where or '(no name)'}"
                   f"  ({result['file']} document {result['document']})")
        for error in result["errors"]:
            typer.echo(f"        {error['field']}: {error['message']}" if error["field"]
                       else f"        {error['message']}")
    for item in skipped:
        typer.echo(f"skipped {item['apiVersion']} {item['kind']} {item['name'] or '(no name)'}  "
                   f"({item['file']} document {item['document']}): {item['reason']}")
    typer.echo(f"{summary['objects']} objects: {summary['valid']} valid, {summary['invalid']} invalid, "
               f"{len(skipped)} skipped")
