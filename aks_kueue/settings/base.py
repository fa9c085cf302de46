"""Shared pieces of the settings models: strict camelCase models, field checks and field-pinned errors."""

from __future__ import annotations

import re
from itertools import islice
from typing import Any, Callable, Iterator, Optional, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from aks_kueue.k8s.field import Path
from aks_kueue.k8s.spelling import suggest  # noqa: F401  (re-exported for the settings modules)

# An Entra object ID (a user's, a group's): a GUID.
GUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")
# A field below a model: its path (`nodePools[1].minCount`, a `k8s.field.Path` or its text), or its parts
# (('values', 'a', 0)).
FieldPath = Union[str, Path, tuple]


def _to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def snake(camel: str) -> str:
    """A key's field name: `logAnalyticsWorkspaceId` -> `log_analytics_workspace_id`; also a provider
    input's name in its Python SDK (`createNamespace` -> `create_namespace`)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()


class ConfigModel(BaseModel):
    """Stack YAML is camelCase and strict: an unknown key is an error, never ignored."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=_to_camel, populate_by_name=True,
        str_strip_whitespace=True,
    )


def field_error(field: FieldPath, message: str) -> PydanticCustomError:
    """An error from a model validator that points at one of the model's fields.

    Model validators report at the model's own path; the formatter appends `field`
    so the user sees the key that has to change, e.g. `nodePools[1].minCount`.
    """
    return PydanticCustomError("field", "{message}", {"field": field, "message": message})


def field_errors(problems: list[tuple[FieldPath, str]]) -> ValidationError:
    """Several `field_error`s from one validator, so they are all reported together.

    Raise the result; pydantic merges its errors into the model's, each pinned to its field.
    """
    return ValidationError.from_exception_data("settings", [
        InitErrorDetails(type=field_error(field, message), loc=(), input=None) for field, message in problems])


def check(method: Optional[Callable[[Any], Iterator[tuple[FieldPath, str]]]] = None, *, first: bool = False) -> Any:
    """A model check written as a generator of (field, message) problems, run after the fields are
    read (`model_validator(mode="after")`). `@check` reports every problem it yields; `@check(first=True)`
    only the first, where a later one would be noise (or assumes the earlier ones do not hold)."""
    if method is None:
        return lambda method: check(method, first=first)

    def run(self):
        problems = list(islice(method(self), 1 if first else None))
        if problems:
            raise field_errors(problems)
        return self
    return model_validator(mode="after")(run)


def checked(problem: Callable[[Any], Optional[str]]) -> AfterValidator:
    """A field `problem(value)` finds fault with (its message) or not (None): `Annotated[int, checked(f)]`."""
    def validate(value: Any) -> Any:
        message = problem(value)
        if message:
            raise ValueError(message)
        return value
    return AfterValidator(validate)


def matching(pattern: re.Pattern, problem: str) -> AfterValidator:
    """A text field `pattern` must match in full; the message is then the value, quoted, and `problem`."""
    return checked(lambda value: None if pattern.fullmatch(value) else f"{value!r} {problem}")
