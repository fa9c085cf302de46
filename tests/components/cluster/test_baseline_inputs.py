"""What the cluster and pool components send for the security baseline, from the model, and how a
pool of the last deployment keeps what it was created with."""

from __future__ import annotations

import json

import pytest

from aks_kueue.judge.rules import Judging, run as run_rules
from aks_kueue.model.from_resources import from_resources
from aks_kueue.preview.pack import policy_view
from aks_kueue.preview.run import ProgramRefused, run_program
from aks_kueue.preview.stackfile import StackConfig
from tests.conftest import ROOT, edited, flat, stack_doc

CLUSTER = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
LAW_TYPE = "azure-native:operationalinsights:Workspace"
WORKSPACE = ("/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/shared/providers/"
             "Microsoft.OperationalInsights/workspaces/central")


def run(config, stack="prod", previous=None, preview=True):
    return run_program(StackConfig("aks-kueue", stack, flat(config)), ROOT, preview, previous_outputs=previous)


def cluster_inputs(found):
    (cluster,) = found.of_type(CLUSTER)
    return cluster.inputs


def pools(found):
    return {r.inputs["agentPoolName"]: r.inputs for r in found.of_type(POOL)}


@pytest.fixture(scope="module")
def prod_deployed():
    return json.loads(json.dumps(run(stack_doc("prod"), preview=False).outputs))


def test_prod_turns_on_policy_image_cleaner_and_defender_with_the_monitoring_workspace():
    found = run(stack_doc("prod"), preview=False)
    inputs = cluster_inputs(found)
    (law,) = found.of_type(LAW_TYPE)
    assert inputs["addonProfiles"]["azurepolicy"] == {"enabled": True}
    assert inputs["securityProfile"]["imageCleaner"] == {"enabled": True, "intervalHours": 168}
    assert inputs["securityProfile"]["defender"] == {
        "logAnalyticsWorkspaceResourceId": f"/offline/{LAW_TYPE}/{law.name}", "securityMonitoring": {"enabled": True}}
    assert "azureKeyvaultSecretsProvider" not in inputs["addonProfiles"]


def test_without_a_workspace_defender_is_left_alone_and_off_is_sent_as_off():
    assert "defender" not in cluster_inputs(run(stack_doc("dev"), "dev"))["securityProfile"]
    off = edited("prod", lambda c: c["aks-kueue:cluster"]["security"].update(defender={"enabled": False}))
    assert cluster_inputs(run(off))["securityProfile"]["defender"] == {"securityMonitoring": {"enabled": False}}
    own = edited("dev", lambda c: c["aks-kueue:cluster"]["security"].update(
        defender={"logAnalyticsWorkspaceId": WORKSPACE}))
    assert cluster_inputs(run(own, "dev"))["securityProfile"]["defender"]["logAnalyticsWorkspaceResourceId"] == WORKSPACE


def test_the_secrets_provider_rotates_its_secrets():
    config = edited("prod", lambda c: c["aks-kueue:cluster"]["security"].update(
        keyVaultSecretsProvider={"rotationPollInterval": "5m"}))
    assert cluster_inputs(run(config))["addonProfiles"]["azureKeyvaultSecretsProvider"] == {
        "enabled": True, "config": {"enableSecretRotation": "true", "rotationPollInterval": "5m"}}


def test_new_pools_get_host_encryption_and_an_ephemeral_os_disk_where_it_fits():
    # prod: every size holds its OS disk on its local disk (a100's sized to its 64 GiB temp disk).
    found = run(stack_doc("prod"))
    sent = {name: (p.get("osDiskType"), p.get("osDiskSizeGB"), p["enableEncryptionAtHost"])
            for name, p in pools(found).items()}
    assert sent == {"cpu": ("Ephemeral", 128, True), "a100": ("Ephemeral", 64, True), "h100": ("Ephemeral", 128, True)}
    (system,) = cluster_inputs(found)["agentPoolProfiles"]
    assert (system["osDiskType"], system["osDiskSizeGB"], system["enableEncryptionAtHost"]) == ("Ephemeral", 128, True)

    # Sizes without a local disk (Dsv5), or one smaller than the default 128 GiB, get a managed disk.
    def no_local_disk(c):
        c["aks-kueue:cluster"]["systemPool"]["vmSize"] = "Standard_D4s_v5"
        c["aks-kueue:nodePools"][0]["vmSize"] = "Standard_D16s_v5"
        del c["aks-kueue:nodePools"][1]["osDiskSizeGb"]
    found = run(edited("prod", no_local_disk))
    sent = {name: (p.get("osDiskType"), p.get("osDiskSizeGB")) for name, p in pools(found).items()}
    assert sent == {"cpu": ("Managed", None), "a100": ("Managed", None), "h100": ("Ephemeral", 128)}
    (system,) = cluster_inputs(found)["agentPoolProfiles"]
    assert system["osDiskType"] == "Managed"


def test_a_kept_pool_created_without_an_os_disk_choice_is_not_replaced(prod_deployed):
    """The last deployment created h100 before the program chose OS disks: nothing is sent that would
    replace it, the pack learns it is kept, and the baseline only advises."""
    previous = json.loads(json.dumps(prod_deployed))
    facts = previous["day2"]["resources"]["nodePools.h100"]["facts"]
    del facts["osDiskType"], facts["osDiskSizeGB"]
    facts["enableEncryptionAtHost"] = False
    found = run(stack_doc("prod"), previous=previous)
    h100 = pools(found)["h100"]
    assert "osDiskType" not in h100 and "osDiskSizeGB" not in h100 and h100["enableEncryptionAtHost"] is False
    assert not [f for f in found.day2_findings if f.severity == "error"]
    model = from_resources(policy_view(found)).model
    assert all(p.existing for p in (*model.pools, *model.cluster.system_pools))
    findings = [f for f in run_rules(Judging(model), keep=lambda each: each.baseline) if f.object == "node pool h100"]
    assert [(f.kind, f.severity.value) for f in findings] == [("aks-host-encryption", "warning")]
    assert "nodePools.h100 in aks-kueue:allowReplacement" in findings[0].fix


def test_a_written_change_of_a_kept_pool_is_refused_unless_allowed(prod_deployed):
    managed = edited("prod", lambda c: c["aks-kueue:nodePools"][2].update(osDiskType="Managed"))
    with pytest.raises(ProgramRefused) as refused:
        run(managed, previous=prod_deployed)
    # The disk type written and, with it, the size the program no longer chooses (AKS's default for Managed).
    assert [f.key for f in refused.value.findings] == ["aks-kueue:nodePools[2].osDiskType",
                                                       "aks-kueue:nodePools[2].osDiskSizeGb"]
    # Listed in the same update it is still refused (the state protects it); after an update that
    # only lists it, the change goes through.
    managed["aks-kueue:allowReplacement"] = ["nodePools.h100"]
    with pytest.raises(ProgramRefused):
        run(managed, previous=prod_deployed)
    unprotected = edited("prod", lambda c: c.update({"aks-kueue:allowReplacement": ["nodePools.h100"]}))
    step1 = json.loads(json.dumps(run(unprotected, previous=prod_deployed, preview=False).outputs))
    found = run(managed, previous=step1)
    assert pools(found)["h100"]["osDiskType"] == "Managed"
    # Replaced, the pool is new again: the pack requires the baseline of it.
    model = from_resources(policy_view(found)).model
    assert not next(p for p in model.pools if p.name == "h100").existing
