"""Replaying one configuration or two for `aks-kueue replay`.

Two configurations (`--compare-*`) are independent replays of one trace, so they run side by side:
the second in a child process forked after the trace is read (it shares the trace's memory until it
writes to it), the first in this one. The child hands back its part of the report (`report.Result`):
the summary, the time series, and its workloads written to a file in a scratch directory, which the
document then streams. The output is the same, byte for byte, as replaying them one after the other;
where a process cannot be forked (no `fork` start method, one CPU) they are.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from typing import Any, Iterator, Optional

from aks_kueue.replay import ReplayConfig, ReplayOptions, Trace
from aks_kueue.replay import replay as run_replay
from aks_kueue.replay.report import Result, result


def can_fork() -> bool:
    """Whether the second configuration can run in a process of its own, on a CPU of its own."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cpus >= 2 and "fork" in multiprocessing.get_all_start_methods()


@contextmanager
def replayed(configurations: list[ReplayConfig], trace: Trace, until: Optional[float],
             concurrent: Optional[bool] = None, since: float = 0.0, series: bool = True) -> Iterator[list[Result]]:
    """Each configuration's `Result`, in order, its report's window from `since` to `until` (`series`: with the
    usage over time a picture draws); the files they stream from go when the block ends."""
    from aks_kueue.cli.replay_progress import progress

    scratch = tempfile.mkdtemp(prefix="aks-kueue-replay-")
    child: Optional[_Child] = None
    try:
        total = len(configurations)
        if total == 2 and (can_fork() if concurrent is None else concurrent):
            child = _Child(configurations[1], trace, ReplayOptions(until=until, since=since, series=series),
                           os.path.join(scratch, "workloads-1.jsonl"), total)
        results = []
        for index, configuration in enumerate(configurations):
            if child is not None and index == 1:
                results.append(child.result())
                continue
            with progress(configuration.name, index, total) as update:
                options = ReplayOptions(until=until, since=since, progress=update, series=series)
                results.append(result(run_replay(configuration, trace, options)))
        yield results
    finally:
        if child is not None:
            child.stop()
        shutil.rmtree(scratch, ignore_errors=True)


class _Child:
    """One configuration replayed in a forked process; `result()` waits for its answer."""

    def __init__(self, configuration: ReplayConfig, trace: Trace, options: ReplayOptions, path: str, total: int):
        context = multiprocessing.get_context("fork")
        self.name = configuration.name
        self.receive, send = context.Pipe(duplex=False)
        # What exists now (the trace above all) is left out of cyclic collections from here on, in both
        # processes: in the child, a collection would touch, and so copy, every page it shares. It lives
        # until the command ends anyway (`few_collections` puts the collector back then).
        gc.freeze()
        self.process = context.Process(target=_replay_in_child, args=(configuration, trace, options, path, total,
                                                                      send), daemon=True)
        self.process.start()
        send.close()

    def stop(self) -> None:
        """The replay ended early here (an error): the child's work is not wanted."""
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()

    def result(self) -> Result:
        try:
            kind, payload = self.receive.recv()
        except EOFError:
            self.process.join()
            raise RuntimeError(f"the replay of {self.name} in its own process ended without an answer (exit code "
                               f"{self.process.exitcode}; out of memory?)") from None
        finally:
            self.receive.close()
        self.process.join()
        if kind == "error":
            raise RuntimeError(payload)
        return payload


def _replay_in_child(configuration: ReplayConfig, trace: Trace, options: ReplayOptions, path: str, total: int,
                     send: Any) -> None:
    from aks_kueue.cli.replay_progress import Lines, label

    try:
        update = Lines(label(configuration.name, 1, total), sys.stderr)
        options.progress = update
        found = result(run_replay(configuration, trace, options))
        found.part["workloads"] = found.part["workloads"].to_file(path)
        send.send(("result", found))
    except BaseException as error:  # noqa: BLE001 - the parent says what happened, as for a bug of its own
        send.send(("error", f"{type(error).__name__}: {error}"))
    finally:
        send.close()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # not the parent's atexit handlers, nor its buffered output a second time


__all__ = ["replayed", "can_fork"]
