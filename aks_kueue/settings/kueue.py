"""`aks-kueue:kueue`: how Kueue is installed. One key, `install`, switches the path."""

from __future__ import annotations

import re
from typing import Any, Literal, Optional

from pydantic import field_validator, model_validator

from aks_kueue.kueue import catalog as cat
from aks_kueue.kueue.configuration import check_configuration, parse_configuration
from aks_kueue.settings.base import Model, field_error, suggest
from aks_kueue.versions import KUEUE_CHART_SERIES, KUEUE_CHART_VERSION, MANAGED_KUEUE_DEFAULT_RELEASE_TRAIN

HELM_ONLY_KEYS = {"featureGates": "feature_gates", "values": "values"}
# Values the program renders itself from featureGates.
_OWNED_VALUES = {("controllerManager", "featureGates"): "featureGates"}
CONFIG_VALUE = ("managerConfig", "controllerManagerConfigYaml")
CHART_TOP_LEVEL_VALUES = (
    "nameOverride", "fullnameOverride", "enablePrometheus", "enableCertManager", "certManager",
    "enableVisibilityAPF", "enableMutatingAdmissionPolicy", "enableVisibilityAuthReaderRoleBinding",
    "enableKueueViz", "kubernetesClusterDomain", "controllerManager", "managerConfig", "metricsService",
    "webhookService", "mutatingWebhook", "kueueViz", "metrics",
)


def _field(key: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), key)


class Kueue(Model):
    install: Literal["managed", "helm", "none"]
    version: Optional[str] = None
    release_train: Optional[str] = None
    feature_gates: dict[str, bool] = {}
    integrations: Optional[list[str]] = None
    values: dict[str, Any] = {}

    @field_validator("version", mode="before")
    @classmethod
    def _text(cls, value):
        """YAML reads an unquoted 0.19 as a number; take it as the text it was."""
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    @field_validator("feature_gates")
    @classmethod
    def _known_gates(cls, gates: dict[str, bool]) -> dict[str, bool]:
        for name, enabled in gates.items():
            gate = cat.FEATURE_GATES.get(name)
            if gate is None:
                raise ValueError(f"{name!r} is not a Kueue {KUEUE_CHART_SERIES} feature gate"
                                 f"{suggest(name, cat.FEATURE_GATES)}")
            if gate.locked and enabled != gate.default:
                raise ValueError(f"{name} is {gate.stage} and locked to {str(gate.default).lower()}; "
                                 "setting it otherwise stops Kueue at startup, so remove it")
        effective = {g.name: gates.get(g.name, g.default) for g in cat.FEATURE_GATES.values()}
        for gate, needs in cat.GATE_REQUIREMENTS.items():
            missing = [n for n in needs if not effective[n]]
            if effective[gate] and missing:
                turned_off = [n for n in missing if n in gates]
                fix = (f"also set {gate}: false" if turned_off else f"also set {', '.join(missing)}: true")
                raise ValueError(f"{gate} is on but needs {', '.join(missing)}, so Kueue would not start; "
                                 f"{fix}")
        return gates

    @field_validator("integrations")
    @classmethod
    def _known_frameworks(cls, names: Optional[list[str]]) -> Optional[list[str]]:
        if names is None:
            return None
        for name in names:
            if name not in cat.FRAMEWORKS:
                raise ValueError(f"{name!r} is not a Kueue integration{suggest(name, cat.FRAMEWORKS)} "
                                 f"(known: {', '.join(cat.FRAMEWORKS)})")
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"{', '.join(dupes)} listed more than once; list each integration once")
        return names

    @field_validator("values")
    @classmethod
    def _chart_values(cls, values: dict[str, Any]) -> dict[str, Any]:
        for key in values:
            if key not in CHART_TOP_LEVEL_VALUES:
                raise ValueError(f"{key!r} is not a value of the Kueue chart{suggest(key, CHART_TOP_LEVEL_VALUES)}")
        for (outer, inner), owner in _OWNED_VALUES.items():
            if isinstance(values.get(outer), dict) and inner in values[outer]:
                raise ValueError(f"{outer}.{inner} is rendered from aks-kueue:kueue.{owner}; "
                                 f"set {owner} instead of overriding it in values")
        return values

    @model_validator(mode="after")
    def _manager_configuration(self):
        """Keys added to Kueue's Configuration are merged over the rendered one; check them."""
        extra = self.manager_configuration_overrides
        if extra is None:
            return self
        where = "values." + ".".join(CONFIG_VALUE)
        try:
            config = parse_configuration(extra)
        except ValueError as error:
            raise field_error(where, f"{'.'.join(CONFIG_VALUE)} {error}") from None
        for path, problem in check_configuration(config):
            raise field_error(f"{where}.{path}", f"{path} {problem}")
        return self

    @property
    def manager_configuration_overrides(self) -> Any:
        outer, inner = CONFIG_VALUE
        section = self.values.get(outer)
        return section.get(inner) if isinstance(section, dict) else None

    @model_validator(mode="after")
    def _mode_rules(self):
        if self.install == "none":
            for key in ("version", "releaseTrain", "featureGates", "integrations", "values"):
                if _field(key) in self.model_fields_set:
                    raise field_error(key, f"{key} has nothing to configure with install: none (no Kueue); "
                                           "remove it, and set it again with the next install mode")
            return self
        if self.install == "managed":
            for key, field in HELM_ONLY_KEYS.items():
                if field in self.model_fields_set:
                    raise field_error(key, f"{key} applies only to install: helm; the managed extension "
                                           "exposes no such setting, so remove it or switch to helm")
            for i, name in enumerate(self.integrations or []):
                if name not in cat.MANAGED_FRAMEWORKS:
                    raise field_error(f"integrations[{i}]", f"{name!r} is not supported by the AKS managed "
                                      f"extension (it runs {', '.join(cat.MANAGED_FRAMEWORKS)}); remove it "
                                      "or use install: helm")
        else:
            if self.release_train is not None:
                raise field_error("releaseTrain", "releaseTrain applies only to install: managed; "
                                                  "pin the chart with version instead")
            if self.version is not None and not re.fullmatch(r"\d+\.\d+\.\d+", self.version):
                raise field_error("version", f"{self.version!r} is not a chart version; write it like "
                                             f"{KUEUE_CHART_VERSION}, without a leading v")
            if self.version is not None and not self.version.startswith(KUEUE_CHART_SERIES + "."):
                raise field_error("version", f"chart {self.version} is not supported: this program pins the "
                                  f"Kueue {KUEUE_CHART_SERIES} API and feature gates; use "
                                  f"{KUEUE_CHART_SERIES}.x (default {KUEUE_CHART_VERSION})")
            for framework, gate in cat.FRAMEWORK_GATES.items():
                if framework in (self.integrations or []) and not self.feature_gates.get(gate, False):
                    raise field_error("integrations", f"{framework} needs the feature gate {gate}; "
                                                      f"add featureGates: {{{gate}: true}}")
        if self.version is not None and self.release_train is not None:
            raise field_error("releaseTrain", "set either version (pinned, no auto-upgrade) or "
                                              "releaseTrain (auto-upgrade), not both")
        return self

    @property
    def chart_version(self) -> str:
        return self.version or KUEUE_CHART_VERSION

    @property
    def effective_release_train(self) -> str:
        return self.release_train or MANAGED_KUEUE_DEFAULT_RELEASE_TRAIN

    @property
    def frameworks(self) -> list[str]:
        return list(self.integrations) if self.integrations is not None else list(cat.CHART_DEFAULT_FRAMEWORKS)

