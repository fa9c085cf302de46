"""How Entra groups get into an AKS cluster: Azure's built-in roles, the Kubernetes data actions of
Azure RBAC for Kubernetes, and the scope of a namespace.

Facts and their sources:
- "Azure Kubernetes Service Cluster User Role" (4abbcc35-e782-43d8-92c5-2d3f1bd2253f) allows
  `Microsoft.ContainerService/managedClusters/listClusterUserCredential/action` and nothing else: it
  lets its holder run `az aks get-credentials`, which on an Entra cluster gives a kubeconfig without
  rights of its own (MicrosoftDocs/azure-docs, role-based-access-control/built-in-roles/containers.md;
  azure-aks-docs, articles/aks/control-kubeconfig-access.md).
- With Azure RBAC for Kubernetes authorization, Entra users and groups are authorized by Azure role
  assignments scoped to the cluster or to `<cluster id>/namespaces/<namespace>` (azure-aks-docs,
  articles/aks/entra-id-authorization.md, "az role assignment create ... --scope
  $AKS_ID/namespaces/<namespace-name>"; kubeguard/guard, the webhook behind it,
  authz/providers/azure/rbac/checkaccessreqhelper.go `getScope`). Microsoft's concept page for the
  feature says Entra principals are then "validated exclusively by Azure RBAC" (azure-aks-docs,
  articles/aks/concepts-identity.md and manage-azure-rbac.md in their earlier versions; the 2026
  rewrite, concepts-cluster-authorization.md, says both models can be used on one cluster without
  saying which one an Entra group's request meets first, and Guard answers a request Azure does not
  allow with a denial, not "no opinion": authz/providers/azure/rbac/checkaccess_v2.go). So with Azure RBAC on, the program grants
  teams through Azure role assignments only.
- Kubernetes verbs map onto data actions `Microsoft.ContainerService/managedClusters/<group>/<resource>/
  {read,write,delete}` (get/list/watch, create/update/patch, delete); a resource Guard does not find
  among the built-in ones is a custom resource and checked against
  `.../managedClusters/customresources/{read,write,delete}`, whatever its group (guard,
  checkaccessreqhelper.go `getCustomResourceOperationsMap`; azure-aks-docs, entra-id-authorization.md
  "For custom resources, the custom role must grant ... customresources/read").
- "Azure Kubernetes Service RBAC Writer" (a7ffa36f-339b-4b5c-8bdf-e2c188b2c0eb) holds no
  `customresources` action (built-in-roles/containers.md): it lets a team submit batch Jobs but not
  JobSets, RayJobs or MPIJobs, nor read Kueue's Workloads and LocalQueues, and it grants Secrets,
  ServiceAccounts and Deployments besides. The program therefore defines its own role instead.
"""

from __future__ import annotations

import re
import uuid

CLUSTER_USER_ROLE = "4abbcc35-e782-43d8-92c5-2d3f1bd2253f"
DATA_ACTION_PREFIX = "Microsoft.ContainerService/managedClusters"
CUSTOM_RESOURCES = "customresources"
_ROLE_DEFINITION = re.compile(r"/providers/Microsoft\.Authorization/roleDefinitions/(?P<guid>[0-9a-fA-F-]{36})$")


def role_definition_id(subscription: str, role: str) -> str:
    """A role definition's ARM id, as role assignments name it."""
    return f"/subscriptions/{subscription}/providers/Microsoft.Authorization/roleDefinitions/{role}"


def is_role(definition_id: str, role: str) -> bool:
    """Whether a role assignment's roleDefinitionId names `role` (its GUID), at any scope prefix."""
    match = _ROLE_DEFINITION.search(definition_id)
    return match is not None and match["guid"].lower() == role.lower()


def namespace_scope(cluster_id: str, namespace: str) -> str:
    """The scope of a role assignment that holds in one namespace of the cluster."""
    return f"{cluster_id}/namespaces/{namespace}"


def resource_group_id(cluster_id: str) -> str:
    """`/subscriptions/<s>/resourceGroups/<g>` of a managed cluster's id."""
    return cluster_id.split("/providers/", 1)[0]


def data_actions(group: str, resource: str, verbs: tuple[str, ...] = ("read", "write", "delete")) -> list[str]:
    """`group` "" is the core group, spelled without a segment (`.../managedClusters/pods/read`)."""
    prefix = f"{DATA_ACTION_PREFIX}/{group + '/' if group else ''}{resource}"
    return [f"{prefix}/{verb}" for verb in verbs]


def custom_role_id(resource_group: str, cluster: str, purpose: str) -> str:
    """A custom role definition's name (a GUID) that stays the same for one cluster and purpose, so
    the definition is updated in place rather than duplicated."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"aks-kueue/{resource_group}/{cluster}/{purpose}"))
