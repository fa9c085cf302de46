"""Kueue itself: the AKS managed extension or the upstream Helm chart, chosen by one key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from aks_kueue.day2.allow import Entry, Target
from aks_kueue.settings.kueue import Kueue
from components.secret import NO_SECRET_KEYS, SecretKeys, secret_inputs
from components.kubernetes_object import HelmRelease
from components.kueue_install.values import helm_values
from aks_kueue.versions import (KUEUE_API_VERSION, KUEUE_CHART_REPOSITORY, KUEUE_NAMESPACE,
                                MANAGED_KUEUE_EXTENSION_TYPE)
from components import Component

if TYPE_CHECKING:  # each path imports its own SDK module when it runs (see KueueInstall)
    from pulumi_azure_native import kubernetesconfiguration as kc

CONTROLLER_DEPLOYMENT = "kueue-controller-manager"
KUEUE_ENTRY = Entry(Target.KUEUE)


@dataclass(frozen=True)
class KueueInstallArgs:
    kueue: Kueue
    resource_group_name: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    provider: k8s.Provider
    node_pools: Sequence[pulumi.Resource]
    gate: pulumi.Resource                         # the day-2 guard's read of the last deployment
    # Kueue's quota and borrowing metrics (`metrics.enableClusterQueueResources`), which the monitoring
    # dashboard shows; the Helm path only, the managed extension exposes no setting for it.
    cluster_queue_metrics: bool = False
    protect: bool = False                         # Pulumi `protect` on the installer
    secret: SecretKeys = NO_SECRET_KEYS           # what comes of aks-kueue:kueue is sent as a secret


class KueueInstall(Component, kind="KueueInstall"):
    """Everything that needs Kueue's CRDs or webhooks must depend on `installer`.

    Not registered at all with `install: none`. The installer is protected (unless
    allowReplacement lists `kueue`) and waits for the day-2 guard, so a refused install switch
    never starts a second controller."""

    installer: pulumi.CustomResource
    # Each path imports only its own SDK module: a preview of one mode never pays for the other.
    summary: dict

    def __init__(self, name: str, args: KueueInstallArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        kueue = args.kueue
        if kueue.install == "managed":
            extension = self._extension(name, args)
            self.installer = extension
            self.summary = {
                "installMethod": "managed", "extensionType": MANAGED_KUEUE_EXTENSION_TYPE,
                "version": kueue.version or extension.current_version,
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

    def _extension(self, name: str, args: KueueInstallArgs) -> "kc.Extension":
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
            f"{name}-extension", resource_group_name=args.resource_group_name, cluster_rp="Microsoft.ContainerService",
            cluster_resource_name="managedClusters", cluster_name=args.cluster_name, extension_name="kueue",
            extension_type=MANAGED_KUEUE_EXTENSION_TYPE,
            scope=kc.ScopeArgs(cluster=kc.ScopeClusterArgs(release_namespace=KUEUE_NAMESPACE)),
            **secret_inputs(release, args.secret.any("kueue")),
            opts=self.child(protect=args.protect, depends_on=[*args.node_pools, args.gate]))

    def _helm_release(self, name: str, args: KueueInstallArgs) -> pulumi.CustomResource:
        values = helm_values(args.kueue, cluster_queue_metrics=args.cluster_queue_metrics)
        # Registered by its type token, as the typed helm.v3.Release would register it (see HelmRelease).
        return HelmRelease(f"{name}-helm", {
            "name": "kueue",
            "chart": KUEUE_CHART_REPOSITORY,
            "version": args.kueue.chart_version,
            "namespace": KUEUE_NAMESPACE,
            "createNamespace": True,
            # A key set with --secret is secret as a whole, tokens in chart values included.
            "values": pulumi.Output.secret(values) if args.secret.any("kueue") else values,
            # Helm waits for the controller and its webhook Deployment before the
            # release counts as created, so queue objects are not sent too early.
            "timeout": 600,
        }, opts=self.child(provider=args.provider, protect=args.protect, depends_on=[args.gate]))
