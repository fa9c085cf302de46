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


if __name__ == "__main__":
    app()
