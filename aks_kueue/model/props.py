"""Reading resource properties the way a policy is handed them.

The engine gives a policy `props` wrapped in pulumi_policy's unknown-checking proxy:
reading a value that is unknown during preview raises `UnknownValueError`, which the
policy runtime turns into an advisory "can't run policy ... during preview". These
helpers read only through the proxy, so that behaviour is kept, and they turn a value
of the wrong shape into `UnreadableValue` with a sentence, never into a crash.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class UnreadableValue(ValueError):
    """A value Pulumi hands the program exists but has a shape it cannot use: a resource's property (as the pack
    reads it), or another stack's output (`fleet_outputs`); what is wrong and, where there is advice, what to do."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(f"{message}; {fix}" if fix else message)
        self.message, self.fix = message, fix


def get(props: Any, *path: str, default: Any = None) -> Any:
    """The value at `path`, or `default` when a key along it is absent (or null)."""
    value = props
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return default
        value = value[key]
    return default if value is None else value


def text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise UnreadableValue(f"{what} is {_show(value)}, not text")
    return value


def integer(value: Any, what: str) -> int:
    """Engine numbers arrive as floats; a whole float is an integer."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise UnreadableValue(f"{what} is {_show(value)}, not a whole number")
    return int(value)


def mapping(value: Any, what: str) -> Mapping:
    if not isinstance(value, Mapping):
        raise UnreadableValue(f"{what} is {_show(value)}, not a map")
    return value


def sequence(value: Any, what: str) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise UnreadableValue(f"{what} is {_show(value)}, not a list")
    return [value[i] for i in range(len(value))]


def string_map(value: Any, what: str) -> dict[str, str]:
    return {str(k): text(v, f"{what}.{k}") for k, v in mapping(value, what).items()}


def string_list(value: Any, what: str) -> list[str]:
    return [text(v, f"{what}[{i}]") for i, v in enumerate(sequence(value, what))]


def plain(value: Any) -> Any:
    """A proxied value as plain dicts and lists, read key by key (unknowns raise)."""
    if isinstance(value, Mapping):
        return {str(k): plain(value[k]) for k in value}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [plain(value[i]) for i in range(len(value))]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def stack_of(urn: Any) -> str:
    """The stack name a URN carries: urn:pulumi:<stack>::<project>::<type>::<name>."""
    if not isinstance(urn, str) or not urn.startswith("urn:pulumi:"):
        return ""
    return urn[len("urn:pulumi:"):].split("::", 1)[0]


def _show(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a map"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "a list"
    shown = repr(value)
    return shown if len(shown) <= 40 else shown[:37] + "..."
