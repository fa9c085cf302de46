"""A finding: what is infeasible, where it is written, the numbers, and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

ERROR = "error"      # admitted work would wait forever, or the install would fail
WARNING = "warning"  # may work, but nothing here can show that it will


@dataclass(frozen=True)
class Finding:
    severity: str
    kind: str
    object: str           # e.g. "ClusterQueue team-a"
    field: str            # the key path, e.g. aks-kueue:queues.clusterQueues[0].spec....nominalQuota
    message: str
    fix: str
    numbers: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"severity": self.severity, "kind": self.kind, "object": self.object, "field": self.field,
                "numbers": dict(self.numbers), "message": self.message, "fix": self.fix}

    def __str__(self) -> str:
        return f"{self.severity}: {self.field}: {self.message}; {self.fix}"


def show(resource: str, value: int) -> str:
    """An amount in Kueue units, readable: cores, GiB, or a count."""
    if resource == "cpu":
        cores = value / 1000
        return f"{cores:g}" if value % 10 == 0 else f"{cores:.3f}"
    if resource in ("memory", "ephemeral-storage"):
        return f"{value / 2**30:.2f}Gi"
    return str(value)


def where(sources: Mapping[str, str], key: str, path: str = "") -> str:
    """The key path of a field: the object's stack-file path when known, else Kind/name."""
    base = sources.get(key)
    if base is None:
        kind, namespace, name = key.split("/", 2)
        base = f"{kind} {namespace + '/' if namespace else ''}{name}"
        return f"{base}: {path}" if path else base
    return f"{base}.{path}" if path else base


def describe(key: str) -> str:
    kind, namespace, name = key.split("/", 2)
    return f"{kind} {namespace + '/' if namespace else ''}{name}"
