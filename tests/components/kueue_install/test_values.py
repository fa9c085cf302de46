"""Helm values and the device plugin manifest, checked against the chart and Kubernetes 1.34."""

from __future__ import annotations

import pytest
import yaml

from aks_kueue.kueue import catalog as kueue_catalog
from aks_kueue.aks.device_plugin import daemonset, device_plugin_groups
from aks_kueue.k8s.merge import deep_merge
from components.kueue_install.values import helm_values, manager_configuration
from aks_kueue.settings import SettingsError, parse_settings
from aks_kueue.settings.kueue import Kueue
from tests.conftest import REFERENCE, flat, model_of, needs_shared, stack_doc


def _key_paths(value, prefix=()):
    if isinstance(value, dict):
        for key, child in value.items():
            yield prefix + (key,)
            yield from _key_paths(child, prefix + (key,))


def _chart_defaults():
    return yaml.safe_load((REFERENCE / "kueue-chart-values.yaml").read_text())


@needs_shared()
def test_every_rendered_key_exists_in_the_chart():
    chart = _chart_defaults()
    rendered = helm_values(Kueue(install="helm", featureGates={"PartialAdmission": False}))
    checked = 0
    for path in _key_paths(rendered):
        node = chart
        for key in path[:-1]:
            node = node[key]
        if node == {}:
            continue  # an open map in the chart, such as nodeSelector: {}
        assert isinstance(node, dict) and path[-1] in node, ".".join(path)
        checked += 1
    assert checked >= 5


@needs_shared()
def test_manager_configuration_keeps_the_chart_defaults():
    chart_config = yaml.safe_load(_chart_defaults()["managerConfig"]["controllerManagerConfigYaml"])
    ours = manager_configuration(list(kueue_catalog.CHART_DEFAULT_FRAMEWORKS))
    assert ours == chart_config


def test_feature_gates_render_as_the_chart_list():
    values = helm_values(Kueue(install="helm", featureGates={"TopologyAwareScheduling": True,
                                                             "PartialAdmission": False}))
    assert values["controllerManager"]["featureGates"] == [
        {"name": "TopologyAwareScheduling", "enabled": True}, {"name": "PartialAdmission", "enabled": False}]


def test_configuration_is_v1beta2_with_the_integrations():
    values = helm_values(Kueue(install="helm", integrations=["batch/job", "pod"]))
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    assert config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    assert config["integrations"] == {"frameworks": ["batch/job", "pod"]}
    assert "featureGates" not in config


def test_no_integrations_means_the_chart_defaults():
    config = yaml.safe_load(helm_values(Kueue(install="helm"))["managerConfig"]["controllerManagerConfigYaml"])
    assert config["integrations"]["frameworks"] == list(kueue_catalog.CHART_DEFAULT_FRAMEWORKS)


def test_user_values_are_merged_last():
    values = helm_values(Kueue(install="helm", values={
        "controllerManager": {"replicas": 2, "nodeSelector": {"pool": "ops"}}, "enablePrometheus": True}))
    manager = values["controllerManager"]
    assert manager["replicas"] == 2 and manager["nodeSelector"] == {"kubernetes.azure.com/mode": "system",
                                                                     "pool": "ops"}
    assert manager["tolerations"] == [{"key": "CriticalAddonsOnly", "operator": "Exists"}]
    assert values["enablePrometheus"] is True


def test_deep_merge_replaces_lists_and_leaves_inputs_alone():
    base = {"a": {"b": [1, 2], "c": 1}}
    merged = deep_merge(base, {"a": {"b": [3]}})
    assert merged == {"a": {"b": [3], "c": 1}} and base == {"a": {"b": [1, 2], "c": 1}}


def test_device_plugin_daemonset_is_valid_kubernetes_1_34():
    import kubernetes_validate

    for strategy, pools in device_plugin_groups(list(model_of(stack_doc("prod")).pools)).items():
        manifest = daemonset("nvidia-device-plugin", strategy, pools)
        kubernetes_validate.validate(manifest, "1.34", strict=True)
        assert manifest["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]


def test_mig_pools_get_their_own_mixed_strategy_plugin():
    def pools(c):
        c["aks-kueue:nodePools"][1]["gpuInstanceProfile"] = "MIG1g"
        return c
    groups = device_plugin_groups(list(model_of(pools(stack_doc("prod"))).pools))
    assert [p.name for p in groups["mixed"]] == ["a100"] and [p.name for p in groups["none"]] == ["h100"]
    container = daemonset("mig", "mixed", groups["mixed"])["spec"]["template"]["spec"]["containers"][0]
    assert container["securityContext"] == {"capabilities": {"add": ["SYS_ADMIN"]}}
    assert {"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"} in container["env"]


CONFIG_KEY = "aks-kueue:kueue.values.managerConfig.controllerManagerConfigYaml"


def _with_config(text):
    from tests.conftest import edited

    def edit(c):
        c["aks-kueue:kueue"]["values"] = {"managerConfig": {"controllerManagerConfigYaml": text}}
    return edited("dev", edit)


def test_configuration_keys_merge_over_the_rendered_one():
    settings = parse_settings(flat(_with_config("waitForPodsReady:\n  timeout: 10m\nmanageJobsWithoutQueueName: true\n")))
    config = yaml.safe_load(helm_values(settings.kueue)["managerConfig"]["controllerManagerConfigYaml"])
    assert config["waitForPodsReady"] == {"timeout": "10m"} and config["manageJobsWithoutQueueName"] is True
    assert config["integrations"]["frameworks"] == settings.kueue.frameworks
    assert config["health"] == {"healthProbeBindAddress": ":8081"}


@pytest.mark.parametrize("text,path,fragment", [
    ("waitForPodsReady:\n  enable: true\n", "waitForPodsReady.enable",
     "removed in config.kueue.x-k8s.io/v1beta2, so Kueue would not start; its presence turns waitForPodsReady on"),
    ("fairSharing: {}\n", "fairSharing.preemptionStrategies", "Required value: must be specified"),
    ("manageJobsWithoutQueueNames: true\n", "manageJobsWithoutQueueNames", "did you mean 'manageJobsWithoutQueueName'"),
    ("integrations:\n  frameworks: [pod]\n", "integrations.frameworks", "also set in aks-kueue:kueue.integrations"),
    ("featureGates: {PartialAdmission: false}\n", "featureGates", "also set on the command line (--feature-gates, "
                                                                  "from aks-kueue:kueue.featureGates)"),
    ("resources: {quotaCheckStrategy: Lenient}\n", "resources.quotaCheckStrategy", "BlockUndeclared"),
    ("apiVersion: config.kueue.x-k8s.io/v1beta3\n", "apiVersion", "Kueue 0.19 reads config.kueue.x-k8s.io/v1beta2"),
    ("[not, a, map]\n", "", "must be a Kueue Configuration"),
])
def test_configuration_keys_kueue_would_refuse(text, path, fragment):
    with pytest.raises(SettingsError) as caught:
        parse_settings(flat(_with_config(text)))
    problem = str(caught.value.problems[0])
    assert problem.startswith(f"{CONFIG_KEY}.{path}: " if path else f"{CONFIG_KEY}: ") and fragment in problem


def _rendered(values: dict) -> dict:
    return yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])


def test_cluster_queue_metrics_are_off_unless_the_caller_asks():
    kueue = Kueue(install="helm")
    assert "enableClusterQueueResources" not in _rendered(helm_values(kueue))["metrics"]
    assert _rendered(helm_values(kueue, cluster_queue_metrics=True))["metrics"] == {
        "bindAddress": ":8443", "enableClusterQueueResources": True}
    # The stack's own Configuration keys are merged last and keep the last word.
    own = Kueue(install="helm", values={"managerConfig": {
        "controllerManagerConfigYaml": "metrics: {enableClusterQueueResources: false}\n"}})
    assert _rendered(helm_values(own, cluster_queue_metrics=True))["metrics"]["enableClusterQueueResources"] is False


@pytest.mark.parametrize("kueue", [
    {"install": "helm"},
    {"install": "helm", "featureGates": {"TopologyAwareScheduling": True}, "integrations": ["batch/job", "pod"]},
    {"install": "helm", "values": {"managerConfig": {"controllerManagerConfigYaml":
                                                     "featureGates: {PartialAdmission: false}\n"}}},
    {"install": "helm", "values": {"controllerManager": {"managerConfig": {"controllerManagerConfigYaml":
                                                                          "apiVersion: config.kueue.x-k8s.io/v1beta1\n"
                                                                          "waitForPodsReady: {enable: true}\n"}}}},
])
def test_what_the_program_renders_starts_kueue(kueue):
    from aks_kueue.kueue.configuration import judge_configuration

    settings = Kueue.model_validate(kueue)
    values = helm_values(settings, cluster_queue_metrics=True)
    gates = {g["name"]: g["enabled"] for g in values["controllerManager"]["featureGates"]}
    report = judge_configuration(_rendered(values), command_line_gates=gates)
    assert report.errors == [] and report.effective is not None
