"""The managed extension is rendered as Microsoft documents the pinned install."""

from __future__ import annotations

import shlex

from tests.conftest import edited, run_config, stack_doc

EXTENSION = "azure-native:kubernetesconfiguration:Extension"

# MS Learn "Install and configure Kueue on AKS" (kueue-overview, extension pivot), as recorded in
# ../shared/reference/aks.md section d.
DOCUMENTED_PIN = ("az k8s-extension create --resource-group $RG --cluster-name $CLUSTER --cluster-type managedClusters "
                  "--name kueue --extension-type microsoft.kueue --scope cluster --release-namespace kueue-system "
                  "--version 0.19.6-aks.0.4.4 --auto-upgrade-mode none")


def _flags(command: str) -> dict[str, str]:
    words = shlex.split(command)[3:]
    return dict(zip(words[::2], words[1::2]))


def test_a_pinned_version_follows_microsofts_documented_command():
    flags = _flags(DOCUMENTED_PIN)
    assert stack_doc("prod")["aks-kueue:kueue"]["version"] == flags["--version"]
    run = run_config(stack_doc("prod"), stack="prod")
    [extension] = [r.inputs for r in run.registrations if r.type == EXTENSION]
    assert extension["extensionName"] == flags["--name"]
    assert extension["extensionType"] == flags["--extension-type"]
    assert extension["clusterResourceName"] == flags["--cluster-type"]
    assert extension["scope"] == {"cluster": {"releaseNamespace": flags["--release-namespace"]}}
    assert extension["version"] == flags["--version"]
    # --auto-upgrade-mode none: the 2023-05-01 API this SDK speaks says it as autoUpgradeMinorVersion false.
    assert flags["--auto-upgrade-mode"] == "none" and extension["autoUpgradeMinorVersion"] is False
    # No --release-train in the command, and none of ours: only the SDK's default, which ARM ignores
    # without auto-upgrade.
    assert "--release-train" not in flags and extension.get("releaseTrain") in (None, "Stable")


def test_without_a_pin_the_extension_follows_the_release_train_with_auto_upgrade():
    def edit(c):
        del c["aks-kueue:kueue"]["version"]
        c["aks-kueue:kueue"]["releaseTrain"] = "stable"
    run = run_config(edited("prod", edit), stack="prod")
    [extension] = [r.inputs for r in run.registrations if r.type == EXTENSION]
    assert extension["releaseTrain"] == "stable" and extension["autoUpgradeMinorVersion"] is True
    assert "version" not in extension
