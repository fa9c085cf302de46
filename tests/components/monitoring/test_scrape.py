"""The scrape objects: valid against their schemas, selecting what Kueue and the DCGM chart expose, with RBAC."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import yaml

from aks_kueue.aks import dcgm_exporter
from aks_kueue.k8s.scheduling import label_selector_matches
from aks_kueue.kueue.structural import validate_structural
from aks_kueue.versions import KUEUE_CHART_REPOSITORY, KUEUE_NAMESPACE
from components.monitoring import scrape
from tests.components.monitoring.conftest import POD_MONITOR, RELEASE, SERVICE_MONITOR, by_name, one
from tests.conftest import REFERENCE, edited, needs_shared, run_config

CRD_DIR = Path(scrape.__file__).parent / "crds"
CLUSTER_ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"
CLUSTER_ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"

# Kueue's Services as chart 0.19.2 renders them for release `kueue` (templates/_helpers.tpl: kueue.labels plus the
# component label; manager/auth_proxy_service.yaml, webhook/service.yaml, visibility/service.yaml) and as the
# release manifests label them (config/default/metrics_service.yaml and kustomization.yaml labels/patches).
_CHART_LABELS = {"helm.sh/chart": "kueue-0.19.2", "app.kubernetes.io/name": "kueue", "app.kubernetes.io/instance": "kueue",
                 "control-plane": "controller-manager", "app.kubernetes.io/version": "v0.19.2",
                 "app.kubernetes.io/managed-by": "Helm"}
KUEUE_SERVICES = {
    "chart metrics": ({**_CHART_LABELS, "app.kubernetes.io/component": "metrics-service"}, True),
    "chart webhook": ({**_CHART_LABELS, "app.kubernetes.io/component": "webhook-service"}, False),
    "chart visibility": ({**_CHART_LABELS, "app.kubernetes.io/component": "visibility-service"}, False),
    "manifests metrics": ({"control-plane": "controller-manager", "app.kubernetes.io/name": "kueue",
                           "app.kubernetes.io/managed-by": "kustomize",
                           "app.kubernetes.io/component": "metrics-service"}, True),
    "manifests webhook": ({"control-plane": "controller-manager", "app.kubernetes.io/name": "kueue",
                           "app.kubernetes.io/managed-by": "kustomize",
                           "app.kubernetes.io/component": "webhook-service"}, False),
}


def crd_schema(kind: str) -> dict:
    crd = yaml.safe_load((CRD_DIR / f"{kind.lower()}s.azmonitoring.coreos.com.yaml").read_text())
    assert crd["spec"]["group"] == "azmonitoring.coreos.com" and crd["spec"]["names"]["kind"] == kind
    assert crd["spec"]["scope"] == "Namespaced"
    (version,) = [v for v in crd["spec"]["versions"] if v["served"]]
    assert version["name"] == "v1"
    return version["schema"]["openAPIV3Schema"]


def crd_errors(manifest: dict) -> list[str]:
    """As the API server checks a custom object: the CRD schema sees everything but metadata."""
    schema = crd_schema(manifest["kind"])
    body_schema = {**schema, "properties": {k: v for k, v in schema["properties"].items() if k != "metadata"}}
    _, errors = validate_structural(body_schema, {k: v for k, v in manifest.items() if k != "metadata"})
    return [str(e) for e in errors]


def test_vendored_crds_are_the_published_files():
    readme = (CRD_DIR / "README.md").read_text()
    for path in CRD_DIR.glob("*.yaml"):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest in readme, path.name
        assert path.name.split(".")[0] in readme
    assert "39583fd50b2f828f83cc18fc0cece9e3074f56db" in readme


@pytest.mark.parametrize("manifest", [scrape.kueue_service_monitor(), scrape.dcgm_pod_monitor()],
                         ids=["ServiceMonitor", "PodMonitor"])
def test_scrape_objects_pass_the_vendored_crds(manifest):
    assert manifest["apiVersion"] == "azmonitoring.coreos.com/v1"
    assert crd_errors(manifest) == []
    assert manifest["metadata"]["namespace"] and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", manifest["metadata"]["name"])
    assert {k: manifest["spec"][k] for k in scrape.LABEL_LIMITS} == scrape.LABEL_LIMITS


def test_the_crd_check_fails_on_what_the_api_server_would_refuse():
    monitor = scrape.kueue_service_monitor()
    monitor["spec"]["endpoints"][0]["bearerTokenFle"] = scrape.SERVICE_ACCOUNT_TOKEN
    monitor["spec"]["endpoints"][0]["scheme"] = "HTTPS"
    errors = crd_errors(monitor)
    assert any("bearerTokenFle" in e for e in errors) and any("scheme" in e for e in errors), errors
    pod_monitor = scrape.dcgm_pod_monitor()
    del pod_monitor["spec"]["selector"]
    assert any("selector" in e for e in crd_errors(pod_monitor))


def test_rbac_objects_are_valid_kubernetes_1_34():
    import kubernetes_validate

    for manifest in (scrape.kueue_metrics_reader(), scrape.kueue_metrics_reader_binding()):
        kubernetes_validate.validate(manifest, "1.34", strict=True)


def test_kueue_scrape_is_https_with_the_scrapers_token():
    (endpoint,) = scrape.kueue_service_monitor()["spec"]["endpoints"]
    assert (endpoint["scheme"], endpoint["port"], endpoint["path"]) == ("https", "https", "/metrics")
    assert endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token"
    # Kueue's certificate is self-signed without cert-manager, so it cannot be verified; the traffic is encrypted.
    assert endpoint["tlsConfig"] == {"insecureSkipVerify": True}


def test_the_scraper_may_get_metrics():
    reader, binding = scrape.kueue_metrics_reader(), scrape.kueue_metrics_reader_binding()
    assert reader["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": reader["metadata"]["name"]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "ama-metrics-serviceaccount",
                                    "namespace": "kube-system"}]


@pytest.mark.parametrize("service", KUEUE_SERVICES)
def test_the_service_monitor_selects_kueues_metrics_service_only(service):
    labels, wanted = KUEUE_SERVICES[service]
    monitor = scrape.kueue_service_monitor()
    assert label_selector_matches(monitor["spec"]["selector"], labels) is wanted
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [KUEUE_NAMESPACE]}


@needs_shared()
def test_the_port_is_the_charts_metrics_port():
    values = yaml.safe_load((REFERENCE / "kueue-chart-values.yaml").read_text())
    (port,) = values["metricsService"]["ports"]
    assert port["name"] == scrape.KUEUE_METRICS_PORT and port["port"] == 8443
    assert "bindAddress: :8443" in values["managerConfig"]["controllerManagerConfigYaml"]


def test_the_pod_monitor_selects_the_charts_exporter_pods_and_labels_the_pool():
    monitor = scrape.dcgm_pod_monitor()
    assert label_selector_matches(monitor["spec"]["selector"], dcgm_exporter.pod_labels())
    assert not label_selector_matches(monitor["spec"]["selector"], dcgm_exporter.pod_labels("other-release"))
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [dcgm_exporter.NAMESPACE]}
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    assert endpoint["port"] == "metrics"
    relabel = endpoint["relabelings"]
    assert [r["targetLabel"] for r in relabel] == ["node", "agentpool", "agentpool"]
    pool = re.fullmatch(relabel[1]["regex"], "aks-a100-12345678-vmss000002")
    assert pool and pool.group(1) == "a100"
    assert re.fullmatch(relabel[1]["regex"], "aks-nodepool1-vm-1") is None


@pytest.fixture(scope="module")
def helm_with_monitoring():
    """dev (the Helm install) with monitoring on."""
    def edit(c):
        c["aks-kueue:monitoring"] = {}
    return run_config(edited("dev", edit), stack="dev")


def test_prod_registers_the_scrape_after_kueue_and_the_metrics_association(prod):
    installer = one(prod, "azure-native:kubernetesconfiguration:Extension")
    association = by_name(prod, "monitoring-prometheus-association")
    provider = one(prod, "pulumi:providers:kubernetes")
    monitor = one(prod, SERVICE_MONITOR)
    binding = one(prod, CLUSTER_ROLE_BINDING)
    assert {installer.urn, association.urn, binding.urn} <= set(monitor.depends_on)
    assert one(prod, CLUSTER_ROLE).urn in binding.depends_on
    for resource in (monitor, binding, one(prod, CLUSTER_ROLE), one(prod, POD_MONITOR)):
        assert resource.provider == provider.urn
    assert monitor.inputs == scrape.kueue_service_monitor()
    assert crd_errors(monitor.inputs) == [] and crd_errors(one(prod, POD_MONITOR).inputs) == []
    import kubernetes_validate

    for rbac in (binding, one(prod, CLUSTER_ROLE)):
        kubernetes_validate.validate(rbac.inputs, "1.34", strict=True)


def test_the_service_monitor_follows_the_helm_release(helm_with_monitoring):
    release = next(r for r in helm_with_monitoring.of_type(RELEASE) if r.inputs["chart"] == KUEUE_CHART_REPOSITORY)
    monitor = one(helm_with_monitoring, SERVICE_MONITOR)
    # Release `kueue` contains the chart's name, so the chart's fullname is `kueue`: its metrics Service is
    # kueue-controller-manager-metrics-service in the release namespace, where the ServiceMonitor is.
    assert release.inputs["name"] == "kueue" and release.inputs["namespace"] == monitor.inputs["metadata"]["namespace"]
    assert release.urn in monitor.depends_on
    # The chart's own ServiceMonitor is a monitoring.coreos.com object managed Prometheus ignores.
    assert not release.inputs["values"].get("enablePrometheus")
