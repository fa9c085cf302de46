"""Reading parts of a Kubernetes object that may be missing or of the wrong shape.

A reader takes a part that is absent, or not a map, as empty: the validators report the wrong shape
(with the API server's words, `field.py`), and nothing downstream fails on it. Typed, so that what
comes back is a map to the type checker too (a conditional on `obj.get(key)` narrows nothing).
"""

from __future__ import annotations

from typing import Any, Mapping


def map_at(value: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The map under `key`, or an empty one where there is none or something else."""
    found = value.get(key)
    return found if isinstance(found, dict) else {}


def maps_at(value: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """The maps of the list under `key`: none where there is no list, and no item that is not a map."""
    found = value.get(key)
    return [item for item in found if isinstance(item, dict)] if isinstance(found, list) else []
