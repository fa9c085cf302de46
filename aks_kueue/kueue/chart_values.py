"""The Kueue Helm chart's values (v0.19.2): which keys exist, and which values the chart would
render into an object Kubernetes (or Kueue's manager) refuses.

The chart has no `values.schema.json`, so Helm passes a misspelled key silently and renders
whatever it is given. Sources, at kubernetes-sigs/kueue tag v0.19.2: `charts/kueue/values.yaml`
(the keys; a copy is `../shared/reference/kueue-chart-values.yaml`) and the templates that use
them: `templates/manager/manager.yaml` (the Deployment), `manager/manager-pdb.yaml`,
`manager/auth_proxy_service.yaml` and `webhook/service.yaml` (Services), `webhook/manifests.yaml`
and `_helpers.tpl` (names, and `controllerManager.featureGates` rendered as `--feature-gates`).
The Kubernetes rules are those of the API server's validation for Deployments, Services and
PodDisruptionBudgets (`k8s.io/kubernetes/pkg/apis/*/validation`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Optional, Union

from aks_kueue.k8s import field as fe
from aks_kueue.k8s.names import dns1123_label_problem, label_value_problem, qualified_name_problem
from aks_kueue.k8s.quantity import QuantityError, parse_quantity
from aks_kueue.k8s.field import Path, show
from aks_kueue.k8s.spelling import suggest
from aks_kueue.kueue.config_api import key_path
from aks_kueue.k8s.field import FieldError
from aks_kueue.kueue.structural import validate_structural
from aks_kueue.versions import KUEUE_CONFIG_API_VERSION

# The key tree of the chart's values.yaml, as JSON Schema data.
SCHEMA: dict[str, Any] = json.loads(resources.files("aks_kueue.kueue").joinpath("data/chart-values.json").read_text())
OPEN = "open"  # in CHART_KEYS: a map whose keys are free


def _keys(node: dict[str, Any]) -> Any:
    if node.get("x-kubernetes-preserve-unknown-fields"):
        return OPEN
    return {k: _keys(v) for k, v in node["properties"].items()} if "properties" in node else None


# Every key of the chart: a dict is a map with fixed keys, None a value, OPEN a map whose keys are free.
CHART_KEYS: dict[str, Any] = _keys(SCHEMA)
_PROBE_KEYS = tuple(CHART_KEYS["controllerManager"]["readinessProbe"])

# The program reads the controller as deploy/kueue-controller-manager in kueue-system.
RELEASE_NAME = "kueue"
CHART_NAME = "kueue"
_INT32_MAX = 2**31 - 1
_IANA_SVC_NAME = re.compile(r"^(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
_PERCENT = re.compile(r"^[0-9]+%$")
_LOG_LEVELS = ("debug", "info", "error", "panic")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


@dataclass
class ChartValuesReport:
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[FieldError] = field(default_factory=list)
    # `controllerManager.featureGates` as a map, when it is given and well formed.
    command_line_gates: Optional[dict[str, bool]] = None


def check_chart_values(values: dict[str, Any]) -> ChartValuesReport:
    """Unknown keys (with "did you mean") and values the chart would render into an invalid
    Deployment, Service or PodDisruptionBudget, or into flags Kueue's manager refuses."""
    report = ChartValuesReport()
    errors = report.errors
    errors += validate_structural(SCHEMA, values, unknown=_unknown_key)[1]
    _names(values, report)
    for key in ("enablePrometheus", "enableCertManager", "enableVisibilityAPF", "enableMutatingAdmissionPolicy",
                "enableVisibilityAuthReaderRoleBinding", "enableKueueViz"):
        _boolean(values, Path(), key, errors)
    manager = _map(values.get("controllerManager"), "controllerManager", errors)
    if manager is not None:
        report.command_line_gates = _feature_gate_list(manager, report)
        _controller_manager(manager, report)
    for service in ("metricsService", "webhookService"):
        section = _map(values.get(service), service, errors)
        if section is not None:
            _service(section, Path(service), report)
    webhook = _map(values.get("mutatingWebhook"), "mutatingWebhook", errors)
    if webhook is not None:
        _one_of(webhook, Path("mutatingWebhook"), "reinvocationPolicy", ("Never", "IfNeeded"), errors)
    return report


def fullname(values: dict[str, Any]) -> str:
    """`kueue.fullname` of `_helpers.tpl` for the release the program installs."""
    override = values.get("fullnameOverride")
    if override:
        return str(override)[:63].rstrip("-")
    name = values.get("nameOverride") or CHART_NAME
    return RELEASE_NAME if str(name) in RELEASE_NAME else f"{RELEASE_NAME}-{name}"[:63].rstrip("-")


# ----------------------------------------------------------------------------------------------


def _unknown_key(path: str, key: Any, hint: str) -> FieldError:
    return FieldError(path, "is not a value of the Kueue chart: Helm would ignore it silently (the chart has no "
                            f"schema){hint}")


def _map(value: Any, path: Union[Path, str], errors: list[FieldError], what: str = "a map") -> Optional[dict]:
    """`value` when it is a map; None when it is absent or not a map (which is reported)."""
    if value is not None and not isinstance(value, dict):
        errors.append(fe.invalid(path, value, f"must be {what}"))
        return None
    return value


def _names(values: dict[str, Any], report: ChartValuesReport) -> None:
    for key in ("nameOverride", "fullnameOverride"):
        if values.get(key) is not None and not isinstance(values[key], str):
            report.errors.append(fe.invalid(key, values[key], "must be a string"))
            return
    name = fullname(values)
    if name != RELEASE_NAME:
        key = "fullnameOverride" if values.get("fullnameOverride") else "nameOverride"
        report.errors.append(FieldError(key, f"would rename the chart's objects to {name}-* (the controller "
                                             f"would be deploy/{name}-controller-manager); the program installs, "
                                             "waits for and reports deploy/kueue-controller-manager, so remove it"))


# The checks of one value, `section[key]`, reported at `base.key`; an absent value passes.


def _boolean(section: dict[str, Any], base: Path, key: str, errors: list[FieldError]) -> None:
    value = section.get(key)
    if value is not None and not isinstance(value, bool):
        errors.append(fe.invalid(base.child(key), value, "must be true or false (a Helm template reads any "
                                                         "non-empty text, even \"false\", as true)"))


def _one_of(section: dict[str, Any], base: Path, key: str, allowed: tuple[str, ...], errors: list[FieldError],
            empty_ok: bool = False) -> None:
    value = section.get(key)
    if value is None or (empty_ok and value == "") or value in allowed:
        return
    refused = fe.not_supported(base.child(key), value, allowed)
    errors.append(FieldError(refused.field, refused.message + suggest(str(value), allowed)))


def _integer(section: dict[str, Any], base: Path, key: str, errors: list[FieldError], minimum: int = 0,
             hint: str = "") -> Optional[int]:
    """A whole number from `minimum` to the int32 maximum, as the chart renders it into an object."""
    value = section.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= _INT32_MAX:
        errors.append(fe.invalid(base.child(key), value, f"must be a whole number from {minimum} to "
                                                         f"{_INT32_MAX}{hint}"))
        return None
    return value


def _feature_gate_list(manager: dict[str, Any], report: ChartValuesReport) -> Optional[dict[str, bool]]:
    """The chart renders each `{name, enabled}` as `name=enabled` in one `--feature-gates` flag."""
    items = manager.get("featureGates")
    base = Path("controllerManager", "featureGates")
    if items is None:
        return None
    if not isinstance(items, list):
        report.errors.append(fe.invalid(base, items, "must be a list of {name: <gate>, enabled: true|false}"))
        return None
    gates: dict[str, bool] = {}
    for index, item in enumerate(items):
        where = base.index(index)
        if not isinstance(item, dict):
            report.errors.append(fe.invalid(where, item, "must be a map {name: <gate>, enabled: true|false}"))
            continue
        for key in item:
            if key not in ("name", "enabled"):
                report.errors.append(FieldError(key_path(where, key), "is not a key of a chart feature gate "
                                                f"entry{suggest(str(key), ('name', 'enabled'))}; write "
                                                "{name: <gate>, enabled: true|false}"))
        name, enabled = item.get("name"), item.get("enabled")
        if not isinstance(name, str) or not name:
            report.errors.append(fe.invalid(where.child("name"), name, "must be a gate name"))
            continue
        if not isinstance(enabled, bool):
            report.errors.append(fe.invalid(where.child("enabled"), enabled, "must be true or false; the chart "
                                            f"renders {name}=%t, which Kueue cannot read otherwise"))
            continue
        if name in gates:
            report.warnings.append(FieldError(str(where), f"{name} is listed twice; the last entry wins"))
        gates[name] = enabled
    return gates


def _controller_manager(manager: dict[str, Any], report: ChartValuesReport) -> None:
    errors = report.errors
    base = Path("controllerManager")
    replicas = _integer(manager, base, "replicas", errors,
                        hint=" (the controller Deployment's spec.replicas); the chart's default is 1")
    if replicas == 0:
        report.warnings.append(FieldError(f"{base}.replicas", "0 runs no Kueue controller: its webhooks, which "
                                          "fail closed, would then block every Job and Pod Kueue manages"))
    _boolean(manager, base, "hostNetwork", errors)
    _one_of(manager, base, "dnsPolicy", ("ClusterFirstWithHostNet", "ClusterFirst", "Default"), errors, empty_ok=True)
    _strategy(manager.get("strategy"), base.child("strategy"), errors)
    for probe in ("readinessProbe", "livenessProbe"):
        section = _map(manager.get(probe), base.child(probe), errors)
        for key in _PROBE_KEYS if section else ():
            _integer(section, base.child(probe), key, errors)  # type: ignore[arg-type]
        if probe == "livenessProbe" and section and section.get("successThreshold") not in (None, 0, 1):
            errors.append(fe.invalid(base.child(probe, "successThreshold"), fe.OMIT,
                                     f"{show(section['successThreshold'])}: must be 1 for a liveness probe"))
    container = _map(manager.get("manager"), base.child("manager"), errors)
    if container is not None:
        _container(container, base.child("manager"), errors)
    _string_map(manager.get("nodeSelector"), base.child("nodeSelector"), errors, values_are_labels=True)
    _tolerations(manager.get("tolerations"), base.child("tolerations"), errors)
    _pull_secrets(manager.get("imagePullSecrets"), base.child("imagePullSecrets"), errors)
    if manager.get("topologySpreadConstraints") is not None and not isinstance(manager["topologySpreadConstraints"],
                                                                               list):
        errors.append(fe.invalid(base.child("topologySpreadConstraints"), fe.OMIT, "must be a list"))
    budget = _map(manager.get("podDisruptionBudget"), base.child("podDisruptionBudget"), errors)
    if budget is not None:
        _boolean(budget, base.child("podDisruptionBudget"), "enabled", errors)
        minimum = budget.get("minAvailable")
        where = base.child("podDisruptionBudget", "minAvailable")
        if isinstance(minimum, str) and _PERCENT.fullmatch(minimum):
            if int(minimum[:-1]) > 100:
                errors.append(fe.invalid(where, minimum, "must not be greater than 100%"))
        elif minimum is not None:
            _integer(budget, base.child("podDisruptionBudget"), "minAvailable", errors,
                     hint=", or a percentage such as \"50%\"")
        if budget.get("enabled") is True and isinstance(minimum, int) and minimum >= (replicas or 1):
            report.warnings.append(FieldError(str(where), f"{minimum} of {replicas or 1} controller pod(s) must stay "
                                              "up, so no node drain may evict one: AKS node-image and Kubernetes "
                                              "upgrades would stall on the node that runs it"))


def _strategy(strategy: Any, path: Path, errors: list[FieldError]) -> None:
    strategy = _map(strategy, path, errors, "a Deployment strategy map")
    if not strategy:
        return
    kind = strategy.get("type", "RollingUpdate")
    _one_of(strategy, path, "type", ("RollingUpdate", "Recreate"), errors)
    rolling = strategy.get("rollingUpdate")
    if rolling is not None and kind == "Recreate":
        errors.append(fe.forbidden(path.child("rollingUpdate"),
                                   "may not be specified when strategy `type` is 'Recreate'"))
    if isinstance(rolling, dict):
        amounts = {}
        for key in ("maxSurge", "maxUnavailable"):
            value = rolling.get(key)
            if value is None:
                continue
            if isinstance(value, str) and _PERCENT.fullmatch(value):
                amounts[key] = int(value[:-1])
            elif isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                amounts[key] = value
            else:
                errors.append(fe.invalid(path.child("rollingUpdate", key), value,
                                         "must be a non-negative whole number or a percentage such as \"25%\""))
        if amounts.get("maxSurge") == 0 and amounts.get("maxUnavailable") == 0:
            errors.append(fe.invalid(path.child("rollingUpdate", "maxUnavailable"), 0,
                                     "may not be 0 when `maxSurge` is 0"))


def _container(container: dict[str, Any], path: Path, errors: list[FieldError]) -> None:
    image = _map(container.get("image"), path.child("image"), errors)
    if image is not None:
        for key in ("repository", "tag"):
            if image.get(key) is not None and not isinstance(image[key], str):
                errors.append(fe.invalid(path.child("image", key), image[key], "must be a string"))
        _one_of(image, path.child("image"), "pullPolicy", ("Always", "IfNotPresent", "Never"), errors, empty_ok=True)
    level = container.get("logLevel")
    if level is not None:
        if isinstance(level, float) and level.is_integer():
            level = int(level)
        text = str(level).lower() if not isinstance(level, bool) else ""
        if not (text in _LOG_LEVELS or (isinstance(level, int) and not isinstance(level, bool) and 0 < level < 128)):
            errors.append(fe.invalid(path.child("logLevel"), level, "the manager's --zap-log-level takes debug, "
                                     "info, error, panic or a whole number from 1 (more is more verbose); it would "
                                     "not start otherwise"))
    if container.get("priorityClassName") is not None and not isinstance(container["priorityClassName"], str):
        errors.append(fe.invalid(path.child("priorityClassName"), fe.OMIT, "must be the name of a PriorityClass"))
    _string_map(container.get("podAnnotations"), path.child("podAnnotations"), errors, values_are_labels=False)
    _resources(container.get("resources"), path.child("resources"), errors)


def _string_map(value: Any, path: Path, errors: list[FieldError], values_are_labels: bool) -> None:
    for key, item in (_map(value, path, errors) or {}).items():
        where = key_path(path, key)
        if problem := qualified_name_problem(str(key)):
            errors.append(fe.invalid(where, key, problem))
        if not isinstance(item, str):
            errors.append(fe.invalid(where, item, "must be a string; quote it"))
        elif values_are_labels and (problem := label_value_problem(item)):
            errors.append(fe.invalid(where, item, problem))


def _resources(resources: Any, path: Path, errors: list[FieldError]) -> None:
    resources = _map(resources, path, errors, "a map of limits and requests")
    if resources is None:
        return
    amounts: dict[str, dict[str, Any]] = {}
    for kind in ("limits", "requests"):
        for name, quantity in (_map(resources.get(kind), path.child(kind), errors) or {}).items():
            where = key_path(path.child(kind), name)
            try:
                amount = parse_quantity(quantity)
            except QuantityError as error:
                errors.append(fe.invalid(where, fe.OMIT, str(error)))
                continue
            if amount < 0:
                errors.append(fe.invalid(where, quantity, "must be greater than or equal to 0"))
            amounts.setdefault(kind, {})[str(name)] = amount
    for name, request in amounts.get("requests", {}).items():
        limit = amounts.get("limits", {}).get(name)
        if limit is not None and request > limit:
            errors.append(fe.invalid(key_path(path.child("requests"), name), fe.OMIT,
                                     f"{show(resources['requests'][name])}: must be less than or equal to "
                                     f"{name} limit"))


def _tolerations(tolerations: Any, path: Path, errors: list[FieldError]) -> None:
    if tolerations is None:
        return
    if not isinstance(tolerations, list):
        errors.append(fe.invalid(path, tolerations, "must be a list of tolerations"))
        return
    for index, toleration in enumerate(tolerations):
        where = path.index(index)
        if not isinstance(toleration, dict):
            errors.append(fe.invalid(where, toleration, "must be a toleration map"))
            continue
        key, operator = toleration.get("key") or "", toleration.get("operator") or "Equal"
        value, effect = toleration.get("value") or "", toleration.get("effect") or ""
        if key and (problem := qualified_name_problem(str(key))):
            errors.append(fe.invalid(where.child("key"), key, problem))
        if not key and operator != "Exists":
            errors.append(fe.invalid(where.child("operator"), operator, "operator must be Exists when `key` is "
                                     "empty, which means \"match all values and all keys\""))
        if operator == "Exists" and value:
            errors.append(fe.invalid(where.child("operator"), "Exists",
                                     "value must be empty when `operator` is 'Exists'"))
        elif operator not in ("Equal", "Exists"):
            errors.append(fe.not_supported(where.child("operator"), operator, ("Equal", "Exists")))
        if effect not in ("", *_EFFECTS):
            errors.append(fe.not_supported(where.child("effect"), effect, _EFFECTS))
        if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
            errors.append(fe.invalid(where.child("effect"), effect, "effect must be 'NoExecute' when "
                                                                    "`tolerationSeconds` is set"))


def _pull_secrets(secrets: Any, path: Path, errors: list[FieldError]) -> None:
    if secrets is None:
        return
    if not isinstance(secrets, list) or not all(isinstance(s, dict) and isinstance(s.get("name"), str)
                                                for s in secrets):
        errors.append(fe.invalid(path, secrets, "must be a list of {name: <secret>}"))


def _service(service: dict[str, Any], path: Path, report: ChartValuesReport) -> None:
    errors = report.errors
    kind = service.get("type")
    _one_of(service, path, "type", ("ClusterIP", "NodePort", "LoadBalancer"), errors, empty_ok=True)
    if kind in ("NodePort", "LoadBalancer"):
        report.warnings.append(FieldError(f"{path}.type", f"{kind} publishes Kueue's "
                                          f"{'metrics' if path == 'metricsService' else 'webhook'} endpoint outside "
                                          "the cluster; ClusterIP keeps it inside"))
    ports = service.get("ports")
    if ports is not None:
        _ports(ports, path.child("ports"), kind, errors)
    if path == "metricsService":
        _string_map(service.get("labels"), path.child("labels"), errors, values_are_labels=True)
        _string_map(service.get("annotations"), path.child("annotations"), errors, values_are_labels=False)
    stack = _map(service.get("ipDualStack"), path.child("ipDualStack"), errors) if path == "webhookService" else None
    if stack is not None:
        _boolean(stack, path.child("ipDualStack"), "enabled", errors)
        families = stack.get("ipFamilies")
        if families is not None and (not isinstance(families, list) or not 1 <= len(families) <= 2
                                     or len(set(map(str, families))) != len(families)
                                     or any(f not in ("IPv4", "IPv6") for f in families)):
            errors.append(fe.invalid(path.child("ipDualStack", "ipFamilies"), families,
                                     "must be one or two distinct families out of \"IPv4\" and \"IPv6\""))
        _one_of(stack, path.child("ipDualStack"), "ipFamilyPolicy",
                ("SingleStack", "PreferDualStack", "RequireDualStack"), errors)


def _ports(ports: Any, path: Path, kind: Any, errors: list[FieldError]) -> None:
    if not isinstance(ports, list) or not ports:
        errors.append(fe.invalid(path, ports, "must be a non-empty list of Service ports"))
        return
    names: set[str] = set()
    for index, port in enumerate(ports):
        where = path.index(index)
        if not isinstance(port, dict):
            errors.append(fe.invalid(where, port, "must be a Service port map"))
            continue
        number = port.get("port")
        if number is None:
            errors.append(fe.required(where.child("port")))
        else:
            _integer(port, where, "port", errors, minimum=1)
            if isinstance(number, int) and number > 65535:
                errors.append(fe.invalid(where.child("port"), number, "must be between 1 and 65535"))
        target = port.get("targetPort")
        if isinstance(target, str):
            if len(target) > 15 or "--" in target or not _IANA_SVC_NAME.fullmatch(target):
                errors.append(fe.invalid(where.child("targetPort"), target, "must be a port number or an IANA "
                                         "service name (at most 15 lowercase letters, digits and '-', with a "
                                         "letter)"))
        elif target is not None and (isinstance(target, bool) or not isinstance(target, int)
                                     or not 1 <= target <= 65535):
            errors.append(fe.invalid(where.child("targetPort"), target, "must be between 1 and 65535"))
        _one_of(port, where, "protocol", ("TCP", "UDP", "SCTP"), errors)
        name = port.get("name")
        if name is None and len(ports) > 1:
            errors.append(fe.required(where.child("name"), "a Service with more than one port names each"))
        elif name is not None:
            if problem := dns1123_label_problem(name):
                errors.append(fe.invalid(where.child("name"), name, problem))
            elif name in names:
                errors.append(fe.duplicate(where.child("name"), name))
            names.add(str(name))
        if port.get("nodePort") is not None and kind not in ("NodePort", "LoadBalancer"):
            errors.append(fe.forbidden(where.child("nodePort"), "may not be used when `type` is 'ClusterIP'"))


def chart_configuration(frameworks: list[str]) -> dict[str, Any]:
    """The chart's default `managerConfig.controllerManagerConfigYaml`, with these integrations.

    Setting the value replaces the chart's whole default, so every default the chart ships is
    written out again here; only `integrations.frameworks` differs.
    """
    return {
        "apiVersion": KUEUE_CONFIG_API_VERSION,
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "controller": {"groupKindConcurrency": {
            "Job.batch": 5, "Pod": 5, "Workload.kueue.x-k8s.io": 10, "LocalQueue.kueue.x-k8s.io": 5,
            "ClusterQueue.kueue.x-k8s.io": 5, "ResourceFlavor.kueue.x-k8s.io": 1}},
        "clientConnection": {"qps": 300, "burst": 500},
        "integrations": {"frameworks": list(frameworks)},
    }
