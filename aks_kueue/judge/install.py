"""The Kueue install: exactly one installer, installed before the objects that need its CRDs,
pinned where the objects' API needs it, and the managed extension's documented limits
(`../shared/reference/aks.md` section d)."""

from __future__ import annotations

import re

from aks_kueue.aks.managed_extension import KNOWN_VERSIONS, LIST_VERSIONS_COMMAND, MANAGED_REGIONS
from aks_kueue.judge.finding import ERROR, WARNING, Finding
from aks_kueue.judge.rules import (INSTALL_MODE, MANAGED_LIMITS, MANAGED_REGION as REGION_POLICY, PREVIEW_TRAIN as
                                   TRAIN_POLICY, SINGLE_INSTALLER, finding, rule)
from aks_kueue.kueue import catalog as cat
from aks_kueue.model.desired import Cluster, Install, Model
from aks_kueue.versions import KUEUE_CHART_RELEASES, KUEUE_CHART_SERIES, MIN_KUBERNETES_MINOR

INSTALLERS_CONFLICT = "installers-conflict"
INSTALLER_MISSING = "installer-missing"
NOT_AFTER_INSTALLER = "object-not-after-installer"
CHART_SERIES = "helm-chart-series"
UNKNOWN_INTEGRATION = "unknown-integration"
PIN_NOT_HELD = "managed-version-not-held"
PREVIEW_TRAIN = "managed-preview-train-in-production"
MANAGED_VERSION = "managed-kubernetes-version"
MANAGED_PROVISIONING = "managed-node-provisioning"
MANAGED_REGION = "managed-region"
MANAGED_VERSION_UNKNOWN = "managed-version-unknown"
PREVIEW_TRAIN_NAME = "preview"


def cluster_key(cluster: Cluster, field: str) -> str:
    if field == "location" and cluster.key == "aks-kueue:cluster":
        return "azure-native:location"
    return f"{cluster.key}.{field}"


AKS_MD = "../shared/reference/aks.md section d (the managed extension)"


@rule(INSTALLERS_CONFLICT, "Kueue is installed once: the managed extension or the Helm chart, never both.",
      "Kueue installation docs (one install owns the CRDs and webhooks)", "Kueue installers", SINGLE_INSTALLER,
      severity=ERROR,
      explanation="The AKS managed extension microsoft.kueue and the Helm chart both install Kueue's CRDs, its "
      "controller and its webhooks; a second install fails on objects the first owns, or the two controllers fight "
      "over the same objects.")
@rule(INSTALLER_MISSING, "Kueue is installed where the stack creates Kueue objects.",
      "Kueue installation docs", "Kueue installers and objects", SINGLE_INSTALLER, severity=ERROR,
      explanation="Kueue objects are custom resources: without Kueue's CRDs, which only an install brings (the "
      "managed extension microsoft.kueue or the Helm chart), the API server refuses to create them.")
def single_installer(model: Model) -> list[Finding]:
    found = []
    modes = [i.mode for i in model.installs]
    if "managed" in modes and "helm" in modes:
        found.append(finding(
            INSTALLERS_CONFLICT, object=model.installs[0].subject, key=model.installs[0].key + ".install",
            message="Kueue is installed both as the AKS managed extension and from the Helm chart",
            fix="keep one installer: remove the Helm release or the microsoft.kueue extension",
            numbers={"installers": modes}))
    for mode in ("managed", "helm"):
        if modes.count(mode) > 1:
            found.append(finding(
                INSTALLERS_CONFLICT, object=model.installs[0].subject, key=model.installs[0].key + ".install",
                message=f"Kueue is installed {modes.count(mode)} times ({mode})",
                fix="keep one installer", numbers={"installers": modes}))
    if not model.installs and (model.objects or model.workloads):
        found.append(finding(
            INSTALLER_MISSING, object=Install.subject, key="aks-kueue:kueue.install",
            message="the stack creates Kueue objects but installs Kueue neither as the AKS extension microsoft.kueue "
            "nor from the Helm chart",
            fix="install Kueue (kueue.install: managed or helm), or remove the queue objects and expected workloads"))
    return found


@rule(NOT_AFTER_INSTALLER, "Every Kueue object depends on the installer.", "Pulumi dependsOn; Kueue's CRDs and "
      "webhooks must exist first", "Kueue objects", INSTALL_MODE, severity=ERROR,
      explanation="Pulumi creates resources in parallel unless one depends on another: an object that does not "
      "depend on the installer may be sent before Kueue's CRDs and webhooks exist (and fail), and be deleted after "
      "Kueue on a destroy.")
@rule(CHART_SERIES, f"A Helm install pins a published {KUEUE_CHART_SERIES}.x chart, whose API the objects use.",
      "Kueue Helm chart (registry.k8s.io/kueue/charts/kueue); its releases, kubernetes-sigs/kueue "
      f"CHANGELOG/CHANGELOG-{KUEUE_CHART_SERIES}.md (aks_kueue/versions.py)", "the Helm release", INSTALL_MODE,
      severity=ERROR,
      explanation=f"The program writes its Kueue objects for the {KUEUE_CHART_SERIES} API (kueue.x-k8s.io/v1beta2 "
      "and its fields), so the chart must be of that series; and helm can only pull a version that was published.")
@rule(UNKNOWN_INTEGRATION, "A Helm install names only integrations Kueue knows.", "Kueue Configuration "
      "integrations.frameworks", "the Helm release", INSTALL_MODE, severity=ERROR,
      explanation="Kueue reads integrations.frameworks from its Configuration when it starts, and refuses to start "
      "on a framework it does not know, so every job of the cluster goes unqueued.")
@rule(PIN_NOT_HELD, "A pinned managed extension version has auto-upgrade off.", AKS_MD, "the managed extension",
      INSTALL_MODE, severity=ERROR,
      explanation="With autoUpgradeMinorVersion on, AKS upgrades the extension along its release train whatever "
      "version is given, so a pin does not hold: the version that runs is not the one the stack says.")
@rule(PREVIEW_TRAIN, "A production stack's managed extension does not auto-upgrade on the preview release train.",
      AKS_MD, "the managed extension", TRAIN_POLICY,
      config={"allowPreviewReleaseTrain": {"type": "boolean", "default": False,
                                           "description": "accept the preview train in production stacks"}},
      severity=ERROR, waived=lambda found, config: bool(config.get("allowPreviewReleaseTrain")),
      explanation="On the preview release train with auto-upgrade on, AKS installs preview builds of Kueue as they "
      "come, which can replace the Kueue that admits a production cluster's running work.")
def install_mode(model: Model) -> list[Finding]:
    found = []
    if len(model.installs) == 1:
        for item in model.objects:
            if not item.after_installer:
                found.append(finding(
                    NOT_AFTER_INSTALLER, object=item.label, key=item.key,
                    message="it does not depend on the Kueue installer", fix="add dependsOn on the installer"))
    for install in model.installs:
        if install.mode == "helm":
            if install.version is None or not install.version.startswith(KUEUE_CHART_SERIES + "."):
                found.append(finding(
                    CHART_SERIES, object=install.subject, key=f"{install.key}.version",
                    message=f"chart version {install.version or 'unpinned'} is not a {KUEUE_CHART_SERIES}.x release",
                    fix=f"pin {KUEUE_CHART_SERIES}.x", numbers={"version": install.version}))
            elif install.version not in KUEUE_CHART_RELEASES:
                found.append(finding(
                    CHART_SERIES, object=install.subject, key=f"{install.key}.version",
                    message=f"chart version {install.version} was never published",
                    fix=f"pin one of {', '.join(KUEUE_CHART_RELEASES)}", numbers={"version": install.version}))
            unknown = [f for f in install.frameworks or () if f not in cat.FRAMEWORKS]
            if unknown:
                found.append(finding(
                    UNKNOWN_INTEGRATION, object=install.subject, key=f"{install.key}.integrations",
                    message=f"integrations.frameworks {', '.join(unknown)} are not Kueue {KUEUE_CHART_SERIES} "
                    "integrations", fix="remove them, or fix their names",
                    numbers={"unknown": unknown}))
        elif install.version is not None and install.auto_upgrade:
            found.append(finding(
                PIN_NOT_HELD, object=install.subject, key=f"{install.key}.version",
                message=f"version {install.version} is pinned while autoUpgradeMinorVersion is on",
                fix="set autoUpgradeMinorVersion false, or drop the version and follow a release train"))
        elif model.production and install.auto_upgrade and (install.release_train or "").lower() == PREVIEW_TRAIN_NAME:
            found.append(finding(
                PREVIEW_TRAIN, object=install.subject, key=f"{install.key}.releaseTrain",
                message=f"the managed Kueue extension follows the {install.release_train} release train with "
                "auto-upgrade in a production stack",
                fix="pin a version (auto-upgrade off), or opt in with the policy's allowPreviewReleaseTrain"))
    return found


@rule(MANAGED_VERSION, f"The managed extension runs on AKS 1.{MIN_KUBERNETES_MINOR} or later.", AKS_MD,
      "ManagedCluster with the managed extension", MANAGED_LIMITS, severity=ERROR,
      explanation=f"Microsoft documents the microsoft.kueue extension for AKS 1.{MIN_KUBERNETES_MINOR} and later "
      "only; on an older cluster its installation fails.")
@rule(MANAGED_PROVISIONING, "The managed extension runs with the cluster autoscaler, not node auto-provisioning.",
      AKS_MD, "ManagedCluster with the managed extension", MANAGED_LIMITS, severity=ERROR,
      explanation="The managed Kueue extension supports the cluster autoscaler only; node auto-provisioning (sku "
      "Automatic, or nodeProvisioning Auto) is not supported with it. The Helm chart has no such limit.")
@rule(MANAGED_VERSION_UNKNOWN, "A pinned managed extension version is one Microsoft publishes.", AKS_MD,
      "the managed extension", severity=WARNING,
      explanation="Azure refuses an extension version it does not publish, and pulumi up then fails installing "
      "Kueue. The versions this program knows are a dated list (aks_kueue/aks/managed_extension.py), so a newer "
      "one is a warning to check against Azure, not an error.")
@rule(MANAGED_REGION, "The managed extension is deployed in a region where it is documented.", AKS_MD,
      "ManagedCluster with the managed extension", REGION_POLICY,
      config={"additionalRegions": {
          "type": "array", "items": {"type": "string"}, "default": [],
          "description": "regions where you know the extension is offered beyond the documented ones"}},
      severity=WARNING,
      waived=lambda found, config: found.numbers.get("region") in set(config.get("additionalRegions") or []),
      explanation="Microsoft documents the managed Kueue extension in some regions only; elsewhere its installation "
      "may fail. List a region in the policy's additionalRegions when you know the extension is offered there.")
def managed_extension(model: Model) -> list[Finding]:
    if not model.managed or model.cluster is None:
        return []
    return _managed(model.cluster, next(i for i in model.installs if i.mode == "managed"))


def _managed(cluster: Cluster, install: Install) -> list[Finding]:
    findings = []
    minor = re.match(r"1\.(\d+)", cluster.kubernetes_version)
    if minor is None or int(minor.group(1)) < MIN_KUBERNETES_MINOR:
        findings.append(finding(
            MANAGED_VERSION, object=cluster.subject, key=cluster_key(cluster, "kubernetesVersion"),
            message=f"the cluster runs Kubernetes {cluster.kubernetes_version}, below the managed Kueue extension's "
            f"1.{MIN_KUBERNETES_MINOR}", fix=f"set kubernetesVersion to 1.{MIN_KUBERNETES_MINOR} or newer",
            numbers={"kubernetesVersion": cluster.kubernetes_version}))
    if cluster.sku == "Automatic" or cluster.node_provisioning == "Auto":
        setting = "sku Automatic" if cluster.sku == "Automatic" else "nodeProvisioning Auto"
        findings.append(finding(
            MANAGED_PROVISIONING, object=cluster.subject,
            key=cluster_key(cluster, "sku" if cluster.sku == "Automatic" else "nodeProvisioning"),
            message=f"the cluster has {setting} (node auto-provisioning), which the managed Kueue extension does not "
            "support", fix="use sku Base with nodeProvisioning Manual, or install Kueue with Helm",
            numbers={"sku": cluster.sku, "nodeProvisioning": cluster.node_provisioning}))
    if install.version is not None and install.version not in KNOWN_VERSIONS:
        known = ", ".join(KNOWN_VERSIONS)
        findings.append(finding(
            MANAGED_VERSION_UNKNOWN, object=install.subject, key=f"{install.key}.version",
            message=f"microsoft.kueue version {install.version} is not one this program knows Microsoft publishes (it "
            f"knows {known})",
            fix=f"check that {install.version} is published for the cluster with `{LIST_VERSIONS_COMMAND}`, or pin a "
            f"version the program knows ({known})",
            numbers={"version": install.version, "known": list(KNOWN_VERSIONS)}))
    if cluster.region not in MANAGED_REGIONS:
        findings.append(finding(
            MANAGED_REGION, object=cluster.subject, key=cluster_key(cluster, "location"),
            message=f"the managed Kueue extension is documented only in {', '.join(MANAGED_REGIONS)}, not "
            f"{cluster.region}", fix="deploy to one of those regions, or install Kueue with Helm",
            numbers={"region": cluster.region}))
    return findings
