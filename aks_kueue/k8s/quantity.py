"""Kubernetes resource quantities, exact.

Values are kept as Fractions, so "1.5Gi", "1610612736" and "1536Mi" are equal, and
"100m" of CPU is exactly 1/10. Kueue's own units (milli-CPU, rounded-up bytes) are
derived from these where it counts them.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

QUANTITY_PATTERN = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))?$")

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}


class QuantityError(ValueError):
    pass


def parse_quantity(value: str | int) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise QuantityError(f"{value!r} is not a quantity; write a number or a string such as \"500m\" or \"64Gi\"")
    if isinstance(value, int):
        return Fraction(value)
    return _parse_text(value)


@lru_cache(maxsize=16384)
def _parse_text(value: str) -> Fraction:
    """Remembered: the same few quantities recur across a cluster's pods (Fractions are immutable)."""
    match = QUANTITY_PATTERN.match(value.strip())
    if not match or value != value.strip():
        raise QuantityError(f"{value!r} is not a quantity; write it like \"60\", \"500m\" or \"240Gi\"")
    text = match["number"]
    suffix = match["suffix"] or ""
    if text.isdigit():  # the usual case, in integers: Fraction("...") is slow
        if suffix in _BINARY:
            return Fraction(int(text) * _BINARY[suffix])
        if suffix in _DECIMAL:
            scale = _DECIMAL[suffix]
            return Fraction(int(text) * scale.numerator, scale.denominator)
    number = Fraction(text)
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix in _DECIMAL:
        return number * _DECIMAL[suffix]
    # Go keeps only the scale; expanding 1e99999999 here would never finish. Amounts
    # past int64 are Kueue's "unlimited" anyway, so a 10^±1000 bound loses nothing.
    exponent = max(-1000, min(1000, int(Fraction(suffix[1:]))))
    return number * Fraction(10) ** exponent


INT64_MAX = 2**63 - 1


def request_problem(resource: str, quantity: Fraction) -> str | None:
    """What Kubernetes finds wrong with a container's request or limit of `resource`, or None: a
    negative amount (`ValidateNonnegativeQuantity`), a fraction of an extended resource such as
    `nvidia.com/gpu` (`ValidateResourceQuantityValue`: "must be an integer"), or an amount past the
    64-bit integers every reader of a quantity turns it into (milli-units for cpu, `MilliValue`;
    units for the rest, `Value`), where it would silently saturate."""
    if quantity < 0:
        return "must be greater than or equal to 0"
    if is_integer_resource(resource) and quantity.denominator != 1:
        return "must be an integer"
    scaled = quantity * 1000 if resource == "cpu" else quantity
    if scaled > INT64_MAX:
        return (f"must be at most {INT64_MAX}{'m' if resource == 'cpu' else ''}: Kubernetes and Kueue read a "
                "quantity as a 64-bit integer")
    return None


def is_integer_resource(resource: str) -> bool:
    """Kubernetes' `IsIntegerResourceName`: pods, and extended resources (a domain-prefixed name that is
    not `kubernetes.io/` native, such as `nvidia.com/gpu`)."""
    if resource == "pods":
        return True
    # `IsNativeResource`: no prefix, or one holding kubernetes.io/; quota names start with requests.
    return "/" in resource and "kubernetes.io/" not in resource and not resource.startswith("requests.")
