"""The report's arithmetic, one copy for every part of it: nearest-rank percentiles and rounding."""

from __future__ import annotations

import math
from typing import Optional, Sequence


def percentile(values: Sequence[float], share: float) -> Optional[float]:
    """Nearest rank: the p95 of 20 values is the 19th smallest; None without values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


def rounded(value: Optional[float], digits: int = 3) -> Optional[float]:
    """To `digits` places, never -0.0; None stays None."""
    if value is None:
        return None
    found = round(float(value), digits)
    return 0.0 if found == 0 else found


__all__ = ["percentile", "rounded"]
