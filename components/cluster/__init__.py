"""The resource group, the AKS cluster with its system pool, and a Kubernetes provider for it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import authorization, containerservice as cs, resources

from components.cluster.kubeconfig import decode_first, use_azure_cli_login
from aks_kueue.settings import SYSTEM_POOL_NAME
from aks_kueue.settings.cluster import Cluster
from aks_kueue.settings.monitoring import Monitoring
from aks_kueue.aks.vm_sizes import lookup
from components import token
from components.monitoring.cluster_inputs import merge_cluster_inputs
from components.monitoring.workspaces import MonitoringWorkspaces, MonitoringWorkspacesArgs

# "Azure Kubernetes Service RBAC Cluster Admin", a built-in role.
AKS_RBAC_CLUSTER_ADMIN_ROLE = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"
SYSTEM_POOL_TAINT = "CriticalAddonsOnly=true:NoSchedule"


@dataclass(frozen=True)
class AksClusterArgs:
    location: str
    resource_group_name: str
    cluster: Cluster
    tags: dict[str, str]
    monitoring: Optional[Monitoring] = None


class AksCluster(pulumi.ComponentResource):
    resource_group_name: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider

    def __init__(self, name: str, args: AksClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(token("AksCluster"), name, None, opts)
        child = pulumi.ResourceOptions(parent=self)

        group = resources.ResourceGroup(
            f"{name}-rg", resource_group_name=args.resource_group_name, location=args.location,
            tags=args.tags, opts=child)

        # The cluster's monitoring add-ons name these workspaces, so they come first.
        self.monitoring_workspaces = MonitoringWorkspaces(f"{name}-monitoring", MonitoringWorkspacesArgs(
            args.monitoring, group.name, args.location, args.cluster.name, args.tags),
            opts=child) if args.monitoring else None
        managed = cs.ManagedCluster(f"{name}-aks", opts=child, **merge_cluster_inputs(
            _cluster_inputs(args, group.name),
            self.monitoring_workspaces.cluster_inputs if self.monitoring_workspaces else {}))

        self.resource_group_name = group.name
        self.cluster_name = managed.name
        self.cluster_id = managed.id
        self.oidc_issuer_url = managed.oidc_issuer_profile.apply(lambda p: p.issuer_url if p else None)
        kubeconfig, deployer_access = self._credentials(name, args, group, managed)
        self.kubeconfig = pulumi.Output.secret(kubeconfig)
        self.provider = k8s.Provider(
            f"{name}-k8s", kubeconfig=self.kubeconfig, enable_server_side_apply=True,
            # The kubeconfig is already a secret Output; naming it here keeps it encrypted in the
            # state even if a plain value is ever passed, and is what the policy pack can check.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[managed, *deployer_access],
                                        additional_secret_outputs=["kubeconfig"]))
        self.register_outputs({
            "resourceGroupName": self.resource_group_name, "clusterName": self.cluster_name,
            "kubeconfig": self.kubeconfig, "oidcIssuerUrl": self.oidc_issuer_url,
        })

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
        return kubeconfig, self._cluster_admins(name, security.entra_admin_group_object_ids, managed)

    def _cluster_admins(self, name: str, groups: list[str], managed) -> list[pulumi.Resource]:
        """With Azure RBAC, whoever runs `pulumi up` needs a data-plane role to create
        Kueue's objects. The admin groups get it when there are any: a fixed grant that
        does not move each time a different person or pipeline deploys. Without groups,
        the deploying identity itself gets it on this cluster only."""
        client = authorization.get_client_config_output()
        role = client.subscription_id.apply(
            lambda sub: f"/subscriptions/{sub}/providers/Microsoft.Authorization/"
                        f"roleDefinitions/{AKS_RBAC_CLUSTER_ADMIN_ROLE}")
        opts = pulumi.ResourceOptions(parent=self)
        if groups:
            return [authorization.RoleAssignment(
                f"{name}-admins-{index}", scope=managed.id, principal_id=group, principal_type="Group",
                role_definition_id=role, opts=opts) for index, group in enumerate(groups)]
        return [authorization.RoleAssignment(
            f"{name}-deployer-admin", scope=managed.id, principal_id=client.object_id,
            principal_type=deployer_principal_type(), role_definition_id=role, opts=opts)]


def deployer_principal_type() -> str:
    """ARM rejects a role assignment whose principalType is wrong, and the SDK assumes a
    user. The azure-native provider signs in as a service principal exactly when
    ARM_CLIENT_ID is set (secret, certificate or OIDC); otherwise it uses `az login`."""
    return "ServicePrincipal" if os.environ.get("ARM_CLIENT_ID") else "User"


def dns_prefix(cluster_name: str) -> str:
    """AKS DNS prefixes allow letters, digits and '-', at most 54 characters."""
    return re.sub(r"[^a-zA-Z0-9-]", "-", cluster_name)[:54].strip("-") or "aks"


def supports_host_encryption(vm_size: str) -> bool:
    """Host encryption is enabled only for sizes the catalog knows, where Azure offers it."""
    return lookup(vm_size) is not None


def _cluster_inputs(args: AksClusterArgs, resource_group_name: pulumi.Input[str]) -> dict:
    spec = args.cluster
    pool = spec.system_pool
    net = spec.network
    sec = spec.security
    system_pool = cs.ManagedClusterAgentPoolProfileArgs(
        name=SYSTEM_POOL_NAME, mode="System", vm_size=pool.vm_size, count=pool.count,
        availability_zones=pool.zones or None, max_pods=pool.max_pods, os_type="Linux",
        type="VirtualMachineScaleSets", node_taints=[SYSTEM_POOL_TAINT],
        enable_encryption_at_host=supports_host_encryption(pool.vm_size))
    autoscaler = spec.autoscaler_profile.to_api()
    return dict(
        resource_group_name=resource_group_name,
        resource_name_=spec.name,
        location=args.location,
        dns_prefix=dns_prefix(spec.name),
        kubernetes_version=spec.kubernetes_version,
        sku=cs.ManagedClusterSKUArgs(name=spec.sku, tier=spec.tier),
        identity=cs.ManagedClusterIdentityArgs(type="SystemAssigned"),
        agent_pool_profiles=[system_pool],
        auto_scaler_profile=cs.ManagedClusterPropertiesAutoScalerProfileArgs(
            **{_snake(k): v for k, v in autoscaler.items()}) if autoscaler else None,
        node_provisioning_profile=cs.ManagedClusterNodeProvisioningProfileArgs(
            mode=spec.effective_node_provisioning),
        enable_rbac=True,
        aad_profile=cs.ManagedClusterAADProfileArgs(
            managed=True, enable_azure_rbac=sec.azure_rbac,
            admin_group_object_ids=sec.entra_admin_group_object_ids or None),
        disable_local_accounts=sec.local_accounts_disabled,
        oidc_issuer_profile=cs.ManagedClusterOIDCIssuerProfileArgs(enabled=sec.workload_identity),
        security_profile=cs.ManagedClusterSecurityProfileArgs(
            workload_identity=cs.ManagedClusterSecurityProfileWorkloadIdentityArgs(
                enabled=sec.workload_identity)),
        api_server_access_profile=cs.ManagedClusterAPIServerAccessProfileArgs(
            authorized_ip_ranges=sec.api_server_authorized_ip_ranges or None,
            enable_private_cluster=sec.private_cluster),
        network_profile=cs.ContainerServiceNetworkProfileArgs(
            network_plugin=net.plugin, network_plugin_mode=net.plugin_mode, network_policy=net.policy,
            network_dataplane=net.dataplane, pod_cidr=net.pod_cidr, service_cidr=net.service_cidr,
            dns_service_ip=net.dns_service_ip, outbound_type=net.outbound_type),
        auto_upgrade_profile=cs.ManagedClusterAutoUpgradeProfileArgs(
            upgrade_channel=sec.upgrade_channel, node_os_upgrade_channel=sec.node_os_upgrade_channel),
        tags=args.tags,
    )


def _snake(camel: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()
