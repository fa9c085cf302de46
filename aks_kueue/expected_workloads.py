"""The expected workloads as a cluster object, so the policy pack can read them.

Stack policies see resources, never the stack config or the stack outputs. The program
therefore writes `aks-kueue:expectedWorkloads` into one harmless ConfigMap in `default`:
its `workloads.yaml` holds the Kueue v1beta2 Workloads those jobs would create, exactly
as the feasibility analysis builds them from settings (`feasibility/adapter.py`). Kueue
ignores ConfigMaps, and nothing in the cluster reads this one; it also documents, in
the cluster itself, which job shapes the quotas were sized for.
"""

from __future__ import annotations

from typing import Any, Iterable

import yaml

CARRIER_NAME = "aks-kueue-expected-workloads"
# Every cluster has `default`, so the ConfigMap needs no namespace of its own and no Kueue.
CARRIER_NAMESPACE = "default"
CARRIER_KEY = "workloads.yaml"
CARRIER_LABELS = {"app.kubernetes.io/managed-by": "aks-kueue",
                  "app.kubernetes.io/component": "expected-workloads"}


def carrier_manifest(workloads: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The ConfigMap holding the Workload manifests as one multi-document YAML."""
    text = yaml.safe_dump_all(list(workloads), sort_keys=False)
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": CARRIER_NAME, "namespace": CARRIER_NAMESPACE, "labels": dict(CARRIER_LABELS)},
            "data": {CARRIER_KEY: text}}


def is_carrier(metadata: Any) -> bool:
    return isinstance(metadata, dict) and metadata.get("name") == CARRIER_NAME


def read_carrier(text: Any) -> list[dict[str, Any]]:
    """The Workload manifests of a carrier's `workloads.yaml`; ValueError when unreadable."""
    if not isinstance(text, str):
        raise ValueError(f"data.{CARRIER_KEY} is not text")
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as error:
        raise ValueError(f"data.{CARRIER_KEY} is not YAML: {error}") from None
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            raise ValueError(f"data.{CARRIER_KEY} document {index} is not a mapping")
    return documents
