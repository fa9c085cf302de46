"""The Kueue dashboard, as Grafana dashboard JSON that Azure Managed Grafana imports.

`dashboards/kueue.json` is what users import (`az grafana dashboard import ... --definition
components/monitoring/dashboards/kueue.json`); this module is where it is written, and a test
holds the file to it. Regenerate with `python -m components.monitoring.dashboard`.

Every query names only metrics that Kueue v0.19.2 or the DCGM exporter serve (the lists in
`metrics/`, with their sources): pending and admitted workloads, quota usage and borrowing per
ClusterQueue and flavor (these need Kueue's `metrics.enableClusterQueueResources`), and GPU
utilisation per AKS node pool (the `agentpool` label the program's PodMonitor adds). Managed
Prometheus labels every series with `cluster`, so one workspace can serve several clusters.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DASHBOARD_FILE = Path(__file__).parent / "dashboards" / "kueue.json"
UID = "aks-kueue-overview"
SCHEMA_VERSION = 39  # Grafana 10.4/11; newer Grafana migrates it on import
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
RATE = "5m"

_CQ = 'cluster=~"$cluster", cluster_queue=~"$cluster_queue"'
_CQF = 'cluster=~"$cluster", cluster_queue=~"$cluster_queue", flavor=~"$flavor", resource=~"$resource"'
_CQR = 'cluster=~"$cluster", cluster_queue=~"$cluster_queue", resource=~"$resource"'
_GPU = 'cluster=~"$cluster", agentpool=~"$agentpool"'


def _target(expr: str, legend: str, ref: str) -> dict[str, Any]:
    return {"datasource": DATASOURCE, "expr": expr, "legendFormat": legend, "refId": ref, "range": True}


def _panel(title: str, description: str, targets: list[tuple[str, str]], *, kind: str = "timeseries",
           unit: str = "short", width: int = 12, maximum: float | None = None) -> dict[str, Any]:
    defaults: dict[str, Any] = {"unit": unit}
    if maximum is not None:
        defaults.update(min=0, max=maximum)
    return {
        "type": kind, "title": title, "description": description, "datasource": DATASOURCE,
        "gridPos": {"w": width, "h": 8},
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {"legend": {"displayMode": "table", "placement": "right", "showLegend": True},
                    "tooltip": {"mode": "multi", "sort": "desc"}} if kind == "timeseries" else {},
        "targets": [_target(expr, legend, chr(ord("A") + i)) for i, (expr, legend) in enumerate(targets)],
    }


def _row(title: str) -> dict[str, Any]:
    return {"type": "row", "title": title, "collapsed": False, "gridPos": {"w": 24, "h": 1}, "panels": []}


def _variable(name: str, label: str, query: str) -> dict[str, Any]:
    return {
        "name": name, "label": label, "type": "query", "datasource": DATASOURCE,
        "query": {"query": query, "refId": f"{name}-values"}, "definition": query,
        "refresh": 2, "multi": True, "includeAll": True, "allValue": ".*", "sort": 1,
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
    }


def _panels() -> list[dict[str, Any]]:
    usage = f"sum by (cluster_queue, flavor, resource) (kueue_cluster_queue_resource_usage{{{_CQF}}})"
    quota = f"sum by (cluster_queue, flavor, resource) (kueue_cluster_queue_nominal_quota{{{_CQF}}})"
    return [
        _row("Workloads"),
        _panel("Pending workloads per ClusterQueue",
               "Workloads waiting for quota. 'inadmissible' ones are not retried until something changes.",
               [(f"sum by (cluster_queue, status) (kueue_pending_workloads{{{_CQ}}})", "{{cluster_queue}} {{status}}")]),
        _panel("Admitted workloads per ClusterQueue", "Admitted workloads that are still running.",
               [(f"sum by (cluster_queue) (kueue_admitted_active_workloads{{{_CQ}}})", "{{cluster_queue}}")]),
        _panel("Admissions per minute", "Workloads admitted, per ClusterQueue.",
               [(f"60 * sum by (cluster_queue) (rate(kueue_admitted_workloads_total{{{_CQ}}}[{RATE}]))",
                 "{{cluster_queue}}")], unit="short"),
        _panel("Time to admission (p90)", "How long admitted workloads waited, 90th percentile.",
               [(f"histogram_quantile(0.9, sum by (le, cluster_queue) "
                 f"(rate(kueue_admission_wait_time_seconds_bucket{{{_CQ}}}[{RATE}])))", "{{cluster_queue}}")],
               unit="s"),
        _panel("Evictions and preemptions", "Workloads evicted per ClusterQueue and reason (Preempted, PodsReadyTimeout, ...).",
               [(f"60 * sum by (cluster_queue, reason) (rate(kueue_evicted_workloads_total{{{_CQ}}}[{RATE}]))",
                 "{{cluster_queue}} {{reason}}")]),
        _panel("ClusterQueue status", "1 where a ClusterQueue is in that state; an inactive queue admits nothing.",
               [(f"max by (cluster_queue, status) (kueue_cluster_queue_status{{{_CQ}}}) == 1",
                 "{{cluster_queue}} {{status}}")], kind="table"),
        _row("Quota and borrowing (Kueue metrics.enableClusterQueueResources)"),
        _panel("Quota used per ClusterQueue and flavor",
               "Admitted usage as a share of nominal quota; above 100% the queue is borrowing from its cohort.",
               [(f"{usage} / ({quota} > 0)", "{{cluster_queue}} {{flavor}} {{resource}}")], unit="percentunit"),
        _panel("Borrowed from the cohort",
               "Usage above nominal quota, per ClusterQueue, flavor and resource (cores, bytes or GPUs).",
               [(f"clamp_min({usage} - {quota}, 0)", "{{cluster_queue}} {{flavor}} {{resource}}")]),
        _panel("Usage and nominal quota", "Admitted usage against nominal quota, per flavor and resource.",
               [(usage, "used {{cluster_queue}} {{flavor}} {{resource}}"),
                (quota, "quota {{cluster_queue}} {{flavor}} {{resource}}")]),
        _panel("Pending demand", "What pending workloads ask for, per ClusterQueue and resource.",
               [(f"sum by (cluster_queue, resource) (kueue_cluster_queue_resource_pending{{{_CQR}}})",
                 "{{cluster_queue}} {{resource}}")]),
        _row("GPUs (DCGM exporter)"),
        _panel("GPU utilisation per node pool", "Average GPU utilisation over the pool's GPUs (DCGM_FI_DEV_GPU_UTIL).",
               [(f"avg by (agentpool) (DCGM_FI_DEV_GPU_UTIL{{{_GPU}}})", "{{agentpool}}")], unit="percent", maximum=100),
        _panel("Graphics engine active per node pool",
               "Share of time the GPU's engines are busy; also meaningful for MIG instances.",
               [(f"avg by (agentpool) (DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{_GPU}}})", "{{agentpool}}")],
               unit="percentunit", maximum=1),
        _panel("GPU memory used per node pool", "Framebuffer memory used as a share of the pool's total.",
               [(f"sum by (agentpool) (DCGM_FI_DEV_FB_USED{{{_GPU}}}) / sum by (agentpool) "
                 f"(DCGM_FI_DEV_FB_USED{{{_GPU}}} + DCGM_FI_DEV_FB_FREE{{{_GPU}}})", "{{agentpool}}")],
               unit="percentunit", maximum=1),
        _panel("Idle GPUs per node pool", "GPUs below 5% utilisation over the last 15 minutes.",
               [(f"count by (agentpool) (avg_over_time(DCGM_FI_DEV_GPU_UTIL{{{_GPU}}}[15m]) < 5)", "{{agentpool}}")]),
    ]


def _layout(panels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Ids and positions: a row spans the width, panels fill the lines below it left to right."""
    x = y = line_height = 0
    for number, panel in enumerate(panels, start=1):
        grid = panel["gridPos"]
        if panel["type"] == "row" or x + grid["w"] > 24:
            x, y, line_height = 0, y + line_height, 0
        grid.update(x=x, y=y)
        panel["id"] = number
        x, line_height = x + grid["w"], max(line_height, grid["h"])
        if panel["type"] == "row":
            x, y, line_height = 0, y + grid["h"], 0
    return panels


def dashboard() -> dict[str, Any]:
    return {
        "uid": UID,
        "title": "Kueue on AKS",
        "description": "Pending and admitted workloads, quota usage and borrowing per ClusterQueue and flavor, "
                       "GPU utilisation per node pool. From aks-kueue (components/monitoring).",
        "tags": ["kueue", "aks", "gpu"],
        "schemaVersion": SCHEMA_VERSION,
        "version": 1,
        "editable": True,
        "graphTooltip": 1,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "1m",
        "timezone": "browser",
        "annotations": {"list": []},
        "links": [],
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
             "refresh": 1, "hide": 0, "current": {}},
            _variable("cluster", "Cluster", "label_values(kueue_build_info, cluster)"),
            _variable("cluster_queue", "ClusterQueue",
                      'label_values(kueue_cluster_queue_status{cluster=~"$cluster"}, cluster_queue)'),
            _variable("flavor", "Flavor", 'label_values(kueue_cluster_queue_nominal_quota{cluster=~"$cluster"}, flavor)'),
            _variable("resource", "Resource",
                      'label_values(kueue_cluster_queue_nominal_quota{cluster=~"$cluster"}, resource)'),
            _variable("agentpool", "GPU node pool", 'label_values(DCGM_FI_DEV_GPU_UTIL{cluster=~"$cluster"}, agentpool)'),
        ]},
        "panels": _layout(_panels()),
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"


if __name__ == "__main__":
    DASHBOARD_FILE.parent.mkdir(exist_ok=True)
    DASHBOARD_FILE.write_text(render())
    print(f"wrote {DASHBOARD_FILE}")
