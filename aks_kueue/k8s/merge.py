"""Copying and merging nested maps: parsed YAML and JSON, Helm values, a flavor's `spec` over what a pool derives."""

from __future__ import annotations

import copy
from typing import Any


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Maps merge key by key; anything else in `override` replaces what `base` had."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def json_copy(value: Any) -> Any:
    """A copy of parsed YAML or JSON (maps, lists, scalars), faster than copy.deepcopy."""
    if isinstance(value, dict):
        return {k: json_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_copy(v) for v in value]
    return value
