"""The NVIDIA device plugin on the GPU pools whose driver AKS installs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from aks_kueue.aks.device_plugin import daemonset, daemonset_name, device_plugin_groups
from aks_kueue.aks.pools import Pool
from components import Component
from components.kubernetes_object import KubernetesObject
from components.secret import NO_SECRET_KEYS, SecretKeys, secret_value


@dataclass(frozen=True)
class GpuDevicePluginArgs:
    pools: list[Pool]
    provider: k8s.Provider
    node_pools: Sequence[pulumi.Resource]
    # The secret keys: where aks-kueue:nodePools is one, the pods' placement (which comes from it) is secret.
    secret: SecretKeys = NO_SECRET_KEYS


class GpuDevicePlugin(Component, kind="GpuDevicePlugin"):
    def __init__(self, name: str, args: GpuDevicePluginArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        child = self.child(provider=args.provider, depends_on=list(args.node_pools))
        self.daemonsets: dict[str, KubernetesObject] = {}
        for strategy, pools in device_plugin_groups(args.pools).items():
            ds_name = daemonset_name(strategy)
            manifest = daemonset(ds_name, strategy, pools)
            if args.secret.any("nodePools"):
                manifest = {**manifest, "spec": secret_value(manifest["spec"])}
            self.daemonsets[ds_name] = KubernetesObject(f"{name}-{ds_name}", manifest, child)
        self.register_outputs({"daemonsets": list(self.daemonsets)})
