"""Kueue's own Configuration (`config.kueue.x-k8s.io`), judged as Kueue v0.19.2 reads it at startup.

Kueue's manager (`cmd/kueue/main.go`) goes through three steps and exits on the first that fails:
1. decode the file strictly (`pkg/config/config.go` `fromFile`): unknown keys, duplicate keys and
   values of the wrong type stop it. A v1beta1 file is decoded as v1beta1, defaulted with the
   v1beta1 defaults, then converted to v1beta2 (`apis/config/v1beta1/configuration_conversion.go`);
   a v1beta2 file gets the v1beta2 defaults (`apis/config/v1beta2/defaults.go`);
2. set the feature gates, from `--feature-gates` or from the file's `featureGates`, never both
   (`LoadAndValidateFeatureGates` in `pkg/config/validation.go`);
3. validate the result (`Validate` in the same file).

`judge_configuration` runs the same steps and reports what would stop the manager, with the key
path inside the file; `check_configuration_document` returns only those errors. Not reproduced:
compiling DRA device-selector CEL expressions, the TLS cipher-suite and curve names (they come
from the Go runtime), and MultiKueue external frameworks that collide with a built-in adapter.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import yaml

from aks_kueue.k8s.spelling import suggest
from aks_kueue.kueue import catalog as cat
from aks_kueue.k8s import field as fe
from aks_kueue.k8s.field import show
from aks_kueue.kueue.config_api import V1BETA1, V1BETA2, key_path, seconds
from aks_kueue.kueue.configuration_rules import DISPATCHER_ALL_AT_ONCE, DISPATCHER_INCREMENTAL, validate_configuration
from aks_kueue.kueue.structural import FieldError, validate_structural

GROUP = "config.kueue.x-k8s.io"
V1BETA2_VERSION = f"{GROUP}/v1beta2"
V1BETA1_VERSION = f"{GROUP}/v1beta1"
KIND = "Configuration"
SHAPES: dict[str, dict[str, Any]] = {V1BETA2_VERSION: V1BETA2, V1BETA1_VERSION: V1BETA1}
DEFAULT_NAMESPACE = "kueue-system"

# A Configuration is a few dozen lines; these bounds only stop a hostile input early.
MAX_TEXT_BYTES = 256 * 1024
MAX_DEPTH = 100

# Keys v1beta2 removed, with what replaces them (CHANGELOG-0.15.md).
REMOVED_IN_V1BETA2 = {
    ("waitForPodsReady", "enable"): "its presence turns waitForPodsReady on; set timeout instead",
    ("fairSharing", "enable"): "its presence turns fair sharing on; set preemptionStrategies instead",
    ("integrations", "podOptions"): "use managedJobsNamespaceSelector instead",
    ("queueVisibility",): "it was removed; use the visibility on-demand API",
}

# Top-level keys people copy from the objects around a Configuration.
_NOT_A_CONFIGURATION_KEY = {
    ("metadata",): "a Configuration is a file Kueue reads, not an API object, and has no metadata (Kueue's own "
                   "opt-in namespace guide shows one; it fails the same way)",
    ("data",): "that is the ConfigMap holding the file; put the Configuration's own keys at the top",
    ("spec",): "a Configuration has no spec; its keys are at the top",
}


@dataclass(frozen=True)
class ConfigurationReport:
    """What Kueue makes of one Configuration document."""

    api_version: Optional[str]
    errors: list[FieldError]
    # Things that are accepted but probably not what the author meant (v1beta1 semantics).
    warnings: list[FieldError] = field(default_factory=list)
    # The v1beta2 Configuration after conversion and defaulting; None when it does not decode.
    effective: Optional[dict[str, Any]] = None
    # Every feature gate's value in force.
    gates: dict[str, bool] = field(default_factory=dict)

    def in_force(self) -> Optional[dict[str, Any]]:
        """The effective Configuration with `featureGates` holding every gate's value, as the
        admission core and the replay read it; None when it does not decode (whether Kueue would
        start with it is `errors`, for the caller to judge)."""
        if self.effective is None:
            return None
        return {**self.effective, "featureGates": dict(self.gates)}


def helm_configuration(frameworks: list[str], overrides: Optional[Mapping[str, Any]],
                       command_line_gates: Optional[Mapping[str, bool]] = None) -> ConfigurationReport:
    """What Kueue makes of the Configuration a Helm install renders: the chart's default document with
    these integrations, the stack's overrides merged in, and the chart's `--feature-gates`."""
    from aks_kueue.k8s.merge import deep_merge
    from aks_kueue.kueue.chart_values import chart_configuration

    document = deep_merge(chart_configuration(frameworks), dict(overrides or {}))
    return judge_configuration(document, command_line_gates=command_line_gates or None)


class ConfigurationTextError(ValueError):
    """The Configuration text is not YAML Kueue could read (or is too large or deep to read)."""


# ----------------------------------------------------------------------------------------------
# Reading the text


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing what Kueue's strict decoder refuses (duplicate keys), and
    bounded in depth so that a hostile text fails with a sentence, not a RecursionError."""

    _depth = 0

    def compose_node(self, parent, index):  # type: ignore[override]
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise ConfigurationTextError(f"is nested more than {MAX_DEPTH} levels deep; a Kueue "
                                             "Configuration never is")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):  # type: ignore[override]
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue  # a complex key fails in PyYAML itself; a merge key may override, as YAML says
            key = self.construct_object(key_node)
            if key in seen:
                raise ConfigurationTextError(f"has the key {key!r} twice (line {key_node.start_mark.line + 1}); "
                                             "Kueue's strict decoding refuses duplicate keys")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_configuration(value: Any) -> dict[str, Any]:
    """The chart value is a YAML string holding a Configuration; a map is taken as it is."""
    if isinstance(value, str):
        if len(value.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES:
            raise ConfigurationTextError(f"is longer than {MAX_TEXT_BYTES // 1024} KiB; a Kueue Configuration "
                                         "is a few kilobytes")
        try:
            value = yaml.load(value, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
        except yaml.YAMLError as error:
            raise ConfigurationTextError(f"is not valid YAML: {getattr(error, 'problem', None) or error}") from None
        except RecursionError:
            raise ConfigurationTextError(f"is nested too deeply to read (at most {MAX_DEPTH} levels)") from None
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise ConfigurationTextError("must be a Kueue Configuration (a map), written as YAML")
    return value


# ----------------------------------------------------------------------------------------------
# Public entry points


def check_configuration_document(document: Any) -> list[FieldError]:
    """Every reason Kueue v0.19.2 would refuse to start with this Configuration document.

    `document` is one YAML document as loaded (a dict with apiVersion and kind). Paths are the
    keys inside the document, e.g. `waitForPodsReady.timeot`. An empty list means Kueue starts.
    """
    return judge_configuration(document).errors


def judge_configuration(document: Any, *, command_line_gates: Optional[Mapping[str, bool]] = None,
                        command_line_key: str = "--feature-gates",
                        namespace: str = DEFAULT_NAMESPACE) -> ConfigurationReport:
    """Decode, convert, default and validate one Configuration as Kueue's manager does.

    `command_line_gates` are the gates given with `--feature-gates` (the Helm chart renders its
    `controllerManager.featureGates` list there), already checked by the caller; `command_line_key`
    names where they come from in the messages. `namespace` is the one Kueue runs in.
    """
    if not isinstance(document, dict):
        return ConfigurationReport(None, [FieldError("", "must be a map (a Kueue Configuration document)")])
    errors: list[FieldError] = []
    api_version, kind = document.get("apiVersion"), document.get("kind")
    if kind is None:
        errors.append(fe.required("kind", f"Kueue needs kind: {KIND}"))
    elif kind != KIND:
        errors.append(fe.invalid("kind", kind, f"must be {KIND}"))
    if api_version is None:
        errors.append(fe.required("apiVersion", f"Kueue needs apiVersion: {V1BETA2_VERSION}"))
        return ConfigurationReport(None, errors)
    if not isinstance(api_version, str) or api_version not in SHAPES:
        hint = suggest(str(api_version), SHAPES)
        errors.append(fe.invalid("apiVersion", api_version, f"Kueue 0.19 reads {V1BETA2_VERSION} (and the "
                                                            f"deprecated {V1BETA1_VERSION}){hint}"))
        return ConfigurationReport(None, errors)
    decoded, decode_errors = validate_structural(
        SHAPES[api_version], document, go=True,
        unknown=lambda path, key, hint: _unknown_field(path, hint, api_version))
    errors += decode_errors
    if errors:
        return ConfigurationReport(api_version, errors)
    warnings: list[FieldError] = []
    if api_version == V1BETA1_VERSION:
        warnings = _v1beta1_warnings(decoded)
        effective = convert_v1beta1(decoded, namespace)
    else:
        effective = default_v1beta2(decoded, namespace)
    gate_errors, gates = _feature_gates(effective.get("featureGates"), command_line_gates, command_line_key)
    errors += gate_errors
    if not gate_errors:
        errors += validate_configuration(effective, gates)
    return ConfigurationReport(api_version, errors, warnings, effective, gates)


# ----------------------------------------------------------------------------------------------
# Step 1: strict decoding (validate_structural with Go's rules)


def _unknown_field(path: str, hint: str, version: str) -> FieldError:
    """A key strict decoding refuses: the fact and what Kueue then does in one sentence, the advice as the fix."""
    parts = tuple(p for p in re.split(r"\.|\[\d+\]", path) if p)
    if version == V1BETA2_VERSION and parts in REMOVED_IN_V1BETA2:
        return fe.unknown(path, REMOVED_IN_V1BETA2[parts],
                          f": it was removed in {V1BETA2_VERSION}, so Kueue would not start")
    if parts in _NOT_A_CONFIGURATION_KEY:
        return fe.unknown(path, _NOT_A_CONFIGURATION_KEY[parts], ": Kueue would not start")
    other = V1BETA1 if version == V1BETA2_VERSION else V1BETA2
    if _known_in(other, parts):
        other_version = V1BETA1_VERSION if version == V1BETA2_VERSION else V1BETA2_VERSION
        return fe.unknown(path, detail=f" in {version}: it exists only in {other_version}, and Kueue reads the file "
                                       "strictly and would not start")
    return fe.unknown(path, hint.removeprefix("; "), ": Kueue reads its Configuration strictly and would not start")


def _known_in(shape: dict[str, Any], parts: tuple[str, ...]) -> bool:
    for part in parts:
        while shape.get("type") == "array":
            shape = shape["items"]
        if part not in (shape.get("properties") or {}):
            return False
        shape = shape["properties"][part]
    return True


# ----------------------------------------------------------------------------------------------
# Defaults and conversion


def _managed_jobs_default(namespace: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                  "values": ["kube-system", namespace]}]}


# `SetDefaults_Configuration` of both versions, in its order: (section ("" for the top), key, default, whether
# it also replaces an empty value, where Kueue tests for the zero value); a callable is given the namespace.
_COMMON_DEFAULTS = (
    ("webhook", "port", 9443, False),
    ("metrics", "bindAddress", ":8443", True),
    ("metrics", "localQueueMetrics", {"enable": True}, False),
    ("health", "healthProbeBindAddress", ":8081", True),
    ("leaderElection", "resourceName", "c1f6bfd2.kueue.x-k8s.io", True),
    ("leaderElection", "resourceLock", "leases", True),
    ("internalCertManagement", "enable", True, False),
    ("clientConnection", "qps", 300, False),
    ("clientConnection", "burst", 500, False),
    ("integrations", "frameworks", ["batch/job"], True),
    ("", "managedJobsNamespaceSelector", _managed_jobs_default, False),
    ("multiKueue", "gcInterval", "1m", False),
    ("multiKueue", "origin", "multikueue", True),
    ("multiKueue", "workerLostTimeout", "15m", False),
    ("multiKueue", "dispatcherName", DISPATCHER_ALL_AT_ONCE, False),
)
_REQUEUING_DEFAULTS = (("requeuingStrategy", "timestamp", "Eviction", False),
                       ("requeuingStrategy", "backoffBaseSeconds", 60, False),
                       ("requeuingStrategy", "backoffMaxSeconds", 3600, False))


def _apply_defaults(cfg: dict[str, Any], defaults: tuple, namespace: str = "") -> None:
    for section, key, default, when_empty in defaults:
        target = cfg.setdefault(section, {}) if section else cfg
        if key not in target or (when_empty and not target[key]):
            target[key] = default(namespace) if callable(default) else copy.deepcopy(default)


def _common_defaults(cfg: dict[str, Any], namespace: str) -> None:
    cfg.setdefault("namespace", namespace)
    _apply_defaults(cfg, _COMMON_DEFAULTS, cfg["namespace"])
    certs = cfg["internalCertManagement"]
    if certs["enable"]:
        certs.setdefault("webhookServiceName", "kueue-webhook-service")
        certs.setdefault("webhookSecretName", "kueue-webhook-server-cert")
    fair = cfg.get("admissionFairSharing")
    if isinstance(fair, dict) and not seconds(fair.get("usageSamplingInterval")):
        fair["usageSamplingInterval"] = "5m"
    for transformation in (cfg.get("resources") or {}).get("transformations") or []:
        transformation["strategy"] = transformation.get("strategy") or "Retain"


def default_v1beta2(decoded: dict[str, Any], namespace: str = DEFAULT_NAMESPACE) -> dict[str, Any]:
    """`SetDefaults_Configuration` of v1beta2: waitForPodsReady is on (30m) unless set otherwise."""
    cfg = copy.deepcopy(decoded)
    _common_defaults(cfg, namespace)
    wait = cfg.setdefault("waitForPodsReady", {})
    if not seconds(wait.get("timeout")):
        wait["timeout"] = "30m"
    wait.setdefault("blockAdmission", False)
    wait.setdefault("recoveryTimeout", wait["timeout"])
    _apply_defaults(wait, _REQUEUING_DEFAULTS)
    multikueue = cfg["multiKueue"]
    if multikueue.get("dispatcherName") == DISPATCHER_INCREMENTAL:
        multikueue.setdefault("incrementalDispatcherConfig", {}).setdefault("stepSize", 3)
    cfg.setdefault("visibilityServer", {}).setdefault("bindPort", 8082)
    return cfg


def convert_v1beta1(decoded: dict[str, Any], namespace: str = DEFAULT_NAMESPACE) -> dict[str, Any]:
    """A v1beta1 document as Kueue holds it: v1beta1 defaults, then the conversion to v1beta2.

    Unlike v1beta2, v1beta1 leaves waitForPodsReady off unless `enable: true`, and then its
    timeout defaults to 5m and blockAdmission to true. Fair sharing is on only with
    `enable: true`. `integrations.podOptions` and `queueVisibility` are dropped.
    """
    cfg = copy.deepcopy(decoded)
    _common_defaults(cfg, namespace)
    wait = cfg.get("waitForPodsReady")
    if isinstance(wait, dict) and wait.get("enable"):
        wait.setdefault("timeout", "5m")
        wait.setdefault("recoveryTimeout", wait["timeout"])
        wait.setdefault("blockAdmission", True)
        _apply_defaults(wait, _REQUEUING_DEFAULTS)
        del wait["enable"]
    else:
        cfg.pop("waitForPodsReady", None)
    fair = cfg.get("fairSharing")
    if isinstance(fair, dict) and fair.get("enable"):
        if not fair.get("preemptionStrategies"):
            fair["preemptionStrategies"] = ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
        del fair["enable"]
    else:
        cfg.pop("fairSharing", None)
    (cfg.get("integrations") or {}).pop("podOptions", None)
    cfg.pop("queueVisibility", None)
    cfg["apiVersion"] = V1BETA2_VERSION
    return cfg


def _v1beta1_warnings(decoded: dict[str, Any]) -> list[FieldError]:
    notes = [FieldError("apiVersion", f"{V1BETA1_VERSION} is deprecated; Kueue 0.19 still reads it and converts "
                                      f"it to {V1BETA2_VERSION}, whose defaults differ")]
    wait = decoded.get("waitForPodsReady")
    if not (isinstance(wait, dict) and wait.get("enable")):
        notes.append(FieldError("waitForPodsReady", "is off in this v1beta1 file (v1beta1 needs enable: true); "
                                "a v1beta2 file turns it on by default with a 30m timeout"))
    elif "blockAdmission" not in wait:
        notes.append(FieldError("waitForPodsReady.blockAdmission", "defaults to true in v1beta1 (false in "
                                "v1beta2): each ClusterQueue admits one workload at a time until its pods are "
                                "ready"))
    fair = decoded.get("fairSharing")
    if isinstance(fair, dict) and not fair.get("enable"):
        notes.append(FieldError("fairSharing", "is off: v1beta1 needs enable: true"))
    if "podOptions" in (decoded.get("integrations") or {}):
        notes.append(FieldError("integrations.podOptions", "is dropped when Kueue converts the file; it has no "
                                "effect (use managedJobsNamespaceSelector)"))
    if "queueVisibility" in decoded:
        notes.append(FieldError("queueVisibility", "is dropped when Kueue converts the file; it has no effect"))
    return notes


# ----------------------------------------------------------------------------------------------
# Step 2: feature gates


def check_feature_gates(gates: Mapping[Any, Any], path: str) -> list[FieldError]:
    """Kueue's gate rules for one set of gates: each must be a known gate set to a boolean, a
    locked gate may not move from its default, and a gate may not be on while one it needs is off.
    `path` is where the map lives; each error names the gate below it."""
    errors = []
    for name, enabled in gates.items():
        where = key_path(path, name)
        if not isinstance(enabled, bool):
            errors.append(fe.invalid(where, enabled, "must be true or false"))
            continue
        gate = cat.FEATURE_GATES.get(str(name))
        if gate is None:
            errors.append(FieldError(where, f"unrecognized feature gate {show(name)}: Kueue 0.19 would not start"
                                            f"{suggest(str(name), cat.FEATURE_GATES)}"))
        elif gate.locked and enabled != gate.default:
            errors.append(FieldError(where, f"{name} is {gate.stage} and locked to {str(gate.default).lower()}; "
                                            "setting it otherwise stops Kueue at startup, so remove it"))
    if errors:
        return errors  # Kueue stops at the first bad gate, before it looks at dependencies
    effective = effective_gates(gates)
    left_on: dict[str, list[str]] = {}  # a gate turned off -> gates still on that need it
    for gate, needs in cat.GATE_REQUIREMENTS.items():
        missing = [n for n in needs if not effective[n]]
        if not effective[gate] or not missing:
            continue
        turned_off = [n for n in missing if n in gates]
        if gates.get(gate) is True or not turned_off:
            errors.append(FieldError(key_path(path, gate), f"{gate} is on but needs {', '.join(missing)}, which "
                                     f"{'is' if len(missing) == 1 else 'are'} off, so Kueue would not start; also "
                                     f"set {', '.join(missing)}: true"))
        else:
            for name in turned_off:
                left_on.setdefault(name, []).append(gate)
    for name, dependents in left_on.items():
        errors.append(FieldError(key_path(path, name), f"turning {name} off leaves {', '.join(dependents)} on, which "
                                 f"need{'s' if len(dependents) == 1 else ''} it, so Kueue would not start; also set "
                                 f"{'it' if len(dependents) == 1 else 'each of them'} to false, or keep {name} on"))
    return errors


def effective_gates(gates: Mapping[Any, Any]) -> dict[str, bool]:
    """Every gate's value: the defaults of v0.19.2 with the known, boolean settings applied."""
    return {name: (gates[name] if isinstance(gates.get(name), bool) else gate.default)
            for name, gate in cat.FEATURE_GATES.items()}


def _feature_gates(in_file: Optional[Mapping[str, bool]], command_line: Optional[Mapping[str, bool]],
                   command_line_key: str) -> tuple[list[FieldError], dict[str, bool]]:
    if command_line:
        errors = []
        if in_file is not None:
            errors.append(FieldError("featureGates", "feature gates are also set on the command line "
                                     f"(--feature-gates, from {command_line_key}); Kueue refuses to start when "
                                     "both are set (\"feature gates for CLI and configuration cannot both "
                                     f"specified\"), so keep one of featureGates and {command_line_key}"))
        return errors, effective_gates(command_line)
    gates = in_file or {}
    return check_feature_gates(gates, "featureGates"), effective_gates(gates)


