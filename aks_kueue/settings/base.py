"""Shared pieces of the settings models: strict camelCase models and field-pinned errors."""

from __future__ import annotations

import difflib

from pydantic import BaseModel, ConfigDict
from pydantic_core import PydanticCustomError


def _to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class Model(BaseModel):
    """Stack YAML is camelCase and strict: an unknown key is an error, never ignored."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=_to_camel, populate_by_name=True,
        str_strip_whitespace=True,
    )


def suggest(word: str, choices) -> str:
    """"; did you mean 'x'?" for the closest known spelling, or nothing."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def field_error(field: str, message: str) -> PydanticCustomError:
    """An error from a model validator that points at one of the model's fields.

    Model validators report at the model's own path; the formatter appends `field`
    so the user sees the key that has to change, e.g. `nodePools[1].minCount`.
    """
    return PydanticCustomError("field", "{message}", {"field": field, "message": message})
