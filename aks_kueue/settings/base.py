"""Shared pieces of the settings models: strict camelCase models and field-pinned errors."""

from __future__ import annotations

import re

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from aks_kueue.aks.limits import Range
from aks_kueue.k8s.spelling import suggest  # noqa: F401  (re-exported for the settings modules)

# An Entra object ID (a user's, a group's): a GUID.
GUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")


def _to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


class Model(BaseModel):
    """Stack YAML is camelCase and strict: an unknown key is an error, never ignored."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=_to_camel, populate_by_name=True,
        str_strip_whitespace=True,
    )


def field_error(field: str, message: str) -> PydanticCustomError:
    """An error from a model validator that points at one of the model's fields.

    Model validators report at the model's own path; the formatter appends `field`
    so the user sees the key that has to change, e.g. `nodePools[1].minCount`.
    """
    return PydanticCustomError("field", "{message}", {"field": field, "message": message})


def field_errors(problems: list[tuple[str, str]]) -> ValidationError:
    """Several `field_error`s from one validator, so they are all reported together.

    Raise the result; pydantic merges its errors into the model's, each pinned to its field.
    """
    return ValidationError.from_exception_data("settings", [
        InitErrorDetails(type=field_error(field, message), loc=(), input=None) for field, message in problems])


def within(limit: Range) -> AfterValidator:
    """A field the AKS API accepts only inside `limit`: `Annotated[int, within(limits.X)]`. The
    message gives the range and where it is written."""
    def check(value: int) -> int:
        problem = limit.problem(value)
        if problem:
            raise ValueError(problem)
        return value
    return AfterValidator(check)
