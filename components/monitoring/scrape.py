"""What managed Prometheus scrapes, as plain manifests: Kueue's metrics endpoint and the DCGM exporter.

AKS's managed Prometheus reads `azmonitoring.coreos.com/v1` ServiceMonitors and PodMonitors
(never `monitoring.coreos.com`, which is what Kueue's `enablePrometheus` and the DCGM chart
create). Their CRDs come with the add-on; `crds/` keeps a copy for offline validation.

Facts and their sources:
- The scraper: the add-on's `ama-metrics` pods run as ServiceAccount `ama-metrics-serviceaccount`
  in kube-system, with the usual token mount (Azure/prometheus-collector, addon chart templates
  `ama-metrics-serviceAccount.yaml`, `ama-metrics-deployment.yaml`; its default scrape jobs use
  `bearer_token_file: /var/run/secrets/kubernetes.io/serviceaccount/token`).
- The label limits Microsoft's templates ask for (`otelcollector/customresources/*-template.yaml`):
  without them, series with long labels are dropped.
- Kueue v0.19.2 serves metrics on :8443 over HTTPS with controller-runtime's
  `WithAuthenticationAndAuthorization` filter (cmd/kueue/main.go): the caller's bearer token is
  checked with a TokenReview, then a SubjectAccessReview for `get` on the non-resource URL
  `/metrics`. Without cert-manager the certificate is self-signed, so the scrape cannot verify
  it (the chart's own ServiceMonitor sets `insecureSkipVerify: true` for the same reason).
- Kueue's metrics Service, from the chart (templates/manager/auth_proxy_service.yaml,
  `kueue.metricsService.labels`) and the release manifests (config/default/metrics_service.yaml
  plus kustomization labels) alike: `kueue-controller-manager-metrics-service` in kueue-system,
  port `https`, labels `app.kubernetes.io/name: kueue`, `app.kubernetes.io/component: metrics-service`.
  The managed extension is not documented to differ; that is unverified.
"""

from __future__ import annotations

from typing import Any

from aks_kueue.aks import dcgm_exporter
from aks_kueue.versions import KUEUE_NAMESPACE
from components.kubernetes_object import RBAC_API, manifest, role_binding, service_account

AZMONITORING = "azmonitoring.coreos.com/v1"
SCRAPER_NAMESPACE = "kube-system"
SCRAPER_SERVICE_ACCOUNT = "ama-metrics-serviceaccount"
SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token"
LABEL_LIMITS = {"labelLimit": 63, "labelNameLengthLimit": 511, "labelValueLengthLimit": 1023}
SCRAPE_INTERVAL = "30s"

KUEUE_METRICS_SERVICE_LABELS = {"app.kubernetes.io/name": "kueue", "app.kubernetes.io/component": "metrics-service"}
KUEUE_METRICS_PORT = "https"
KUEUE_METRICS_READER = "kueue-metrics-reader-azure-monitor"
# AKS names VMSS nodes aks-<pool>-<digits>-vmss<instance>; the node's agentpool label, when the
# scraper attaches node metadata, wins over this.
AKS_NODE_NAME_POOL = r"aks-([a-z][a-z0-9]{0,11})-[0-9]+-vmss.*"


def kueue_metrics_reader() -> dict[str, Any]:
    """Read access to `/metrics`, which is all Kueue's authorization filter asks for."""
    return manifest(RBAC_API, "ClusterRole", KUEUE_METRICS_READER,
                    rules=[{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}])


def kueue_metrics_reader_binding() -> dict[str, Any]:
    """The add-on's own ClusterRole grants the same today; this binding does not depend on that."""
    return role_binding("ClusterRoleBinding", KUEUE_METRICS_READER, "ClusterRole", KUEUE_METRICS_READER,
                        [service_account(SCRAPER_SERVICE_ACCOUNT, SCRAPER_NAMESPACE)])


def kueue_service_monitor() -> dict[str, Any]:
    """HTTPS with the scraper's own, rotated ServiceAccount token as the bearer."""
    return manifest(AZMONITORING, "ServiceMonitor", "kueue-controller-manager", KUEUE_NAMESPACE, spec={
        **LABEL_LIMITS,
        "selector": {"matchLabels": dict(KUEUE_METRICS_SERVICE_LABELS)},
        "namespaceSelector": {"matchNames": [KUEUE_NAMESPACE]},
        "endpoints": [{
            "port": KUEUE_METRICS_PORT, "path": "/metrics", "scheme": "https", "interval": SCRAPE_INTERVAL,
            "bearerTokenFile": SERVICE_ACCOUNT_TOKEN, "tlsConfig": {"insecureSkipVerify": True},
        }],
    })


def dcgm_pod_monitor(release: str = dcgm_exporter.RELEASE) -> dict[str, Any]:
    """Every exporter pod; each series gets the node's name and AKS pool as `node` and `agentpool`."""
    labels = dcgm_exporter.pod_labels(release)
    return manifest(AZMONITORING, "PodMonitor", release, dcgm_exporter.NAMESPACE, spec={
        **LABEL_LIMITS,
        "selector": {"matchLabels": {k: labels[k] for k in ("app.kubernetes.io/name", "app.kubernetes.io/instance")}},
        "namespaceSelector": {"matchNames": [dcgm_exporter.NAMESPACE]},
        "attachMetadata": {"node": True},
        "podMetricsEndpoints": [{
            "port": dcgm_exporter.METRICS_PORT, "path": "/metrics", "interval": SCRAPE_INTERVAL,
            "relabelings": [
                {"action": "replace", "sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node"},
                {"action": "replace", "sourceLabels": ["__meta_kubernetes_pod_node_name"],
                 "regex": AKS_NODE_NAME_POOL, "targetLabel": "agentpool"},
                {"action": "replace", "sourceLabels": ["__meta_kubernetes_node_label_kubernetes_azure_com_agentpool"],
                 "regex": "(.+)", "targetLabel": "agentpool"},
            ],
        }],
    })
