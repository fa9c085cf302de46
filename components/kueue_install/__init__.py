"""Kueue itself: the AKS managed extension or the upstream Helm chart, chosen by one key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.kueue_install.values import helm_values
from aks_kueue.settings.kueue import Kueue
from aks_kueue.versions import (KUEUE_API_VERSION, KUEUE_CHART_REPOSITORY, KUEUE_NAMESPACE,
                                MANAGED_KUEUE_EXTENSION_TYPE)
from components import token

CONTROLLER_DEPLOYMENT = "kueue-controller-manager"


@dataclass(frozen=True)
class KueueInstallArgs:
    kueue: Kueue
    resource_group_name: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    provider: k8s.Provider
    node_pools: Sequence[pulumi.Resource]
    # Kueue's quota and borrowing metrics (`metrics.enableClusterQueueResources`), which the monitoring
    # dashboard shows; the Helm path only, the managed extension exposes no setting for it.
    cluster_queue_metrics: bool = False


class KueueInstall(pulumi.ComponentResource):
    """Everything that needs Kueue's CRDs or webhooks must depend on `installer`."""

    installer: pulumi.CustomResource
    # Each path imports only its own SDK module: a preview of one mode never pays for the other.
    summary: dict

    def __init__(self, name: str, args: KueueInstallArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(token("KueueInstall"), name, None, opts)
        kueue = args.kueue
        if kueue.install == "managed":
            self.installer = self._extension(name, args)
            self.summary = {
                "installMethod": "managed", "extensionType": MANAGED_KUEUE_EXTENSION_TYPE,
                "version": kueue.version or self.installer.current_version,
                "autoUpgrade": kueue.version is None,
            }
            if kueue.version is None:
                self.summary["releaseTrain"] = kueue.effective_release_train
        else:
            self.installer = self._helm_release(name, args)
            self.summary = {
                "installMethod": "helm", "chart": KUEUE_CHART_REPOSITORY, "version": kueue.chart_version,
                "featureGates": kueue.feature_gates_in_force, "integrations": kueue.frameworks,
            }
        self.summary.update({
            "namespace": KUEUE_NAMESPACE, "apiVersion": KUEUE_API_VERSION,
            "controllerDeployment": CONTROLLER_DEPLOYMENT,
            "verify": f"kubectl -n {KUEUE_NAMESPACE} rollout status deploy/{CONTROLLER_DEPLOYMENT}",
        })
        self.register_outputs({"kueue": self.summary})

    def _extension(self, name: str, args: KueueInstallArgs) -> pulumi.CustomResource:
        from pulumi_azure_native import kubernetesconfiguration as kc

        kueue = args.kueue
        # The extension generates ResourceFlavors for the user pools it finds, so it
        # comes after them. A pin follows Microsoft's documented command (`az k8s-extension
        # create --name kueue --extension-type microsoft.kueue --scope cluster --release-namespace
        # kueue-system --version <v> --auto-upgrade-mode none`): the version, auto-upgrade off, and
        # no release train of ours (ARM reads releaseTrain only with auto-upgrade on; the SDK sends
        # its default, Stable). Without a pin the extension follows the train with auto-upgrade.
        release = (dict(version=kueue.version, auto_upgrade_minor_version=False) if kueue.version
                   else dict(release_train=kueue.effective_release_train, auto_upgrade_minor_version=True))
        return kc.Extension(
            f"{name}-extension",
            resource_group_name=args.resource_group_name,
            cluster_rp="Microsoft.ContainerService",
            cluster_resource_name="managedClusters",
            cluster_name=args.cluster_name,
            extension_name="kueue",
            extension_type=MANAGED_KUEUE_EXTENSION_TYPE,
            scope=kc.ScopeArgs(cluster=kc.ScopeClusterArgs(release_namespace=KUEUE_NAMESPACE)),
            **release,
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(args.node_pools)))

    def _helm_release(self, name: str, args: KueueInstallArgs) -> pulumi.CustomResource:
        from pulumi_kubernetes.helm.v3 import Release

        kueue = args.kueue
        return Release(
            f"{name}-helm",
            name="kueue",
            chart=KUEUE_CHART_REPOSITORY,
            version=kueue.chart_version,
            namespace=KUEUE_NAMESPACE,
            create_namespace=True,
            values=helm_values(kueue, cluster_queue_metrics=args.cluster_queue_metrics),
            # Helm waits for the controller and its webhook Deployment before the
            # release counts as created, so queue objects are not sent too early.
            timeout=600,
            opts=pulumi.ResourceOptions(parent=self, provider=args.provider))
