"""The record this update would leave, from the settings the components are built from."""

from __future__ import annotations

from typing import Sequence

from aks_kueue.day2.allow import Protection
from aks_kueue.day2.state import Record, SystemPoolOwner
from aks_kueue.model import Namespace
from aks_kueue.settings import Settings
from components import cluster, kueue_install, kueue_queues, node_pools


def desired_record(settings: Settings, namespaces: Sequence[Namespace], protection: Protection) -> Record:
    found = [
        *cluster.tracked(settings.location, settings.resource_group_name, settings.cluster, protection),
        *node_pools.tracked(settings.node_pools, settings.resource_group_name, settings.cluster.name, protection),
        *kueue_install.tracked(settings.kueue, protection),
        *kueue_queues.tracked(namespaces, protection),
    ]
    return Record(resources={t.entry: t for t in found}, kueue_install=settings.kueue.install,
                  kubernetes_version=settings.cluster.kubernetes_version,
                  upgrade_channel=settings.cluster.security.upgrade_channel,
                  system_pool_owner=SystemPoolOwner.CLUSTER)
