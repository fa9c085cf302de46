"""aks-kueue: an AKS cluster with autoscaled CPU/GPU pools and Kueue, from one stack file."""

from pathlib import Path

import pulumi

from aks_kueue.judge import blocking_findings
from aks_kueue.model.from_settings import from_settings
from aks_kueue.settings import SettingsError
from aks_kueue.settings.source import load_settings
from components.cluster import AksCluster, AksClusterArgs
from components.config_error import InvalidConfig
from components.gpu_device_plugin import GpuDevicePlugin, GpuDevicePluginArgs
from components.kueue_install import KueueInstall, KueueInstallArgs
from components.kueue_queues import KueueQueues, KueueQueuesArgs
from components.model_carrier import ModelCarrier, ModelCarrierArgs
from components.monitoring import Monitoring, MonitoringArgs
from components.node_pools import NodePools, NodePoolsArgs
from components.team_access import TeamAccess, TeamAccessArgs

# Everything is read and judged before anything is registered: a config the program cannot
# use is refused whole (feasibility and the security baseline are the policy pack's to enforce).
try:
    settings = load_settings()
    model = from_settings(settings, Path(__file__).resolve().parent, pulumi.get_stack())
except SettingsError as error:
    raise InvalidConfig.from_problems(error.problems) from None
if problems := blocking_findings(model):
    raise InvalidConfig(problems)
for warning in settings.warnings:
    pulumi.log.warn(warning)

tags = {"managed-by": "aks-kueue", "stack": pulumi.get_stack()}
cluster = AksCluster("main", AksClusterArgs(
    location=settings.location, resource_group_name=settings.resource_group_name,
    cluster=settings.cluster, tags=tags, monitoring=settings.monitoring))
pools = NodePools("pools", NodePoolsArgs(
    resource_group_name=cluster.resource_group_name, cluster_name=cluster.cluster_name,
    pools=settings.node_pools, tags=tags))
gpu_pools = [p for p in model.pools if p.needs_device_plugin]
if gpu_pools:
    GpuDevicePlugin("gpu", GpuDevicePluginArgs(
        pools=gpu_pools, provider=cluster.provider, node_pools=[pools.agent_pools[p.name] for p in gpu_pools]))
kueue = KueueInstall("kueue", KueueInstallArgs(
    kueue=settings.kueue, resource_group_name=cluster.resource_group_name,
    cluster_name=cluster.cluster_name, provider=cluster.provider, node_pools=list(pools.agent_pools.values()),
    cluster_queue_metrics=bool(settings.monitoring and settings.monitoring.cluster_queue_resource_metrics)))
if settings.monitoring:
    monitoring = Monitoring("monitoring", MonitoringArgs(
        monitoring=settings.monitoring, location=settings.location, resource_group_name=cluster.resource_group_name,
        cluster_name=settings.cluster.name, cluster_id=cluster.cluster_id, workspaces=cluster.monitoring_workspaces,
        provider=cluster.provider, kueue_installer=kueue.installer, kueue_install=settings.kueue.install,
        gpu_pools=gpu_pools, gpu_node_pools=[pools.agent_pools[p.name] for p in gpu_pools],
        grafana_admin_group_ids=settings.cluster.security.entra_admin_group_object_ids, tags=tags))
    pulumi.export("monitoring", monitoring.summary)
if model.objects:
    queues = KueueQueues("queues", KueueQueuesArgs(
        objects=model.objects, namespaces=model.namespaces, provider=cluster.provider, installer=kueue.installer))
    pulumi.export("queues", queues.summary)
# Teams' Entra groups may get credentials and submit jobs in their namespaces (none without Kueue).
if model.submitter_groups:
    team_access = TeamAccess("team-access", TeamAccessArgs.of(
        settings, cluster_id=cluster.cluster_id, provider=cluster.provider, installer=kueue.installer,
        namespaces=queues.namespaces))
    pulumi.export("teamAccess", team_access.summary)
# Stack policies see resources only: this ConfigMap carries what no other resource says.
ModelCarrier("model", ModelCarrierArgs(model=model, provider=cluster.provider))

pulumi.export("resourceGroupName", cluster.resource_group_name)
pulumi.export("clusterName", cluster.cluster_name)
pulumi.export("oidcIssuerUrl", cluster.oidc_issuer_url)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export("nodePools", {p.name: {"vmSize": p.vm_size, "minCount": p.min_count, "maxCount": p.max_count}
                            for p in settings.node_pools})
pulumi.export("kueue", kueue.summary)
