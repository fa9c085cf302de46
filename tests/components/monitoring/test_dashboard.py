"""The Kueue dashboard loads as Grafana dashboard JSON, and every metric it queries is one Kueue or DCGM serves."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import promql_parser
import pytest

from components.monitoring import dashboard

METRICS_DIR = Path(dashboard.__file__).parent / "metrics"
# Grafana's template variables, as Grafana substitutes them before sending a query.
_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}


def _rows(name: str) -> list[dict[str, str]]:
    lines = [line for line in (METRICS_DIR / name).read_text().splitlines() if line and not line.startswith("#")]
    return list(csv.DictReader(lines))


def kueue_metrics() -> dict[str, dict[str, str]]:
    """Exposed series names: histograms also as _bucket, _sum and _count."""
    names = {}
    for row in _rows("kueue-v0.19.2.csv"):
        suffixes = ("", "_bucket", "_sum", "_count") if row["type"] == "histogram" else ("",)
        for suffix in suffixes:
            names[row["name"] + suffix] = row
    return names


def dcgm_metrics() -> set[str]:
    """Fields the pinned chart's exporter serves (its own counters list), that are metrics rather than labels."""
    return {row["name"] for row in _rows("dcgm-exporter-4.5.3-4.8.2.csv") if row["in_chart"] == "yes" and row["type"] != "label"}


def metric_names(expr: str) -> set[str]:
    """Every metric a PromQL expression selects, from the parsed expression (so it must parse)."""
    for variable, value in _VARIABLES.items():
        expr = expr.replace(variable, value)
    found: set[str] = set()

    def walk(node):
        if isinstance(node, promql_parser.VectorSelector):
            assert node.name, f"a selector without a metric name in {expr}"
            found.add(node.name)
        elif isinstance(node, promql_parser.MatrixSelector):
            walk(node.vector_selector)
        elif isinstance(node, promql_parser.Call):
            for arg in node.args:
                walk(arg)
        elif isinstance(node, promql_parser.AggregateExpr):
            walk(node.expr)
            if node.param is not None:
                walk(node.param)
        elif isinstance(node, promql_parser.BinaryExpr):
            walk(node.lhs)
            walk(node.rhs)
        elif isinstance(node, (promql_parser.ParenExpr, promql_parser.UnaryExpr, promql_parser.SubqueryExpr)):
            walk(node.expr)

    walk(promql_parser.parse(expr))
    return found


@pytest.fixture(scope="module")
def board() -> dict:
    return json.loads(dashboard.DASHBOARD_FILE.read_text())


def queries(board: dict) -> list[tuple[str, str]]:
    """(panel title, expr) of every target, and of every query variable."""
    found = [(p["title"], t["expr"]) for p in board["panels"] for t in p.get("targets", [])]
    found += [(f"${v['name']}", re.sub(r"^label_values\((.*), \w+\)$", r"\1", v["query"]["query"]))
              for v in board["templating"]["list"] if v["type"] == "query"]
    return found


def test_the_committed_file_is_what_the_module_writes(board):
    assert dashboard.DASHBOARD_FILE.read_text() == dashboard.render()


def test_it_loads_as_grafana_dashboard_json(board):
    assert isinstance(board["schemaVersion"], int) and board["schemaVersion"] >= 36
    assert board["uid"] and board["title"] and "id" not in board  # import assigns the id
    variables = board["templating"]["list"]
    (source,) = [v for v in variables if v["type"] == "datasource"]
    assert (source["name"], source["query"]) == ("datasource", "prometheus")
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids))
    graphs = [p for p in board["panels"] if p["type"] != "row"]
    assert len(graphs) >= 10
    for panel in graphs:
        assert panel["type"] in ("timeseries", "table", "stat", "gauge", "bargauge") and panel["title"]
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs))
        for target in panel["targets"]:
            assert target["datasource"] == panel["datasource"] and target["expr"]
        grid = panel["gridPos"]
        assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24 and grid["h"] > 0
    for variable in variables:
        if variable["type"] == "query":
            assert variable["datasource"] == {"type": "prometheus", "uid": "${datasource}"}


def test_panels_do_not_overlap(board):
    cells = set()
    for panel in board["panels"]:
        grid = panel["gridPos"]
        mine = {(x, y) for x in range(grid["x"], grid["x"] + grid["w"]) for y in range(grid["y"], grid["y"] + grid["h"])}
        assert not mine & cells, panel["title"]
        cells |= mine


def test_every_query_parses_and_names_only_served_metrics(board):
    known = set(kueue_metrics()) | dcgm_metrics()
    used = set()
    for title, expr in queries(board):
        names = metric_names(expr)
        assert names, f"{title}: {expr} selects no metric"
        assert names <= known, f"{title}: {sorted(names - known)} are not Kueue v0.19.2 or DCGM exporter metrics"
        used |= names
    assert any(n.startswith("kueue_") for n in used) and any(n.startswith("DCGM_") for n in used)


def test_the_metric_check_can_fail():
    known = set(kueue_metrics()) | dcgm_metrics()
    assert metric_names("sum by (cluster_queue) (kueue_pending_workload)") - known == {"kueue_pending_workload"}
    # Fields in the image's default list but not in the chart's list are not served by the chart's exporter.
    assert "DCGM_FI_DEV_FB_RESERVED" not in known
    with pytest.raises(Exception):
        metric_names("sum by (cluster_queue (kueue_pending_workloads)")


def test_the_dashboard_shows_what_the_issue_asks_for(board):
    by_title = {p["title"]: " ".join(t["expr"] for t in p.get("targets", [])) for p in board["panels"]}

    def panel_with(metric: str, *labels: str) -> bool:
        return any(metric in expr and all(label in expr for label in labels) for expr in by_title.values())

    assert panel_with("kueue_pending_workloads", "cluster_queue")
    assert panel_with("kueue_admitted_active_workloads", "cluster_queue")
    assert panel_with("kueue_cluster_queue_resource_usage", "kueue_cluster_queue_nominal_quota", "cluster_queue", "flavor")
    borrowing = [e for t, e in by_title.items() if "Borrow" in t]
    assert borrowing and "clamp_min" in borrowing[0] and "flavor" in borrowing[0]
    assert panel_with("DCGM_FI_DEV_GPU_UTIL", "agentpool")


def test_quota_metrics_sit_under_the_row_that_names_their_requirement(board):
    requires = {name: row["requires"] for name, row in kueue_metrics().items()}
    row = ""
    for panel in board["panels"]:
        if panel["type"] == "row":
            row = panel["title"]
            continue
        for target in panel["targets"]:
            for name in metric_names(target["expr"]):
                if requires.get(name) == "enableClusterQueueResources":
                    assert "enableClusterQueueResources" in row, panel["title"]
                assert requires.get(name) != "LocalQueueMetrics", f"{panel['title']} needs LocalQueueMetrics"


def test_metric_lists_hold_what_their_sources_say():
    kueue = {row["name"]: row for row in _rows("kueue-v0.19.2.csv")}
    assert len(kueue) == 60
    assert kueue["kueue_pending_workloads"]["labels"].split() == ["cluster_queue", "status", "replica_role"]
    assert kueue["kueue_cluster_queue_resource_usage"]["requires"] == "enableClusterQueueResources"
    assert kueue["kueue_admission_wait_time_seconds"]["type"] == "histogram"
    dcgm = {row["name"]: row for row in _rows("dcgm-exporter-4.5.3-4.8.2.csv")}
    assert dcgm["DCGM_FI_DEV_GPU_UTIL"] == {"name": "DCGM_FI_DEV_GPU_UTIL", "type": "gauge", "in_chart": "yes"}
    assert dcgm["DCGM_FI_DRIVER_VERSION"]["type"] == "label"
