"""What every subcommand shares: the garbage collector's tuning for one command, put back after."""

from __future__ import annotations

import gc

from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.cli.common import few_collections


def test_collections_are_tuned_inside_and_put_back_after():
    before = gc.get_threshold(), gc.get_freeze_count()
    with few_collections():
        assert gc.get_threshold() == (50_000, 20, 20)
        assert gc.get_freeze_count() > 0
        assert gc.isenabled()  # garbage is still collected
    assert (gc.get_threshold(), gc.get_freeze_count()) == before


def test_what_someone_else_froze_stays_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with few_collections():
            pass
        assert gc.get_freeze_count() >= frozen > 0
    finally:
        gc.unfreeze()


def test_a_command_runs_tuned_and_puts_the_collector_back(monkeypatch):
    from aks_kueue.preview import outcome

    before = gc.get_threshold(), gc.get_freeze_count()
    seen = []
    real = outcome.preview

    def preview(*args, **kwargs):
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    monkeypatch.setattr(outcome, "preview", preview)
    result = CliRunner().invoke(app, ["preview", "--stack", "no-such-stack", "--json"])
    assert result.exit_code == 2 and seen == [(50_000, 20, 20)]
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
