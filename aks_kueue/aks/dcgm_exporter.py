"""NVIDIA's DCGM exporter on the GPU pools: the chart values and the facts others need.

The exporter runs as a DaemonSet from NVIDIA's chart (`DCGM_EXPORTER_CHART_VERSION`), on the
NVIDIA pools whose driver AKS installs (the same pools as the device plugin), in kube-system so
that Kueue's pod webhook never stands in its way. The chart's own ServiceMonitor is turned off:
it is a `monitoring.coreos.com` object, which AKS's managed Prometheus does not read; the
program scrapes the pods with an `azmonitoring.coreos.com` PodMonitor instead.

Facts from the chart at tag 4.5.3-4.8.2 (NVIDIA/dcgm-exporter, `deployment/`): the selector
labels (`templates/_helpers.tpl`), the container port named `metrics` on 9400
(`templates/daemonset.yaml`), the default requests 100m CPU and 128Mi memory (`values.yaml`).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Protocol, Sequence

from aks_kueue.aks.pools import AGENTPOOL, gpu_daemonset_placement

NAMESPACE = "kube-system"
RELEASE = "dcgm-exporter"
METRICS_PORT = "metrics"
# The chart's defaults, written out so the capacity model subtracts what the pods really request.
REQUESTS = {"cpu": "100m", "memory": "128Mi"}
LIMITS = {"cpu": "200m", "memory": "512Mi"}
AGENTPOOL_LABEL = AGENTPOOL


class GpuPool(Protocol):
    """A pool as `aks_kueue.aks.pools.Pool` describes it: its name and the taints its nodes carry."""

    @property
    def name(self) -> str: ...

    @property
    def taints(self) -> Sequence[Mapping[str, str]]: ...


def pod_labels(release: str = RELEASE) -> dict[str, str]:
    """The chart's selector labels: `dcgm-exporter.selectorLabels` with the default name."""
    return {"app.kubernetes.io/name": "dcgm-exporter", "app.kubernetes.io/instance": release,
            "app.kubernetes.io/component": "dcgm-exporter"}


def helm_values(pools: Iterable[GpuPool]) -> dict[str, Any]:
    """Chart values that place the exporter on these pools' nodes only."""
    return {"serviceMonitor": {"enabled": False}, **gpu_daemonset_placement(pools),
            "resources": {"requests": dict(REQUESTS), "limits": dict(LIMITS)}}
