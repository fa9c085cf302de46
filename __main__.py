"""aks-kueue: an AKS cluster with autoscaled CPU/GPU pools and Kueue, from one stack file."""

from pathlib import Path

import pulumi

from aks_kueue.day2.allow import Protection
from aks_kueue.day2.state import CLUSTER_ID_OUTPUT, OUTPUT
from aks_kueue.judge import blocking_findings
from aks_kueue.model.from_settings import from_settings
from aks_kueue.model.record import desired_record
from aks_kueue.settings import SettingsError
from aks_kueue.settings.source import load_settings, program_secrets, secret_keys
from components.cluster import AksCluster, AksClusterArgs
from components.config_error import InvalidConfig
from components.day2_guard import Day2Guard, Day2GuardArgs
from components.gpu_device_plugin import GpuDevicePlugin, GpuDevicePluginArgs
from components.kueue_install import KUEUE_ENTRY, KueueInstall, KueueInstallArgs
from components.kueue_queues import KueueQueues, KueueQueuesArgs
from components.model_carrier import ModelCarrier, ModelCarrierArgs
from components.monitoring import Monitoring, MonitoringArgs
from components.multikueue import fleet_member, read_fleet
from components.node_pools import NodePools, NodePoolsArgs
from components.secret import SecretKeys, secret_if_shown, secret_where_it_flows
from components.team_access import TeamAccess, TeamAccessArgs

# Everything is read and judged before anything is registered: a config the program cannot
# use is refused whole (feasibility and the security baseline are the policy pack's to enforce).
qualified = f"{pulumi.get_organization() or 'organization'}/{pulumi.get_project()}/{pulumi.get_stack()}"
try:
    settings = load_settings()
    # A fleet member reads the other stacks of its fleet first: they are part of its model.
    fleet_reading = read_fleet(settings.fleet, qualified) if settings.fleet else None
    model = from_settings(settings, Path(__file__).resolve().parent, pulumi.get_stack(),
                          fleet_reading.inputs if fleet_reading else None)
except SettingsError as error:
    raise InvalidConfig.from_problems(error.problems) from None
if problems := blocking_findings(model):
    raise InvalidConfig(problems)
hidden = program_secrets()  # no message shows a value of a secret key, no input holds one in plain text
for warning in settings.warnings:
    pulumi.log.warn(hidden.text(warning))
if hidden:
    pulumi.runtime.register_resource_transform(secret_where_it_flows(hidden))
# The keys set with --secret; a worker's mirrored teams come from the manager's outputs: secret there, secret here.
secret = SecretKeys(secret_keys(), fleet_outputs=bool(fleet_reading and fleet_reading.secret))


def _export(name: str, value, *keys: str) -> None:
    """An output derived from a secret stack key is a secret too, and so is any part holding one's text."""
    pulumi.export(name, pulumi.Output.secret(value) if secret.any(*keys) else secret_if_shown(value, hidden))


protection = Protection(settings.effective_protect, settings.allowances)
spec = model.cluster
assert spec is not None, "from_settings always describes the cluster"
tags = {"managed-by": "aks-kueue", "stack": pulumi.get_stack()}

# The guard reads this stack's last deployment; everything protected waits for its verdict.
guard = Day2Guard("day2", Day2GuardArgs(
    desired=desired_record(model, protection), allowances=settings.allowances,
    stack=qualified, hidden=hidden, secret=secret))

cluster = AksCluster("main", AksClusterArgs(
    cluster=spec, tags=tags, protection=protection, guard=guard, monitoring=settings.monitoring,
    defender_workspace_id=settings.cluster.security.defender.log_analytics_workspace_id,
    secret=secret))
pools = NodePools("pools", NodePoolsArgs(
    resource_group_name=cluster.resource_group_name, cluster_name=cluster.cluster_name,
    pools=model.pools, tags=tags, protection=protection, guard=guard, secret=secret))
gpu_pools = [p for p in model.pools if p.needs_device_plugin]
gpu_node_pools = [pools.agent_pools[p.name] for p in gpu_pools]
if gpu_pools:
    GpuDevicePlugin("gpu", GpuDevicePluginArgs(pools=gpu_pools, provider=cluster.provider, node_pools=gpu_node_pools,
                                               secret=secret))
# With `install: none` Kueue is not installed, and nothing that needs it is registered.
kueue = None
if settings.kueue.install != "none":
    kueue = KueueInstall("kueue", KueueInstallArgs(
        kueue=settings.kueue, resource_group_name=cluster.resource_group_name,
        cluster_name=cluster.cluster_name, provider=cluster.provider, node_pools=list(pools.agent_pools.values()),
        cluster_queue_metrics=bool(settings.monitoring and settings.monitoring.cluster_queue_resource_metrics),
        protect=protection.protects(KUEUE_ENTRY), gate=guard.gate, secret=secret))
if settings.monitoring:
    assert cluster.monitoring_workspaces is not None, "the cluster creates them when monitoring is on"
    monitoring = Monitoring("monitoring", MonitoringArgs(
        monitoring=settings.monitoring, location=spec.region, resource_group_name=cluster.resource_group_name,
        cluster_name=spec.name, cluster_id=cluster.cluster_id, workspaces=cluster.monitoring_workspaces,
        provider=cluster.provider, kueue_installer=kueue.installer if kueue else None,
        kueue_install=settings.kueue.install,
        gpu_pools=gpu_pools, gpu_node_pools=gpu_node_pools,
        grafana_admin_group_ids=spec.security.admin_groups, tags=tags))
    _export("monitoring", monitoring.summary, "monitoring")
# A fleet's manager connects to its workers; each worker lets its manager in (MultiKueue).
fleet = fleet_member("fleet", model, fleet_reading, cluster.provider, kueue.installer, cluster.kubeconfig) \
    if model.fleet and fleet_reading and kueue else None
queues = None
if kueue is not None and model.objects:
    queues = KueueQueues("queues", KueueQueuesArgs(
        objects=model.objects, namespaces=model.namespaces, provider=cluster.provider, installer=kueue.installer,
        protection=protection, secret=secret, needs=fleet.needs if fleet else {}))
    _export("queues", queues.summary)
# Teams' Entra groups may get credentials and submit jobs in their namespaces (none without Kueue).
if model.submitter_groups and kueue is not None and queues is not None:
    team_access = TeamAccess("team-access", TeamAccessArgs.of(
        settings, cluster_id=cluster.cluster_id, provider=cluster.provider, installer=kueue.installer,
        namespaces=queues.namespaces, secret=secret))
    _export("teamAccess", team_access.summary, "cluster", "resourceGroupName", "queues")
# Stack policies see resources only: this ConfigMap carries what no other resource says.
ModelCarrier("model", ModelCarrierArgs(model=model, provider=cluster.provider, existing_pools=guard.kept_pools(),
                                       secret=secret, hidden=hidden))

_export("resourceGroupName", cluster.resource_group_name, "resourceGroupName")
_export("clusterName", cluster.cluster_name, "cluster")
_export(CLUSTER_ID_OUTPUT, cluster.cluster_id, "cluster")
_export("oidcIssuerUrl", cluster.oidc_issuer_url, "cluster")
pulumi.export("kubeconfig", cluster.kubeconfig)
_export("nodePools", {p.name: {"vmSize": p.vm_size, "minCount": p.min_count, "maxCount": p.max_count}
                      for p in model.pools}, "nodePools")
_export("kueue", kueue.summary if kueue else {"installMethod": "none"}, "kueue")
for output, value in (fleet.exports.items() if fleet else ()):
    _export(output, pulumi.Output.secret(value) if secret.fleet_outputs else value,
            "cluster", "nodePools", "kueue", "queues", "queueManifests", "fleet")
# What the next update's guard compares against (the install mode, replace-forcing inputs).
_export(OUTPUT, guard.record())
