"""Field paths and field errors, written as Kubernetes writes them.

The one place the API server's wording lives (k8s.io/apimachinery/pkg/util/validation/field:
`path.go` renders paths, `errors.go` the messages). Every validator, webhook port and settings
check builds its errors here: `field.required(path.child("timeout"))`, never a hand-typed
"Required value" or a dotted path put together by hand.

`FieldError` is the one field error type: where (the rendered path, or a stack-config key's
path in settings), what is wrong (the message) and, where this program has advice, what to do
(the fix); a check across many objects also says which object (`kueue.validate.validate_set`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field as attribute, replace
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from aks_kueue.k8s import names

# `invalid(path, OMIT, detail)`: a value not worth showing (too large, or a secret).
OMIT = object()


class Path:
    """A field path: `spec.resourceGroups[0].flavors[1]`, `metadata.labels[foo]`.

    Immutable; `child`, `index` and `key` return a longer path, `str()` renders it."""

    __slots__ = ("_text",)

    def __init__(self, *names: str):
        self._text = ".".join(str(name) for name in names if name != "")

    def _with(self, text: str) -> "Path":
        path = object.__new__(Path)  # validators build paths in their hot loops: skip __init__'s join
        path._text = text
        return path

    def child(self, name: str, *more: str) -> "Path":
        text = self._text
        for part in (name, *more):
            text = f"{text}.{part}" if text else str(part)
        return self._with(text)

    def index(self, index: int) -> "Path":
        return self._with(f"{self._text}[{index}]")

    def key(self, key: Any) -> "Path":
        return self._with(f"{self._text}[{key}]")

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Path({self._text!r})"

    def __eq__(self, other: object) -> bool:
        return str(self) == str(other) if isinstance(other, (Path, str)) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._text)


@dataclass(frozen=True)
class FieldError:
    """One thing wrong with one field; `field` is the rendered path ("" for the whole object)."""

    field: str
    message: str
    fix: str = ""  # what to do about it, where this program says (the API server's own errors do not)
    # The object whose field it is, where a check of many objects found it; the others know it already.
    object: Any = attribute(default=None, compare=False, repr=False)

    def of(self, obj: Any) -> "FieldError":
        """The same error, about `obj`."""
        return replace(self, object=obj)

    @property
    def path(self) -> str:
        """The same as `field`: the name settings and the CLI use for a config key's path."""
        return self.field

    @property
    def text(self) -> str:
        """The message, and the fix after a semicolon: `is not a CIDR block; write it like 10.244.0.0/16`."""
        return f"{self.message}; {self.fix}" if self.fix else self.message

    def __str__(self) -> str:
        return f"{self.field}: {self.text}" if self.field else self.text


def show(value: Any) -> str:
    """A value as a message shows it: JSON (strings quoted), cut at 80 characters. YAML also yields
    dates, sets and mixed-type keys, which JSON cannot write: those fall back to Python's spelling."""
    try:
        text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _error(path: Union[Path, str], kind: str, value: Any = OMIT, detail: str = "") -> FieldError:
    text = kind if value is OMIT else f"{kind}: {show(value)}"
    return FieldError(str(path), f"{text}: {detail}" if detail else text)


def required(path: Union[Path, str], detail: str = "") -> FieldError:
    return _error(path, "Required value", detail=detail)


def invalid(path: Union[Path, str], value: Any, detail: str = "") -> FieldError:
    return _error(path, "Invalid value", value, detail)


def not_supported(path: Union[Path, str], value: Any, supported: Iterable[Any] = (), detail: str = "") -> FieldError:
    """`NotSupported`: the supported values listed, or (`detail`) what is supported said in words."""
    return _error(path, "Unsupported value", value,
                  detail or "supported values: " + ", ".join(show(v) for v in supported))


def forbidden(path: Union[Path, str], detail: str) -> FieldError:
    return _error(path, "Forbidden", detail=detail)


def duplicate(path: Union[Path, str], value: Any, detail: str = "") -> FieldError:
    return _error(path, "Duplicate value", value, detail)


def not_found(path: Union[Path, str], value: Any = OMIT, detail: str = "") -> FieldError:
    """`NotFound`: a reference to something that does not exist."""
    return _error(path, "Not found", value, detail)


def too_many(path: Union[Path, str], actual: int, maximum: int, items: str = "items") -> FieldError:
    """`TooMany`; Kueue's webhooks name what is counted (`items`) where apimachinery says items."""
    return FieldError(str(path), f"Too many: {actual}: must have at most {maximum} {items}")


def too_few(path: Union[Path, str], actual: int, minimum: int) -> FieldError:
    """The apiextensions validator's words for `minItems`/`minProperties`."""
    return FieldError(str(path), f"Too few: {actual}: must have at least {minimum} items")


def too_long(path: Union[Path, str], maximum: int) -> FieldError:
    return _error(path, "Too long", detail=f"may not be more than {maximum} bytes")


def unique(path: Union[Path, str], name: Any, seen: set, problem: Optional[str] = None) -> list[FieldError]:
    """One entry's name in a list of named entries: what a name rule found wrong with it (`problem`),
    then a Duplicate value when an earlier entry had it; `seen` collects the names."""
    errors = [invalid(path, name, problem)] if problem else []
    if name in seen:
        errors.append(duplicate(path, name))
    seen.add(name)
    return errors


def unknown(path: Union[Path, str], fix: str = "", detail: str = "") -> FieldError:
    """A key strict decoding refuses, in the decoder's words, which name its whole path (`unknown field
    "spec.foo"`, as the API server and Kueue's Configuration decoder say); `fix` is the advice (a "did you
    mean"), `detail` what the message goes on to say where the refusal has consequences of its own."""
    return FieldError(str(path), f"unknown field {json.dumps(str(path))}{detail}", fix)  # whole, never cut


def labels(values: Mapping[Any, Any], path: Union[Path, str], key_text: Callable[[Any], Any] = str) -> list[FieldError]:
    """`ValidateLabels`: each key a qualified name (as `key_text` spells it), each value a label value."""
    errors = []
    for key, value in values.items():
        if problem := names.qualified_name_problem(key_text(key)):
            errors.append(invalid(path, key, problem))
        if problem := names.label_value_problem(value):
            errors.append(invalid(path, value, problem))
    return errors
