"""Kueue's integer units: CPU in milli-units, everything else in base units rounded up."""

from __future__ import annotations

import math

from aks_kueue.kueue.quantity import parse_quantity

CPU = "cpu"


def amount(resource: str, quantity: str | int) -> int:
    """`Quantity.MilliValue()` for cpu, `Quantity.Value()` (rounded up) for the rest."""
    value = parse_quantity(quantity)
    return math.ceil(value * 1000) if resource == CPU else math.ceil(value)
