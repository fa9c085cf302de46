"""The replay's picture (issue 30): one colour per ClusterQueue in every run, the window's time axis, no
negative axes, usage beside pending, legends that name what they group."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

from aks_kueue.cli import replay_render
from aks_kueue.cli.replay_render import PALETTE, colour, draw_chart, styles
from aks_kueue.replay import ReplayOptions
from aks_kueue.replay.report import document, result
from tests.replay.builders import V1B2, cluster_queue, flavor, local_queue, pool, quota, run, workload


@pytest.fixture
def drawn(monkeypatch):
    """The axes of each chart drawn, kept for a look after the figure is written and closed."""
    found = []
    real = replay_render.png_figure

    @contextmanager
    def keeping(path, *rows_columns, **subplots):
        with real(path, *rows_columns, **subplots) as (figure, axes):
            found.append([row[0] for row in axes])
            yield figure, axes

    monkeypatch.setattr(replay_render, "png_figure", keeping)
    return found


def _queues(*names: str, cohort_quota: int = 0) -> list[dict]:
    objects = [flavor("default")]
    if cohort_quota:
        objects.append({"apiVersion": V1B2, "kind": "Cohort", "metadata": {"name": "org"},
                        "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                            {"name": "default", "resources": [{"name": "cpu", "nominalQuota": str(cohort_quota)}]}]}]}})
    for name in names:
        objects += [cluster_queue(name, {"default": [quota("cpu", 2)]}, cohort="org" if cohort_quota else None),
                    local_queue(name, name)]
    return objects


def _chart(tmp_path, objects, rows, **config):
    outcome, _ = run(tmp_path, objects, rows, **config)
    found = result(outcome)
    trace_stub = type("T", (), {"workloads": outcome.runs, "start": None, "files": []})()
    draw_chart(document([found], trace_stub), [found], tmp_path / "replay.png")
    return found


def _line_colours(axis) -> dict[str, str]:
    from matplotlib.colors import to_hex

    return {line.get_label(): to_hex(line.get_color()) for line in axis.get_lines()}


def test_a_cluster_queue_keeps_its_colour_in_every_picture(tmp_path, drawn):
    rows = [workload("w1", 0, cpu=4, runtime=10, namespace="team-b"), workload("w2", 1, cpu=4, runtime=10,
                                                                              namespace="team-b")]
    _chart(tmp_path, _queues("team-a", "team-b"), [*rows, workload("x", 0, cpu=4, runtime=5, namespace="team-a")])
    _chart(tmp_path, _queues("team-b", "team-c"), [*rows, workload("y", 0, cpu=4, runtime=5, namespace="team-c")])
    first, second = (_line_colours(axes[0]) for axes in drawn)
    assert first["team-b"] == second["team-b"] == colour("team-b") and colour("team-b") in PALETTE
    assert colour("team-a") == colour("team-a")  # a function of the name alone
    # Names that share a colour in one picture are told apart by a marker; the first keeps a plain line.
    shades = {colour(f"q{i}"): f"q{i}" for i in range(40)}
    twins = next((f"q{i}", f"q{j}") for i in range(40) for j in range(i + 1, 40) if colour(f"q{i}") == colour(f"q{j}"))
    assert len(shades) <= len(PALETTE)
    assert styles(list(twins)) == {twins[0]: (colour(twins[0]), None), twins[1]: (colour(twins[1]), "o")}


def test_an_all_zero_run_has_no_negative_axis(tmp_path, drawn):
    # Nothing ever pends (each workload fits at once) and no quota is used long: the axes start at 0.
    _chart(tmp_path, _queues("team-a"), [workload("w", 0, cpu=1, runtime=0, namespace="team-a")])
    (axes,) = drawn
    for axis in axes:
        bottom, top = axis.get_ylim()
        assert bottom == 0.0 and top > 0.0
        assert axis.get_xlim()[0] == 0.0


def test_the_window_usage_beside_pending_and_named_legends(tmp_path, drawn):
    # warm is warm-up (before 60 s); the window's axis starts at 60 s. team-a borrows the cohort's own quota.
    rows = [workload("warm", 0, cpu=4, runtime=100, namespace="team-a"),
            workload("w", 60, cpu=4, runtime=100, namespace="team-a")]
    found = _chart(tmp_path, _queues("team-a", cohort_quota=4), rows, pools=[pool("cpu", cpu=8)],
                   node_startup={"cpu": 30.0}, options=ReplayOptions(since=60))
    (axes,) = drawn
    pending, usage, nodes = axes
    assert pending.get_xlim()[0] == pytest.approx(60.0 / 60)  # minutes: the window's span is over 2 minutes
    assert pending.get_legend().get_title().get_text() == "ClusterQueue"
    assert usage.get_legend().get_title().get_text() == "ClusterQueue or Cohort (flavor/resource)"
    assert nodes.get_legend().get_title().get_text() == "pool"
    labels = [line.get_label() for line in usage.get_lines()]
    assert labels == ["team-a default/cpu", "Cohort org default/cpu (own quota)"]
    assert "org" in found.cohorts and found.usage["team-a"].label == "default/cpu"
    # team-a holds 2 cores and borrows 2 of the cohort's 4: its share of nominal reaches 200%, the cohort's 50%.
    assert max(y for _, y in found.usage["team-a"].shares()) == 2.0
    assert max(y for _, y in found.cohorts["org"].shares()) == 0.5
    assert (Path(tmp_path) / "replay.png").stat().st_size > 10_000
