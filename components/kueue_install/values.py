"""The Kueue Helm chart values the program renders from `aks-kueue:kueue`."""

from __future__ import annotations

from typing import Any

import yaml

from aks_kueue.k8s.merge import deep_merge
from aks_kueue.kueue.chart_values import chart_configuration
from aks_kueue.settings.kueue import CONFIG_VALUE, Kueue


def manager_configuration(frameworks: list[str], *, cluster_queue_metrics: bool = False) -> dict[str, Any]:
    """The chart's default Configuration with the stack's integrations.

    `cluster_queue_metrics` turns on `metrics.enableClusterQueueResources`: Kueue then reports each
    ClusterQueue's quota and usage per flavor and resource (`kueue_cluster_queue_resource_usage`,
    `kueue_cluster_queue_nominal_quota`, ...). The chart leaves it off.
    """
    configuration = chart_configuration(frameworks)
    if cluster_queue_metrics:
        configuration["metrics"]["enableClusterQueueResources"] = True
    return configuration


def helm_values(kueue: Kueue, *, cluster_queue_metrics: bool = False) -> dict[str, Any]:
    """The values for the Kueue chart. The stack's own Configuration keys and chart values are
    merged last, so a stack that sets `metrics.enableClusterQueueResources` itself keeps its value."""
    configuration = manager_configuration(kueue.frameworks, cluster_queue_metrics=cluster_queue_metrics)
    overrides = kueue.manager_configuration_overrides
    if overrides is not None:
        configuration = deep_merge(configuration, overrides)
    values: dict[str, Any] = {
        "controllerManager": {
            # The chart renders this list as --feature-gates (nothing when it is empty); the
            # Configuration then must not carry featureGates too, or the manager refuses to start.
            "featureGates": [{"name": name, "enabled": on} for name, on in kueue.feature_gates.items()],
            # Run the controller on the system pool, which is tainted CriticalAddonsOnly,
            # so it never holds a user node up or waits for one to scale from zero.
            "nodeSelector": {"kubernetes.azure.com/mode": "system"},
            "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
        },
        "managerConfig": {
            CONFIG_VALUE[1]: yaml.safe_dump(configuration, sort_keys=False),
        },
    }
    user_values = kueue.chart_values
    manager_config = user_values.get("managerConfig")
    manager_config = manager_config if isinstance(manager_config, dict) else {}
    user_values["managerConfig"] = {k: v for k, v in manager_config.items() if k != CONFIG_VALUE[1]}
    return deep_merge(values, user_values)
