"""The Kueue install: one installer only, and the managed extension's documented limits.

Settings already refuse most of these, but the policy pack sees only resource inputs, so
the analysis checks them again from its own inputs (`../shared/reference/aks.md` section d).
"""

from __future__ import annotations

import re
from typing import Iterable

from aks_kueue.kueue import catalog as cat
from aks_kueue.feasibility.findings import ERROR, WARNING, Finding, describe, where
from aks_kueue.feasibility.inputs import InstallFacts, Manifest, object_key
from aks_kueue.versions import MIN_KUBERNETES_MINOR

RESERVED_PREFIX = "aks-"


def install_findings(install: InstallFacts, manifests: Iterable[Manifest], sources) -> list[Finding]:
    def at(key: str) -> str:
        return install.sources.get(key, key)

    findings = []
    if "managed" in install.installers and "helm" in install.installers:
        findings.append(Finding(
            ERROR, "installers-conflict", "Kueue install", at("kueue.install"),
            "Kueue is installed both as the AKS managed extension and from the Helm chart; both own Kueue's CRDs "
            "and webhooks, so the second install fails or fights the first",
            "keep one installer: remove the Helm release or the microsoft.kueue extension",
            {"installers": list(install.installers)}))
    if "managed" not in install.installers:
        return findings
    minor = re.match(r"1\.(\d+)", install.kubernetes_version)
    if minor is None or int(minor.group(1)) < MIN_KUBERNETES_MINOR:
        findings.append(Finding(
            ERROR, "managed-kubernetes-version", "AKS cluster", at("cluster.kubernetesVersion"),
            f"the managed Kueue extension needs AKS 1.{MIN_KUBERNETES_MINOR} or later, and the cluster runs "
            f"{install.kubernetes_version}", f"set kubernetesVersion to 1.{MIN_KUBERNETES_MINOR} or newer",
            {"kubernetesVersion": install.kubernetes_version}))
    if install.sku == "Automatic" or install.node_provisioning == "Auto":
        setting = "sku Automatic" if install.sku == "Automatic" else "nodeProvisioning Auto"
        findings.append(Finding(
            ERROR, "managed-node-provisioning", "AKS cluster",
            at("cluster.sku" if install.sku == "Automatic" else "cluster.nodeProvisioning"),
            f"the managed Kueue extension supports the cluster autoscaler only, and the cluster has {setting} "
            "(node auto-provisioning)", "use sku Base with nodeProvisioning Manual, or install Kueue with Helm",
            {"sku": install.sku, "nodeProvisioning": install.node_provisioning}))
    if install.region not in cat.MANAGED_REGIONS:
        findings.append(Finding(
            WARNING, "managed-region", "AKS cluster", at("location"),
            f"the managed Kueue extension is documented only in {', '.join(cat.MANAGED_REGIONS)}, not "
            f"{install.region}; the install may fail", "deploy to one of those regions, or install Kueue with Helm",
            {"region": install.region}))
    for i, name in enumerate(install.integrations or ()):
        if name not in cat.MANAGED_FRAMEWORKS:
            findings.append(Finding(
                ERROR, "managed-integration", "Kueue install", f"{at('kueue.integrations')}[{i}]",
                f"the managed Kueue extension does not run the {name} integration (it runs "
                f"{', '.join(cat.MANAGED_FRAMEWORKS)})", "remove it, or install Kueue with Helm",
                {"integration": name}))
    for manifest in manifests:
        name = (manifest.get("metadata") or {}).get("name", "")
        if name.startswith(RESERVED_PREFIX) and manifest.get("apiVersion", "").startswith("kueue.x-k8s.io/"):
            key = object_key(manifest)
            findings.append(Finding(
                ERROR, "managed-reserved-name", describe(key), where(sources, key, "name"),
                f"{describe(key)} starts with {RESERVED_PREFIX!r}, a prefix the managed Kueue extension owns for "
                "its own flavors and priority classes", f"rename it, without the {RESERVED_PREFIX!r} prefix",
                {"name": name}))
    return findings
