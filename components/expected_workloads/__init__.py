"""The expected workloads, written into the cluster where the policy pack can read them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from aks_kueue.expected_workloads import CARRIER_NAME, carrier_manifest
from aks_kueue.feasibility.adapter import workload_manifest
from aks_kueue.settings.queues import ExpectedWorkload
from components import token
from components.kubernetes_object import KubernetesObject


@dataclass(frozen=True)
class ExpectedWorkloadsArgs:
    workloads: list[ExpectedWorkload]
    provider: k8s.Provider


class ExpectedWorkloads(pulumi.ComponentResource):
    """One ConfigMap (`aks_kueue/expected_workloads.py` says why a ConfigMap)."""

    def __init__(self, name: str, args: ExpectedWorkloadsArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(token("ExpectedWorkloads"), name, None, opts)
        manifest = carrier_manifest(workload_manifest(w) for w in args.workloads)
        self.config_map = KubernetesObject(
            f"{name}-{CARRIER_NAME}", manifest, pulumi.ResourceOptions(parent=self, provider=args.provider))
        self.register_outputs({"workloads": [w.name for w in args.workloads]})
