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
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import Enum
from fractions import Fraction
from typing import Any, Mapping, Optional, Union

from aks_kueue.kueue import structural


class Scalar(str, Enum):
    BOOL = "bool"
    STRING = "string"
    INT = "int"            # Go int (64 bits here)
    INT32 = "int32"
    INT64_NANOS = "int64"  # a bare time.Duration: JSON reads it as a count of nanoseconds
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    DURATION = "duration"  # metav1.Duration: a string Go's time.ParseDuration reads ("5m", "1h30m")
    QUANTITY = "quantity"  # resource.Quantity: a string or a number


@dataclass(frozen=True)
class Leaf:
    kind: Scalar
    null_ok: bool = True   # False only for a metav1.Duration held by value


@dataclass(frozen=True)
class Struct:
    fields: Mapping[str, "Shape"] = field(default_factory=dict)


@dataclass(frozen=True)
class MapOf:
    value: "Shape"


@dataclass(frozen=True)
class ListOf:
    item: "Shape"


Shape = Union[Leaf, Struct, MapOf, ListOf]

BOOL, STRING, INT, INT32 = Leaf(Scalar.BOOL), Leaf(Scalar.STRING), Leaf(Scalar.INT), Leaf(Scalar.INT32)
FLOAT32, FLOAT64, QUANTITY = Leaf(Scalar.FLOAT32), Leaf(Scalar.FLOAT64), Leaf(Scalar.QUANTITY)
DURATION = Leaf(Scalar.DURATION)                    # *metav1.Duration: null is "unset"
DURATION_VALUE = Leaf(Scalar.DURATION, null_ok=False)  # metav1.Duration: null fails
NANOS = Leaf(Scalar.INT64_NANOS)
STRINGS = ListOf(STRING)

LABEL_SELECTOR = Struct({
    "matchLabels": MapOf(STRING),
    "matchExpressions": ListOf(Struct({"key": STRING, "operator": STRING, "values": STRINGS})),
})
DEVICE_SELECTOR = Struct({"cel": Struct({"expression": STRING})})
EXEC_CONFIG = Struct({
    "command": STRING, "args": STRINGS, "env": ListOf(Struct({"name": STRING, "value": STRING})),
    "apiVersion": STRING, "installHint": STRING, "provideClusterInfo": BOOL, "interactiveMode": STRING,
})
ACCESS_PROVIDER = Struct({"name": STRING, "execConfig": EXEC_CONFIG})

V1BETA2 = Struct({
    "apiVersion": STRING,
    "kind": STRING,
    "namespace": STRING,
    # ControllerManager, inlined
    "webhook": Struct({"port": INT, "host": STRING, "certDir": STRING}),
    "leaderElection": Struct({
        "leaderElect": BOOL, "leaseDuration": DURATION_VALUE, "renewDeadline": DURATION_VALUE,
        "retryPeriod": DURATION_VALUE, "resourceLock": STRING, "resourceName": STRING,
        "resourceNamespace": STRING,
    }),
    "metrics": Struct({
        "bindAddress": STRING,
        "enableClusterQueueResources": BOOL,
        "customLabels": ListOf(Struct({
            "name": STRING, "sourceLabelKey": STRING, "sourceAnnotationKey": STRING,
            "sourceKind": STRING, "trackedValues": STRINGS,
        })),
        "localQueueMetrics": Struct({"enable": BOOL, "localQueueSelector": LABEL_SELECTOR}),
    }),
    "health": Struct({"healthProbeBindAddress": STRING, "readinessEndpointName": STRING,
                      "livenessEndpointName": STRING}),
    "pprofBindAddress": STRING,
    "controller": Struct({"groupKindConcurrency": MapOf(INT), "cacheSyncTimeout": NANOS}),
    "tls": Struct({"minVersion": STRING, "cipherSuites": STRINGS, "curvePreferences": ListOf(INT32)}),
    # Configuration's own fields
    "manageJobsWithoutQueueName": BOOL,
    "managedJobsNamespaceSelector": LABEL_SELECTOR,
    "internalCertManagement": Struct({"enable": BOOL, "webhookServiceName": STRING,
                                      "webhookSecretName": STRING}),
    "waitForPodsReady": Struct({
        "timeout": DURATION_VALUE,
        "blockAdmission": BOOL,
        "requeuingStrategy": Struct({"timestamp": STRING, "backoffLimitCount": INT32,
                                     "backoffBaseSeconds": INT32, "backoffMaxSeconds": INT32}),
        "recoveryTimeout": DURATION,
    }),
    "clientConnection": Struct({"qps": FLOAT32, "burst": INT32}),
    "integrations": Struct({"frameworks": STRINGS, "externalFrameworks": STRINGS, "labelKeysToCopy": STRINGS}),
    "multiKueue": Struct({
        "gcInterval": DURATION, "origin": STRING, "workerLostTimeout": DURATION, "dispatcherName": STRING,
        "externalFrameworks": ListOf(Struct({"name": STRING})),
        "clusterProfile": Struct({"accessProviders": ListOf(ACCESS_PROVIDER),
                                  "credentialsProviders": ListOf(ACCESS_PROVIDER)}),
        "incrementalDispatcherConfig": Struct({"stepSize": INT32}),
    }),
    "fairSharing": Struct({"preemptionStrategies": STRINGS}),
    "admissionFairSharing": Struct({"usageHalfLifeTime": DURATION_VALUE, "usageSamplingInterval": DURATION_VALUE,
                                    "resourceWeights": MapOf(FLOAT64)}),
    "resources": Struct({
        "quotaCheckStrategy": STRING,
        "excludeResourcePrefixes": STRINGS,
        "transformations": ListOf(Struct({"input": STRING, "strategy": STRING, "multiplyBy": STRING,
                                          "outputs": MapOf(QUANTITY)})),
        "deviceClassMappings": ListOf(Struct({
            "name": STRING, "deviceClassNames": STRINGS,
            "sources": ListOf(Struct({
                "counter": Struct({"name": STRING, "driver": STRING, "deviceSelector": DEVICE_SELECTOR}),
                "capacity": Struct({"name": STRING, "driver": STRING, "deviceSelector": DEVICE_SELECTOR}),
            })),
        })),
    }),
    "featureGates": MapOf(BOOL),
    "objectRetentionPolicies": Struct({"workloads": Struct({"afterFinished": DURATION,
                                                            "afterDeactivatedByKueue": DURATION})}),
    "visibilityServer": Struct({"bindAddress": STRING, "bindPort": INT32}),
})


def _edit(shape: Struct, path: tuple[str, ...], add: Mapping[str, Shape] = {}, drop: tuple[str, ...] = ()) -> Struct:
    """`shape` with the struct at `path` (through lists) given extra fields and fewer fields."""
    if not path:
        fields = {k: v for k, v in shape.fields.items() if k not in drop}
        return replace(shape, fields={**fields, **add})
    head, rest = path[0], path[1:]
    child = shape.fields[head]
    if isinstance(child, ListOf):
        child = ListOf(_edit(child.item, rest, add, drop))  # type: ignore[arg-type]
    else:
        child = _edit(child, rest, add, drop)  # type: ignore[arg-type]
    return replace(shape, fields={**shape.fields, head: child})


def _v1beta1() -> Struct:
    """What v1beta1 has that v1beta2 dropped, and lacks what v1beta2 added (a diff of the two files)."""
    shape = _edit(V1BETA2, (), add={"queueVisibility": Struct({
        "clusterQueues": Struct({"maxCount": INT32}), "updateIntervalSeconds": INT32})}, drop=("visibilityServer",))
    shape = _edit(shape, ("metrics", "customLabels"), drop=("sourceKind", "trackedValues"))
    shape = _edit(shape, ("waitForPodsReady",), add={"enable": BOOL, "timeout": DURATION})
    shape = _edit(shape, ("multiKueue",), drop=("clusterProfile", "incrementalDispatcherConfig"))
    shape = _edit(shape, ("integrations",), add={"podOptions": Struct({
        "namespaceSelector": LABEL_SELECTOR, "podSelector": LABEL_SELECTOR})})
    shape = _edit(shape, ("resources",), drop=("quotaCheckStrategy",))
    shape = _edit(shape, ("resources", "deviceClassMappings"), drop=("sources",))
    return _edit(shape, ("fairSharing",), add={"enable": BOOL})


V1BETA1 = _v1beta1()


_UNITS = {"ns": Fraction(1, 10**9), "us": Fraction(1, 10**6), "µs": Fraction(1, 10**6), "μs": Fraction(1, 10**6),
          "ms": Fraction(1, 1000), "s": Fraction(1), "m": Fraction(60), "h": Fraction(3600)}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_PLAIN_KEY = re.compile(r"^[A-Za-z_][\w-]*$")


def key_path(path: str, key: Any) -> str:
    """`a.b` for plain keys, `a[nvidia.com/gpu]` for map keys that are not plain names."""
    key = str(key)
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


def show(value: Any) -> str:
    """A value as a message shows it; YAML also yields dates, sets and mixed-type keys, which JSON
    cannot write, so those fall back to Python's spelling."""
    try:
        return structural.show(value)
    except (TypeError, ValueError):
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "..."
