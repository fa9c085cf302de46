"""How the program registers what the model describes: labels, the order of Kueue kinds, and
the namespaces every cluster has. Both readers and the components follow these."""

from __future__ import annotations

from typing import Any, Mapping

from aks_kueue.k8s.scheduling import NAMESPACE_NAME_LABEL

MANAGED_BY = {"app.kubernetes.io/managed-by": "aks-kueue"}
# Creation order: what a kind refers to comes before it.
DEPLOY_ORDER = ("Topology", "ResourceFlavor", "WorkloadPriorityClass", "ProvisioningRequestConfig",
                "MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck", "Cohort", "ClusterQueue", "LocalQueue")
CLUSTER_SCOPED = frozenset(DEPLOY_ORDER) - {"LocalQueue"}
# ManagedCluster add-on profiles, by the AKS API's names.
AZURE_POLICY_ADDON = "azurepolicy"
CONTAINER_INSIGHTS_ADDON = "omsagent"
SECRETS_PROVIDER_ADDON = "azureKeyvaultSecretsProvider"
# Namespaces every AKS cluster has, or that the Kueue install creates.
PREEXISTING_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease", "kueue-system")


def labels_selected(selector: Mapping[str, Any]) -> dict[str, str]:
    """Labels that make a namespace match a ClusterQueue's namespaceSelector: its matchLabels,
    the first value of each `In` expression, `"true"` for each `Exists`. The name label
    Kubernetes sets itself is left out."""
    labels = selector.get("matchLabels")
    wanted = {k: v for k, v in labels.items() if isinstance(k, str) and isinstance(v, str)} \
        if isinstance(labels, Mapping) else {}
    expressions = selector.get("matchExpressions")
    for expression in expressions if isinstance(expressions, list) else []:
        if not isinstance(expression, Mapping):
            continue
        key, operator = expression.get("key"), expression.get("operator")
        if key == NAMESPACE_NAME_LABEL or not isinstance(key, str):
            continue
        values = expression.get("values")
        if operator == "In" and isinstance(values, list) and values and isinstance(values[0], str):
            wanted.setdefault(key, values[0])
        elif operator == "Exists":
            wanted.setdefault(key, "true")
    return wanted
