"""Kueue's install and objects: validity, exactly one installer, install-mode rules, release train.

Also the policy that reports resources the pack could not read, so that leaving a
malformed pool or queue out of the other checks is never silent.
"""

from __future__ import annotations

from pulumi_policy import PolicyConfigSchema

from aks_kueue.kueue import catalog as cat
from aks_kueue.policies.base import PROD_STACKS, Violation, stack_policy
from aks_kueue.policies.capacity import violations
from aks_kueue.policies.kueue_checks import object_problems
from aks_kueue.policies.world import World
from aks_kueue.versions import KUEUE_CHART_SERIES

PREVIEW_TRAIN = "preview"


def _readable(world: World, config: dict) -> list[Violation]:
    return [(p.message, p.urn) for p in world.problems]


def _objects_valid(world: World, config: dict) -> list[Violation]:
    return [(str(p), p.urn) for p in object_problems(world)]


def _single_installer(world: World, config: dict) -> list[Violation]:
    found = violations(world, ["installers-conflict"])
    modes = {i.mode for i in world.installers}
    if world.cluster is None and len(modes) > 1:  # the analysis needs a cluster; the conflict does not
        found.append(("Kueue is installed both as the AKS managed extension and from the Helm chart; keep one",
                      world.installers[1].urn))
    if not world.installers and (world.kueue or world.workloads):
        found.append(("the stack creates Kueue objects but installs Kueue neither as the AKS extension "
                      "microsoft.kueue nor from the Helm chart; without Kueue's CRDs they cannot be created", None))
    for mode in ("managed", "helm"):
        same = [i for i in world.installers if i.mode == mode]
        for extra in same[1:]:
            found.append((f"{extra.label} installs Kueue again ({mode}) beside {same[0].label}; both would own "
                          "Kueue's CRDs and webhooks. Keep one", extra.urn))
    return found


def _install_mode(world: World, config: dict) -> list[Violation]:
    found: list[Violation] = []
    installers = {i.urn for i in world.installers}
    if len(installers) == 1:
        for resource in world.kueue:
            if not resource.depends_on & installers:
                found.append((f"{resource.obj.describe()} does not depend on the Kueue installer, so it may be "
                              "sent before Kueue's CRDs and webhooks exist, and deleted after Kueue; add "
                              "dependsOn on the installer", resource.urn))
    for installer in world.installers:
        if installer.mode == "helm":
            if installer.version is None or not installer.version.startswith(KUEUE_CHART_SERIES + "."):
                found.append((f"{installer.label}: chart version {installer.version or 'unpinned'} is not a "
                              f"{KUEUE_CHART_SERIES}.x release; the Kueue objects are written for the "
                              f"{KUEUE_CHART_SERIES} API, so pin {KUEUE_CHART_SERIES}.x", installer.urn))
            unknown = [f for f in installer.integrations or () if f not in cat.FRAMEWORKS]
            if unknown:
                found.append((f"{installer.label}: integrations.frameworks {', '.join(unknown)} are not Kueue "
                              f"{KUEUE_CHART_SERIES} integrations; Kueue would refuse to start", installer.urn))
        elif installer.version is not None and installer.auto_upgrade:
            found.append((f"{installer.label}: version {installer.version} is pinned while "
                          "autoUpgradeMinorVersion is on, so the pin does not hold; set autoUpgradeMinorVersion "
                          "false, or drop the version and follow a release train", installer.urn))
    return found


def _release_train(world: World, config: dict) -> list[Violation]:
    if world.stack not in set(config.get("prodStacks") or []) or config.get("allowPreviewReleaseTrain"):
        return []
    return [(f"{i.label} follows the {i.release_train} release train with auto-upgrade in production stack "
             f"{world.stack!r}; pin a version (auto-upgrade off), or opt in with allowPreviewReleaseTrain", i.urn)
            for i in world.installers
            if i.mode == "managed" and i.auto_upgrade and (i.release_train or "").lower() == PREVIEW_TRAIN]


READABLE = stack_policy(
    "aks-kueue-resources-readable",
    "Every node pool, cluster, Kueue installer and Kueue object has the shape the pack reads; one it "
    "cannot read is left out of the other checks, so it is reported here.", _readable)

OBJECTS_VALID = stack_policy(
    "kueue-objects-valid",
    "Every Kueue object passes Kueue v0.19's CRD schema, CEL rules and webhooks; references between them "
    "resolve; every LocalQueue's namespace exists and its ClusterQueue's namespaceSelector selects it.",
    _objects_valid)

SINGLE_INSTALLER = stack_policy(
    "kueue-single-installer",
    "Kueue is installed exactly once: the AKS managed extension or the Helm chart, never both.",
    _single_installer)

INSTALL_MODE = stack_policy(
    "kueue-install-mode",
    "Every Kueue object depends on the installer; a Helm install pins the chart series whose API the objects "
    "use and names only known integrations; a pinned extension version has auto-upgrade off.", _install_mode)

RELEASE_TRAIN = stack_policy(
    "kueue-no-preview-train-in-prod",
    "A production stack does not let the managed Kueue extension auto-upgrade on the preview release train "
    "unless it opts in.", _release_train,
    schema=PolicyConfigSchema(properties={
        "prodStacks": PROD_STACKS,
        "allowPreviewReleaseTrain": {"type": "boolean", "default": False,
                                     "description": "accept the preview train in production stacks"}}))

POLICIES = [READABLE, OBJECTS_VALID, SINGLE_INSTALLER, INSTALL_MODE, RELEASE_TRAIN]
