"""`aks-kueue check-plan`: refuse a `pulumi preview --json` plan that destroys what users depend on."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Optional, Sequence

import typer

from aks_kueue.cli.app import app
from aks_kueue.cli.common import CONFIG_OPTION, load_stack_config
from aks_kueue.cli.output import JSON, JSON_OPTION, OUTPUT_OPTION, RESULTS, Output, print_document, register_document

PLAN_LIMIT = 256 * 2**20
# A plan nests each resource's inputs; Kubernetes objects are a few dozen levels deep at most.
PLAN_DEPTH = 500
STACK_OPTION = typer.Option(None, "--stack", "-s", metavar="NAME",
                            help="Read allowReplacement from stacks/Pulumi.NAME.yaml (default: the plan's own config).")


def _empty(argv: Sequence[str] = ()) -> dict[str, Any]:
    """check-plan's document when nothing could be judged."""
    words = list(argv)
    plan = next((word for index, word in enumerate(words) if not word.startswith("-") and word != "check-plan"
                 and not (index and words[index - 1] in ("-s", "--stack", "--config", "-o", "--output"))), None)
    return {"plan": plan, "allowReplacement": [], "allowReplacementFrom": None, "steps": [], "offending": 0}


register_document("check-plan", _empty)


@app.command("check-plan")
def check_plan(
    plan: Path = typer.Argument(..., metavar="FILE", help="What `pulumi preview --json` printed."),
    stack: Optional[str] = STACK_OPTION,
    config: Optional[Path] = CONFIG_OPTION,
    as_json: bool = JSON_OPTION,
    output_format: Optional[str] = OUTPUT_OPTION,
) -> None:
    """Exit 1 when the plan replaces or deletes what aks-kueue:allowReplacement does not list: the
    cluster, a pool, the resource group, the Kueue installer, a team namespace, a Kueue ClusterQueue,
    Cohort, ResourceFlavor, AdmissionCheck, LocalQueue or Topology, or a fleet's link. One line per
    step on stdout, each step that passes as an "ok:" line.

    A fleet's links are a manager's MultiKueueCluster, kubeconfig Secret and MultiKueueConfig, and a
    worker's multikueue service account, RBAC and token Secret.

    Every step operation of Pulumi's engine is judged by what it does (import-replacement and
    remove-pending-replace destroy, discard does not), type tokens with or without an API version.
    A delete of a resource whose old state has retainOnDelete destroys nothing and passes.
    """
    from aks_kueue.day2.plan import allowances_from_config, judge_plan, kept_generations, parse_plan
    from aks_kueue.k8s.loader import LoadError

    output = Output("check-plan", as_json or output_format == JSON, {**_empty(), "plan": str(plan)})
    as_json = output.format(as_json, output_format) == JSON
    try:  # each LoadError names its file (the plan or the stack's) and the field at fault
        steps, plan_config = parse_plan(_read(plan), str(plan))
        source, file = "the plan's config", str(plan)
        if stack is not None or config is not None:
            loaded, _ = load_stack_config(stack, config)
            plan_config = loaded.config
            source = str(config) if config is not None else f"stack {stack}"
            file = str(loaded.path)
        allowances, kept = allowances_from_config(plan_config, file), kept_generations(plan_config)
    except LoadError as error:
        output.fail([error])
    judged = judge_plan(steps, allowances, kept)
    offending = [j for j in judged if j.offending]
    code = 1 if offending else 0
    if as_json:
        print_document({"plan": str(plan), "allowReplacement": [str(e) for e in allowances],
                        "allowReplacementFrom": source, "steps": [j.to_json() for j in judged],
                        "offending": len(offending), "result": RESULTS[code]})
    else:
        # The verdict is the command's answer: every line on stdout, the refused steps first.
        for item in offending:
            typer.echo(item.line())
        for item in judged:
            if not item.offending:
                typer.echo(f"ok: {item.line()}")
        if offending:
            typer.echo(f"check-plan: refused: {len(offending)} of {len(steps)} steps replace or delete what users "
                       f"depend on (allowReplacement from {source}); list them in aks-kueue:allowReplacement only "
                       "if that is meant")
        else:
            typer.echo(f"check-plan: nothing that users depend on is replaced or deleted "
                       f"({len(steps)} steps; allowReplacement from {source}).")
    raise typer.Exit(code)


def _read(path: Path):
    """The plan's JSON, read within the loader's bounds (a regular file at most PLAN_LIMIT bytes: a
    named pipe or a device is refused at once, never waited on)."""
    from aks_kueue.k8s.loader import Limits, LoadError, loads_json, read_text

    limits = Limits(max_bytes=PLAN_LIMIT, max_depth=PLAN_DEPTH)
    text = read_text(path, limits, what="what `pulumi preview --json` printed", regular_only=True)
    try:
        # A key written twice is refused, not read as its last value: the gate would judge a step Pulumi may not run.
        return loads_json(text, str(path), limits)
    except LoadError as error:
        raise dataclasses.replace(error, reason=f"{error.reason}; give what `pulumi preview --json` prints") from None
