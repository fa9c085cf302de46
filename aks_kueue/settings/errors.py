"""Turn validation failures into `aks-kueue:<key path>: <what is wrong; what is right>` lines."""

from __future__ import annotations

import re
import typing

from pydantic import BaseModel, ValidationError

from aks_kueue.k8s.field import FieldError
from aks_kueue.settings.base import PROBLEM, ConfigModel, suggest

NAMESPACE = "aks-kueue"
_PATH_PART = re.compile(r"\[([^\]]*)\]|([^.\[\]]+)")
_PROVIDER_KEYS = {"location": "azure-native:location", "azure-native:environment": "azure-native:environment"}


class SettingsError(Exception):
    """Every problem of one stack config, reported together: each a field error whose path is the config key
    (`aks-kueue:nodePools[0].vmSize`)."""

    def __init__(self, problems: list[FieldError]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


def format_path(loc: tuple) -> str:
    if not loc:
        return f"{NAMESPACE}:"
    head, *rest = loc
    text = _PROVIDER_KEYS.get(head) or f"{NAMESPACE}:{head}"
    for part in rest:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def problems_from(error: ValidationError, root: type[ConfigModel], secret=None) -> list[FieldError]:
    """Each error of a stack config at its key: the settings' own `problem`s, and pydantic's (a missing or
    unknown key, a value of the wrong type). `secret(path)`: whether a config path is inside a secret key; its
    value is then never shown (the caller also takes every secret value out of the messages, `aks_kueue.secrets`)."""
    problems = []
    for err in error.errors():
        loc = tuple(err["loc"])
        kind, fix = err["type"], ""
        if kind == PROBLEM:
            field = err["ctx"]["field"]
            loc += field if isinstance(field, tuple) else split_path(str(field))
            message, fix = err["ctx"]["message"], err["ctx"]["fix"]
        elif kind == "missing":
            message, fix = "is required but missing", "add it (see the stack-config contract)"
        elif kind == "extra_forbidden":
            message = "unknown key" + _suggestion(root, loc)
        elif kind == "value_error":
            message = err["msg"].removeprefix("Value error, ")
        else:
            expected = err["msg"].replace("Input should be", "expected").replace("Input", "the value")
            shown = "the secret value" if secret is not None and secret(format_path(loc)) else \
                _short(err.get("input"))
            message = f"{shown} is not valid: {expected}"
        problems.append(FieldError(format_path(loc), message, fix))
    return problems


def split_path(path: str) -> tuple:
    """`values.a[0].b[nvidia.com/gpu]` -> ('values', 'a', 0, 'b', 'nvidia.com/gpu'); `[0].name` -> (0, 'name')."""
    return tuple(name or (int(key) if key.isdigit() else key) for key, name in _PATH_PART.findall(path))


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _suggestion(root: type[ConfigModel], loc: tuple) -> str:
    model = _model_at(root, loc[:-1])
    if model is None or not isinstance(loc[-1], str):
        return ""
    known = [f.alias or name for name, f in model.model_fields.items()]
    hint = suggest(loc[-1], known)
    return hint or f"; known keys here: {', '.join(sorted(known))}"


def _model_at(model: type[BaseModel], loc: tuple):
    annotation: typing.Any = model
    for part in loc:
        annotation = _unwrap(annotation)
        if isinstance(part, int):
            args = typing.get_args(annotation)
            annotation = args[0] if args else None
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = next((f for n, f in annotation.model_fields.items() if (f.alias or n) == part), None)
            annotation = field.annotation if field else None
        else:
            return None
    annotation = _unwrap(annotation)
    return annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None


def _unwrap(annotation):
    """Optional[X] -> X."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) is typing.Union and len(args) == 1:
        return args[0]
    return annotation
