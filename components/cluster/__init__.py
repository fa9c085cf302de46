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
import re
from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s
from pulumi_azure_native import authorization, containerservice as cs, resources

from aks_kueue.aks.vm_sizes import lookup
from aks_kueue.day2.allow import Entry, Protection, Target
from aks_kueue.day2.replacement import (AGENT_POOL, MAINTENANCE_CONFIGURATION, MANAGED_CLUSTER, RESOURCE_GROUP, extract,
                                        replace_on_changes)
from aks_kueue.day2.state import Previous, SystemPoolOwner, Tracked
from aks_kueue.day2.upgrades import AUTO_UPGRADE_CONFIG, NODE_OS_UPGRADE_CONFIG, manages_kubernetes_version
from aks_kueue.settings import SYSTEM_POOL_NAME
from aks_kueue.settings.cluster import Cluster
from aks_kueue.settings.monitoring import Monitoring
from components import token
from components.azure_object import AzureObject
from components.cluster.kubeconfig import decode_first, use_azure_cli_login
from components.day2_guard import Gated, secret_inputs
from components.monitoring.cluster_inputs import merge_cluster_inputs
from components.monitoring.workspaces import MonitoringWorkspaces, MonitoringWorkspacesArgs

# "Azure Kubernetes Service RBAC Cluster Admin", a built-in role.
AKS_RBAC_CLUSTER_ADMIN_ROLE = "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"
SYSTEM_POOL_TAINT = "CriticalAddonsOnly=true:NoSchedule"
RESOURCE_GROUP_ENTRY = Entry(Target.RESOURCE_GROUP)
CLUSTER_ENTRY = Entry(Target.CLUSTER)
SYSTEM_POOL_ENTRY = Entry(Target.SYSTEM_POOL)


@dataclass(frozen=True)
class AksClusterArgs:
    location: str
    resource_group_name: str
    cluster: Cluster
    tags: dict[str, str]
    protection: Protection
    guard: Gated
    monitoring: Optional[Monitoring] = None
    secret: bool = False              # aks-kueue:cluster is a secret key
    secret_resource_group: bool = False   # aks-kueue:resourceGroupName is a secret key


class AksCluster(pulumi.ComponentResource):
    resource_group_name: pulumi.Output[str]
    cluster_name: pulumi.Output[str]
    cluster_id: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider

    def __init__(self, name: str, args: AksClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(token("AksCluster"), name, None, opts)
        protection, gate = args.protection, args.guard.gate
        group = resources.ResourceGroup(
            f"{name}-rg", **secret_inputs({"resource_group_name": args.resource_group_name},
                                          args.secret_resource_group),
            location=args.location, tags=args.tags, opts=pulumi.ResourceOptions(
                parent=self, protect=protection.protects(RESOURCE_GROUP_ENTRY), depends_on=[gate]))

        # The cluster's monitoring add-ons name these workspaces, so they come first.
        self.monitoring_workspaces = MonitoringWorkspaces(f"{name}-monitoring", MonitoringWorkspacesArgs(
            args.monitoring, group.name, args.location, args.cluster.name, args.tags),
            opts=pulumi.ResourceOptions(parent=self)) if args.monitoring else None
        # The update that creates the cluster sends the system pool inline; later ones send none.
        profiles = args.guard.previous.apply(
            lambda previous: [system_pool_profile(args)] if previous.record is None else None)
        inputs = secret_inputs(merge_cluster_inputs(
            {**_cluster_inputs(args), "agent_pool_profiles": profiles},
            self.monitoring_workspaces.cluster_inputs if self.monitoring_workspaces else {}), args.secret)
        ignored = [] if manages_kubernetes_version(args.cluster.security.upgrade_channel) else ["kubernetesVersion"]
        managed = cs.ManagedCluster(
            f"{name}-aks", resource_group_name=group.name, opts=pulumi.ResourceOptions(
                parent=self, protect=protection.protects(CLUSTER_ENTRY), depends_on=[gate], ignore_changes=ignored),
            **inputs)

        self.resource_group_name = group.name
        self.cluster_name = managed.name
        self.cluster_id = managed.id
        self.oidc_issuer_url = managed.oidc_issuer_profile.apply(lambda p: p.issuer_url if p else None)
        self.system_pool = args.guard.previous.apply(
            lambda previous: self._system_pool(name, args, group, managed, previous))
        self.maintenance = self._maintenance(name, args, group, managed)
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

    def _system_pool(self, name: str, args: AksClusterArgs, group, managed,
                     previous: Previous) -> Optional[cs.AgentPool]:
        """From the second update on, the system pool is an AgentPool of its own. The first such
        update adopts the pool the cluster created (azure-native refuses to create one that exists)."""
        record = previous.record
        if record is None:
            return None
        adopt = record.system_pool_owner is SystemPoolOwner.CLUSTER and record.cluster_id
        encryption = args.guard.fact(SYSTEM_POOL_ENTRY, "enableEncryptionAtHost",
                                     supports_host_encryption(args.cluster.system_pool.vm_size))
        inputs = secret_inputs(system_pool_inputs(args, encryption), args.secret)
        return cs.AgentPool(
            f"{name}-system", resource_group_name=group.name, resource_name_=managed.name,
            opts=pulumi.ResourceOptions(
                parent=self, protect=args.protection.protects(SYSTEM_POOL_ENTRY), depends_on=[args.guard.gate],
                replace_on_changes=replace_on_changes(AGENT_POOL),
                import_=f"{record.cluster_id}/agentPools/{SYSTEM_POOL_NAME}" if adopt else None),
            **inputs)

    def _maintenance(self, name: str, args: AksClusterArgs, group, managed) -> list[pulumi.CustomResource]:
        """AKS's own upgrades (the auto-upgrade channel, node images) happen only in these windows."""
        windows = args.cluster.maintenance
        configs = []
        for suffix, config_name, window in (("auto-upgrade-schedule", AUTO_UPGRADE_CONFIG, windows.auto_upgrade),
                                            ("node-os-upgrade-schedule", NODE_OS_UPGRADE_CONFIG,
                                             windows.node_os_upgrade)):
            if window is None:
                continue
            inputs = secret_inputs({"configName": config_name, "maintenanceWindow": window.to_api()}, args.secret)
            configs.append(AzureObject(
                MAINTENANCE_CONFIGURATION, f"{name}-{suffix}",
                {"resourceGroupName": group.name, "resourceName": managed.name, **inputs},
                pulumi.ResourceOptions(parent=self)))
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


def _network(spec: Cluster) -> dict:
    """The network profile in the provider's names: what is sent and what the guard compares."""
    net = spec.network
    return {"networkPlugin": net.plugin, "networkPluginMode": net.plugin_mode, "networkPolicy": net.policy,
            "networkDataplane": net.dataplane, "podCidr": net.pod_cidr, "serviceCidr": net.service_cidr,
            "dnsServiceIP": net.dns_service_ip, "outboundType": net.outbound_type}


_NETWORK_KEYS = {"networkPlugin": "plugin", "networkPluginMode": "pluginMode", "networkPolicy": "policy",
                 "networkDataplane": "dataplane", "podCidr": "podCidr", "serviceCidr": "serviceCidr",
                 "dnsServiceIP": "dnsServiceIp", "outboundType": "outboundType"}


def system_pool_profile(args: AksClusterArgs) -> cs.ManagedClusterAgentPoolProfileArgs:
    pool = args.cluster.system_pool
    return cs.ManagedClusterAgentPoolProfileArgs(
        name=SYSTEM_POOL_NAME, mode="System", vm_size=pool.vm_size, count=pool.count,
        availability_zones=pool.zones or None, max_pods=pool.max_pods, os_type="Linux",
        type="VirtualMachineScaleSets", node_taints=[SYSTEM_POOL_TAINT],
        enable_encryption_at_host=supports_host_encryption(pool.vm_size))


def system_pool_inputs(args: AksClusterArgs, encryption) -> dict:
    pool = args.cluster.system_pool
    return dict(
        agent_pool_name=SYSTEM_POOL_NAME, mode="System", vm_size=pool.vm_size, count=pool.count,
        availability_zones=pool.zones or None, max_pods=pool.max_pods, os_type="Linux",
        type="VirtualMachineScaleSets", node_taints=[SYSTEM_POOL_TAINT], enable_encryption_at_host=encryption,
        tags=args.tags)


def tracked(location: str, resource_group_name: str, spec: Cluster, protection: Protection) -> list[Tracked]:
    """The resource group, the cluster and its system pool, as the guard compares them."""
    group_facts = extract(RESOURCE_GROUP, {"resourceGroupName": resource_group_name, "location": location})
    cluster_facts = extract(MANAGED_CLUSTER, {
        "resourceGroupName": resource_group_name, "resourceName": spec.name, "location": location,
        "dnsPrefix": dns_prefix(spec.name), "networkProfile": _network(spec)})
    pool = spec.system_pool
    pool_facts = extract(AGENT_POOL, {
        "resourceGroupName": resource_group_name, "resourceName": spec.name, "agentPoolName": SYSTEM_POOL_NAME,
        "vmSize": pool.vm_size, "availabilityZones": pool.zones or None,
        "enableEncryptionAtHost": supports_host_encryption(pool.vm_size)})
    shared = {"resourceGroupName": "aks-kueue:resourceGroupName", "location": "azure-native:location",
              "resourceName": "aks-kueue:cluster.name"}
    return [
        Tracked(RESOURCE_GROUP_ENTRY, RESOURCE_GROUP, f"ResourceGroup {resource_group_name}", group_facts,
                protection.protects(RESOURCE_GROUP_ENTRY), keys=shared, key="aks-kueue:resourceGroupName"),
        Tracked(CLUSTER_ENTRY, MANAGED_CLUSTER, f"ManagedCluster {spec.name}", cluster_facts,
                protection.protects(CLUSTER_ENTRY), key="aks-kueue:cluster",
                keys={**shared, "dnsPrefix": "aks-kueue:cluster.name",
                      **{f"networkProfile.{k}": f"aks-kueue:cluster.network.{v}" for k, v in _NETWORK_KEYS.items()}}),
        Tracked(SYSTEM_POOL_ENTRY, AGENT_POOL, "the system pool", pool_facts,
                protection.protects(SYSTEM_POOL_ENTRY), key="aks-kueue:cluster.systemPool",
                keys={**shared, "vmSize": "aks-kueue:cluster.systemPool.vmSize",
                      "enableEncryptionAtHost": "aks-kueue:cluster.systemPool.vmSize",
                      "availabilityZones": "aks-kueue:cluster.systemPool.zones"}),
    ]


def _cluster_inputs(args: AksClusterArgs) -> dict:
    spec = args.cluster
    sec = spec.security
    autoscaler = spec.autoscaler_profile.to_api()
    net = _network(spec)
    return dict(
        resource_name_=spec.name,
        location=args.location,
        dns_prefix=dns_prefix(spec.name),
        kubernetes_version=spec.kubernetes_version,
        sku=cs.ManagedClusterSKUArgs(name=spec.sku, tier=spec.tier),
        identity=cs.ManagedClusterIdentityArgs(type="SystemAssigned"),
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
            network_plugin=net["networkPlugin"], network_plugin_mode=net["networkPluginMode"],
            network_policy=net["networkPolicy"], network_dataplane=net["networkDataplane"],
            pod_cidr=net["podCidr"], service_cidr=net["serviceCidr"], dns_service_ip=net["dnsServiceIP"],
            outbound_type=net["outboundType"]),
        auto_upgrade_profile=cs.ManagedClusterAutoUpgradeProfileArgs(
            upgrade_channel=sec.upgrade_channel, node_os_upgrade_channel=sec.node_os_upgrade_channel),
        tags=args.tags,
    )


def _snake(camel: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", camel).lower()


def _snake_keys(value):
    """The SDK takes nested inputs as dicts with its snake_case names."""
    if isinstance(value, dict):
        return {_snake(k): _snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    return value
