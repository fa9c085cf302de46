"""Settings: every contract key parses, and every bad input gets a message naming its key path."""

from __future__ import annotations

from datetime import date

import pytest

from aks_kueue.kueue import catalog as kueue_catalog
from aks_kueue.settings import SettingsError, parse_settings
from aks_kueue.judge import judge
from tests.conftest import edited, flat, model_of, stack_doc


def problems(config: dict) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        parse_settings(flat(config))
    return [str(p) for p in caught.value.problems]


def only_problem(config: dict) -> str:
    found = problems(config)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_stacks_parse(stack):
    settings = parse_settings(flat(stack_doc(stack)))
    assert settings.cluster.kubernetes_version == "1.35"
    assert settings.node_pools


def test_defaults_follow_the_security_baseline():
    settings = parse_settings(flat(stack_doc("dev")))
    sec = settings.cluster.security
    assert (sec.local_accounts_disabled, sec.azure_rbac, sec.workload_identity) == (True, True, True)
    assert sec.upgrade_channel == "patch" and sec.node_os_upgrade_channel == "NodeImage"
    net = settings.cluster.network
    assert (net.plugin, net.plugin_mode, net.dataplane, net.policy) == ("azure", "overlay", "cilium", "cilium")


def test_dev_gpu_pool_needs_the_device_plugin_and_prod_has_two_gpu_types():
    dev = parse_settings(flat(stack_doc("dev")))
    assert [p.name for p in dev.node_pools if p.needs_device_plugin] == ["t4"]
    prod = parse_settings(flat(stack_doc("prod")))
    gpu_sizes = {p.vm_size for p in prod.node_pools if p.gpu_vendor}
    assert len(gpu_sizes) == 2


def test_wrong_type_names_the_key():
    def edit(c):
        c["aks-kueue:nodePools"][0]["maxCount"] = "lots"
    assert only_problem(edited("dev", edit)).startswith("aks-kueue:nodePools[0].maxCount: 'lots' is not valid")


def test_unknown_top_level_key_suggests_the_right_one():
    def edit(c):
        c["aks-kueue:nodePool"] = []
    assert only_problem(edited("dev", edit)) == "aks-kueue:nodePool: unknown key; did you mean 'nodePools'?"


def test_unknown_nested_key_suggests_the_right_one():
    def edit(c):
        c["aks-kueue:nodePools"][1]["maxCont"] = c["aks-kueue:nodePools"][1]["maxCount"]
    found = problems(edited("dev", edit))
    assert "aks-kueue:nodePools[1].maxCont: unknown key; did you mean 'maxCount'?" in found


def test_unknown_key_without_a_close_match_lists_the_known_ones():
    def edit(c):
        c["aks-kueue:cluster"]["security"]["zzz"] = True
    message = only_problem(edited("dev", edit))
    assert message.startswith("aks-kueue:cluster.security.zzz: unknown key; known keys here:")
    assert "localAccountsDisabled" in message


@pytest.mark.parametrize("version,fragment", [
    ("1.33", "too old; this program needs 1.34 or newer"),
    ("1.29.4", "too old"),
    ("1.34.x", "is not a Kubernetes version"),
    ("latest", "is not a Kubernetes version"),
])
def test_bad_kubernetes_versions(version, fragment):
    def edit(c):
        c["aks-kueue:cluster"]["kubernetesVersion"] = version
    message = only_problem(edited("dev", edit))
    assert message.startswith("aks-kueue:cluster.kubernetesVersion: ") and fragment in message


@pytest.mark.parametrize("version", ["1.34", "1.34.6", "1.35", "1.36.1"])
def test_supported_kubernetes_versions(version):
    def edit(c):
        c["aks-kueue:cluster"]["kubernetesVersion"] = version
        if version.count(".") == 2:  # a pinned patch needs a channel that keeps it (tests/day2)
            c["aks-kueue:cluster"].setdefault("security", {})["upgradeChannel"] = "node-image"
    settings = parse_settings(flat(edited("dev", edit)), today=date(2026, 9, 1))
    assert settings.cluster.kubernetes_version == version


def test_min_above_max():
    def edit(c):
        c["aks-kueue:nodePools"][1]["minCount"] = 5
    assert only_problem(edited("dev", edit)) == (
        "aks-kueue:nodePools[1].minCount: minCount 5 is above maxCount 2; the autoscaler needs minCount <= maxCount")


def test_max_count_above_aks_limit():
    def edit(c):
        c["aks-kueue:nodePools"][0]["maxCount"] = 1001
    assert only_problem(edited("dev", edit)).startswith("aks-kueue:nodePools[0].maxCount: 1001 is not valid")


@pytest.mark.parametrize("name", ["GPU", "1gpu", "gpu-pool", "averyveryverylongname", ""])
def test_bad_pool_names(name):
    def edit(c):
        c["aks-kueue:nodePools"][0]["name"] = name
    message = only_problem(edited("dev", edit))
    assert message.startswith("aks-kueue:nodePools[0].name: ") and "^[a-z][a-z0-9]{0,11}$" in message


def test_duplicate_pool_names():
    def edit(c):
        c["aks-kueue:nodePools"][1]["name"] = "cpu"
    assert "used by nodePools[0] and nodePools[1]" in only_problem(edited("dev", edit))


def test_user_pool_cannot_be_called_system():
    def edit(c):
        c["aks-kueue:nodePools"][0]["name"] = "system"
    assert only_problem(edited("dev", edit)).startswith("aks-kueue:nodePools[0].name: 'system' is the system pool")


@pytest.mark.parametrize("key,value", [("featureGates", {"PartialAdmission": True}),
                                       ("values", {"controllerManager": {"replicas": 2}})])
def test_helm_only_keys_in_managed_mode(key, value):
    def edit(c):
        c["aks-kueue:kueue"][key] = value
    assert only_problem(edited("prod", edit)).startswith(f"aks-kueue:kueue.{key}: {key} applies only to install: helm")


def test_release_train_is_managed_only():
    def edit(c):
        c["aks-kueue:kueue"]["releaseTrain"] = "stable"
    assert only_problem(edited("dev", edit)).startswith("aks-kueue:kueue.releaseTrain: releaseTrain applies only")


def test_version_and_release_train_together():
    def edit(c):
        c["aks-kueue:kueue"]["releaseTrain"] = "preview"
    assert "not both" in only_problem(edited("prod", edit))


def test_managed_integrations_are_checked_against_the_extension():
    def edit(c):
        c["aks-kueue:kueue"]["integrations"] = ["batch/job", "leaderworkerset.x-k8s.io/leaderworkerset"]
    message = only_problem(edited("prod", edit))
    assert message.startswith("aks-kueue:kueue.integrations[1]: 'leaderworkerset.x-k8s.io/leaderworkerset' "
                              "is not supported by the AKS managed extension")


def test_unknown_gate_suggests_spelling():
    def edit(c):
        c["aks-kueue:kueue"]["featureGates"] = {"TopologyAwareSchedulng": True}
    assert only_problem(edited("dev", edit)) == (
        "aks-kueue:kueue.featureGates.TopologyAwareSchedulng: unrecognized feature gate \"TopologyAwareSchedulng\": "
        "Kueue 0.19 would not start; did you mean 'TopologyAwareScheduling'?")


def test_locked_gate_cannot_be_turned_off():
    def edit(c):
        c["aks-kueue:kueue"]["featureGates"] = {"HierarchicalCohorts": False}
    assert "locked to true" in only_problem(edited("dev", edit))


def test_turning_off_tas_alone_would_stop_kueue():
    def edit(c):
        c["aks-kueue:kueue"]["featureGates"] = {"TopologyAwareScheduling": False}
    message = only_problem(edited("dev", edit))
    assert message.startswith("aks-kueue:kueue.featureGates.TopologyAwareScheduling: turning TopologyAwareScheduling "
                              "off leaves TASProfileMixed, ")
    assert "so Kueue would not start; also set each of them to false" in message


def test_unknown_framework():
    def edit(c):
        c["aks-kueue:kueue"]["integrations"] = ["batch/jobs"]
    assert only_problem(edited("dev", edit)).startswith(
        "aks-kueue:kueue.integrations[0]: 'batch/jobs' is not a Kueue integration; did you mean 'batch/job'?")


def test_spark_needs_its_gate():
    def edit(c):
        c["aks-kueue:kueue"]["integrations"] = ["sparkoperator.k8s.io/sparkapplication"]
    assert "needs the feature gate SparkApplicationIntegration" in only_problem(edited("dev", edit))


def test_gates_in_both_chart_places_are_refused():
    def edit(c):
        c["aks-kueue:kueue"]["values"] = {"controllerManager": {"featureGates": []}}
    assert only_problem(edited("dev", edit)).startswith(
        "aks-kueue:kueue.values.controllerManager.featureGates: feature gates are also set in "
        "aks-kueue:kueue.featureGates")


def test_unknown_chart_value():
    def edit(c):
        c["aks-kueue:kueue"]["values"] = {"controllerManger": {}}
    assert "did you mean 'controllerManager'" in only_problem(edited("dev", edit))


def test_chart_version_outside_the_pinned_series():
    def edit(c):
        c["aks-kueue:kueue"]["version"] = "0.18.6"
    assert only_problem(edited("dev", edit)).startswith("aks-kueue:kueue.version: chart 0.18.6 is not supported")


@pytest.mark.parametrize("taint", ["sku=gpu", "sku=gpu:Never", "=gpu:NoSchedule"])
def test_bad_taints(taint):
    def edit(c):
        c["aks-kueue:nodePools"][1]["taints"] = [taint]
    message = only_problem(edited("dev", edit))
    assert message.startswith("aks-kueue:nodePools[1].taints: ") and "key=value:Effect" in message


def test_reserved_label_prefix():
    def edit(c):
        c["aks-kueue:nodePools"][1]["labels"] = {"kubernetes.azure.com/agentpool": "x"}
    assert "prefix AKS reserves" in only_problem(edited("dev", edit))


def test_unknown_vm_size_needs_explicit_capacity():
    def edit(c):
        c["aks-kueue:nodePools"][0]["vmSize"] = "Standard_X99_v9"
    assert only_problem(edited("dev", edit)).startswith(
        "aks-kueue:nodePools[0].vmSize: 'Standard_X99_v9' is not in the VM size catalog")

    def with_capacity(c):
        edit(c)
        c["aks-kueue:nodePools"][0]["capacity"] = {"cpu": 8, "memory": "32Gi"}
    assert parse_settings(flat(edited("dev", with_capacity))).node_pools[0].capacity.cpu == 8


def test_gpu_driver_on_a_cpu_size():
    def edit(c):
        c["aks-kueue:nodePools"][0]["gpuDriver"] = "Install"
    # Issue 28: the size is said to be wrong first.
    assert only_problem(edited("dev", edit)).startswith("aks-kueue:nodePools[0].vmSize: Standard_D8s_v5 has no GPU, "
                                                        "but the pool sets gpuDriver as a GPU pool does")


def test_mig_only_on_capable_sizes():
    def edit(c):
        c["aks-kueue:nodePools"][1]["gpuInstanceProfile"] = "MIG1g"
    assert "does not support MIG" in only_problem(edited("dev", edit))


def test_amd_pools_get_no_driver_from_aks():
    def edit(c):
        c["aks-kueue:nodePools"][1].update(vmSize="Standard_ND96isr_MI300X_v5", gpuDriver="Install")
    assert "requires gpuDriver None" in only_problem(edited("dev", edit))


def test_spot_pools_carry_the_spot_taint():
    def edit(c):
        c["aks-kueue:nodePools"][0]["spot"] = True
    pool = parse_settings(flat(edited("dev", edit))).node_pools[0]
    assert pool.node_taints == ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]


def test_node_auto_provisioning_excludes_autoscaled_pools():
    def edit(c):
        c["aks-kueue:cluster"]["nodeProvisioning"] = "Auto"
    assert only_problem(edited("dev", edit)).startswith("aks-kueue:nodePools: node auto-provisioning")


def test_managed_kueue_needs_the_cluster_autoscaler():
    def edit(c):
        c["aks-kueue:cluster"]["sku"] = "Automatic"
        c["aks-kueue:nodePools"] = []
    assert only_problem(edited("prod", edit)).startswith("aks-kueue:kueue: the managed Kueue extension supports")


def test_private_cluster_with_authorized_ranges():
    def edit(c):
        c["aks-kueue:cluster"]["security"].update(privateCluster=True, deployerInClusterNetwork=True)
    assert only_problem(edited("prod", edit)).startswith(
        "aks-kueue:cluster.security.apiServerAuthorizedIpRanges: AKS does not support authorized IP ranges on a "
        "private cluster")


def test_dns_service_ip_outside_service_cidr():
    def edit(c):
        c["aks-kueue:cluster"]["network"]["dnsServiceIp"] = "10.1.0.10"
    assert only_problem(edited("prod", edit)).startswith(
        "aks-kueue:cluster.network.dnsServiceIp: 10.1.0.10 is outside the service range 10.0.0.0/16")


def test_bad_autoscaler_duration():
    def edit(c):
        c["aks-kueue:cluster"]["autoscalerProfile"]["scaleDownUnneededTime"] = "ten minutes"
    assert only_problem(edited("dev", edit)).startswith("aks-kueue:cluster.autoscalerProfile.scaleDownUnneededTime")


def test_missing_location_and_required_keys_reported_together():
    def edit(c):
        del c["azure-native:location"]
        del c["aks-kueue:kueue"]
        c["aks-kueue:nodePools"][0]["minCount"] = -1
    found = problems(edited("dev", edit))
    assert found[0].startswith("azure-native:location: the Azure region is required")
    assert "aks-kueue:kueue: is required but missing; add it (see the stack-config contract)" in found
    assert any(p.startswith("aks-kueue:nodePools[0].minCount:") for p in found)


def test_object_key_given_as_text():
    def edit(c):
        c["aks-kueue:cluster"] = "aks-batch-dev"
    assert only_problem(edited("dev", edit)).startswith("aks-kueue:cluster: 'aks-batch-dev' is not valid")


def test_region_outside_the_managed_extension_list_warns():
    def edit(c):
        c["azure-native:location"] = "northeurope"
    found = judge(model_of(edited("prod", edit))).findings
    assert any(f.kind == "managed-region" and "northeurope" in f.message for f in found)
    assert not any(f.kind == "managed-region" for f in judge(model_of(stack_doc("prod"))).findings)


def test_placeholders_are_flagged_until_replaced():
    def placeholders(config):
        found = judge(model_of(config), today=date(2026, 9, 1)).findings
        return [str(f) for f in found if f.kind == "placeholder-value"]

    found = placeholders(stack_doc("prod"))
    assert found[0].startswith("aks-kueue:cluster.security.apiServerAuthorizedIpRanges[0]: 203.0.113.0/24 "
                               "is a documentation range")
    assert found[1].startswith("aks-kueue:cluster.security.entraAdminGroupObjectIds[0]: "
                               "00000000-0000-0000-0000-000000000000 is a placeholder")
    assert [f.split(":")[1] for f in found[2:]] == ["queues.localQueues[0].submitterGroups[0]",
                                                     "queues.localQueues[1].submitterGroups[0]"]

    def real(c):
        c["aks-kueue:cluster"]["security"]["apiServerAuthorizedIpRanges"] = ["52.1.2.0/24"]
        c["aks-kueue:cluster"]["security"]["entraAdminGroupObjectIds"] = ["7f3e1a52-0c9d-4b1e-9f7a-2b6c8d4e5f60"]
        for queue, group in zip(c["aks-kueue:queues"]["localQueues"], ["1c7e0b0d-5b0e-4c55-9a57-0f2f1d3c4b5a",
                                                                       "a04f2f0e-8d1b-4f7e-b7c4-6e5d4c3b2a19"]):
            queue["submitterGroups"] = [group]
    assert placeholders(edited("prod", real)) == []


def test_feature_gate_catalog_has_every_v0_19_2_gate():
    assert len(kueue_catalog.FEATURE_GATES) == 89
    assert len(kueue_catalog.FRAMEWORKS) == 18
    for gate, needs in kueue_catalog.GATE_REQUIREMENTS.items():
        assert gate in kueue_catalog.FEATURE_GATES and all(n in kueue_catalog.FEATURE_GATES for n in needs)


def test_resource_group_name_rules():
    def edit(c):
        c["aks-kueue:resourceGroupName"] = "rg batch!"
    assert only_problem(edited("dev", edit)).startswith("aks-kueue:resourceGroupName: 'rg batch!' is not a valid")


def test_system_pool_rejects_burstable_and_gpu_sizes():
    def burstable(c):
        c["aks-kueue:cluster"]["systemPool"]["vmSize"] = "Standard_B4ms"
    assert "B-series" in only_problem(edited("dev", burstable))

    def gpu(c):
        c["aks-kueue:cluster"]["systemPool"]["vmSize"] = "Standard_NC24ads_A100_v4"
    assert only_problem(edited("dev", gpu)).startswith("aks-kueue:cluster.systemPool.vmSize: Standard_NC24ads_A100_v4 "
                                                      "is a GPU size")


@pytest.mark.parametrize("written, read, quoted", [(1.30, "1.3", '"1.30"'), (1.4, "1.4", '"1.40"'),
                                                   (1.340, "1.34", '"1.34"')])
def test_an_unquoted_version_that_yaml_read_as_a_number_says_to_quote_it(written, read, quoted):
    """Reported: `kubernetesVersion: 1.30` (unquoted) was read as 1.3 and reported as "Kubernetes 1.3 is too old"."""
    def edit(c):
        c["aks-kueue:cluster"]["kubernetesVersion"] = written
    if read == "1.34":  # a number that still reads as a version a pool can run is taken as that version
        assert parse_settings(flat(edited("dev", edit)), today=date(2026, 9, 1)).cluster.kubernetes_version == "1.34"
        return
    message = only_problem(edited("dev", edit))
    assert message.startswith(f"aks-kueue:cluster.kubernetesVersion: YAML read the unquoted version as the number "
                              f"{read}")
    assert f"write it quoted: kubernetesVersion: {quoted}" in message and "too old" not in message.split(";")[0]


def test_the_unquoted_version_from_a_stack_file_end_to_end(tmp_path):
    import json

    import yaml
    from typer.testing import CliRunner

    from aks_kueue.cli import app
    from tests.conftest import ROOT

    text = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
    assert "kubernetesVersion: '1.35'" in text or 'kubernetesVersion: "1.35"' in text
    stack = tmp_path / "Pulumi.unquoted.yaml"
    stack.write_text(text.replace("kubernetesVersion: '1.35'", "kubernetesVersion: 1.30")
                     .replace('kubernetesVersion: "1.35"', "kubernetesVersion: 1.30"))
    assert yaml.safe_load(stack.read_text())["config"]["aks-kueue:cluster"]["kubernetesVersion"] == 1.3
    done = CliRunner().invoke(app, ["preview", "--config", str(stack), "--json"])
    [error] = json.loads(done.stdout)["errors"]
    assert done.exit_code == 2 and error["key"] == "aks-kueue:cluster.kubernetesVersion"
    assert 'write it quoted: kubernetesVersion: "1.30"' in error["message"]


def test_a_misspelt_vm_size_gets_one_suggestion():
    """Reported: no "did you mean" for `Standard_NC40ads_H100v5` (keys, integrations and gates had one)."""
    def pool(c):
        c["aks-kueue:nodePools"][1]["vmSize"] = "Standard_NC40ads_H100v5"
    message = only_problem(edited("dev", pool))
    assert message.startswith("aks-kueue:nodePools[1].vmSize: 'Standard_NC40ads_H100v5' is not in the VM size catalog; "
                              "did you mean 'Standard_NC40ads_H100_v5'?")

    def system(c):
        c["aks-kueue:cluster"]["systemPool"]["vmSize"] = "Standard_D4sv5"
    assert "; did you mean 'Standard_D4s_v5'?" in only_problem(edited("dev", system))
