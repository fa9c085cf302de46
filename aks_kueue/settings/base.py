"""Shared pieces of the settings models: strict camelCase models, field checks, and the one way they report a problem.

A problem of a stack config is `problem(message, fix, at=...)`: what is wrong (one sentence), what to do, and
where below the model being validated (`at`, "" for the value itself). A field's validator raises it, a
`checked` function returns it, a model's `@check` yields every one it finds; pydantic collects them all, across
the whole config, and `errors.problems_from` turns each into a `FieldError` at its stack key.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Any, Callable, Iterable, Optional, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from aks_kueue.k8s.field import FieldError, Path
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


PROBLEM, WARNING = "field", "warning"  # the error types of `problem` and `warning`


def problem(message: str, fix: str = "", at: FieldPath = "") -> PydanticCustomError:
    """A problem (pydantic's own structured error, so that a validator can raise it): what is wrong with the
    value being validated or (`at`, its path below the model: `nodePools[1].minCount`, a `k8s.field.Path`, or
    parts) with one of its fields, and what to do about it."""
    return PydanticCustomError(PROBLEM, "{message}", {"field": at, "message": message, "fix": fix})


def warning(message: str, fix: str = "", at: FieldPath = "") -> PydanticCustomError:
    """What a check finds that the stack may keep, worth a line in every preview (`Settings.warnings`); the
    shape of a `problem`."""
    return PydanticCustomError(WARNING, "{message}", {"field": at, "message": message, "fix": fix})


def is_warning(found: PydanticCustomError) -> bool:
    return found.type == WARNING


def as_field_error(found: PydanticCustomError) -> FieldError:
    """A problem or warning as the field error it stands for, its field the path below the model."""
    context = found.context or {}
    return FieldError(str(context["field"]), context["message"], context["fix"])


def reported(error: FieldError, at: FieldPath = "") -> PydanticCustomError:
    """A `FieldError` of the core (an AKS limit, a Kueue check) as a problem of this model, at `at` or at the
    error's own field."""
    return problem(error.message, error.fix, at or error.field)


def raised(problems: Iterable[PydanticCustomError]) -> ValidationError:
    """Several problems from one validator as one error to raise: pydantic merges them into the model's, each at
    its field, so that all of them are reported together."""
    return ValidationError.from_exception_data("settings", [
        InitErrorDetails(type=each, loc=(), input=None) for each in problems])


def check(method: Optional[Callable[[Any], Iterable[PydanticCustomError]]] = None, *, first: bool = False) -> Any:
    """A model check written as a generator of `problem(...)`s, run after the fields are read
    (`model_validator(mode="after")`). `@check` reports every problem it yields; `@check(first=True)`
    only the first, where a later one would be noise (or assumes the earlier ones do not hold)."""
    if method is None:
        return lambda method: check(method, first=first)

    def run(self):
        problems = list(islice(method(self), 1 if first else None))
        if problems:
            raise raised(problems)
        return self
    return model_validator(mode="after")(run)


def checked(find: Callable[[Any], Union[PydanticCustomError, FieldError, None]]) -> AfterValidator:
    """A field `find(value)` finds a problem with (a `problem(...)`, or a core `FieldError`) or not (None):
    `Annotated[int, checked(f)]`."""
    def validate(value: Any) -> Any:
        found = find(value)
        if found:
            raise reported(found) if isinstance(found, FieldError) else found
        return value
    return AfterValidator(validate)


def matching(pattern: re.Pattern, what: str, fix: str) -> AfterValidator:
    """A text field `pattern` must match in full; else the message is the value, quoted, and `what` it is not."""
    return checked(lambda value: None if pattern.fullmatch(value) else problem(f"{value!r} {what}", fix))
