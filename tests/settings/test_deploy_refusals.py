"""What Azure, helm or Kueue refuses at deploy is refused at preview, with the key and the fix; what they accept is
not (issue 28: these passed green and failed red at `pulumi up`). Each refusal cites its source in
aks_kueue/aks/data/aks-limits.json or aks_kueue/versions.py."""

from __future__ import annotations

import pytest

from aks_kueue.settings import parse_settings
from tests.conftest import edited, filled_doc, flat, refusals


def cluster(**changes):
    def edit(c):
        for path, value in changes.items():
            section, key = path.split("__")
            c["aks-kueue:cluster"].setdefault(section, {})[key] = value
    return edit


def test_azure_network_policy_manager_with_kubenet_is_refused():
    (problem,) = refusals(edited("dev", cluster(network__plugin="kubenet", network__policy="azure")))
    assert problem.startswith("aks-kueue:cluster.network.policy: Azure Network Policy Manager runs with the Azure "
                              "CNI plugin only, and AKS refuses it with kubenet (use-network-policies:")
    assert problem.endswith("set policy: calico to keep kubenet, or plugin: azure")
    assert refusals(edited("dev", cluster(network__plugin="kubenet", network__policy="calico"))) == []


@pytest.mark.parametrize("node_os,refused", [("SecurityPatch", True), ("Unmanaged", True), ("NodeImage", False)])
def test_a_node_os_channel_beside_the_node_image_channel_is_refused(node_os, refused):
    found = refusals(edited("dev", cluster(security__upgradeChannel="node-image",
                                           security__nodeOsUpgradeChannel=node_os)))
    assert bool(found) is refused
    if refused:
        assert found == [f"aks-kueue:cluster.security.nodeOsUpgradeChannel: AKS fixes the node OS channel at NodeImage "
                         f"while upgradeChannel is node-image and refuses {node_os} beside it "
                         "(auto-upgrade-node-os-image, \"Node channel known limitations\"); set nodeOsUpgradeChannel: "
                         f"NodeImage, or an upgradeChannel such as patch to keep {node_os}"]


def test_autoscaler_durations_in_a_unit_aks_does_not_take_are_refused_with_the_value_in_its_unit():
    (problem,) = refusals(edited("dev", cluster(autoscalerProfile__maxNodeProvisionTime="1000h")))
    assert problem == ("aks-kueue:cluster.autoscalerProfile.maxNodeProvisionTime: '1000h' is refused by AKS, which "
                       "takes this value in whole minutes only, written like 15m (the AKS API, "
                       "ManagedClusterAutoScalerProfile): 1000h is 60000m")
    (problem,) = refusals(edited("dev", cluster(autoscalerProfile__scaleDownDelayAfterDelete="2m")))
    assert problem.endswith("in whole seconds only, written like 15s (the AKS API, ManagedClusterAutoScalerProfile): "
                            "2m is 120s")
    assert refusals(edited("dev", cluster(autoscalerProfile__maxNodeProvisionTime="60000m",
                                          autoscalerProfile__newPodScaleUpDelay="30s"))) == []


def test_a_node_resource_group_name_over_80_characters_is_refused():
    def long(c):
        c["aks-kueue:resourceGroupName"] = "rg-" + "x" * 60
    (problem,) = refusals(edited("dev", long))
    name = f"MC_rg-{'x' * 60}_{edited('dev', long)['aks-kueue:cluster']['name']}_eastus"
    assert problem.startswith(f"aks-kueue:resourceGroupName: AKS names the cluster's node resource group {name} "
                              f"({len(name)} characters) and refuses a name over 80")
    assert problem.endswith(f"by {len(name) - 80} characters together")


@pytest.mark.parametrize("version,refused", [("0.19.99", True), ("0.19.8", True), ("0.19.0", False),
                                             ("0.19.7", False)])
def test_a_chart_version_kueue_never_published_is_refused(version, refused):
    def helm(c):
        c["aks-kueue:kueue"]["version"] = version
    found = refusals(edited("dev", helm))
    assert bool(found) is refused
    if refused:
        assert found[0].startswith(f"aks-kueue:kueue.version: chart {version} was never published, so helm cannot "
                                   "pull it: the Kueue 0.19 chart exists as 0.19.0, 0.19.1")


def test_the_chart_default_is_the_latest_patch_with_the_quota_bypass_fixes():
    from aks_kueue.versions import KUEUE_CHART_RELEASES, KUEUE_CHART_VERSION
    assert KUEUE_CHART_VERSION == KUEUE_CHART_RELEASES[-1] == "0.19.7"

    def unpinned(c):
        del c["aks-kueue:kueue"]["version"]
    assert parse_settings(flat(edited("dev", unpinned))).kueue.chart_version == "0.19.7"


def test_typos_in_two_sections_are_reported_in_one_run():
    def typos(c):
        pool = c["aks-kueue:nodePools"][0]
        pool["maxCout"] = pool.pop("maxCount")
        spec = c["aks-kueue:queues"]["clusterQueues"][0]["spec"]
        spec["cohortNmae"] = "x"
    found = refusals(edited("dev", typos))
    assert "aks-kueue:nodePools[0].maxCout: unknown key; did you mean 'maxCount'?" in found
    assert any(p.startswith("aks-kueue:queues.clusterQueues[0].spec.cohortNmae: unknown field \"spec.cohortNmae\"")
               and "did you mean 'cohortName'?" in p for p in found)


def test_a_queue_typo_alone_is_reported_once_by_the_judge():
    def typo(c):
        c["aks-kueue:queues"]["clusterQueues"][0]["spec"]["cohortNmae"] = "x"
    found = refusals(edited("dev", typo))
    assert sum("cohortNmae" in p for p in found) == 1


def test_a_cpu_size_on_a_pool_written_as_a_gpu_pool_says_the_size_first():
    def cpu_size(c):
        c["aks-kueue:nodePools"][1]["vmSize"] = "Standard_D16ds_v5"
    (problem,) = [p for p in refusals(edited("dev", cpu_size)) if "nodePools[1]" in p]
    assert problem.startswith("aks-kueue:nodePools[1].vmSize: Standard_D16ds_v5 has no GPU, but the pool sets "
                              "gpuDriver as a GPU pool does; pick a GPU size")


def test_what_azure_and_kueue_accept_is_not_refused():
    """The rest of the review's list: a Cohort named like a ClusterQueue (Kueue v0.19.2 keeps them in separate maps,
    pkg/cache/hierarchy/manager.go), a maintenance startDate in the past (the API: the window is active)."""
    def cohort_like_queue(c):
        c["aks-kueue:queues"]["cohorts"].append({"name": "team-a", "spec": {}})

    def past_start(c):
        c["aks-kueue:cluster"]["maintenance"]["autoUpgrade"]["startDate"] = "2020-01-01"
    for edit in (cohort_like_queue, past_start):
        config = filled_doc("prod")
        edit(config)
        assert refusals(config) == []
