"""The `aks-kueue` command: one module per subcommand, registered on one Typer app."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Offline tools for the aks-kueue Pulumi program.")


@app.callback()
def main() -> None:
    """aks-kueue: AKS, Kueue and quota checks, offline."""


from aks_kueue.cli import check_plan, preview, simulate, validate  # noqa: E402,F401  (each registers its commands)

__all__ = ["app"]
