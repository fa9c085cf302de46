"""The one Typer app every subcommand module registers itself on."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Offline tools for the aks-kueue Pulumi program.")


@app.callback()
def main() -> None:
    """aks-kueue: AKS, Kueue and quota checks, offline."""
