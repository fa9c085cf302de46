"""`aks-kueue:allowReplacement`: what this update may replace or delete.

Each entry names exactly one resource: `cluster`, `systemPool`, `nodePools.<name>`, `kueue`,
`resourceGroup` or `namespaces.<name>`. Listing it unprotects that resource (and, for a team
namespace, turns retainOnDelete off) for this update only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Optional


class Target(str, Enum):
    """A StrEnum (3.11) spelled for Python 3.10 too."""

    RESOURCE_GROUP = "resourceGroup"
    CLUSTER = "cluster"
    SYSTEM_POOL = "systemPool"
    NODE_POOL = "nodePools"
    KUEUE = "kueue"
    NAMESPACE = "namespaces"

    def __str__(self) -> str:
        return self.value


NAMED = {Target.NODE_POOL, Target.NAMESPACE}
_POOL_NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")
_NAMESPACE = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
FORMS = "cluster, systemPool, nodePools.<name>, kueue, resourceGroup or namespaces.<name>"


@dataclass(frozen=True, order=True)
class Entry:
    target: Target
    name: Optional[str] = None

    def __str__(self) -> str:
        return f"{self.target}.{self.name}" if self.name is not None else str(self.target)


def parse_entry(text: object) -> Entry:
    """One entry, or a ValueError that says what the entry may be."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not an entry; write one of {FORMS}")
    head, dot, name = text.partition(".")
    try:
        target = Target(head)
    except ValueError:
        raise ValueError(f"{text!r} is not an entry; write one of {FORMS}") from None
    if target not in NAMED:
        if dot:
            raise ValueError(f"{text!r}: {head} takes no name; write {head}")
        return Entry(target)
    if not name:
        raise ValueError(f"{text!r} names no {'pool' if target is Target.NODE_POOL else 'namespace'}; "
                         f"write {head}.<name>")
    pattern = _POOL_NAME if target is Target.NODE_POOL else _NAMESPACE
    if not pattern.fullmatch(name):
        kind = ("an AKS pool name (^[a-z][a-z0-9]{0,11}$)" if target is Target.NODE_POOL
                else "a namespace name (a DNS label)")
        raise ValueError(f"{text!r}: {name!r} is not {kind}")
    return Entry(target, name)


class Allowances:
    """The parsed entries of one update."""

    def __init__(self, entries: Iterable[Entry] = ()):
        self.entries = frozenset(entries)

    @classmethod
    def parse(cls, texts: Iterable[object]) -> "Allowances":
        return cls(parse_entry(t) for t in texts)

    def __contains__(self, entry: Entry) -> bool:
        return entry in self.entries

    def __iter__(self):
        return iter(sorted(self.entries))

    def __bool__(self) -> bool:
        return bool(self.entries)


@dataclass(frozen=True)
class Protection:
    """Which resources this update protects, from aks-kueue:protect and allowReplacement."""

    protect: bool
    allowances: Allowances

    def protects(self, entry: Entry) -> bool:
        return self.protect and entry not in self.allowances

    def retains(self, entry: Entry) -> bool:
        """Team namespaces survive their removal from the stack unless listed."""
        return entry not in self.allowances
