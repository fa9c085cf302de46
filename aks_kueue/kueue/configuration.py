"""Kueue's own Configuration (`config.kueue.x-k8s.io/v1beta2`), as the Helm chart carries it.

Kueue decodes this file strictly at startup: an unknown or removed key stops the
manager. So the keys a stack adds under `values.managerConfig.controllerManagerConfigYaml`
are checked here, against the v0.19.2 Configuration API, before anything is deployed.
"""

from __future__ import annotations

from typing import Any

import yaml

from aks_kueue.k8s.spelling import suggest
from aks_kueue.versions import KUEUE_CONFIG_API_VERSION

TOP_LEVEL_KEYS = (
    "apiVersion", "kind", "namespace", "manageJobsWithoutQueueName", "managedJobsNamespaceSelector",
    "internalCertManagement", "waitForPodsReady", "clientConnection", "integrations", "multiKueue",
    "fairSharing", "admissionFairSharing", "resources", "featureGates", "objectRetentionPolicies",
    "visibilityServer", "webhook", "leaderElection", "metrics", "health", "pprofBindAddress", "controller", "tls",
)
# v1beta1 keys that v1beta2 removed; the manager refuses to start when it meets them.
REMOVED_KEYS = {
    ("waitForPodsReady", "enable"): "its presence turns waitForPodsReady on; set timeout instead",
    ("fairSharing", "enable"): "its presence turns fair sharing on; set preemptionStrategies instead",
    ("integrations", "podOptions"): "use managedJobsNamespaceSelector instead",
    ("queueVisibility",): "it was removed; use the visibility on-demand API",
}
_STRATEGIES = ([["LessThanOrEqualToFinalShare"], ["LessThanInitialShare"],
                ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]])
# Rendered from other keys of aks-kueue:kueue, never from this file.
OWNED = {("integrations", "frameworks"): "integrations", ("featureGates",): "featureGates"}


def parse_configuration(value: Any) -> dict[str, Any]:
    """The chart value is a YAML string; a map is accepted too."""
    if isinstance(value, str):
        try:
            value = yaml.safe_load(value)
        except yaml.YAMLError as error:
            raise ValueError(f"is not valid YAML: {getattr(error, 'problem', None) or error}") from None
    if not isinstance(value, dict):
        raise ValueError("must be a Kueue Configuration (a map), written as YAML")
    return value


def check_configuration(config: dict[str, Any]) -> list[tuple[str, str]]:
    """(key path inside the Configuration, problem) for everything Kueue would refuse."""
    problems = []
    for key, wanted in (("apiVersion", KUEUE_CONFIG_API_VERSION), ("kind", "Configuration")):
        if key in config and config[key] != wanted:
            problems.append((key, f"must be {wanted}, not {config[key]!r}"))
    for key in config:
        if key not in TOP_LEVEL_KEYS and (key,) not in REMOVED_KEYS:
            problems.append((key, f"is not a key of the Kueue Configuration{suggest(key, TOP_LEVEL_KEYS)}; "
                                  "Kueue would refuse to start"))
    for path, hint in REMOVED_KEYS.items():
        if _get(config, path) is not None:
            problems.append((".".join(path), f"was removed in config v1beta2 ({hint})"))
    for path, owner in OWNED.items():
        if _get(config, path) is not None:
            problems.append((".".join(path), f"is rendered from aks-kueue:kueue.{owner}; set it there"))
    fair = config.get("fairSharing")
    if isinstance(fair, dict) and fair.get("preemptionStrategies") not in _STRATEGIES:
        problems.append(("fairSharing.preemptionStrategies", "must be one of " + ", ".join(
            str(s) for s in _STRATEGIES) + " when fairSharing is present"))
    resources = config.get("resources")
    if isinstance(resources, dict):
        strategy = resources.get("quotaCheckStrategy")
        if strategy not in (None, "BlockUndeclared", "IgnoreUndeclared"):
            problems.append(("resources.quotaCheckStrategy", "must be BlockUndeclared or IgnoreUndeclared"))
        if strategy == "IgnoreUndeclared" and resources.get("excludeResourcePrefixes"):
            problems.append(("resources.quotaCheckStrategy", "IgnoreUndeclared cannot be combined with "
                                                             "excludeResourcePrefixes"))
    timestamp = _get(config, ("waitForPodsReady", "requeuingStrategy", "timestamp"))
    if timestamp not in (None, "Creation", "Eviction"):
        problems.append(("waitForPodsReady.requeuingStrategy.timestamp", "must be Creation or Eviction"))
    return problems


def _get(config: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = config
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node
