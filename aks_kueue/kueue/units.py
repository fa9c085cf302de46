"""Kueue's integer units: CPU in milli-units, everything else in base units rounded up.

`format_amount` prints an amount back the way Kueue's messages do
(`pkg/resources/resource_formatter.go`): cpu as a milli quantity, memory and
ephemeral storage in binary units when they divide evenly, the rest as decimal SI.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping

from aks_kueue.k8s.pods import pod_requests
from aks_kueue.k8s.quantity import parse_quantity

CPU = "cpu"
INT64_MAX = 2**63 - 1
PODS = "pods"
_BINARY_RESOURCES = ("memory", "ephemeral-storage")
_BINARY_SUFFIXES = ((6, "Ei"), (5, "Pi"), (4, "Ti"), (3, "Gi"), (2, "Mi"), (1, "Ki"))
_DECIMAL_SUFFIXES = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"))


def amount(resource: str, quantity: str | int) -> int:
    """`Quantity.MilliValue()` for cpu, `Quantity.Value()` (rounded up) for the rest."""
    value = parse_quantity(quantity)
    return math.ceil(value * 1000) if resource == CPU else math.ceil(value)


def to_units(requests: Mapping[str, Fraction]) -> dict[str, int]:
    """Exact requests in Kueue's integer units, negatives as 0, clamped to int64 as Kueue does
    (utilmath.SafeMilliValue / SafeValue); a zero request stays (it is skipped later)."""
    units = {}
    for resource, value in requests.items():
        # ceil(n / d) in integers: Fraction arithmetic costs more than the rest of a request.
        numerator = value.numerator * 1000 if resource == CPU else value.numerator
        units[resource] = min(INT64_MAX, max(0, -(-numerator // value.denominator)))
    return units


def pod_units(pod_spec: Mapping[str, Any]) -> dict[str, int]:
    """A pod's effective requests (`k8s/pods.py`, the rule admission uses) in Kueue's units."""
    return to_units(pod_requests(pod_spec))


def format_amount(resource: str, value: int) -> str:
    if resource == CPU:
        return _decimal(value, milli=True)
    if resource in _BINARY_RESOURCES or resource.startswith("hugepages-"):
        magnitude = abs(value)
        if magnitude >= 1024:
            for power, suffix in _BINARY_SUFFIXES:
                if magnitude % 1024**power == 0:
                    return f"{value // 1024**power}{suffix}"
    return _decimal(value, milli=False)


def _decimal(value: int, milli: bool) -> str:
    """Canonical decimal SI: the largest power-of-1000 suffix that keeps an integer."""
    if value == 0:
        return "0"
    scaled = value * (1 if milli else 1000)  # in milli-units
    for power, suffix in _DECIMAL_SUFFIXES:
        unit = 10 ** (power + 3)
        if scaled % unit == 0:
            return f"{scaled // unit}{suffix}"
    if scaled % 1000 == 0:
        return str(scaled // 1000)
    return f"{scaled}m"
