"""Facts about Kueue v0.19.2 that settings are checked against: the feature gates, what each
needs, the integrations and what the AKS managed extension offers.

The facts, with their sources, are `data/kueue-catalog.yaml`; this module gives them types.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from aks_kueue.k8s.loader import data_file

Stage = Literal["Alpha", "Beta", "GA", "Deprecated"]


@dataclass(frozen=True)
class FeatureGate:
    name: str
    stage: Stage
    default: bool
    locked: bool = False


_DATA = data_file(Path(__file__).resolve().parent / "data" / "kueue-catalog.yaml")

FEATURE_GATES: dict[str, FeatureGate] = {
    name: FeatureGate(name, group["stage"], group["default"], group.get("locked", False))
    for group in _DATA["feature_gates"] for name in group["names"].split()}
# The manager refuses to start when a gate is on while a gate it needs is off.
GATE_REQUIREMENTS: dict[str, tuple[str, ...]] = {g: tuple(needs) for g, needs in _DATA["gate_requirements"].items()}
# The kind each integration manages, as "group/version, Kind=Kind".
FRAMEWORK_KINDS: dict[str, str] = _DATA["framework_kinds"]
# The names `integrations.frameworks` accepts; anything else is rejected as NotSupported.
FRAMEWORKS: tuple[str, ...] = tuple(FRAMEWORK_KINDS)
# The chart's default `integrations.frameworks`, used when a stack names none.
CHART_DEFAULT_FRAMEWORKS: tuple[str, ...] = tuple(_DATA["chart_default_frameworks"])
FRAMEWORK_GATES: dict[str, str] = _DATA["framework_gates"]
# What the AKS managed extension runs, and the regions where it is offered.
MANAGED_FRAMEWORKS: tuple[str, ...] = tuple(_DATA["managed_frameworks"])
MANAGED_REGIONS: tuple[str, ...] = tuple(_DATA["managed_regions"])
