"""Upgrades that respect running work: the version/channel rule, GPU upgrade settings, windows.

Sources: the AKS API 2025-09-01 as pulumi-azure-native 3.29.0 describes it (ManagedCluster
`kubernetesVersion`: "Updating the cluster with the same <major.minor> once it has been created
(e.g. 1.14.x -> 1.14) will not trigger an upgrade"; AgentPoolUpgradeSettings defaults maxSurge
10% and maxUnavailable 0; MaintenanceWindow durationHours 4 to 24, startTime '00:00' to '23:59').
"""

from __future__ import annotations

from typing import Optional

from aks_kueue.aks import kubernetes_versions
from aks_kueue.k8s.field import FieldError

# The cluster auto-upgrade channels and what each one moves (learn.microsoft.com/azure/aks/auto-upgrade-cluster).
MOVES_MINOR = ("stable", "rapid")
AUTO_UPGRADE_CONFIG = "aksManagedAutoUpgradeSchedule"
NODE_OS_UPGRADE_CONFIG = "aksManagedNodeOSUpgradeSchedule"
# A surge node per GPU node needs GPU quota that batch users rarely have spare; taking one node
# out at a time needs none.
GPU_UPGRADE_DEFAULTS = {"maxSurge": "0", "maxUnavailable": "1"}


def manages_kubernetes_version(channel: str) -> bool:
    """stable and rapid move the minor version themselves: the program then sets
    kubernetesVersion only when it creates the cluster (ignoreChanges after that)."""
    return channel not in MOVES_MINOR


def version_channel_problem(version: str, channel: str) -> Optional[FieldError]:
    """Why this pair would drift, or None.

    `patch` keeps the newest patch of the minor written, so "1.34" is stable, but a pinned
    "1.34.x" is upgraded by the channel and the next `pulumi up` would try to go back to it, a
    downgrade AKS refuses. (`stable` and `rapid` are handled by not managing the version.)
    """
    if channel == "patch" and (parsed := kubernetes_versions.parse(version)) is not None and parsed[2] is not None:
        minor = ".".join(version.split(".")[:2])
        return FieldError("", f"{version!r} pins a patch, but upgradeChannel patch moves the patch, so the next "
                              f"pulumi up would try to go back to {version}",
                          f"write \"{minor}\" (the channel keeps its newest patch), or set upgradeChannel: node-image "
                          "or none to keep the exact patch")
    return None
