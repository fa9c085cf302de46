"""Advisories for what only Azure can answer, each with an exact `az` command."""

from __future__ import annotations

import shlex
import shutil
import subprocess

import pytest

from aks_kueue.aks.preflight import Advisory, Feature, PoolUse, advisories

CPU = PoolUse("aks-kueue:nodePools[0].vmSize", "Standard_D16s_v5", nodes=10, vcpus=16, gpu=False)
A100 = PoolUse("aks-kueue:nodePools[1].vmSize", "Standard_NC24ads_A100_v4", nodes=4, vcpus=24, gpu=True)
SYSTEM = PoolUse("aks-kueue:cluster.systemPool.vmSize", "Standard_D4s_v5", nodes=3, vcpus=4, gpu=False)


def test_aks_always_needs_its_resource_provider():
    found = advisories("eastus", [])
    assert found == [Advisory(
        key="azure-native:location",
        message="the resource provider Microsoft.ContainerService must be registered in the subscription (AKS itself)",
        command="az provider show --namespace Microsoft.ContainerService --query registrationState -o tsv",
        then="`Registered` means it is, otherwise run `az provider register --namespace Microsoft.ContainerService`")]


def test_features_bring_their_registrations():
    commands = [a.command for a in advisories("eastus", [], [Feature.MANAGED_KUEUE, Feature.HOST_ENCRYPTION])]
    assert commands[1] == "az provider show --namespace Microsoft.KubernetesConfiguration --query registrationState -o tsv"
    assert commands[2] == ("az feature show --namespace Microsoft.Compute --name EncryptionAtHost "
                           "--query properties.state -o tsv")


def test_every_size_once_and_gpu_quota_for_gpu_pools_only():
    found = advisories("westus2", [SYSTEM, CPU, A100, PoolUse("aks-kueue:nodePools[2].vmSize",
                                                               "standard_d16s_v5", 2, 16, False)])
    sizes = [a for a in found if "must be offered to the subscription" in a.message]
    assert [a.key for a in sizes] == [SYSTEM.key, CPU.key, A100.key]
    assert sizes[2].command == ("az vm list-skus --location westus2 --resource-type virtualMachines --size "
                                "Standard_NC24ads_A100_v4 --query \"[?name=='Standard_NC24ads_A100_v4']"
                                ".restrictions[].reasonCode\" -o tsv")
    quota = [a for a in found if "quota" in a.message]
    assert [a.key for a in quota] == [A100.key]
    assert "needs 96 vCPUs of its VM family's quota in westus2" in quota[0].message
    assert "raise that family's quota" in quota[0].then


H100_SPOT = PoolUse("aks-kueue:nodePools[3]", "Standard_NC40ads_H100_v5", nodes=6, vcpus=40, gpu=True, spot=True)
CPU_SPOT = PoolUse("aks-kueue:nodePools[4]", "Standard_D16s_v5", nodes=2, vcpus=16, gpu=False, spot=True)


def test_a_spot_pool_is_judged_against_the_regions_spot_quota_not_its_family():
    """Azure counts Spot VMs against the region's one Spot vCPU quota (lowPriorityCores), across
    families; a spot CPU pool needs it too, a regular CPU pool has no quota advisory."""
    found = advisories("eastus", [CPU, A100, H100_SPOT])
    quota = {a.key: a for a in found if "quota" in a.message}
    assert list(quota) == [A100.key, H100_SPOT.key]
    spot = quota[H100_SPOT.key]
    assert spot.message == ("Standard_NC40ads_H100_v5 at 6 nodes is a spot pool that needs 240 vCPUs of the "
                            "region's Spot vCPU quota in eastus, not of its VM family's quota")
    assert "raise \"Total Regional Spot vCPUs\"" in spot.then
    assert "\"Total Regional Low-priority vCPUs\", lowPriorityCores" in spot.then
    assert "VM family's quota in" not in spot.message
    assert spot.command == ("az vm list-usage --location eastus --query \"[?name.value=='lowPriorityCores']."
                            "{quota:name.value, used:currentValue, limit:limit}\" -o table")


def test_the_spot_pools_of_a_stack_share_one_quota_so_the_advice_adds_them_up():
    found = advisories("eastus", [H100_SPOT, CPU_SPOT])
    spot = [a for a in found if "Spot vCPU quota" in a.message]
    assert [a.key for a in spot] == [H100_SPOT.key, CPU_SPOT.key]
    assert "needs 32 vCPUs of the region's Spot vCPU quota in eastus (the stack's 2 spot pools together: " \
           "272 vCPUs)" in spot[1].message
    unknown = PoolUse("aks-kueue:nodePools[5]", "Standard_Custom_x", nodes=3, vcpus=None, gpu=False, spot=True)
    told = [a.message for a in advisories("eastus", [H100_SPOT, unknown]) if "Spot vCPU quota" in a.message]
    assert "needs 3 nodes' vCPUs of the region's Spot vCPU quota" in told[1]
    assert "together: at least 240 vCPUs, plus those of the Standard_Custom_x nodes)" in told[1]


def test_a_pinned_patch_is_checked_against_the_region():
    assert not any(a.key.endswith("kubernetesVersion") for a in advisories("eastus", [], kubernetes_version="1.35"))
    pinned = [a for a in advisories("eastus", [], kubernetes_version="1.35.2") if a.key.endswith("Version")]
    assert pinned[0].command == "az aks get-versions --location eastus -o table"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_commands_are_valid_shell_and_ask_for_the_right_things():
    """Run each command against a stand-in `az` that prints its arguments (and a family name)."""
    fake = ('az() { if [ "$2" = list-skus ] && [[ "$*" == *family* ]]; then echo standardNCADSA100v4Family; '
            'else printf "%s\\n" "$@"; fi; }\n')
    for advisory in advisories("eastus", [CPU, A100, H100_SPOT], list(Feature), "1.35.2"):
        done = subprocess.run(["bash", "-c", fake + advisory.command], capture_output=True, text=True, timeout=10)
        assert done.returncode == 0, (advisory.command, done.stderr)
        words = done.stdout.splitlines()
        assert words[:1] and words[0] in ("provider", "feature", "aks", "vm"), advisory.command
        if "list-usage" in advisory.command and "lowPriorityCores" not in advisory.command:
            assert "[?name.value=='standardNCADSA100v4Family'].{family:name.value, used:currentValue, " \
                   "limit:limit}" in words
        else:
            assert words == shlex.split(advisory.command)[1:]
