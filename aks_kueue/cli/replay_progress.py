"""How `aks-kueue replay` shows it is alive on stderr: a progress bar on a terminal, and otherwise (a CI
log, a file) a line every few seconds once the replay has run that long, so a long replay is never
silent. A short replay prints nothing."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional, TextIO

from aks_kueue.replay.engine import Progress
from aks_kueue.replay.trace import format_duration

# Seconds between two progress lines when stderr is not a terminal (the first comes after as long).
LINE_EVERY = 5.0

Update = Callable[[Progress], None]


def line(label: str, progress: Progress) -> str:
    """`replay (stack prod): 12,345 events, virtual time 3h25m, 1,200 of 5,000 workloads submitted, 1,100 finished`."""
    return (f"{label}: {progress.events:,} events, virtual time {format_duration(progress.now)}, "
            f"{progress.submitted:,} of {progress.workloads:,} workloads submitted, {progress.finished:,} finished")


def label(name: str, index: int, total: int) -> str:
    return f"replay {index + 1}/{total} ({name})" if total > 1 else f"replay ({name})"


class Lines:
    """A progress line on `stream` at most every `every` seconds (by `clock`), the first after as long."""

    def __init__(self, label: str, stream: TextIO, every: Optional[float] = None,
                 clock: Callable[[], float] = time.monotonic):
        self.label, self.stream, self.clock = label, stream, clock
        self.every = LINE_EVERY if every is None else every
        self.next_at = clock() + self.every

    def __call__(self, progress: Progress) -> None:
        now = self.clock()
        if now >= self.next_at:
            self.next_at = now + self.every
            self.stream.write(line(self.label, progress) + "\n")
            self.stream.flush()


@contextmanager
def progress(name: str, index: int, total: int, stream: Optional[TextIO] = None) -> Iterator[Update]:
    """What the replay of one configuration calls with its progress: a bar on a terminal, lines otherwise."""
    stream = stream or sys.stderr
    title = label(name, index, total)
    if not stream.isatty():
        yield Lines(title, stream)
        return
    from rich.console import Console
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    with Bar(TextColumn("{task.description}"), BarColumn(),
             TextColumn("{task.fields[virtual]} virtual, {task.completed:,.0f} events"),
             TimeElapsedColumn(), console=Console(file=stream), transient=True) as bar:
        task = bar.add_task(title, total=1, virtual="0s")
        # The bar's total grows as events are queued: every workload is at least a submission and an end.
        yield lambda p: bar.update(task, completed=p.events, total=max(p.events + p.queued, 1),
                                   virtual=format_duration(p.now))


__all__ = ["progress", "line", "label", "Lines", "LINE_EVERY"]
