"""A finding: what is wrong, where it is written, the numbers, and how to fix it.

One dataclass everywhere: the judge returns findings, the program refuses a config with
them, the policy pack reports them as violations and the CLI renders them. It is built by
keyword only; a rule of the judge builds its findings through its registered rule
(`judge.rules.finding`), which gives them the severity it declares, and which also says whether
they block the program and where they are documented.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping

from aks_kueue.kueue.units import CPU


class Severity(str, Enum):
    ERROR = "error"      # admitted work would wait forever, the install would fail, or the config is unusable
    WARNING = "warning"  # may work, but nothing here can show that it will

    def __str__(self) -> str:
        return self.value


ERROR = Severity.ERROR
WARNING = Severity.WARNING


@dataclass(frozen=True)
class Amount:
    """A figure with its unit, as JSON carries it: cpu in cores, memory in bytes, the rest counted."""

    value: int | float
    unit: str

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "unit": self.unit}


@dataclass(frozen=True, kw_only=True)
class Finding:
    kind: str             # the id of its rule (the day-2 guard's and the program's own kinds are not rules)
    severity: Severity
    object: str           # what it is about, e.g. "ClusterQueue team-a", "node pool t4"
    key: str              # the key to edit, e.g. aks-kueue:queues.clusterQueues[0].spec....nominalQuota
    message: str          # what is wrong
    fix: str = ""         # what to do about it
    numbers: Mapping[str, Any] = field(default_factory=dict)
    # Where its rule is documented, the explanation its one-sentence message leaves out (`Rule.documentation`,
    # given by the rule); empty for a kind that is no rule of the judge (the day-2 guard's, the program's).
    documentation: str = field(default="", compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "severity": self.severity.value, "object": self.object, "key": self.key,
                "message": self.message, "fix": self.fix,
                "numbers": _json(dict(self.numbers)), "documentation": self.documentation}

    def __str__(self) -> str:
        """`<key>: <message>; <fix>`, the line the program prints."""
        return f"{self.key}: {self.message}" + (f"; {self.fix}" if self.fix else "")

    def violation(self) -> str:
        """The pack's violation message: the line, then where its rule explains it (CrossGuard carries
        nothing but a message and a URN)."""
        return str(self) + (f" (see {self.documentation})" if self.documentation else "")


def _json(value: Any) -> Any:
    if isinstance(value, Amount):
        return value.to_json()
    if isinstance(value, Mapping):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value


def field_key(key: str, path: str) -> str:
    """The key of a field of an object: a stack-file path goes on with `.path`, anything else
    (a queue manifest, a resource without a known key) is followed by `: path`."""
    if not path:
        return key
    return f"{key}.{path}" if key.startswith("aks-kueue:") and ": " not in key else f"{key}: {path}"


def amount(resource: str, value: int) -> Amount:
    """A value in Kueue's units (cpu in millicores) as an Amount in the JSON's units."""
    if resource == CPU:
        cores = value / 1000
        return Amount(int(cores) if cores == int(cores) else cores, "cores")
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return Amount(value, "bytes")
    return Amount(value, "count")


def show(resource: str, value: int) -> str:
    """An amount in Kueue units, readable: cores, GiB, or a count."""
    if resource == CPU:
        cores = value / 1000
        return f"{cores:g}" if value % 10 == 0 else f"{cores:.3f}"
    if resource in ("memory", "ephemeral-storage"):
        return f"{value / 2**30:.2f}Gi"
    return str(value)
