"""The NVIDIA device plugin DaemonSets, as plain manifests.

AKS installs the NVIDIA driver on GPU pools but not the device plugin, and without
it nodes never advertise `nvidia.com/gpu`. The plugin runs in kube-system because
Kueue's pod webhook skips that namespace: the plugin must start even while Kueue is down.
"""

from __future__ import annotations

from typing import Any

from aks_kueue.aks.pools import Pool, gpu_daemonset_placement
from aks_kueue.versions import NVIDIA_DEVICE_PLUGIN_IMAGE

NAMESPACE = "kube-system"
DAEMONSET_NAME = "nvidia-device-plugin"
# Requests of every plugin pod, so the capacity model can subtract them from GPU nodes.
REQUESTS = {"cpu": "50m", "memory": "64Mi"}


def device_plugin_groups(pools: list[Pool]) -> dict[str, list[Pool]]:
    """Pools by MIG strategy, one DaemonSet each."""
    groups: dict[str, list[Pool]] = {}
    for pool in pools:
        if pool.needs_device_plugin:
            groups.setdefault(pool.mig_strategy, []).append(pool)
    return groups


def daemonset_name(strategy: str) -> str:
    return DAEMONSET_NAME + ("-mig" if strategy == "mixed" else "")


# The program's DaemonSets, one per MIG strategy it uses. The capacity model counts a pool's NVIDIA
# GPUs where one of them runs (and AKS installs the driver), or where the pool declares its own.
DEVICE_PLUGIN_NAMES = tuple(daemonset_name(strategy) for strategy in ("none", "mixed"))


def is_device_plugin(name: str) -> bool:
    return name in DEVICE_PLUGIN_NAMES


def daemonset(name: str, strategy: str, pools: list[Pool]) -> dict[str, Any]:
    """MIG strategies need SYS_ADMIN and MIG device monitoring, as NVIDIA's own chart sets them."""
    labels = {"app.kubernetes.io/name": "nvidia-device-plugin", "app.kubernetes.io/instance": name,
              "app.kubernetes.io/managed-by": "aks-kueue"}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/instance": name}},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "priorityClassName": "system-node-critical",
                    **gpu_daemonset_placement(pools),
                    "containers": [{
                        "name": "nvidia-device-plugin-ctr",
                        "image": NVIDIA_DEVICE_PLUGIN_IMAGE,
                        "env": [{"name": "FAIL_ON_INIT_ERROR", "value": "false"},
                                {"name": "MIG_STRATEGY", "value": strategy},
                                *([{"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"}]
                                  if strategy != "none" else [])],
                        "resources": {"requests": dict(REQUESTS)},
                        "securityContext": ({"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
                                            if strategy == "none" else {"capabilities": {"add": ["SYS_ADMIN"]}}),
                        "volumeMounts": [{"name": "device-plugin",
                                          "mountPath": "/var/lib/kubelet/device-plugins"}],
                    }],
                    "volumes": [{"name": "device-plugin",
                                 "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}],
                },
            },
        },
    }
