"""Access for the teams that submit work: `queues.localQueues[].submitterGroups`.

Each Entra group listed gets exactly two things (`rbac.py` has the rules and why they are these):
- "Azure Kubernetes Service Cluster User Role" on the cluster, once per group, so its members can run
  `az aks get-credentials`; the kubeconfig that gives carries no rights of its own.
- Kueue's batch-user role in each namespace whose LocalQueues list the group: submit, watch and delete
  jobs, read Workloads and LocalQueues. With Kubernetes RBAC that is a RoleBinding (to the chart's
  ClusterRole, or to an equivalent Role created here for the managed extension); with Azure RBAC for
  Kubernetes, an assignment of this program's custom Azure role at `<cluster id>/namespaces/<ns>`.

Access is per namespace, as Kubernetes authorizes it: a group listed on one LocalQueue may submit to
every LocalQueue of that namespace.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import authorization

from aks_kueue.aks import access
from aks_kueue.settings.root import Settings
from components import Component
from components.azure_object import role_definition
from components.kubernetes_object import KubernetesObject
from components.secret import NO_SECRET_KEYS, SecretKeys
from components.team_access import rbac

AZURE_RBAC = "Azure RBAC"
KUBERNETES_RBAC = "Kubernetes RBAC"


@dataclass(frozen=True)
class NamespaceGrant:
    namespace: str
    groups: tuple[str, ...]   # Entra group object IDs, lower case, in the order the stack names them


def namespace_grants(settings: Settings) -> list[NamespaceGrant]:
    """The groups of each namespace's LocalQueues, each once, namespaces in the order they appear."""
    grants: dict[str, dict[str, None]] = {}
    for entry in settings.queues.local_queues if settings.queues else []:
        if entry.submitter_groups:
            grants.setdefault(entry.namespace, {}).update(dict.fromkeys(g.lower() for g in entry.submitter_groups))
    return [NamespaceGrant(namespace, tuple(groups)) for namespace, groups in grants.items()]


@dataclass(frozen=True)
class TeamAccessArgs:
    grants: Sequence[NamespaceGrant]
    cluster_id: pulumi.Input[str]
    cluster_name: str
    resource_group_name: str
    azure_rbac: bool
    install: str                         # "helm" or "managed"
    frameworks: Sequence[str]            # the integrations Kueue runs
    provider: k8s.Provider
    # Kueue's installer: the chart's batch-user ClusterRole comes with it.
    installer: pulumi.Resource
    # The namespaces' own resources, so bindings are created after them.
    namespaces: Mapping[str, pulumi.Resource]
    # Where aks-kueue:queues is a secret key, the group IDs are secret, so no resource is named after one.
    secret: SecretKeys = NO_SECRET_KEYS

    @classmethod
    def of(cls, settings: Settings, cluster_id: pulumi.Input[str], provider: k8s.Provider,
           installer: pulumi.Resource, namespaces: Mapping[str, pulumi.Resource],
           secret: SecretKeys = NO_SECRET_KEYS) -> "TeamAccessArgs":
        return cls(grants=namespace_grants(settings), cluster_id=cluster_id, cluster_name=settings.cluster.name,
                   resource_group_name=settings.resource_group_name,
                   azure_rbac=settings.cluster.security.azure_rbac, install=settings.kueue.install,
                   frameworks=settings.kueue.frameworks_in_force, provider=provider, installer=installer,
                   namespaces=namespaces, secret=secret)


class TeamAccess(Component, kind="TeamAccess"):
    summary: dict[str, Any]

    def __init__(self, name: str, args: TeamAccessArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        self._prefix, self._args = name, args
        self._subscription = authorization.get_client_config_output().subscription_id
        groups = list(dict.fromkeys(g for grant in args.grants for g in grant.groups))
        for group in groups:
            authorization.RoleAssignment(
                f"{name}-credentials-{self._named(group)}", scope=args.cluster_id, principal_id=group,
                principal_type="Group", role_definition_id=role_definition(
                    self._subscription, access.CLUSTER_USER_ROLE),
                description="aks-kueue: lets this team get the cluster's credentials (az aks get-credentials)",
                opts=self.child())
        if args.azure_rbac:
            self._azure_grants()
        else:
            self._kubernetes_grants()
        self.summary = {
            "authorization": AZURE_RBAC if args.azure_rbac else KUBERNETES_RBAC,
            "namespaces": {grant.namespace: pulumi.Output.secret(list(grant.groups)) if args.secret.any("queues")
                           else list(grant.groups) for grant in args.grants},
            "role": self._role_summary(),
            "getCredentials": f"az aks get-credentials --resource-group {args.resource_group_name} "
                              f"--name {args.cluster_name}",
        }
        self.register_outputs({"teamAccess": self.summary})

    def _named(self, group: str) -> str:
        """How a resource name carries a group: the ID itself, or where the IDs are secret a digest
        of it (URNs are never encrypted). A stack that makes aks-kueue:queues secret later sees
        these role assignments replaced under their new names."""
        if not self._args.secret.any("queues"):
            return group
        import hashlib

        return "group-" + hashlib.sha256(group.lower().encode()).hexdigest()[:16]

    def _role_summary(self) -> str:
        if self._args.azure_rbac:
            return f"Azure custom role {self._role_name}"
        if self._args.install == "helm":
            return f"ClusterRole {rbac.CHART_BATCH_USER_ROLE} (Kueue's chart), bound per namespace"
        return f"Role {rbac.BATCH_USER_ROLE} in each namespace"

    def _azure_grants(self) -> None:
        args = self._args
        guid = access.custom_role_id(args.resource_group_name, args.cluster_name, "batch-user")
        self._role_name = f"aks-kueue batch user ({args.cluster_name}, {guid[:8]})"
        group_scope = pulumi.Output.from_input(args.cluster_id).apply(access.resource_group_id)
        definition = authorization.RoleDefinition(
            f"{self._prefix}-batch-user-role", role_definition_id=guid, role_name=self._role_name, role_type="CustomRole",
            description=f"aks-kueue: submit, watch and delete Kueue jobs and read Workloads and LocalQueues in a "
                        f"namespace of AKS cluster {args.cluster_name}",
            scope=group_scope, assignable_scopes=[group_scope],
            permissions=[authorization.PermissionArgs(actions=[], not_actions=[],
                                                      data_actions=rbac.azure_data_actions(args.frameworks),
                                                      not_data_actions=[])],
            opts=self.child())
        for grant in args.grants:
            scope = pulumi.Output.from_input(args.cluster_id).apply(
                functools.partial(access.namespace_scope, namespace=grant.namespace))
            for group in grant.groups:
                authorization.RoleAssignment(
                    f"{self._prefix}-{grant.namespace}-{self._named(group)}", scope=scope, principal_id=group,
                    principal_type="Group", role_definition_id=role_definition(self._subscription, guid),
                    description=f"aks-kueue: lets this team submit and watch jobs in namespace {grant.namespace}",
                    opts=self.child(depends_on=[definition]))

    def _kubernetes_grants(self) -> None:
        args = self._args
        for grant in args.grants:
            after = [args.installer, *([args.namespaces[grant.namespace]] if grant.namespace in args.namespaces
                                       else [])]
            opts = self.child(provider=args.provider, depends_on=after)
            role_kind = "ClusterRole"
            if args.install != "helm":
                role = KubernetesObject(f"{self._prefix}-{grant.namespace}-role",
                                        rbac.batch_user_role(grant.namespace, args.frameworks), opts)
                opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[role]))
                role_kind = "Role"
            KubernetesObject(f"{self._prefix}-{grant.namespace}-binding",
                             rbac.submitters_binding(grant.namespace, grant.groups, role_kind), opts)
