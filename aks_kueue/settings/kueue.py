"""`aks-kueue:kueue`: how Kueue is installed. One key, `install`, switches the path.

In Helm mode Kueue's feature gates may come from exactly one of three places, as Kueue reads
them: `featureGates` (a map, rendered as the chart's `controllerManager.featureGates` list),
`values.controllerManager.featureGates` (that list as the chart takes it) or `featureGates`
inside the Configuration. The first two become `--feature-gates`; Kueue refuses to start when
that flag and the Configuration's map are both set.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Iterator, Literal, Optional

from pydantic import field_validator
from pydantic_core import PydanticCustomError

from aks_kueue.aks.managed_extension import LIST_VERSIONS_COMMAND as _LIST_VERSIONS
from aks_kueue.k8s.merge import deep_merge
from aks_kueue.kueue import catalog as cat
from aks_kueue.kueue.chart_values import RELEASE_NAME, chart_configuration, check_chart_values
from aks_kueue.kueue.configuration import (ConfigurationTextError, check_feature_gates, judge_configuration,
                                           parse_configuration)
from aks_kueue.k8s.field import FieldError
from aks_kueue.kueue.transformations import NO_RULES, ResourceRules
from aks_kueue.settings.base import (ConfigModel, as_field_error, check, is_warning, problem, reported, suggest,
                                    warning)
from aks_kueue.settings.errors import format_path, split_path
from aks_kueue.versions import (KUEUE_CHART_RELEASES, KUEUE_CHART_SERIES, KUEUE_CHART_VERSION, KUEUE_NAMESPACE,
                                MANAGED_KUEUE_DEFAULT_RELEASE_TRAIN, MANAGED_KUEUE_EXAMPLE_VERSION)

HELM_ONLY_KEYS = {"featureGates": "feature_gates", "values": "values"}
CONFIG_VALUE = ("managerConfig", "controllerManagerConfigYaml")
# Microsoft's install guide nests managerConfig under controllerManager, where the chart never
# reads it; the program takes it from there as if it were at the top.
GUIDE_CONFIG_VALUE = ("controllerManager", "managerConfig")
COMMAND_LINE_GATES = ("controllerManager", "featureGates")
# Helm values and Kubernetes objects are a few levels deep; deeper input is refused before any
# code walks it (the same bound as the YAML loader's).
MAX_VALUES_DEPTH = 100
# A semantic version, as Microsoft publishes extension versions (0.19.6-aks.0.4.4: Kueue's, then the build).
_EXTENSION_VERSION = re.compile(r"^(\d+)\.(\d+)\.\d+"
                                r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$")
# How Microsoft numbers microsoft.kueue: the Kueue release it runs, then the extension's build
# (0.19.6-aks.0.4.4, kueue-overview's pinned install).
_AKS_BUILD = re.compile(r"^(?P<kueue>\d+\.\d+\.\d+)-aks\.\d+(\.\d+)*$")
# The trains Azure's cluster extensions are published on (the Extension API's releaseTrain: "e.g. Stable,
# Preview"); microsoft.kueue is documented on preview only (kueue-overview's unpinned install).
EXTENSION_TRAINS = ("preview", "stable")


# What a check finds, at its key path below aks-kueue:kueue: a `problem`, or a `warning` the stack may keep.
Found = PydanticCustomError


class Kueue(ConfigModel):
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

    @field_validator("values")
    @classmethod
    def _bounded(cls, values: dict[str, Any]) -> dict[str, Any]:
        if (path := too_deep(values, MAX_VALUES_DEPTH)) is not None:
            raise problem(f"is nested more than {MAX_VALUES_DEPTH} levels deep (below here); chart values never need "
                          "that, so they are refused before anything reads them", at=tuple(path[:4]))
        return values

    @check
    def _checked(self):
        yield from self._findings()[0]

    # ------------------------------------------------------------------------------------------
    # What the rest of the program reads

    @property
    def chart_version(self) -> str:
        return self.version or KUEUE_CHART_VERSION

    @property
    def effective_release_train(self) -> str:
        return self.release_train or MANAGED_KUEUE_DEFAULT_RELEASE_TRAIN

    @property
    def chart_values(self) -> dict[str, Any]:
        """`values` as the chart should get them: the guide's nested managerConfig moved to the top."""
        values = dict(self.values)
        outer, inner = GUIDE_CONFIG_VALUE
        manager = values.get(outer)
        if isinstance(manager, dict) and inner in manager:
            values[outer] = {k: v for k, v in manager.items() if k != inner}
            values = deep_merge(values, {CONFIG_VALUE[0]: manager[inner]})
        return values

    @property
    def manager_configuration_overrides(self) -> Optional[dict[str, Any]]:
        """The Configuration keys the stack gives, parsed, or None."""
        given = self._configuration_value()
        return None if given is None else parse_configuration(given[1])

    @property
    def resource_rules(self) -> ResourceRules:
        """`resources.excludeResourcePrefixes` and `transformations` of the Configuration Kueue runs
        with. Only the Helm chart takes a Configuration; the managed extension's cannot carry them."""
        if self.install != "helm":
            return NO_RULES
        return ResourceRules.from_configuration(self.manager_configuration_overrides)

    @property
    def command_line_gates(self) -> dict[str, bool]:
        """The gates the chart renders as `--feature-gates` (empty: no flag)."""
        if self.feature_gates:
            return dict(self.feature_gates)
        return check_chart_values(self.values).command_line_gates or {}

    @property
    def feature_gates_in_force(self) -> dict[str, bool]:
        """The gates the stack sets, wherever it sets them."""
        if self.command_line_gates:
            return self.command_line_gates
        overrides = self.manager_configuration_overrides or {}
        gates = overrides.get("featureGates")
        return dict(gates) if isinstance(gates, dict) else {}

    @property
    def frameworks(self) -> list[str]:
        """The integrations Kueue runs: `integrations`, else the Configuration's list, else the
        chart's defaults. An empty list is Kueue's own default, batch/job alone."""
        frameworks: Any = self.integrations
        if frameworks is None and self.install == "helm":
            integrations = (self.manager_configuration_overrides or {}).get("integrations")
            frameworks = integrations.get("frameworks") if isinstance(integrations, dict) else None
        if frameworks is None:
            return list(cat.CHART_DEFAULT_FRAMEWORKS)
        return list(frameworks) or ["batch/job"]

    @property
    def frameworks_in_force(self) -> list[str]:
        """The integrations Kueue runs. The managed extension takes no list: for it, the integrations the
        stack names (checked against what it runs), else every integration it runs."""
        if self.install == "managed":
            return list(self.integrations or cat.MANAGED_FRAMEWORKS)
        return self.frameworks

    @property
    def warnings(self) -> list[str]:
        """Accepted, but worth a line in every preview."""
        return [str(replace(warned, field=format_path(("kueue", *split_path(warned.field)))))
                for warned in map(as_field_error, self._findings()[1])]

    # ------------------------------------------------------------------------------------------
    # The checks

    def _configuration_value(self) -> Optional[tuple[str, Any]]:
        """(key path, value) of the Configuration the stack gives, wherever it gives it."""
        section = self.values.get(CONFIG_VALUE[0])
        if isinstance(section, dict) and CONFIG_VALUE[1] in section:
            return "values." + ".".join(CONFIG_VALUE), section[CONFIG_VALUE[1]]
        manager = self.values.get(GUIDE_CONFIG_VALUE[0])
        nested = manager.get(GUIDE_CONFIG_VALUE[1]) if isinstance(manager, dict) else None
        if isinstance(nested, dict) and CONFIG_VALUE[1] in nested:
            return "values." + ".".join(GUIDE_CONFIG_VALUE + CONFIG_VALUE[1:]), nested[CONFIG_VALUE[1]]
        return None

    def _findings(self) -> tuple[list[Found], list[Found]]:
        """(errors, warnings), each at its key path below aks-kueue:kueue."""
        by_install = {"none": self._none, "managed": self._managed, "helm": self._helm}[self.install]
        findings = [*self._framework_names(), *by_install()]
        return [f for f in findings if not is_warning(f)], [f for f in findings if is_warning(f)]

    def _none(self) -> list[Found]:
        """`install: none` (no Kueue, the middle update of an install-mode switch) configures nothing."""
        return [problem(f"{field.alias} has nothing to configure with install: none (no Kueue)",
                        fix="remove it, and set it again with the next install mode", at=field.alias or name)
                for name, field in type(self).model_fields.items()
                if name != "install" and name in self.model_fields_set]

    def _framework_names(self) -> Iterator[Found]:
        for i, name in enumerate(self.integrations or []):
            if name not in cat.FRAMEWORKS:
                yield problem(f"{name!r} is not a Kueue integration{suggest(name, cat.FRAMEWORKS)} (known: "
                              f"{', '.join(cat.FRAMEWORKS)})", at=f"integrations[{i}]")
        listed = self.integrations or []
        dupes = sorted({n for n in listed if listed.count(n) > 1})
        if dupes:
            yield problem(f"{', '.join(dupes)} listed more than once",
                          fix="list each integration once", at="integrations")

    def _managed(self) -> Iterator[Found]:
        for key, name in HELM_ONLY_KEYS.items():
            if name in self.model_fields_set:
                yield problem(f"{key} applies only to install: helm; the managed extension exposes no such setting, so "
                              "remove it or switch to helm", at=key)
        for i, name in enumerate(self.integrations or []):
            if name in cat.FRAMEWORKS and name not in cat.MANAGED_FRAMEWORKS:
                yield problem(f"{name!r} is not supported by the AKS managed extension (it runs "
                              f"{', '.join(cat.MANAGED_FRAMEWORKS)})",
                              fix="remove it or use install: helm", at=f"integrations[{i}]")
        if self.version is not None and self.release_train is not None:
            yield problem("set either version (pinned, auto-upgrade off) or releaseTrain (auto-upgrade on), not both: "
                          "Azure applies a release train only with auto-upgrade", at="releaseTrain")
        if self.release_train is not None and self.release_train.lower() not in EXTENSION_TRAINS:
            yield problem(f"{self.release_train!r} is not a release train microsoft.kueue is published on, so Azure "
                          "has no version to install from it (extension trains are Stable and Preview, and Microsoft "
                          "documents microsoft.kueue on preview)",
                          fix=f"set releaseTrain: preview, or pin a version such as {MANAGED_KUEUE_EXAMPLE_VERSION}",
                          at="releaseTrain")
        elif self.release_train is not None and self.release_train.lower() != MANAGED_KUEUE_DEFAULT_RELEASE_TRAIN:
            yield warning(f"Microsoft documents microsoft.kueue on the preview train only, so whether "
                          f"{self.release_train} has versions of it is not documented; if it has none, Azure refuses "
                          "the install (`az k8s-extension extension-types list-versions-by-cluster ... --release-train "
                          f"{self.release_train}` lists them)", at="releaseTrain")
        if self.version is not None:
            match = _EXTENSION_VERSION.fullmatch(self.version)
            build = _AKS_BUILD.fullmatch(self.version)
            if match is None:
                yield problem(f"{self.version!r} is not an extension version",
                              fix="write the exact version Microsoft publishes, such as "
                              f"{MANAGED_KUEUE_EXAMPLE_VERSION} (`{_LIST_VERSIONS}` lists them), or omit version to "
                              "follow releaseTrain", at="version")
            elif build is not None and f"{match[1]}.{match[2]}" != KUEUE_CHART_SERIES:
                yield warning(f"extension {self.version} runs Kueue {match[1]}.{match[2]}, but this program's checks "
                              f"follow Kueue {KUEUE_CHART_SERIES}", at="version")
            elif build is None or build["kueue"] not in KUEUE_CHART_RELEASES:
                runs = ("has no extension build (-aks.<build>)" if build is None else
                        f"names Kueue {build['kueue']}, which Kueue never released "
                        f"({KUEUE_CHART_RELEASES[0]} to {KUEUE_CHART_RELEASES[-1]} exist)")
                yield problem(f"{self.version} is not a version Microsoft publishes, and Azure refuses the install: "
                              "microsoft.kueue versions are a Kueue release and the extension's build, such as "
                              f"{MANAGED_KUEUE_EXAMPLE_VERSION}, and this one {runs}",
                              fix=f"pin one `{_LIST_VERSIONS}` lists, or omit version to follow releaseTrain",
                              at="version")

    def _helm(self) -> Iterator[Found]:
        if self.release_train is not None:
            yield problem("releaseTrain applies only to install: managed",
                          fix="pin the chart with version instead", at="releaseTrain")
        if self.version is not None and not re.fullmatch(r"\d+\.\d+\.\d+", self.version):
            yield problem(f"{self.version!r} is not a chart version",
                          fix=f"write it like {KUEUE_CHART_VERSION}, without a leading v", at="version")
        elif self.version is not None and not self.version.startswith(KUEUE_CHART_SERIES + "."):
            yield problem(f"chart {self.version} is not supported: this program pins the Kueue {KUEUE_CHART_SERIES} "
                          "API and feature gates",
                          fix=f"use {KUEUE_CHART_SERIES}.x (default {KUEUE_CHART_VERSION})", at="version")
        elif self.version is not None and self.version not in KUEUE_CHART_RELEASES:
            yield problem(f"chart {self.version} was never published, so helm cannot pull it: the Kueue "
                          f"{KUEUE_CHART_SERIES} chart exists as {', '.join(KUEUE_CHART_RELEASES)} (Kueue's "
                          f"CHANGELOG-{KUEUE_CHART_SERIES}.md)",
                          fix=f"pin one of them, or omit version for {KUEUE_CHART_VERSION}", at="version")
        if self.feature_gates:
            yield from (reported(e) for e in check_feature_gates(self.feature_gates, "featureGates"))
        yield from self._values()

    def _values(self) -> Iterator[Found]:
        values = dict(self.values)
        manager = values.get(GUIDE_CONFIG_VALUE[0])
        if isinstance(manager, dict) and GUIDE_CONFIG_VALUE[1] in manager:
            # Checked below as the Configuration; the chart itself would ignore it here.
            values[GUIDE_CONFIG_VALUE[0]] = {k: v for k, v in manager.items() if k != GUIDE_CONFIG_VALUE[1]}
            yield from self._guide_form(manager[GUIDE_CONFIG_VALUE[1]])
        chart = check_chart_values(values)
        yield from (reported(e, at=f"values.{e.field}") for e in chart.errors)
        yield from (warning(e.message, e.fix, at=f"values.{e.field}") for e in chart.warnings)
        listed = chart.command_line_gates
        gates_key = "featureGates"
        if listed is not None and self.feature_gates:
            yield problem("feature gates are also set in aks-kueue:kueue.featureGates; both become the chart's single "
                          "--feature-gates flag and this list would replace the other, so set them in one place",
                          at="values." + ".".join(COMMAND_LINE_GATES))
        elif listed:
            gates_key = "values." + ".".join(COMMAND_LINE_GATES)
            items = values[COMMAND_LINE_GATES[0]][COMMAND_LINE_GATES[1]]
            index = {item.get("name"): i for i, item in enumerate(items) if isinstance(item, dict)}
            yield from (reported(e, at=f"{gates_key}[{index[e.field.split('.', 1)[0]]}]")
                        for e in check_feature_gates(listed, ""))
        yield from self._configuration(dict(self.feature_gates) or listed or {}, gates_key)

    def _guide_form(self, nested: Any) -> Iterator[Found]:
        where = "values." + ".".join(GUIDE_CONFIG_VALUE)
        if not isinstance(nested, dict):
            yield problem("must be a map holding controllerManagerConfigYaml", at=where)
            return
        unknown = [problem(f"is not a key of managerConfig{suggest(str(key), CONFIG_VALUE[1:])}", at=f"{where}.{key}")
                   for key in nested if key != CONFIG_VALUE[1]]
        yield from unknown
        section = self.values.get(CONFIG_VALUE[0])
        if isinstance(section, dict) and CONFIG_VALUE[1] in section:
            yield problem("managerConfig is given twice, here and at the top of values (where the chart reads it)",
                          fix="keep the top-level one", at=where)
        elif not unknown:
            yield warning("the chart reads managerConfig at the top of its values and would ignore it here "
                          "(Microsoft's install guide nests it under controllerManager); the program uses it as "
                          "values.managerConfig, so the Configuration below does take effect", at=where)

    def _configuration(self, command_line: dict[str, bool], gates_key: str) -> Iterator[Found]:
        """Judge the Configuration the program would render, as Kueue reads it."""
        given = self._configuration_value()
        overrides: dict[str, Any] = {}
        where = "values." + ".".join(CONFIG_VALUE)
        if given is not None:
            where, value = given
            try:
                overrides = parse_configuration(value)
            except ConfigurationTextError as error:
                yield problem(f"{CONFIG_VALUE[1]} {error}", at=where)
                return
        integrations = overrides.get("integrations")
        in_config = integrations.get("frameworks") if isinstance(integrations, dict) else None
        if self.integrations is not None and in_config is not None:
            yield problem("integrations are also set in aks-kueue:kueue.integrations",
                          fix="set them in one place", at=f"{where}.integrations.frameworks")
        yield from _release_bound(overrides, where)
        # Names aks-kueue:kueue.integrations gets wrong are reported once, against that key.
        base = list(dict.fromkeys(f for f in self.frameworks if f in cat.FRAMEWORKS)) if in_config is None else []
        document = deep_merge(chart_configuration(base), overrides)
        report = judge_configuration(document, command_line_gates=command_line or None,
                                     command_line_key=f"aks-kueue:kueue.{gates_key}")
        yield from (reported(e, at=_below(where, e)) for e in report.errors)
        yield from (warning(w.message, w.fix, at=_below(where, w)) for w in report.warnings)
        if report.errors:
            return
        frameworks = (report.effective or {}).get("integrations", {}).get("frameworks", [])
        for framework, gate in cat.FRAMEWORK_GATES.items():
            if framework in frameworks and not report.gates.get(gate):
                key = "integrations" if self.integrations is not None else f"{where}.integrations.frameworks"
                if command_line and gates_key == "featureGates" or not command_line and "featureGates" not in overrides:
                    fix = f"add featureGates: {{{gate}: true}}"
                elif command_line:
                    fix = f"add {{name: {gate}, enabled: true}} to {gates_key}"
                else:
                    fix = f"add {gate}: true to the Configuration's featureGates"
                yield problem(f"{framework} needs the feature gate {gate}", fix=fix, at=key)


def _release_bound(overrides: dict[str, Any], where: str) -> Iterator[Found]:
    """Configuration keys that must name what the chart creates, or Kueue's webhooks break."""
    namespace = overrides.get("namespace")
    if namespace is not None and namespace != KUEUE_NAMESPACE:
        yield problem(f"Kueue is installed in {KUEUE_NAMESPACE}; namespace {namespace!r} would give its webhook "
                      "certificate the wrong DNS name and every webhook call would fail. Remove it (or set "
                      f"{KUEUE_NAMESPACE})", at=f"{where}.namespace")
    certs = overrides.get("internalCertManagement")
    if isinstance(certs, dict) and certs.get("enable", True) is not False:
        for key, name in (("webhookServiceName", f"{RELEASE_NAME}-webhook-service"),
                          ("webhookSecretName", f"{RELEASE_NAME}-webhook-server-cert")):
            if certs.get(key) is not None and certs[key] != name:
                yield problem(f"the chart creates {name}; Kueue would manage certificates for {certs[key]!r} instead "
                              f"and its webhooks would fail. Remove it (or set {name})",
                              at=f"{where}.internalCertManagement.{key}")


# ----------------------------------------------------------------------------------------------


def too_deep(value: Any, limit: int) -> Optional[list[Any]]:
    """The key path to the first container nested deeper than `limit`, or None. Iterative, so
    that any depth is measured without recursion."""
    stack: list[tuple[Any, list[Any]]] = [(value, [])]
    while stack:
        node, path = stack.pop()
        if len(path) > limit:
            return path
        children: Iterator[tuple[Any, Any]]
        if isinstance(node, dict):
            children = iter(node.items())
        elif isinstance(node, list):
            children = enumerate(node)
        else:
            continue
        stack.extend((child, path + [key]) for key, child in children if isinstance(child, (dict, list)))
    return None


def _below(prefix: str, error: FieldError) -> str:
    return f"{prefix}.{error.field}" if error.field and not error.field.startswith("[") else prefix + error.field
