"""The `aks-kueue` command: one module per subcommand, each registered on `app.app`."""

from aks_kueue.cli import check_plan, preview, replay, sample_job, simulate, validate  # noqa: F401  (each registers its commands)
from aks_kueue.cli.app import app, tidy_help

tidy_help(app)

__all__ = ["app"]
