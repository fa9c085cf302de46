"""The AKS resources of an offline preview as an ARM template, for scanners that read ARM (checkov).

    venv/bin/aks-kueue preview --stack prod --json | venv/bin/python -m tools.arm_template > prod.arm.json
    checkov -f prod.arm.json --framework arm

pulumi-azure-native's inputs are the ARM resource's body in the same camelCase (the provider sends
them as the `properties` of a PUT at the API version it pins, 2025-09-01 for containerservice in
3.29), so the ManagedCluster becomes `Microsoft.ContainerService/managedClusters` and each AgentPool
`Microsoft.ContainerService/managedClusters/agentPools`, with the keys that name the resource
(resourceGroupName, resourceName, agentPoolName) and the top-level ones (location, sku, identity,
tags) taken out of `properties`. Values the cloud computes are the preview's `[unknown]`.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Iterable, Mapping

CONTAINER_SERVICE_API = "2025-09-01"
CLUSTER = "azure-native:containerservice:ManagedCluster"
AGENT_POOL = "azure-native:containerservice:AgentPool"
_TOP_LEVEL = ("location", "sku", "identity", "tags", "extendedLocation", "kind")
_NAMING = ("resourceGroupName", "resourceName", "agentPoolName")


def arm_template(resources: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """`resources`: the preview document's `resources` (type, name, inputs)."""
    out = []
    for resource in resources:
        kind, inputs = resource.get("type"), dict(resource.get("inputs") or {})
        if kind == CLUSTER:
            body = {"type": "Microsoft.ContainerService/managedClusters", "apiVersion": CONTAINER_SERVICE_API,
                    "name": inputs.get("resourceName") or resource.get("name")}
        elif kind == AGENT_POOL:
            body = {"type": "Microsoft.ContainerService/managedClusters/agentPools",
                    "apiVersion": CONTAINER_SERVICE_API,
                    "name": f"{inputs.get('resourceName')}/{inputs.get('agentPoolName') or resource.get('name')}"}
        else:
            continue
        body.update({key: inputs.pop(key) for key in _TOP_LEVEL if key in inputs})
        body["properties"] = {k: v for k, v in inputs.items() if k not in _NAMING}
        out.append(body)
    return {"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
            "contentVersion": "1.0.0.0", "resources": out}


def main() -> None:
    document = json.load(sys.stdin)
    json.dump(arm_template(document.get("resources") or []), sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
