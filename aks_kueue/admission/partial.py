"""Partial admission: Kueue's PodSetReducer (`podset_reducer.go`, v0.19.2).

Each podset may shrink from `count` towards `minCount`. Step k of the search takes
`floor(delta_i * k / total_delta)` pods off podset i; a binary search (Go's sort.Search)
finds the smallest step the predicate accepts, and what it returned there.
"""

from __future__ import annotations

from typing import Callable, Optional, TypeVar

R = TypeVar("R")


def reduce_counts(counts: list[int], min_counts: list[Optional[int]],
                  fits: Callable[[list[int]], tuple[R, bool]]) -> tuple[Optional[R], bool]:
    deltas = [count - (count if minimum is None else minimum) for count, minimum in zip(counts, min_counts)]
    total = sum(deltas)
    if total == 0:
        return None, False
    best, best_step = None, None
    low, high = 0, total + 1
    while low < high:
        step = (low + high) // 2
        result, ok = fits([count - delta * step // total for count, delta in zip(counts, deltas)])
        if ok:
            best, best_step, high = result, step, step
        else:
            low = step + 1
    return best, best_step is not None and low == best_step
