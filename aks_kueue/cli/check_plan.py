"""`aks-kueue check-plan`: refuse a `pulumi preview --json` plan that destroys what users depend on."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from aks_kueue.cli.app import app
from aks_kueue.cli.common import CONFIG_OPTION, fail, load_stack_config

PLAN_LIMIT = 256 * 2**20
STACK_OPTION = typer.Option(None, "--stack", help="Read allowReplacement from stacks/Pulumi.NAME.yaml "
                                                  "(default: the plan's own config).")


@app.command("check-plan")
def check_plan(
    plan: Path = typer.Argument(..., help="What `pulumi preview --json` printed."),
    stack: Optional[str] = STACK_OPTION,
    config: Optional[Path] = CONFIG_OPTION,
    as_json: bool = typer.Option(False, "--json", help="One JSON document on stdout."),
) -> None:
    """Exit 1 when the plan replaces or deletes the cluster, a pool, the resource group, the Kueue
    installer, a team namespace or a Kueue ClusterQueue, Cohort, ResourceFlavor, AdmissionCheck,
    LocalQueue or Topology that aks-kueue:allowReplacement does not list; one line per step.

    Every step operation of Pulumi's engine is judged by what it does (import-replacement and
    remove-pending-replace destroy, discard does not), type tokens with or without an API version.
    A delete of a resource whose old state has retainOnDelete destroys nothing and passes.
    """
    from aks_kueue.day2.plan import PlanError, allowances_from_config, judge_plan, parse_plan
    from aks_kueue.preview.stackfile import StackFileError

    try:
        steps, plan_config = parse_plan(_read(plan))
    except PlanError as error:
        fail(f"check-plan: {plan}: {error}")
    try:
        if stack is not None or config is not None:
            stack_config, _ = load_stack_config(stack, config, "check-plan")
            source = str(config) if config is not None else f"stack {stack}"
            allowances = allowances_from_config(stack_config.config)
        else:
            source = "the plan's config"
            allowances = allowances_from_config(plan_config)
    except StackFileError as error:
        fail(str(error))
    except PlanError as error:
        fail(f"check-plan: {source}: {error}")
    judged = judge_plan(steps, allowances)
    offending = [j for j in judged if j.offending]
    if as_json:
        sys.stdout.write(json.dumps({
            "plan": str(plan), "allowReplacement": [str(e) for e in allowances], "allowReplacementFrom": source,
            "steps": [j.to_json() for j in judged], "offending": len(offending),
            "result": "rejected" if offending else "ok"}, indent=2) + "\n")
    else:
        for item in offending:
            typer.echo(item.line())
        passed = [j for j in judged if not j.offending]
        for item in passed:
            typer.echo(f"ok: {item.line()}", err=True)
        if not offending:
            typer.echo(f"check-plan: nothing that users depend on is replaced or deleted "
                       f"({len(steps)} steps; allowReplacement from {source}).", err=True)
    if offending:
        raise typer.Exit(1)


def _read(path: Path):
    from aks_kueue.day2.plan import PlanError

    try:
        if path.stat().st_size > PLAN_LIMIT:
            raise PlanError("larger than 256 MiB")
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlanError("no such file") from None
    except UnicodeDecodeError:
        raise PlanError("not a text file (not UTF-8)") from None
    except OSError as error:
        raise PlanError(f"cannot be read ({error.strerror})") from None
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise PlanError(f"not JSON ({str(error)[:80]}); give what `pulumi preview --json` prints") from None
