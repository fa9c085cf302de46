"""The whole program under Pulumi's mock runtime, for both install modes."""

from __future__ import annotations

import pytest
import yaml

from aks_kueue.preview.run import ProgramError
from aks_kueue.versions import KUEUE_CHART_REPOSITORY, KUEUE_CHART_VERSION
from tests.conftest import edited, run_config, run_stack, stack_doc

RG = "azure-native:resources:ResourceGroup"
CLUSTER = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
EXTENSION = "azure-native:kubernetesconfiguration:Extension"
RELEASE = "kubernetes:helm.sh/v3:Release"
DAEMONSET = "kubernetes:apps/v1:DaemonSet"
K8S_PROVIDER = "pulumi:providers:kubernetes"
INSTALLERS = {EXTENSION, RELEASE}


def kueue_installers(run):
    """The Extension or the Kueue chart's Release (other charts, such as DCGM's, are not Kueue)."""
    return [r for r in run.registrations
            if r.type == EXTENSION or (r.type == RELEASE and r.inputs["chart"] == KUEUE_CHART_REPOSITORY)]


@pytest.fixture(scope="module")
def dev():
    return run_stack("dev")


@pytest.fixture(scope="module")
def prod():
    return run_stack("prod")


def one(run, type_token):
    found = run.of_type(type_token)
    assert len(found) == 1, [r.name for r in found]
    return found[0]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_inventory(stack, request):
    run = request.getfixturevalue(stack)
    config = stack_doc(stack)
    assert one(run, RG).inputs["resourceGroupName"] == config["aks-kueue:resourceGroupName"]
    cluster = one(run, CLUSTER).inputs
    major, minor = (int(x) for x in cluster["kubernetesVersion"].split(".")[:2])
    assert (major, minor) >= (1, 34)
    pools = {p.inputs["agentPoolName"]: p.inputs for p in run.of_type(POOL)}
    names = [p["name"] for p in config["aks-kueue:nodePools"]]
    assert sorted(pools) == sorted(names) and len(run.of_type(POOL)) == len(names)
    for wanted in config["aks-kueue:nodePools"]:
        got = pools[wanted["name"]]
        assert got["enableAutoScaling"] is True
        assert (got["minCount"], got["maxCount"]) == (wanted["minCount"], wanted["maxCount"])
        assert got.get("nodeTaints", []) == wanted.get("taints", [])
        assert got.get("nodeLabels", {}) == wanted.get("labels", {})
        assert got["vmSize"] == wanted["vmSize"] and got["mode"] == "User"
    assert len(kueue_installers(run)) == 1


def test_prod_installs_the_managed_extension(prod):
    extension = one(prod, EXTENSION).inputs
    assert extension["extensionType"] == "microsoft.kueue"
    assert extension["scope"] == {"cluster": {"releaseNamespace": "kueue-system"}}
    assert extension["version"] == "0.19.6-aks.0.4.4" and extension["autoUpgradeMinorVersion"] is False
    # The SDK always sends a train (default "Stable"); ARM reads it only with auto-upgrade on.
    assert extension.get("releaseTrain") != "preview"
    assert prod.outputs["kueue"]["installMethod"] == "managed"


def test_managed_without_version_follows_the_preview_train():
    def edit(c):
        del c["aks-kueue:kueue"]["version"]
    extension = one(run_config(edited("prod", edit)), EXTENSION).inputs
    assert extension["releaseTrain"] == "preview" and extension["autoUpgradeMinorVersion"] is True
    assert "version" not in extension


def test_dev_installs_the_helm_chart_with_gates_and_frameworks(dev):
    release = one(dev, RELEASE).inputs
    assert release["chart"] == KUEUE_CHART_REPOSITORY and release["version"] == KUEUE_CHART_VERSION
    assert release["namespace"] == "kueue-system" and release["createNamespace"] is True
    values = release["values"]
    # In the order the program is handed the map: the Pulumi CLI writes config maps as Go's
    # encoding/json does, keys sorted.
    assert values["controllerManager"]["featureGates"] == [
        {"name": "LocalQueueMetrics", "enabled": True}, {"name": "TopologyAwareScheduling", "enabled": True}]
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2" and config["kind"] == "Configuration"
    assert config["integrations"]["frameworks"] == stack_doc("dev")["aks-kueue:kueue"]["integrations"]
    assert "featureGates" not in config
    assert values["controllerManager"]["replicas"] == 1
    assert dev.outputs["kueue"]["installMethod"] == "helm" and dev.outputs["kueue"]["namespace"] == "kueue-system"


def _without_installer(run):
    return {(r.type, r.name): r.inputs for r in run.registrations
            if r.type not in INSTALLERS and r.type != "aksKueue:index:KueueInstall"}


@pytest.mark.parametrize("stack,other", [("prod", "helm"), ("dev", "managed")])
def test_switching_install_switches_only_the_installer(stack, other, request):
    def edit(c):
        kueue = c["aks-kueue:kueue"]
        c["aks-kueue:kueue"] = {"install": other}
        if other == "helm":
            c["aks-kueue:kueue"]["integrations"] = kueue.get("integrations")
    before = request.getfixturevalue(stack)
    after = run_config(edited(stack, edit), stack=stack)
    assert _without_installer(before) == _without_installer(after)
    wanted = RELEASE if other == "helm" else EXTENSION
    assert [r.type for r in kueue_installers(after)] == [wanted]


def test_device_plugin_only_for_nvidia_pools_with_the_driver(dev, prod):
    daemonset = one(dev, DAEMONSET).inputs
    pod = daemonset["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == ["t4"]
    assert {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"} in pod["tolerations"]
    assert daemonset["metadata"]["namespace"] == "kube-system"
    prod_terms = one(prod, DAEMONSET).inputs["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
    assert prod_terms["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0][
        "matchExpressions"][0]["values"] == ["a100", "h100"]

    def no_driver(c):
        c["aks-kueue:nodePools"][1]["gpuDriver"] = "None"
    assert run_config(edited("dev", no_driver)).of_type(DAEMONSET) == []


def test_gpu_pools_get_the_driver_profile(prod):
    pools = {p.inputs["agentPoolName"]: p.inputs for p in prod.of_type(POOL)}
    assert pools["a100"]["gpuProfile"] == {"driver": "Install"}
    assert "gpuProfile" not in pools["cpu"]


def test_security_baseline_on_the_cluster(prod):
    cluster = one(prod, CLUSTER).inputs
    assert cluster["disableLocalAccounts"] is True and cluster["enableRBAC"] is True
    assert cluster["aadProfile"]["managed"] is True and cluster["aadProfile"]["enableAzureRBAC"] is True
    assert cluster["oidcIssuerProfile"] == {"enabled": True}
    assert cluster["securityProfile"]["workloadIdentity"] == {"enabled": True}
    assert cluster["apiServerAccessProfile"]["authorizedIPRanges"] == ["203.0.113.0/24"]
    assert cluster["networkProfile"]["networkPolicy"] == "cilium"
    assert cluster["autoUpgradeProfile"] == {"upgradeChannel": "patch", "nodeOSUpgradeChannel": "SecurityPatch"}
    system = cluster["agentPoolProfiles"][0]
    assert system["mode"] == "System" and system["nodeTaints"] == ["CriticalAddonsOnly=true:NoSchedule"]
    assert system["enableEncryptionAtHost"] is True
    assert cluster["autoScalerProfile"] == {"expander": "least-waste", "scaleDownUnneededTime": "10m",
                                            "maxNodeProvisionTime": "15m"}


def _urn(run, type_token):
    return one(run, type_token).urn


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_dependency_ordering(stack, request):
    run = request.getfixturevalue(stack)
    cluster = _urn(run, CLUSTER)
    assert _urn(run, RG) in one(run, CLUSTER).depends_on
    for pool in run.of_type(POOL):
        assert cluster in pool.depends_on
    provider = one(run, K8S_PROVIDER)
    assert cluster in provider.depends_on
    for daemonset in run.of_type(DAEMONSET):
        assert daemonset.provider == provider.urn
        gpu_pools = {p.urn for p in run.of_type(POOL) if "gpuProfile" in p.inputs}
        assert gpu_pools <= set(daemonset.depends_on)
    installer = kueue_installers(run)[0]
    if installer.type == RELEASE:
        assert installer.provider == provider.urn
    else:
        assert {p.urn for p in run.of_type(POOL)} <= set(installer.depends_on)
    # Every child names its component as parent, so nothing floats at the stack root.
    components = {r.urn for r in run.registrations if r.type.startswith("aksKueue:")}
    assert all(r.parent in components for r in run.registrations if not r.type.startswith("aksKueue:"))


@pytest.mark.parametrize("preview", [True, False])
def test_kubeconfig_is_secret(preview):
    run = run_stack("prod", preview=preview)
    assert run.outputs["kubeconfig"] == "[secret]" and "kubeconfig" in run.secret_outputs
    provider = one(run, K8S_PROVIDER)
    assert "kubeconfig" in provider.secret_paths
    creds = "azure-native:containerservice:listManagedClusterUserCredentials"
    # A first preview cannot fetch credentials of a cluster that does not exist yet.
    assert (creds in run.calls) is (not preview)


def test_entra_kubeconfig_logs_in_with_the_azure_cli():
    from components.cluster.kubeconfig import use_azure_cli_login
    from aks_kueue.preview.mocks import fake_kubeconfig

    converted = yaml.safe_load(use_azure_cli_login(fake_kubeconfig(exec_login=True)))
    args = converted["users"][0]["user"]["exec"]["args"]
    assert args[args.index("--login") + 1] == "azurecli" and "devicecode" not in args


def test_local_accounts_use_admin_credentials_and_no_role_assignment():
    def edit(c):
        c["aks-kueue:cluster"]["security"]["localAccountsDisabled"] = False
    run = run_config(edited("dev", edit), preview=False)
    assert "azure-native:containerservice:listManagedClusterAdminCredentials" in run.calls
    assert run.of_type("azure-native:authorization:RoleAssignment") == []


def test_bad_config_registers_nothing():
    def edit(c):
        c["aks-kueue:nodePools"][0]["minCount"] = 9
    with pytest.raises(ProgramError) as caught:
        run_config(edited("dev", edit))
    assert "aks-kueue:nodePools[0].minCount" in str(caught.value)
    # The next run in this process starts clean, and the failed one left nothing behind.
    assert run_stack("dev").registrations


def test_admin_groups_get_the_cluster_admin_role(prod):
    grants = [g for g in prod.of_type("azure-native:authorization:RoleAssignment") if g.parent.endswith("::main")]
    assert [(g.inputs["principalId"], g.inputs["principalType"]) for g in grants] == [
        ("00000000-0000-0000-0000-000000000000", "Group")]
    assert grants[0].inputs["roleDefinitionId"].endswith("/b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b") or \
        grants[0].inputs["roleDefinitionId"] == "[unknown]"


@pytest.mark.parametrize("client_id,principal_type", [(None, "User"), ("app-id", "ServicePrincipal")])
def test_without_groups_the_deployer_gets_it_with_the_right_principal_type(monkeypatch, client_id, principal_type):
    if client_id:
        monkeypatch.setenv("ARM_CLIENT_ID", client_id)
    else:
        monkeypatch.delenv("ARM_CLIENT_ID", raising=False)
    grants = run_stack("dev", preview=False).of_type("azure-native:authorization:RoleAssignment")
    assert len(grants) == 1 and grants[0].inputs["principalType"] == principal_type
    assert grants[0].inputs["principalId"] == "11111111-1111-1111-1111-111111111111"
