"""The rules of Kueue v0.19.2's `config.Validate` (`pkg/config/validation.go`), in its order.

They run on a Configuration that has been decoded, converted to v1beta2 and defaulted (see
`configuration.py`), with the feature gates in force. Every one of them stops the manager.
Messages follow Kueue's `field.ErrorList` wording.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, Mapping, Optional, Union

from aks_kueue.k8s import names
from aks_kueue.k8s import field
from aks_kueue.k8s.scheduling import label_selector_matches
from aks_kueue.k8s.spelling import suggest
from aks_kueue.kueue import catalog as cat
from aks_kueue.k8s.field import Path, show
from aks_kueue.kueue.config_api import key_path, seconds
from aks_kueue.kueue.structural import FieldError
# Kubernetes' own name and selector rules, as the admission webhooks apply them.
from aks_kueue.kueue.webhooks import _label_selector as label_selector_errors
from aks_kueue.k8s.names import label_value_problem, qualified_name_problem

DISPATCHER_ALL_AT_ONCE = "kueue.x-k8s.io/multikueue-dispatcher-all-at-once"
DISPATCHER_INCREMENTAL = "kueue.x-k8s.io/multikueue-dispatcher-incremental"
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CUSTOM_LABEL_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_]*$")
_STRATEGY_SETS = (("LessThanOrEqualToFinalShare",), ("LessThanInitialShare",),
                  ("LessThanOrEqualToFinalShare", "LessThanInitialShare"))
_CUSTOM_LABEL_LIMITS = {"Workload": 2, "LocalQueue": 6, "ClusterQueue": 6, "Cohort": 6}


def validate_configuration(cfg: dict[str, Any], gates: Mapping[str, bool]) -> list[FieldError]:
    """The rules of Kueue's `config.Validate` on a defaulted v1beta2 Configuration."""
    errors: list[FieldError] = []
    errors += _wait_for_pods_ready(cfg, gates)
    errors += _integrations(cfg)
    errors += _multikueue(cfg)
    errors += _fair_sharing(cfg)
    errors += _admission_fair_sharing(cfg)
    errors += _internal_cert_management(cfg)
    errors += _transformations(cfg)
    errors += _device_class_mappings(cfg, gates)
    errors += _namespace_selector(cfg, cfg.get("managedJobsNamespaceSelector"), "managedJobsNamespaceSelector")
    errors += _retention(cfg)
    errors += _tls(cfg)
    errors += _visibility_server(cfg)
    errors += _custom_labels(cfg)
    errors += _quota_check_strategy(cfg, gates)
    return list(dict.fromkeys(errors))  # pod integration and the selector check report the same thing


def _negative(path: Union[Path, str], value: Any) -> FieldError:
    return field.invalid(path, value, "must be greater than or equal to 0")


def _negative_durations(section: dict[str, Any], base: Path, *keys: str) -> list[FieldError]:
    return [_negative(base.child(key), section[key]) for key in keys if seconds(section.get(key)) < 0]


def _wait_for_pods_ready(cfg: dict[str, Any], gates: Mapping[str, bool]) -> list[FieldError]:
    wait = cfg.get("waitForPodsReady")
    if wait is None or gates.get("DisableWaitForPodsReady"):
        return []
    base = Path("waitForPodsReady")
    errors = []
    if seconds(wait.get("timeout")) == 0:
        errors.append(field.required(base.child("timeout"), "must be specified (a duration greater than 0)"))
    errors += _negative_durations(wait, base, "timeout", "recoveryTimeout")
    strategy, base = wait.get("requeuingStrategy") or {}, base.child("requeuingStrategy")
    if strategy.get("timestamp", "Eviction") not in ("Creation", "Eviction"):
        errors.append(field.not_supported(base.child("timestamp"), strategy["timestamp"], ("Creation", "Eviction")))
    return errors + [_negative(base.child(key), strategy[key])
                     for key in ("backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds")
                     if (strategy.get(key) or 0) < 0]


def _integrations(cfg: dict[str, Any]) -> list[FieldError]:
    integrations = cfg.get("integrations") or {}
    errors = []
    managed: set[str] = set()
    for index, name in enumerate(integrations.get("frameworks") or []):
        where = f"integrations.frameworks[{index}]"
        if name not in cat.FRAMEWORKS:
            errors.append(field.not_supported(where, name, detail=f"supported values: {', '.join(cat.FRAMEWORKS)}"
                                                                   f"{suggest(name, cat.FRAMEWORKS)}"))
            continue
        kind = cat.FRAMEWORK_KINDS[name]
        if kind in managed:
            errors.append(field.duplicate(where, name, "list each integration once"))
        managed.add(kind)
    for index, name in enumerate(integrations.get("externalFrameworks") or []):
        where = f"integrations.externalFrameworks[{index}]"
        kind = _kind_arg(name)
        if kind is None:
            errors.append(field.invalid(where, name, "must be format, 'Kind.version.group.com'"))
        elif kind in managed:
            errors.append(field.duplicate(where, name, "Kueue already manages this kind"))
        else:
            managed.add(kind)
    if "pod" in (integrations.get("frameworks") or []):
        selector = cfg.get("managedJobsNamespaceSelector")
        if selector is None:
            errors.append(field.required("managedJobsNamespaceSelector", "cannot be empty when pod integration is "
                                                                         "enabled"))
        else:
            errors += _namespace_selector(cfg, selector, "managedJobsNamespaceSelector")
    return errors


def _kind_arg(text: str) -> Optional[str]:
    """`schema.ParseKindArg`: Kind.version.group, as "group/version, Kind=Kind"."""
    if text.count(".") < 2:
        return None
    kind, version, group = text.split(".", 2)
    return f"{group}/{version}, Kind={kind}" if group else f"/{version}, Kind={kind}"


def _namespace_selector(cfg: dict[str, Any], selector: Any, path: str) -> list[FieldError]:
    errors = label_selector_errors(selector, path)
    if errors or not isinstance(selector, dict):
        return errors
    forbidden = ["kube-system"] + ([cfg["namespace"]] if cfg.get("namespace") else [])
    for namespace in forbidden:
        if label_selector_matches(selector, {"kubernetes.io/metadata.name": namespace}):
            errors.append(field.invalid(path, selector, f"should not match the \"{namespace}\" namespace"))
    return errors


def _multikueue(cfg: dict[str, Any]) -> list[FieldError]:
    multikueue = cfg.get("multiKueue") or {}
    base = Path("multiKueue")
    errors = _negative_durations(multikueue, base, "gcInterval", "workerLostTimeout")
    if "origin" in multikueue and (problem := label_value_problem(multikueue["origin"])):
        errors.append(field.invalid(base.child("origin"), multikueue["origin"], problem))
    seen: set[str] = set()
    for index, framework in enumerate(multikueue.get("externalFrameworks") or []):
        where = base.child("externalFrameworks").index(index).child("name")
        kind = _kind_arg(framework.get("name", ""))
        if kind is None:
            errors.append(field.invalid(where, framework.get("name", ""), "must be in 'kind.version.group' format"))
        elif kind in seen:
            errors.append(field.duplicate(where, framework['name']))
        else:
            seen.add(kind)
    profile = multikueue.get("clusterProfile")
    if isinstance(profile, dict):
        access, legacy = profile.get("accessProviders") or [], profile.get("credentialsProviders") or []
        if access and legacy:
            errors.append(field.forbidden(base.child("clusterProfile", "credentialsProviders"),
                                          "must not be specified when accessProviders is specified"))
        providers, where = (access, "accessProviders") if access else (legacy, "credentialsProviders")
        errors += _access_providers(providers, base.child("clusterProfile", where))
    incremental = multikueue.get("incrementalDispatcherConfig")
    if incremental is not None:
        if multikueue.get("dispatcherName") != DISPATCHER_INCREMENTAL:
            errors.append(field.invalid(base.child("incrementalDispatcherConfig"), field.OMIT,
                                        "incrementalDispatcherConfig is only valid when dispatcherName is set to "
                                        f"the incremental dispatcher ({DISPATCHER_INCREMENTAL})"))
        if incremental.get("stepSize") is not None and incremental["stepSize"] < 1:
            errors.append(field.invalid(base.child("incrementalDispatcherConfig", "stepSize"), incremental["stepSize"],
                                        "must be greater than or equal to 1"))
    return errors


def _access_providers(providers: list[dict[str, Any]], path: Path) -> list[FieldError]:
    errors = []
    execution_path = path.child("execConfig")
    for provider in providers:
        execution = provider.get("execConfig") or {}
        missing = ([path.child("name")] if not provider.get("name") else []) + [
            execution_path.child(key) for key in ("command", "apiVersion") if not execution.get(key)]
        if any(not env.get("name") for env in execution.get("env") or []):
            missing.append(execution_path.child("env", "name"))
        mode = execution.get("interactiveMode", "")
        if mode == "":
            missing.append(execution_path.child("interactiveMode"))
        errors += [field.required(where, "must be specified") for where in missing]
        if mode != "" and mode not in ("Never", "IfAvailable", "Always"):
            errors.append(field.not_supported(execution_path.child("interactiveMode"), mode,
                                              ("Never", "IfAvailable", "Always")))
    return errors


def _fair_sharing(cfg: dict[str, Any]) -> list[FieldError]:
    fair = cfg.get("fairSharing")
    if fair is None:
        return []
    strategies = tuple(fair.get("preemptionStrategies") or ())
    if not strategies:
        return [field.required("fairSharing.preemptionStrategies", "must be specified when fairSharing is present, "
                                                                   "e.g. [LessThanOrEqualToFinalShare, "
                                                                   "LessThanInitialShare]")]
    if strategies not in _STRATEGY_SETS:
        allowed = ", ".join(f"[{', '.join(s)}]" for s in _STRATEGY_SETS)
        return [field.not_supported("fairSharing.preemptionStrategies", list(strategies),
                                    detail=f"supported values: {allowed}")]
    return []


def _admission_fair_sharing(cfg: dict[str, Any]) -> list[FieldError]:
    fair = cfg.get("admissionFairSharing")
    if fair is None:
        return []
    base = Path("admissionFairSharing")
    errors = _negative_durations(fair, base, "usageHalfLifeTime")
    if seconds(fair.get("usageSamplingInterval")) <= 0:
        errors.append(field.invalid(base.child("usageSamplingInterval"), fair.get("usageSamplingInterval"),
                                    "must be greater than 0"))
    return errors + [_negative(key_path(base.child("resourceWeights"), resource), weight)
                     for resource, weight in (fair.get("resourceWeights") or {}).items() if weight < 0]


def _internal_cert_management(cfg: dict[str, Any]) -> list[FieldError]:
    certs = cfg.get("internalCertManagement") or {}
    if not certs.get("enable"):
        return []
    errors = []
    service, secret = certs.get("webhookServiceName"), certs.get("webhookSecretName")
    if service is not None and (problem := names.dns1035_label_problem(service)):
        errors.append(field.invalid("internalCertManagement.webhookServiceName", service, problem))
    if secret is not None and (problem := names.dns1123_subdomain_problem(secret)):
        errors.append(field.invalid("internalCertManagement.webhookSecretName", secret, problem))
    return errors


def _transformations(cfg: dict[str, Any]) -> list[FieldError]:
    errors = []
    seen: set[str] = set()
    for index, transformation in enumerate((cfg.get("resources") or {}).get("transformations") or []):
        where = Path("resources", "transformations").index(index)
        if transformation.get("strategy") not in ("Retain", "Replace"):
            errors.append(field.not_supported(where.child("strategy"), transformation.get("strategy"),
                                              ("Retain", "Replace")))
        errors += field.unique(where.child("input"), transformation.get("input", ""), seen)
    return errors


def _device_class_mappings(cfg: dict[str, Any], gates: Mapping[str, bool]) -> list[FieldError]:
    mappings = (cfg.get("resources") or {}).get("deviceClassMappings") or []
    if not mappings:
        return []
    errors = []
    base = "resources.deviceClassMappings"
    if len(mappings) > 16:
        errors.append(field.too_many(base, len(mappings), 16))
    names: set[str] = set()
    owner: dict[str, str] = {}
    counters: dict[str, set[str]] = {}
    for index, mapping in enumerate(mappings):
        where = f"{base}[{index}]"
        name = mapping.get("name", "")
        errors += field.unique(f"{where}.name", name, names, qualified_name_problem(name))
        classes = mapping.get("deviceClassNames") or []
        if not classes:
            errors.append(field.required(f"{where}.deviceClassNames", "at least one device class name is required"))
        if len(classes) > 8:
            errors.append(field.too_many(f"{where}.deviceClassNames", len(classes), 8))
        sources = mapping.get("sources") or []
        counter = (sources[0].get("counter") or {}).get("name", "") if sources else ""
        seen_classes: set[str] = set()
        for c, device_class in enumerate(classes):
            path = f"{where}.deviceClassNames[{c}]"
            errors += field.unique(path, device_class, seen_classes, qualified_name_problem(device_class))
            if device_class in owner and owner[device_class] != name:
                if not counter or not counters[device_class]:
                    errors.append(field.invalid(path, device_class, "device class already mapped to resource "
                                                                    f"{owner[device_class]}"))
                elif counter in counters[device_class]:
                    errors.append(field.invalid(path, device_class, "device class already has a counter source for "
                                                                    f"counter \"{counter}\""))
                else:
                    counters[device_class].add(counter)
            elif device_class not in owner:
                owner[device_class] = name
                counters[device_class] = {counter} if counter else set()
        errors += _device_sources(sources, f"{where}.sources", gates)
    return errors


def _device_sources(sources: list[dict[str, Any]], base: str, gates: Mapping[str, bool]) -> list[FieldError]:
    errors = []
    counters = capacities = 0
    for index, source in enumerate(sources):
        where = f"{base}[{index}]"
        counter, capacity = source.get("counter"), source.get("capacity")
        if counter is None and capacity is None:
            errors.append(field.required(where, "exactly one source type must be set per entry"))
            continue
        if counter is not None and capacity is not None:
            errors.append(field.invalid(where, "counter+capacity", "exactly one source type must be set per entry"))
            continue
        if counter is not None:
            counters += 1
            if not gates.get("KueueDRAIntegrationPartitionableDevices"):
                errors.append(field.invalid(f"{where}.counter", field.OMIT,
                                            "counter sources require KueueDRAIntegrationPartitionableDevices to be "
                                            "enabled"))
                continue
            name = counter.get("name", "")
            if not name:
                errors.append(field.required(f"{where}.counter.name"))
            elif problem := names.dns1123_label_problem(name):
                errors.append(field.invalid(f"{where}.counter.name", name, problem))
            errors += _device_source(counter, f"{where}.counter")
        else:
            capacities += 1
            if not gates.get("KueueDRAIntegrationConsumableCapacity"):
                errors.append(field.invalid(f"{where}.capacity", field.OMIT,
                                            "capacity sources require KueueDRAIntegrationConsumableCapacity to be "
                                            "enabled"))
                continue
            errors += _dra_qualified_name(capacity.get("name", ""), f"{where}.capacity.name")
            errors += _device_source(capacity, f"{where}.capacity")
    if counters and capacities:
        errors.append(field.invalid(base, len(sources), "cannot mix counter and capacity sources in the same mapping"))
    return errors


def _device_source(source: dict[str, Any], where: str) -> list[FieldError]:
    errors = []
    driver = source.get("driver", "")
    if not driver:
        errors.append(field.required(f"{where}.driver"))
    elif len(driver) > 63:
        errors.append(field.invalid(f"{where}.driver", driver, "must not exceed 63 characters"))
    elif problem := names.dns1123_subdomain_problem(driver):
        errors.append(field.invalid(f"{where}.driver", driver, problem))
    if not ((source.get("deviceSelector") or {}).get("cel") or {}).get("expression"):
        errors.append(field.required(f"{where}.deviceSelector.cel.expression"))
    return errors


def _dra_qualified_name(name: str, where: str) -> list[FieldError]:
    """`validateQualifiedName` (DRA): an optional driver-name domain and a C identifier. Like
    Kueue's copy, a name with more than one slash is not checked."""
    parts = name.split("/")
    if len(parts) > 2:
        return []
    errors = []
    if len(parts) == 2:
        domain = parts[0]
        if not domain:
            errors.append(field.invalid(where, "", "the domain must not be empty"))
        elif len(domain) > names.LABEL_MAX or names.dns1123_subdomain_problem(domain.lower()):
            errors.append(field.invalid(where, domain, "must be a lowercase RFC 1123 subdomain of at most 63 "
                                                       "characters"))
        if not parts[1]:
            return errors + [field.invalid(where, "", "the name must not be empty")]
    identifier = parts[-1]
    if len(identifier) > 32 or not _C_IDENTIFIER.fullmatch(identifier):
        errors.append(field.invalid(where, identifier, "must be a C identifier (letters, digits and '_', not "
                                                       "starting with a digit) of at most 32 characters"))
    return errors


def _retention(cfg: dict[str, Any]) -> list[FieldError]:
    workloads = (cfg.get("objectRetentionPolicies") or {}).get("workloads") or {}
    return _negative_durations(workloads, Path("objectRetentionPolicies", "workloads"), "afterFinished",
                               "afterDeactivatedByKueue")


def _tls(cfg: dict[str, Any]) -> list[FieldError]:
    tls = cfg.get("tls")
    if tls is None:
        return []
    version = tls.get("minVersion", "")
    if version in ("VersionTLS10", "VersionTLS11"):
        return [field.invalid("tls", field.OMIT, f"minVersion {show(version)}: invalid minimum TLS version. Please "
                                                 "use VersionTLS12 or VersionTLS13")]
    if version not in ("", "VersionTLS12", "VersionTLS13"):
        return [field.invalid("tls", field.OMIT, f"minVersion {show(version)}: unknown tls version. Please use "
                                                 "VersionTLS12 or VersionTLS13")]
    if version == "VersionTLS13" and tls.get("cipherSuites"):
        return [field.invalid("tls.cipherSuites", field.OMIT, "may not be specified when `minVersion` is "
                                                              "'VersionTLS13'")]
    return []


def _visibility_server(cfg: dict[str, Any]) -> list[FieldError]:
    server = cfg.get("visibilityServer")
    if server is None:
        return []
    errors = []
    address = server.get("bindAddress")
    if address is not None:
        try:
            ipaddress.ip_address(address)
        except ValueError:
            errors.append(field.invalid("visibilityServer.bindAddress", address,
                                        "must be a valid IP address"))
    port = server.get("bindPort")
    if port is not None and not 1 <= port <= 65535:
        errors.append(field.invalid("visibilityServer.bindPort", port, "must be a valid port number (1-65535)"))
    return errors


def _custom_labels(cfg: dict[str, Any]) -> list[FieldError]:
    labels = (cfg.get("metrics") or {}).get("customLabels") or []
    if not labels:
        return []
    base = "metrics.customLabels"
    errors = []
    if len(labels) > 20:
        errors.append(field.too_many(base, len(labels), 20))
    names: set[str] = set()
    per_kind: dict[str, int] = {}
    for index, entry in enumerate(labels):
        where = f"{base}[{index}]"
        name = entry.get("name", "")
        errors += field.unique(f"{where}.name", name, names, None if _CUSTOM_LABEL_NAME.fullmatch(name) else
                               f"must match {_CUSTOM_LABEL_NAME.pattern}")
        label_key, annotation_key = entry.get("sourceLabelKey", ""), entry.get("sourceAnnotationKey", "")
        if label_key and annotation_key:
            errors.append(field.invalid(where, field.OMIT, "sourceLabelKey and sourceAnnotationKey are mutually "
                                                           "exclusive"))
        key, key_field = ((label_key, "sourceLabelKey") if label_key else
                          (annotation_key, "sourceAnnotationKey") if annotation_key else (name, "name"))
        if problem := qualified_name_problem(key):
            errors.append(field.invalid(f"{where}.{key_field}", key, problem))
        kind = entry.get("sourceKind") or "ClusterQueue"
        per_kind[kind] = per_kind.get(kind, 0) + 1
        tracked = entry.get("trackedValues") or []
        if kind == "Workload":
            if not tracked:
                errors.append(field.invalid(f"{where}.trackedValues", field.OMIT,
                                            "must not be empty when sourceKind is 'Workload'"))
            if len(tracked) > 12:
                errors.append(field.invalid(f"{where}.trackedValues", field.OMIT,
                                            "must not be greater than 12 when sourceKind is 'Workload'"))
        elif len(tracked) > 16:
            errors.append(field.too_many(f"{where}.trackedValues", len(tracked), 16))
        if len(set(tracked)) < len(tracked):
            errors.append(field.invalid(f"{where}.trackedValues", field.OMIT, "must not contain duplicates"))
    for kind in sorted(per_kind):
        limit = _CUSTOM_LABEL_LIMITS.get(kind)
        if limit is None:
            errors.append(field.invalid(base, field.OMIT, f"unknown source kind: {kind} (supported: "
                                                          f"{', '.join(_CUSTOM_LABEL_LIMITS)})"))
        elif per_kind[kind] > limit:
            errors.append(field.invalid(base, field.OMIT, f"too many custom labels for source kind {kind}: found "
                                                          f"{per_kind[kind]}, expected <= {limit}"))
    return errors


def _quota_check_strategy(cfg: dict[str, Any], gates: Mapping[str, bool]) -> list[FieldError]:
    resources = cfg.get("resources") or {}
    strategy = resources.get("quotaCheckStrategy")
    if not gates.get("QuotaCheckStrategy") or strategy is None:
        return []
    errors = []
    if resources.get("excludeResourcePrefixes") and strategy == "IgnoreUndeclared":
        errors.append(field.invalid("resources.quotaCheckStrategy", "IgnoreUndeclared", "excludeResourcePrefixes is "
                                    "not allowed when quotaCheckStrategy is IgnoreUndeclared"))
    if strategy not in ("IgnoreUndeclared", "BlockUndeclared"):
        errors.append(field.not_supported("resources.quotaCheckStrategy", strategy,
                                          ("IgnoreUndeclared", "BlockUndeclared")))
    return errors
