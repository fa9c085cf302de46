"""The capacity picture: each flavor's quota as a share of what its pools can allocate.

cpu, memory and GPUs have no common unit, so every bar is quota / capacity in percent;
the 100% line is the pools' allocatable at maxCount, and the real amounts are written
on the bars. Overcommitted bars are red and labelled, so a reviewer sees them at once.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from aks_kueue.judge.finding import show

WITHIN = "#2f6db5"        # quota the pools can hold
OVERCOMMITTED = "#d62728"  # quota above capacity, or quota where the flavor has none
UNJUDGED = "#9e9e9e"       # capacity not modelled, or no quota at all
CAPACITY_LINE = "#222222"
OVER_VERDICTS = ("over", "missing", "nowhere")
# Bars past this are clipped and say so; an overcommit of 10x needs no longer bar.
AXIS_LIMIT = 200.0


@dataclass(frozen=True)
class Bar:
    label: str
    percent: float        # quota as a share of capacity, before clipping
    colour: str
    note: str             # what is written beside the bar


def bars(capacity_rows) -> list[Bar]:
    """One bar per flavor and resource, in the analysis' order (flavor by flavor)."""
    result = []
    for row in capacity_rows:
        label = f"{row.flavor} · {row.resource}"
        if row.capacity is None:
            result.append(Bar(label, 0.0, UNJUDGED, f"quota {show(row.resource, row.quota)}; capacity not modelled"))
        elif row.capacity == 0:
            if row.quota == 0:
                result.append(Bar(label, 0.0, UNJUDGED, "no quota, no capacity"))
            else:
                why = "no pool matches the flavor" if row.verdict == "nowhere" else "its nodes have none"
                result.append(Bar(label, AXIS_LIMIT, OVERCOMMITTED,
                                  f"OVERCOMMITTED: quota {show(row.resource, row.quota)}, {why}"))
        else:
            percent = 100.0 * row.quota / row.capacity
            amounts = (f"{show(row.resource, row.quota)} of {show(row.resource, row.capacity)}"
                       f"{' cores' if row.resource == 'cpu' else ''}")
            if row.verdict in OVER_VERDICTS or percent > 100.0:
                result.append(Bar(label, percent, OVERCOMMITTED, f"OVERCOMMITTED {percent:.0f}%: {amounts}"))
            else:
                result.append(Bar(label, percent, WITHIN, f"{percent:.0f}%: {amounts}"))
    return result


@contextmanager
def png_figure(path: Path, *rows_columns: int, **subplots: Any) -> Iterator[tuple[Any, Any]]:
    """A matplotlib figure and its axes (`plt.subplots`), written to `path` as a PNG when the block
    ends without an error, and closed either way."""
    import matplotlib

    matplotlib.use("Agg")  # no display in CI or over ssh
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(*rows_columns, dpi=110, **subplots)
    try:
        yield figure, axes
        figure.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        figure.savefig(path, format="png")
    finally:
        plt.close(figure)


NO_QUOTA = "No ClusterQueue or Cohort sets a quota"
MANAGER_NOTE = ("A MultiKueue manager runs no jobs: its quota is set against its workers'\n"
                "(summary.md, \"Quota against the workers'\")")


def draw_capacity_chart(stack: str, capacity_rows, path: Path, empty: str = NO_QUOTA) -> Path:
    """Write the chart as a PNG at `path` and return it; `empty` is what it says when it has no bar."""
    shown = bars(capacity_rows)
    height = max(3.0, 1.4 + 0.42 * max(len(shown), 1))
    with png_figure(path, figsize=(11, height)) as (figure, axes):
        from matplotlib.patches import Patch

        if not shown:
            axes.text(0.5, 0.5, empty, ha="center", va="center", fontsize=12)
            axes.set_axis_off()
        else:
            _draw_bars(axes, shown)
            visible = {bar.colour for bar in shown if bar.percent > 0}
            # The legend names only bars the chart draws, so a red patch always means a red bar.
            legend = [Patch(color=colour, label=text) for colour, text in (
                (WITHIN, "within capacity"), (OVERCOMMITTED, "overcommitted")) if colour in visible]
            if legend:
                axes.legend(handles=legend, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
        over = sum(bar.colour == OVERCOMMITTED for bar in shown)
        verdict = f"{over} overcommitted" if over else "every quota within capacity"
        figure.suptitle(f"Stack {stack}: Kueue quota as a share of node-pool capacity ({verdict})",
                        fontsize=13, x=0.01, ha="left")
    return path


def _draw_bars(axes, shown: list[Bar]) -> None:
    positions = list(range(len(shown)))[::-1]  # first row at the top
    # Room past the capacity line for the notes; never wider than the clipping limit.
    limit = min(AXIS_LIMIT, max(130.0, 1.15 * max(bar.percent for bar in shown)))
    widths = [min(bar.percent, limit) for bar in shown]
    axes.barh(positions, widths, color=[bar.colour for bar in shown], height=0.6)
    axes.axvline(100.0, color=CAPACITY_LINE, linestyle="--", linewidth=1.2)
    axes.text(100.0, 1.01, "capacity at maxCount (100%)", fontsize=9, ha="center", va="bottom",
              color=CAPACITY_LINE, transform=axes.get_xaxis_transform())
    for y, width, bar in zip(positions, widths, shown):
        # Long bars carry their note inside, short ones beside them.
        inside = width > limit * 0.55
        if inside:
            axes.text(width - limit / 100, y, bar.note, va="center", ha="right", fontsize=9, color="white",
                      fontweight="bold" if bar.colour == OVERCOMMITTED else "normal")
        else:
            axes.text(width + limit / 100, y, bar.note, va="center", ha="left", fontsize=9,
                      color="#555555" if bar.colour == UNJUDGED else "black",
                      bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})
    clipped = any(bar.percent > limit for bar in shown)
    axes.set_xlim(0, limit)
    axes.set_xlabel("quota / capacity (%)" + (f"  -  bars past {limit:.0f}% are clipped" if clipped else ""))
    axes.set_yticks(positions, [bar.label for bar in shown], fontsize=10)
    axes.set_ylim(-0.7, len(shown) - 0.1)
    axes.grid(axis="x", alpha=0.3)
    # Separate flavors with a faint line: the rows come flavor by flavor.
    for y, (above, below) in zip(positions, zip(shown, shown[1:])):
        if above.label.split(" · ")[0] != below.label.split(" · ")[0]:
            axes.axhline(y - 0.5, color="#cccccc", linewidth=0.8)
