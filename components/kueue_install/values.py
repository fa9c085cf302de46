"""The Kueue Helm chart values the program renders from `aks-kueue:kueue`."""

from __future__ import annotations

from typing import Any

import yaml

from aks_kueue.k8s.merge import deep_merge
from aks_kueue.kueue.configuration import parse_configuration
from aks_kueue.settings.kueue import Kueue
from aks_kueue.versions import KUEUE_CONFIG_API_VERSION


def manager_configuration(frameworks: list[str]) -> dict[str, Any]:
    """The chart's default Configuration with the stack's integrations.

    The chart replaces its whole default when the value is set, so every default the
    chart ships is written out again here; only `integrations.frameworks` differs.
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


def helm_values(kueue: Kueue) -> dict[str, Any]:
    configuration = manager_configuration(kueue.frameworks)
    overrides = kueue.manager_configuration_overrides
    if overrides is not None:
        configuration = deep_merge(configuration, parse_configuration(overrides))
    values: dict[str, Any] = {
        "controllerManager": {
            # The chart renders this list as --feature-gates; the Configuration must then
            # not carry featureGates too, or the manager refuses to start.
            "featureGates": [{"name": name, "enabled": on} for name, on in kueue.feature_gates.items()],
            # Run the controller on the system pool, which is tainted CriticalAddonsOnly,
            # so it never holds a user node up or waits for one to scale from zero.
            "nodeSelector": {"kubernetes.azure.com/mode": "system"},
            "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
        },
        "managerConfig": {
            "controllerManagerConfigYaml": yaml.safe_dump(configuration, sort_keys=False),
        },
    }
    user_values = {k: v for k, v in kueue.values.items() if k != "managerConfig"}
    user_values["managerConfig"] = {k: v for k, v in (kueue.values.get("managerConfig") or {}).items()
                                    if k != "controllerManagerConfigYaml"}
    return deep_merge(values, user_values)

