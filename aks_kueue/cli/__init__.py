"""The `aks-kueue` command: one module per subcommand, each registered on `app.app`."""

# Each module registers its commands on the app.
from aks_kueue.cli import check_plan, preview, replay, sample_job, simulate, validate  # noqa: F401
from aks_kueue.cli.app import app

__all__ = ["app"]
