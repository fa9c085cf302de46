"""The shape of Kueue's Configuration file, v1beta2 and v1beta1, as Kueue v0.19.2 decodes it.

Sources, all at kubernetes-sigs/kueue tag v0.19.2: `apis/config/v1beta2/configuration_types.go`,
`apis/config/v1beta1/configuration_types.go`, and the vendored types they embed:
`k8s.io/component-base/config/v1alpha1` (LeaderElectionConfiguration),
`k8s.io/client-go/tools/clientcmd/api` (ExecConfig), `k8s.io/api/resource/v1` (DeviceSelector),
`k8s.io/apimachinery/pkg/apis/meta/v1` (LabelSelector, Duration).

Kueue reads the file with `serializer.EnableStrict` (`pkg/config/config.go`), through Go's JSON
rules: a key the Go struct does not have is an error, a value of the wrong JSON type is an
error, `null` leaves a field unset, except where the field is a `metav1.Duration` held by
value: its decoder is handed the `null` and fails on the empty duration.

The shapes are JSON Schema data, `data/configuration-v1beta2.json` and `-v1beta1.json`, one
per version: `type` is the JSON type, `format` the Go type behind it (int32, int64, float, double,
`duration` for a metav1.Duration, `quantity` for a resource.Quantity), `x-go-type: time.Duration`
a bare time.Duration (JSON reads it as a count of nanoseconds), `x-go-null: fails` a
metav1.Duration held by value (its decoder fails on null).
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from importlib import resources
from typing import Any, Optional, Union

from aks_kueue.k8s.field import Path


def _schema(version: str) -> dict[str, Any]:
    text = resources.files("aks_kueue.kueue").joinpath(f"data/configuration-{version}.json").read_text()
    return json.loads(text)


V1BETA2 = _schema("v1beta2")
V1BETA1 = _schema("v1beta1")


_UNITS = {"ns": Fraction(1, 10**9), "us": Fraction(1, 10**6), "µs": Fraction(1, 10**6), "μs": Fraction(1, 10**6),
          "ms": Fraction(1, 1000), "s": Fraction(1), "m": Fraction(60), "h": Fraction(3600)}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_PLAIN_KEY = re.compile(r"^[A-Za-z_][\w-]*$")


def key_path(path: Union[str, Path], key: Any) -> str:
    """`a.b` for plain keys, `a[nvidia.com/gpu]` for map keys that are not plain names."""
    path, key = str(path), str(key)
    if _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{key}]"


def parse_duration(text: str) -> Optional[Fraction]:
    """Seconds, as Go's time.ParseDuration reads the text, or None when Go refuses it."""
    rest, sign = text, 1
    if rest[:1] in ("+", "-"):
        sign, rest = (-1 if rest[0] == "-" else 1), rest[1:]
    if rest == "0":
        return Fraction(0)
    if not rest:
        return None
    total, position = Fraction(0), 0
    while position < len(rest):
        match = _DURATION_PART.match(rest, position)
        if not match or match.group(1) in ("", "."):
            return None
        number = match.group(1)
        total += Fraction("0" + number + ("0" if number.endswith(".") else "")) * _UNITS[match.group(2)]
        position = match.end()
    return sign * total


def seconds(value: Any) -> Fraction:
    """A duration's seconds; anything that is not a duration counts as unset (0)."""
    return parse_duration(value) or Fraction(0) if isinstance(value, str) else Fraction(0)

