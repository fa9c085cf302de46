"""Suggest the intended spelling of a key or name."""

from __future__ import annotations

import difflib
from typing import Iterable


def suggest(word: str, choices: Iterable[str]) -> str:
    """"; did you mean 'x'?" for the closest known spelling, or nothing."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""
