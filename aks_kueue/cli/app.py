"""The one Typer app every subcommand module registers itself on."""

from __future__ import annotations

import typer

from aks_kueue.cli.common import few_collections

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Offline tools for the aks-kueue Pulumi program.")


@app.callback()
def main(ctx: typer.Context) -> None:
    """aks-kueue: AKS, Kueue and quota checks, offline."""
    # For the whole command, its own imports included; put back when the command ends.
    ctx.with_resource(few_collections())
