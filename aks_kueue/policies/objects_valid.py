"""`kueue-objects-valid`: findings kueue-object-invalid, namespace-unusable (`routing.py`)."""

from __future__ import annotations

from aks_kueue.policies import routing
from aks_kueue.policies.base import judged_policy

POLICY = judged_policy(
    routing.OBJECTS_VALID,
    "Every Kueue object passes Kueue v0.19's CRD schema, CEL rules and webhooks; references between them "
    "resolve; every LocalQueue's namespace is created or declared existing, and its ClusterQueue's "
    "namespaceSelector selects it.")
