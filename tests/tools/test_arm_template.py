"""checkov's AKS checks on the prod stack's ARM shape (`tools/arm_template.py`).

Each check below is checkov's (bridgecrewio/checkov 3.3.30; ARM checks in checkov/arm/checks/resource/,
the Terraform-only ones in checkov/terraform/checks/resource/azure/, read here on the same
properties under their AKS API names): its id, the key it inspects and its logic, kept together.
prod must pass every one of them except those docs/security.md lists as not met, with the reason.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import pytest

from aks_kueue.preview.outcome import registration_json
from tests.conftest import ROOT, run_stack
from tools.arm_template import arm_template

CLUSTER = "Microsoft.ContainerService/managedClusters"
POOL = "Microsoft.ContainerService/managedClusters/agentPools"


def at(resource: dict, path: str) -> Any:
    """The value at a checkov key path (`properties/agentPoolProfiles/[0]/osDiskType`), or None."""
    value: Any = resource
    for part in path.split("/"):
        if part.startswith("[") and isinstance(value, list):
            index = int(part[1:-1])
            value = value[index] if index < len(value) else None
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


@dataclass(frozen=True)
class Check:
    id: str
    source: str                          # checkov's file
    resources: tuple[str, ...]           # the ARM types it scans
    key: str                             # the key it inspects
    passes: Callable[[dict], bool]


def _min_pods(resource: dict) -> bool:
    # AKSMaxPodsMinimum: properties.maxPods, else the first profile's maxPods; fails under 50 or unset.
    pods = at(resource, "properties/maxPods")
    if "agentPoolProfiles" in (resource.get("properties") or {}):
        pods = at(resource, "properties/agentPoolProfiles/[0]/maxPods") or pods
    return pods is not None and pods >= 50


def _pool_key(key: str) -> Callable[[dict], str]:
    return lambda resource: f"properties/agentPoolProfiles/[0]/{key}" if resource["type"] == CLUSTER \
        else f"properties/{key}"


ARM = "checkov/arm/checks/resource/"
TF = "checkov/terraform/checks/resource/azure/"
CHECKS = [
    Check("CKV_AZURE_4", ARM + "AKSLoggingEnabled.py", (CLUSTER,), "properties/addonProfiles/omsagent/enabled",
          lambda r: bool(at(r, "properties/addonProfiles/omsagent/enabled") or
                         at(r, "properties/addonProfiles/omsAgent/enabled"))),
    Check("CKV_AZURE_5", ARM + "AKSRbacEnabled.py", (CLUSTER,), "properties/enableRBAC",
          lambda r: str(at(r, "properties/enableRBAC")).lower() == "true"),
    Check("CKV_AZURE_6", ARM + "AKSApiServerAuthorizedIpRanges.py", (CLUSTER,),
          "properties/apiServerAccessProfile/authorizedIPRanges",
          lambda r: bool(at(r, "properties/apiServerAccessProfile/authorizedIPRanges"))),
    Check("CKV_AZURE_7", ARM + "AKSNetworkPolicy.py", (CLUSTER,), "properties/networkProfile/networkPolicy",
          lambda r: bool(at(r, "properties/networkProfile/networkPolicy"))),
    Check("CKV_AZURE_8", ARM + "AKSDashboardDisabled.py", (CLUSTER,), "properties/addonProfiles/kubeDashboard/enabled",
          lambda r: str(at(r, "properties/addonProfiles/kubeDashboard/enabled")).lower() == "false"),
    Check("CKV_AZURE_141", ARM + "AKSLocalAdminDisabled.py", (CLUSTER,), "properties/disableLocalAccounts",
          lambda r: at(r, "properties/disableLocalAccounts") is True),
    Check("CKV_AZURE_168", ARM + "AKSMaxPodsMinimum.py", (CLUSTER, POOL), "properties/agentPoolProfiles/maxPods",
          _min_pods),
    Check("CKV_AZURE_169", ARM + "AKSPoolTypeIsScaleSet.py", (CLUSTER,), "properties/agentPoolProfiles/[0]/type",
          lambda r: at(r, "properties/agentPoolProfiles/[0]/type") != "AvailabilitySet"),
    Check("CKV_AZURE_171", ARM + "AKSUpgradeChannel.py", (CLUSTER,), "properties/autoUpgradeProfile/upgradeChannel",
          lambda r: at(r, "properties/autoUpgradeProfile/upgradeChannel") not in (None, "none")),
    Check("CKV_AZURE_172", ARM + "AkSSecretStoreRotation.py", (CLUSTER,),
          "properties/addonProfiles/azureKeyvaultSecretsProvider/config/enableSecretRotation",
          lambda r: str(at(r, "properties/addonProfiles/azureKeyvaultSecretsProvider/config/enableSecretRotation"))
          .lower() == "true"),
    Check("CKV_AZURE_226", ARM + "AKSEphemeralOSDisks.py", (CLUSTER,), "properties/agentPoolProfiles/[0]/osDiskType",
          lambda r: at(r, "properties/agentPoolProfiles/[0]/osDiskType") == "Ephemeral"),
    Check("CKV_AZURE_227", ARM + "AKSEncryptionAtHostEnabled.py", (CLUSTER, POOL), "enableEncryptionAtHost",
          lambda r: at(r, _pool_key("enableEncryptionAtHost")(r)) is True),
    # Terraform-only checks of azurerm_kubernetes_cluster, on the ARM property each reads.
    Check("CKV_AZURE_115", TF + "AKSEnablesPrivateClusters.py", (CLUSTER,),
          "properties/apiServerAccessProfile/enablePrivateCluster",
          lambda r: at(r, "properties/apiServerAccessProfile/enablePrivateCluster") is True),
    Check("CKV_AZURE_116", TF + "AKSUsesAzurePoliciesAddon.py", (CLUSTER,), "properties/addonProfiles/azurepolicy",
          lambda r: bool(at(r, "properties/addonProfiles/azurepolicy/enabled"))),
    Check("CKV_AZURE_117", TF + "AKSUsesDiskEncryptionSet.py", (CLUSTER,), "properties/diskEncryptionSetID",
          lambda r: bool(at(r, "properties/diskEncryptionSetID"))),
    Check("CKV_AZURE_143", TF + "AKSNodePublicIpDisabled.py", (CLUSTER,),
          "properties/agentPoolProfiles/[0]/enableNodePublicIP",
          lambda r: at(r, "properties/agentPoolProfiles/[0]/enableNodePublicIP") is not True),
    Check("CKV_AZURE_170", TF + "AKSIsPaidSku.py", (CLUSTER,), "sku/tier", lambda r: at(r, "sku/tier") == "Standard"),
    Check("CKV_AZURE_232", TF + "AKSOnlyCriticalPodsOnSystemNodes.py", (CLUSTER,),
          "properties/agentPoolProfiles/[0]/nodeTaints",
          lambda r: "CriticalAddonsOnly=true:NoSchedule" in
          (at(r, "properties/agentPoolProfiles/[0]/nodeTaints") or [])),
    Check("CKV_AZURE_246", TF + "KubernetesClusterHTTPApplicationRouting.py", (CLUSTER,),
          "properties/addonProfiles/httpApplicationRouting/enabled",
          lambda r: at(r, "properties/addonProfiles/httpApplicationRouting/enabled") is not True),
]


@lru_cache(maxsize=None)
def prod_template() -> dict:
    return arm_template([registration_json(r) for r in run_stack("prod").registrations])


def readme_exceptions() -> set[str]:
    """The check ids docs/security.md lists as not met, each followed by its reason in parentheses."""
    text = (ROOT / "docs" / "security.md").read_text()
    paragraph = text.split("**checkov on prod.**", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"(CKV_AZURE_\d+) \(", paragraph.split("except:", 1)[1]))


def test_the_arm_shape_holds_the_cluster_and_its_pools():
    template = prod_template()
    assert [(r["type"], r["name"]) for r in template["resources"]] == [
        (CLUSTER, "aks-batch-prod"), (POOL, "aks-batch-prod/a100"), (POOL, "aks-batch-prod/cpu"),
        (POOL, "aks-batch-prod/h100")]
    cluster = template["resources"][0]
    assert cluster["location"] == "eastus" and "resourceGroupName" not in cluster["properties"]


def test_prod_passes_checkovs_aks_checks_but_the_documented_exceptions():
    failed = set()
    for check in CHECKS:
        for resource in prod_template()["resources"]:
            if resource["type"] in check.resources and not check.passes(resource):
                failed.add(check.id)
    assert failed == readme_exceptions() == {"CKV_AZURE_8", "CKV_AZURE_115", "CKV_AZURE_117", "CKV_AZURE_172"}


def test_every_prod_pool_has_an_ephemeral_os_disk_and_host_encryption():
    # CKV_AZURE_226 reads only the first profile; the baseline asks it of every pool.
    pools = [p for r in prod_template()["resources"] for p in (r["properties"].get("agentPoolProfiles") or
                                                                 [r["properties"]])]
    assert len(pools) == 4
    assert all(p["osDiskType"] == "Ephemeral" and p["enableEncryptionAtHost"] is True for p in pools)
    assert {p["vmSize"]: p["osDiskSizeGB"] for p in pools} == {
        "Standard_D4ds_v5": 128, "Standard_D16ds_v5": 128, "Standard_NC24ads_A100_v4": 64,
        "Standard_NC40ads_H100_v5": 128}


def test_a_check_fails_where_its_key_says_so():
    cluster = {"type": CLUSTER, "properties": {"agentPoolProfiles": [{"osDiskType": "Managed", "maxPods": 30}]}}
    by_id = {c.id: c for c in CHECKS}
    assert not by_id["CKV_AZURE_226"].passes(cluster) and not by_id["CKV_AZURE_168"].passes(cluster)
    assert by_id["CKV_AZURE_169"].passes(cluster)


@pytest.mark.skipif(shutil.which("checkov") is None, reason="checkov is not installed (pip install checkov)")
def test_checkov_itself_agrees(tmp_path):
    import json

    path = tmp_path / "prod.arm.json"
    path.write_text(json.dumps(prod_template()))
    done = subprocess.run(["checkov", "-f", str(path), "--framework", "arm", "-o", "json", "--skip-download"],
                          capture_output=True, text=True, timeout=300)
    failed = {c["check_id"] for c in json.loads(done.stdout)["results"]["failed_checks"]}
    assert failed == {"CKV_AZURE_8", "CKV_AZURE_172"}
