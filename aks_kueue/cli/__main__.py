"""`python -m aks_kueue.cli`, the same as the `aks-kueue` command."""

from aks_kueue.cli import app

app()
