"""The resource group, the AKS cluster, its system pool and maintenance windows, and a
Kubernetes provider for it.

The system pool follows the pattern "inline at birth, AgentPool for life": AKS needs one pool
inline to create a cluster, so the update that creates it sends the system pool in
`agentPoolProfiles`. Every later update sends no `agentPoolProfiles` at all (a cluster PUT that
names pools makes AKS reconcile every pool, pulumi-azure-native #4264, and carries create-only
fields that fail as updates, #1808 and #2719; one that names none leaves them alone, #579) and
manages the system pool as an `AgentPool` with mode System, adopted by `import` in the first of
those updates, since azure-native refuses to create a pool that exists already.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import authorization, containerservice as cs, resources

from aks_kueue.aks.limits import dns_prefix
from aks_kueue.day2.allow import Protection
from aks_kueue.day2.replacement import MAINTENANCE_CONFIGURATION
from aks_kueue.day2.state import Previous, SystemPoolOwner
from aks_kueue.day2.upgrades import AUTO_UPGRADE_CONFIG, NODE_OS_UPGRADE_CONFIG, manages_kubernetes_version
from aks_kueue.model.conventions import AZURE_POLICY_ADDON, SECRETS_PROVIDER_ADDON
from aks_kueue.model.desired import Cluster
from aks_kueue.model.record import CLUSTER_ENTRY, RESOURCE_GROUP_ENTRY, network_profile
from aks_kueue.settings.monitoring import Monitoring
from components import Component
from components.azure_object import AzureObject, role_definition
from components.cluster.kubeconfig import decode_first, use_azure_cli_login
from components.day2_guard import Gated
from components.secret import NO_SECRET_KEYS, SecretKeys, secret_inputs
from components.monitoring.cluster_inputs import merge_cluster_inputs
from components.monitoring.workspaces import MonitoringWorkspaces, MonitoringWorkspacesArgs
from components.node_pools import agent_pool
from components.node_pools.inputs import created_with, pool_inputs, snake_keys

# "Azure Kubernetes Service RBAC Cluster Admin", a built-in role.
AKS_RBAC_CLUSTER_ADMIN_ROLE = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"
# Each maintenance configuration's resource name (its URN) by its AKS name.
_MAINTENANCE_SUFFIX = {AUTO_UPGRADE_CONFIG: "auto-upgrade-schedule", NODE_OS_UPGRADE_CONFIG: "node-os-upgrade-schedule"}


@dataclass(frozen=True)
class AksClusterArgs:
    cluster: Cluster                  # the model's cluster: its system pool, network, security, windows
    tags: dict[str, str]
    protection: Protection
    guard: Gated
    # aks-kueue:monitoring, for the workspaces it creates or names (their ids are known only once they exist).
    monitoring: Optional[Monitoring] = None
    # Defender's own Log Analytics workspace; without it Defender sends to monitoring's.
    defender_workspace_id: Optional[str] = None
    # The secret keys: what comes of aks-kueue:cluster (and of resourceGroupName) is sent as a secret.
    secret: SecretKeys = NO_SECRET_KEYS


class AksCluster(Component, kind="AksCluster"):
    resource_group_name: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    cluster_id: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider

    def __init__(self, name: str, args: AksClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        protection, gate, spec = args.protection, args.guard.gate, args.cluster
        group = resources.ResourceGroup(
            f"{name}-rg", **secret_inputs({"resource_group_name": spec.resource_group}, args.secret.any("resourceGroupName")),
            location=spec.region, tags=args.tags,
            opts=self.child(protect=protection.protects(RESOURCE_GROUP_ENTRY), depends_on=[gate]))

        # The cluster's monitoring add-ons (and Defender) name these workspaces, so they come first.
        self.monitoring_workspaces = MonitoringWorkspaces(f"{name}-monitoring", MonitoringWorkspacesArgs(
            args.monitoring, group.name, spec.region, spec.name, args.tags), self.child()) if args.monitoring else None
        # The update that creates the cluster sends the system pool inline; later ones send none.
        previous = args.guard.previous
        profiles = [system_pool_profile(args)] if previous.record is None else None
        inputs = secret_inputs(merge_cluster_inputs(
            {**cluster_inputs(args, self._defender_workspace(args)), "agent_pool_profiles": profiles},
            self.monitoring_workspaces.cluster_inputs if self.monitoring_workspaces else {}), args.secret.any("cluster"))
        ignored = [] if manages_kubernetes_version(spec.security.upgrade_channel or "none") else ["kubernetesVersion"]
        managed = cs.ManagedCluster(
            f"{name}-aks", resource_group_name=group.name, **inputs,
            opts=self.child(protect=protection.protects(CLUSTER_ENTRY), depends_on=[gate], ignore_changes=ignored))

        self.resource_group_name = group.name
        self.cluster_name = managed.name
        self.cluster_id = managed.id
        self.oidc_issuer_url = managed.oidc_issuer_profile.apply(lambda p: p.issuer_url if p else None)
        self.system_pool = self._system_pool(name, args, group, managed, previous)
        self.maintenance = self._maintenance(name, args, group, managed)
        kubeconfig, deployer_access = self._credentials(name, args, group, managed)
        self.kubeconfig = pulumi.Output.secret(kubeconfig)
        self.provider = k8s.Provider(
            f"{name}-k8s", kubeconfig=self.kubeconfig, enable_server_side_apply=True,
            # The kubeconfig is already a secret Output; naming it here keeps it encrypted in the
            # state even if a plain value is ever passed, and is what the policy pack can check.
            opts=self.child(depends_on=[managed, *deployer_access], additional_secret_outputs=["kubeconfig"]))
        self.register_outputs({
            "resourceGroupName": self.resource_group_name, "clusterName": self.cluster_name,
            "kubeconfig": self.kubeconfig, "oidcIssuerUrl": self.oidc_issuer_url,
        })

    def _defender_workspace(self, args: AksClusterArgs) -> Optional[pulumi.Input[str]]:
        """Where Defender for Containers sends: its own workspace, else the one of Container Insights."""
        if args.defender_workspace_id is not None:
            return args.defender_workspace_id
        return self.monitoring_workspaces.log_analytics_workspace_id if self.monitoring_workspaces else None

    def _system_pool(self, name: str, args: AksClusterArgs, group, managed,
                     previous: Previous) -> Optional[cs.AgentPool]:
        """From the second update on, the system pool is an AgentPool of its own. The first such
        update adopts the pool the cluster created (azure-native refuses to create one that exists)."""
        record = previous.record
        if record is None:
            return None
        adopt = record.system_pool_owner is SystemPoolOwner.CLUSTER and record.cluster_id
        pool = args.cluster.system_pool
        return agent_pool(self, f"{name}-system", pool, group.name, managed.name, args.tags, args.guard,
                          args.protection, args.secret.any("cluster"),
                          import_=f"{record.cluster_id}/agentPools/{pool.name}" if adopt else None)

    def _maintenance(self, name: str, args: AksClusterArgs, group, managed) -> list[pulumi.CustomResource]:
        """AKS's own upgrades (the auto-upgrade channel, node images) happen only in these windows."""
        configs: list[pulumi.CustomResource] = []
        for window in args.cluster.maintenance:
            inputs = secret_inputs({"configName": window.config_name, "maintenanceWindow": dict(window.window)},
                                   args.secret.any("cluster"))
            configs.append(AzureObject(
                MAINTENANCE_CONFIGURATION, f"{name}-{_MAINTENANCE_SUFFIX[window.config_name]}",
                {"resourceGroupName": group.name, "resourceName": managed.name, **inputs}, self.child()))
        return configs

    def _credentials(self, name, args, group, managed):
        security = args.cluster.security
        # The id is unknown until the cluster exists, so a first preview skips the
        # credentials call instead of failing against a cluster that is not there yet.
        cluster_name = managed.id.apply(lambda _: args.cluster.name)
        if not security.local_accounts_disabled:
            creds = cs.list_managed_cluster_admin_credentials_output(
                resource_group_name=group.name, resource_name=cluster_name)
            return creds.kubeconfigs.apply(decode_first), []
        creds = cs.list_managed_cluster_user_credentials_output(
            resource_group_name=group.name, resource_name=cluster_name, format="exec")
        kubeconfig = creds.kubeconfigs.apply(lambda k: use_azure_cli_login(decode_first(k)))
        if not security.azure_rbac:
            return kubeconfig, []
        return kubeconfig, self._cluster_admins(name, list(security.admin_groups), managed)

    def _cluster_admins(self, name: str, groups: list[str], managed) -> list[pulumi.Resource]:
        """With Azure RBAC, whoever runs `pulumi up` needs a data-plane role to create
        Kueue's objects. The admin groups get it when there are any: a fixed grant that
        does not move each time a different person or pipeline deploys. Without groups,
        the deploying identity itself gets it on this cluster only."""
        client = authorization.get_client_config_output()
        role = role_definition(client.subscription_id, AKS_RBAC_CLUSTER_ADMIN_ROLE)
        if groups:
            return [authorization.RoleAssignment(
                f"{name}-admins-{index}", scope=managed.id, principal_id=group, principal_type="Group",
                role_definition_id=role, opts=self.child()) for index, group in enumerate(groups)]
        return [authorization.RoleAssignment(
            f"{name}-deployer-admin", scope=managed.id, principal_id=client.object_id,
            principal_type=deployer_principal_type(), role_definition_id=role, opts=self.child())]


def deployer_principal_type() -> str:
    """ARM rejects a role assignment whose principalType is wrong, and the SDK assumes a
    user. The azure-native provider signs in as a service principal exactly when
    ARM_CLIENT_ID is set (secret, certificate or OIDC); otherwise it uses `az login`."""
    return "ServicePrincipal" if os.environ.get("ARM_CLIENT_ID") else "User"


def system_pool_profile(args: AksClusterArgs) -> cs.ManagedClusterAgentPoolProfileArgs:
    """The system pool inline in the update that creates the cluster (no last deployment to keep)."""
    pool = args.cluster.system_pool
    inputs = pool_inputs(pool, args.tags, created_with(pool))
    inputs.pop("tags")
    return cs.ManagedClusterAgentPoolProfileArgs(name=pool.name, **inputs)


def cluster_inputs(args: AksClusterArgs, defender_workspace: Optional[pulumi.Input[str]]) -> dict[str, Any]:
    """The ManagedCluster keyword arguments the model's cluster describes (monitoring's are merged in)."""
    spec = args.cluster
    sec = spec.security
    net = network_profile(spec.network)
    autoscaler = dict(spec.autoscaler_profile)
    return dict(
        resource_name_=spec.name,
        location=spec.region,
        dns_prefix=dns_prefix(spec.name),
        kubernetes_version=spec.kubernetes_version,
        sku=cs.ManagedClusterSKUArgs(name=spec.sku, tier=spec.tier),
        identity=cs.ManagedClusterIdentityArgs(type=cs.ResourceIdentityType.SYSTEM_ASSIGNED),
        auto_scaler_profile=cs.ManagedClusterPropertiesAutoScalerProfileArgs(**snake_keys(autoscaler))
        if autoscaler else None,
        node_provisioning_profile=cs.ManagedClusterNodeProvisioningProfileArgs(mode=spec.node_provisioning),
        enable_rbac=sec.rbac,
        aad_profile=cs.ManagedClusterAADProfileArgs(
            managed=sec.entra_managed, enable_azure_rbac=sec.azure_rbac,
            admin_group_object_ids=list(sec.admin_groups) or None),
        disable_local_accounts=sec.local_accounts_disabled,
        oidc_issuer_profile=cs.ManagedClusterOIDCIssuerProfileArgs(enabled=sec.workload_identity),
        security_profile=cs.ManagedClusterSecurityProfileArgs(
            workload_identity=cs.ManagedClusterSecurityProfileWorkloadIdentityArgs(enabled=sec.workload_identity),
            image_cleaner=cs.ManagedClusterSecurityProfileImageCleanerArgs(
                enabled=sec.image_cleaner, interval_hours=sec.image_cleaner_interval_hours),
            defender=_defender(sec.defender, defender_workspace)),
        api_server_access_profile=cs.ManagedClusterAPIServerAccessProfileArgs(
            authorized_ip_ranges=list(sec.authorized_ip_ranges) or None, enable_private_cluster=sec.private_cluster),
        network_profile=cs.ContainerServiceNetworkProfileArgs(
            network_plugin=net["networkPlugin"], network_plugin_mode=net["networkPluginMode"],
            network_policy=net["networkPolicy"], network_dataplane=net["networkDataplane"],
            pod_cidr=net["podCidr"], service_cidr=net["serviceCidr"], dns_service_ip=net["dnsServiceIP"],
            outbound_type=net["outboundType"]),
        auto_upgrade_profile=cs.ManagedClusterAutoUpgradeProfileArgs(
            upgrade_channel=sec.upgrade_channel, node_os_upgrade_channel=sec.node_os_upgrade_channel),
        addon_profiles=_addons(spec),
        tags=args.tags,
    )


def _defender(enabled: Optional[bool], workspace: Optional[pulumi.Input[str]]):
    """Defender's sensor: on with its workspace, off when the stack turns it off, else left alone."""
    if enabled is None:
        return None
    if enabled and workspace is None:
        raise ValueError("Defender for Containers is on without a Log Analytics workspace (the settings refuse that)")
    return cs.ManagedClusterSecurityProfileDefenderArgs(
        log_analytics_workspace_resource_id=workspace if enabled else None,
        security_monitoring=cs.ManagedClusterSecurityProfileDefenderSecurityMonitoringArgs(enabled=enabled))


def _addons(spec: Cluster) -> dict[str, cs.ManagedClusterAddonProfileArgs]:
    """The Azure Policy add-on always (on or off), the Key Vault secrets provider when the stack names it."""
    sec = spec.security
    addons = {AZURE_POLICY_ADDON: cs.ManagedClusterAddonProfileArgs(enabled=sec.azure_policy)}
    provider = sec.key_vault_secrets_provider
    if provider is not None:
        config = None
        if provider.enabled:
            config = {"enableSecretRotation": "true" if provider.rotation else "false"}
            if provider.rotation_poll_interval is not None:
                config["rotationPollInterval"] = provider.rotation_poll_interval
        addons[SECRETS_PROVIDER_ADDON] = cs.ManagedClusterAddonProfileArgs(enabled=provider.enabled, config=config)
    return addons
