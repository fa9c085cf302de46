"""What Kueue charges a pod set for: `resources.excludeResourcePrefixes` and `resources.transformations`.

Kueue v0.19.2 computes a pod set's requests in `pkg/workload/workload.go`
`totalRequestsFromPodSets`: Kubernetes' PodRequests of the template (limits standing in for
missing requests and overhead added, which `pkg/workload/resources.go` `AdjustResources`
put there when the Workload was built), then `dropExcludedResources` (every resource whose
name starts with an excluded prefix is dropped), then `applyResourceTransformations`, then
the result in integer units floored at zero (`Requests.FloorToZero`) and times the count.

A transformation (`config.ResourceTransformation`) turns one input resource into outputs:
each output is the input's quantity times the output's factor; with `multiplyBy` naming
another resource of the same pod, the input's quantity is first multiplied by that
resource's quantity (when the pod asks for it). `Retain` (the default) keeps the input,
`Replace` drops it. What the transformations generate is summed per output name apart
from what the pod asks for; a name whose generated sum is negative (a negative factor
writes an allowance) becomes 0 before it is added to the pod's own request of that name,
so an allowance never reduces an ordinary request.

`ResourceRules.apply` is that step on exact quantities; `aks_kueue.admission.workloads`
applies it where a Workload's usage is computed, so simulate, the pack's feasibility
checks, sample-job and replay all charge what Kueue charges. The rules come from the
Kueue Configuration in force (`ResourceRules.from_configuration`); the AKS managed
extension's Configuration cannot carry them (`aks_kueue.aks.managed_extension`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any, Mapping, Optional

from aks_kueue.k8s.quantity import QuantityError, parse_quantity

_ZERO = Fraction(0)


class Strategy(str, Enum):
    """`config.ResourceTransformationStrategy`: what happens to the input resource."""

    def __str__(self) -> str:  # as enum.StrEnum (Python 3.11) does; this runs on 3.10 too
        return self.value

    RETAIN = "Retain"
    REPLACE = "Replace"


@dataclass(frozen=True)
class Transformation:
    """One `resources.transformations[]` entry, its factors as exact quantities."""

    input: str
    strategy: Strategy = Strategy.RETAIN
    outputs: tuple[tuple[str, Fraction], ...] = ()
    multiply_by: Optional[str] = None

    def describe(self) -> str:
        """`cpu -> cpu_credits x1 (Retain)`: how messages name it."""
        factors = ", ".join(f"{name} x{_number(f)}" for name, f in self.outputs) or "nothing"
        times = f" times {self.multiply_by}" if self.multiply_by else ""
        return f"{self.input}{times} -> {factors} ({self.strategy})"


@dataclass(frozen=True)
class ResourceRules:
    """`resources.excludeResourcePrefixes` and `resources.transformations` of a Configuration."""

    exclude_prefixes: tuple[str, ...] = ()
    transformations: tuple[Transformation, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.exclude_prefixes or self.transformations)

    @classmethod
    def from_configuration(cls, configuration: Optional[Mapping[str, Any]]) -> "ResourceRules":
        """The rules of a Configuration as Kueue decodes it (a missing strategy is Retain). A
        factor that is not a quantity is left out: Kueue's decoder refuses such a file, and the
        Configuration checks report it."""
        resources = (configuration or {}).get("resources") if isinstance(configuration, Mapping) else None
        if not isinstance(resources, Mapping):
            return cls()
        prefixes = tuple(p for p in resources.get("excludeResourcePrefixes") or () if isinstance(p, str))
        found: dict[str, Transformation] = {}
        for entry in resources.get("transformations") or ():
            if not isinstance(entry, Mapping) or not isinstance(entry.get("input"), str):
                continue
            outputs = []
            for name, factor in (entry.get("outputs") or {}).items():
                value = _factor(factor)
                if value is not None:
                    outputs.append((str(name), value))
            strategy = Strategy.REPLACE if entry.get("strategy") == Strategy.REPLACE.value else Strategy.RETAIN
            multiply_by = entry.get("multiplyBy") if isinstance(entry.get("multiplyBy"), str) else None
            # Kueue keys them by input (`utilslices.ToRefMap`): a later duplicate wins (validation refuses one).
            found[entry["input"]] = Transformation(entry["input"], strategy, tuple(outputs), multiply_by or None)
        return cls(prefixes, tuple(found.values()))

    @property
    def by_input(self) -> dict[str, Transformation]:
        return {t.input: t for t in self.transformations}

    def generated(self) -> set[str]:
        """Every resource name a transformation outputs."""
        return {name for t in self.transformations for name, _ in t.outputs}

    def excluded(self, resource: str) -> bool:
        return any(resource.startswith(prefix) for prefix in self.exclude_prefixes)

    def apply(self, requests: Mapping[str, Fraction]) -> dict[str, Fraction]:
        """One pod's requests as Kueue charges them: excluded prefixes dropped, then the
        transformations (`dropExcludedResources`, `applyResourceTransformations`)."""
        kept = {r: q for r, q in requests.items() if not self.excluded(r)} if self.exclude_prefixes else dict(requests)
        transforms = self.by_input
        if not any(r in transforms for r in kept):
            return kept
        retained: dict[str, Fraction] = {}
        generated: dict[str, Fraction] = {}
        for resource, quantity in kept.items():
            transformation = transforms.get(resource)
            if transformation is None:
                retained[resource] = quantity
                continue
            base = quantity
            if transformation.multiply_by is not None and transformation.multiply_by in kept:
                base = quantity * kept[transformation.multiply_by]
            for name, factor in transformation.outputs:
                generated[name] = generated.get(name, _ZERO) + base * factor
            if transformation.strategy is Strategy.RETAIN:
                retained[resource] = quantity
        for name, quantity in generated.items():
            retained[name] = retained.get(name, _ZERO) + max(quantity, _ZERO)
        return retained

    def describe(self) -> list[str]:
        lines = [f"excludeResourcePrefixes {', '.join(self.exclude_prefixes)}"] if self.exclude_prefixes else []
        return lines + [t.describe() for t in self.transformations]


NO_RULES = ResourceRules()


def _factor(value: Any) -> Optional[Fraction]:
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        value = repr(value)  # YAML's 0.5 is the quantity "0.5"
    try:
        return parse_quantity(value)
    except (QuantityError, ValueError, TypeError):
        return None


def _number(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(float(value))
