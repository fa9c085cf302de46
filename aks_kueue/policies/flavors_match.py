"""`kueue-flavors-match-pools`: findings flavor-lands-nowhere, flavor-resource-missing, taint-not-tolerated,
topology-needs-nodes (`routing.py`)."""

from __future__ import annotations

from aks_kueue.policies import routing
from aks_kueue.policies.base import VM_OVERHEAD, judged_policy

POLICY = judged_policy(
    routing.FLAVORS_MATCH,
    "Every ResourceFlavor lands on a node pool, its quota names resources those nodes have, and every pool "
    "taint is declared or tolerated by the flavors landing there; a Topology Aware Scheduling flavor has nodes "
    "that exist to place on (a ProvisioningRequest check, or a minCount floor).",
    properties=VM_OVERHEAD)
