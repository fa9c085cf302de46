"""`aks-kueue:kueue` as people write it: Microsoft's guide, gates in one of three places, the
Configuration judged as Kueue reads it, chart values the chart would render into invalid objects,
hostile nesting and the managed extension's version."""

from __future__ import annotations

import json

import pytest
import yaml

from aks_kueue.settings import SettingsError, parse_settings
from aks_kueue.settings.kueue import MAX_VALUES_DEPTH, too_deep
from components.kueue_install.values import helm_values
from tests.conftest import edited, flat

CONFIG = "aks-kueue:kueue.values.managerConfig.controllerManagerConfigYaml"

# Microsoft's "Install and configure Kueue on AKS", Helm path, values.yaml as the guide writes it
# (../shared/reference/aks-kueue-install-guide.it.txt): gates as the chart's list, and a v1beta1
# Configuration nested under controllerManager.
GUIDE_VALUES = """
controllerManager:
  featureGates:
    - name: TopologyAwareScheduling
      enabled: true
    - name: LocalQueueMetrics
      enabled: true
  managerConfig:
    controllerManagerConfigYaml: |
      apiVersion: config.kueue.x-k8s.io/v1beta1
      kind: Configuration
      integrations:
        frameworks:
          - batch/job
          - kubeflow.org/mpijob
          - ray.io/rayjob
          - ray.io/raycluster
          - jobset.x-k8s.io/jobset
          - kubeflow.org/paddlejob
          - kubeflow.org/pytorchjob
          - kubeflow.org/tfjob
          - kubeflow.org/xgboostjob
          - kubeflow.org/jaxjob
"""


def with_kueue(kueue: dict, stack: str = "dev") -> dict:
    def edit(c):
        c["aks-kueue:kueue"] = kueue
    return edited(stack, edit)


def problems(config: dict) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        parse_settings(flat(config))
    return [str(p) for p in caught.value.problems]


def helm(values: dict, **kueue) -> dict:
    return with_kueue({"install": "helm", "values": values, **kueue})


def config_text(text: str, **kueue) -> dict:
    return helm({"managerConfig": {"controllerManagerConfigYaml": text}}, **kueue)


def test_the_guides_helm_values_are_accepted_and_judged_as_kueue_reads_them():
    settings = parse_settings(flat(helm(yaml.safe_load(GUIDE_VALUES))))
    kueue = settings.kueue
    assert kueue.feature_gates_in_force == {"TopologyAwareScheduling": True, "LocalQueueMetrics": True}
    assert kueue.frameworks[:2] == ["batch/job", "kubeflow.org/mpijob"] and "kubeflow.org/jaxjob" in kueue.frameworks
    said = "\n".join(settings.warnings)
    assert ("aks-kueue:kueue.values.controllerManager.managerConfig: the chart reads managerConfig at the top of its "
            "values and would ignore it here") in said
    assert ("aks-kueue:kueue.values.controllerManager.managerConfig.controllerManagerConfigYaml.waitForPodsReady: is "
            "off in this v1beta1 file") in said
    values = helm_values(kueue)
    assert "managerConfig" not in values["controllerManager"]
    assert values["controllerManager"]["featureGates"] == [{"name": "TopologyAwareScheduling", "enabled": True},
                                                           {"name": "LocalQueueMetrics", "enabled": True}]
    rendered = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    # Rendered as written: converting to v1beta2 would turn waitForPodsReady on, which v1beta1 leaves off.
    assert rendered["apiVersion"] == "config.kueue.x-k8s.io/v1beta1"
    assert rendered["integrations"]["frameworks"] == kueue.frameworks
    assert rendered["health"] == {"healthProbeBindAddress": ":8081"} and "featureGates" not in rendered


def test_a_misspelled_nested_configuration_key_is_refused_with_a_suggestion():
    assert problems(config_text("waitForPodsReady:\n  timeot: 5m\n")) == [
        f'{CONFIG}.waitForPodsReady.timeot: unknown field "waitForPodsReady.timeot": Kueue reads its Configuration strictly and would '
        "not start; did you mean 'timeout'?"]


def test_a_v1beta1_configuration_is_accepted_and_judged_after_conversion():
    settings = parse_settings(flat(config_text(
        "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nwaitForPodsReady: {enable: true}\n")))
    assert any("waitForPodsReady.blockAdmission: defaults to true in v1beta1" in w for w in settings.warnings)
    assert problems(config_text("apiVersion: config.kueue.x-k8s.io/v1beta1\nwaitForPodsReady: {enable: true, "
                                "timeout: -1m}\n")) == [
        f"{CONFIG}.waitForPodsReady.timeout: Invalid value: \"-1m\": must be greater than or equal to 0",
        # v1beta1 defaults recoveryTimeout to the timeout before the conversion, so Kueue reports both.
        f"{CONFIG}.waitForPodsReady.recoveryTimeout: Invalid value: \"-1m\": must be greater than or equal to 0"]


@pytest.mark.parametrize("kueue,key,other", [
    ({"featureGates": {"TopologyAwareScheduling": True}}, f"{CONFIG}.featureGates", "aks-kueue:kueue.featureGates"),
    ({"values": {"controllerManager": {"featureGates": [{"name": "TopologyAwareScheduling", "enabled": True}]}}},
     f"{CONFIG}.featureGates", "aks-kueue:kueue.values.controllerManager.featureGates"),
])
def test_gates_set_on_the_command_line_and_in_the_configuration_are_refused(kueue, key, other):
    values = kueue.pop("values", {})
    values["managerConfig"] = {"controllerManagerConfigYaml": "featureGates: {LocalQueueMetrics: true}\n"}
    found = problems(helm(values, **kueue))
    assert len(found) == 1 and found[0].startswith(f"{key}: feature gates are also set on the command line "
                                                   f"(--feature-gates, from {other}); Kueue refuses to start")


def test_gates_in_the_configuration_alone_are_accepted_and_judged():
    settings = parse_settings(flat(config_text("featureGates: {TopologyAwareScheduling: true}\n")))
    assert settings.kueue.feature_gates_in_force == {"TopologyAwareScheduling": True}
    assert helm_values(settings.kueue)["controllerManager"]["featureGates"] == []  # so no --feature-gates flag
    assert problems(config_text("featureGates: {PartialAdmision: true}\n")) == [
        f'{CONFIG}.featureGates.PartialAdmision: unrecognized feature gate "PartialAdmision": Kueue 0.19 would not '
        "start; did you mean 'PartialAdmission'?"]


def test_gates_in_the_charts_list_are_judged_at_their_index():
    gates = [{"name": "LocalQueueMetrics", "enabled": True}, {"name": "HierarchicalCohorts", "enabled": False}]
    found = problems(helm({"controllerManager": {"featureGates": gates}}))
    assert found == ["aks-kueue:kueue.values.controllerManager.featureGates[1]: HierarchicalCohorts is GA and locked to "
                     "true; setting it otherwise stops Kueue at startup, so remove it"]


def test_integrations_in_two_places_are_refused_and_one_place_is_used():
    found = problems(config_text("integrations: {frameworks: [batch/job]}\n", integrations=["batch/job"]))
    assert found == [f"{CONFIG}.integrations.frameworks: integrations are also set in aks-kueue:kueue.integrations; "
                     "set them in one place"]
    settings = parse_settings(flat(config_text("integrations: {frameworks: [batch/job, pod]}\n")))
    assert settings.kueue.frameworks == ["batch/job", "pod"]


@pytest.mark.parametrize("values,key,fragment", [
    ({"controllerManager": {"replicas": -1}}, "aks-kueue:kueue.values.controllerManager.replicas",
     "Invalid value: -1: must be a whole number from 0 to 2147483647 (the controller Deployment's spec.replicas); "
     "the chart's default is 1"),
    ({"controllerManager": {"replicas": "2"}}, "aks-kueue:kueue.values.controllerManager.replicas",
     'Invalid value: "2": must be a whole number'),
    ({"webhookService": {"ports": [{"port": 443, "targetPort": 0}]}},
     "aks-kueue:kueue.values.webhookService.ports[0].targetPort", "Invalid value: 0: must be between 1 and 65535"),
])
def test_chart_values_that_render_an_invalid_object_are_refused(values, key, fragment):
    found = problems(helm(values))
    assert len(found) == 1 and found[0].startswith(f"{key}: {fragment}")


@pytest.mark.parametrize("text,key,fragment", [
    ("namespace: batch\n", "namespace", "Kueue is installed in kueue-system"),
    ("internalCertManagement: {webhookSecretName: my-cert}\n", "internalCertManagement.webhookSecretName",
     "the chart creates kueue-webhook-server-cert"),
])
def test_configuration_keys_that_must_name_what_the_chart_creates(text, key, fragment):
    found = problems(config_text(text))
    assert len(found) == 1 and found[0].startswith(f"{CONFIG}.{key}: {fragment}")


def test_every_problem_is_reported_together():
    found = problems(helm({"controllerManager": {"replicas": -1},
                           "managerConfig": {"controllerManagerConfigYaml": "waitForPodsReady: {timeot: 5m}\n"}},
                          featureGates={"Nope": True}))
    assert [p.split(":", 2)[1].split(" ")[0] for p in found] == [
        "kueue.featureGates.Nope", "kueue.values.controllerManager.replicas",
        "kueue.values.managerConfig.controllerManagerConfigYaml.waitForPodsReady.timeot"]


def _nested(depth: int):
    value: object = "x"
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.mark.parametrize("depth", [101, 500])
def test_deeply_nested_values_are_refused_cleanly(depth):
    found = problems(helm({"controllerManager": {"podAnnotations": _nested(depth)}}))
    assert found == ["aks-kueue:kueue.values.controllerManager.podAnnotations.a.a: is nested more than "
                     f"{MAX_VALUES_DEPTH} levels deep (below here); chart values never need that, so they are refused "
                     "before anything reads them"]


def test_depth_is_measured_without_recursion():
    assert too_deep(_nested(100_000), MAX_VALUES_DEPTH)[:2] == ["a", "a"]
    assert too_deep({"a": [[{"b": 1}]]}, 3) is None and too_deep({"a": [[{"b": {}}]]}, 3) == ["a", 0, 0, "b"]


def test_the_pulumi_config_json_of_deep_values_is_refused_cleanly():
    config = flat(helm({}))
    config["aks-kueue:kueue"] = '{"install": "helm", "values": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(SettingsError) as caught:
        parse_settings(config)
    assert str(caught.value.problems[0]).startswith("aks-kueue:kueue: is nested too deeply to read")
    json.loads(flat(helm({}))["aks-kueue:kueue"])  # the ordinary value still reads


@pytest.mark.parametrize("version", ["latest", "v0.19.6-aks.0.4.4", "0.19", "preview", "0.19.6 aks"])
def test_a_managed_version_that_is_not_a_version_is_refused(version):
    def edit(c):
        c["aks-kueue:kueue"]["version"] = version
    found = problems(edited("prod", edit))
    assert len(found) == 1 and found[0].startswith(f"aks-kueue:kueue.version: {version!r} is not an extension "
                                                   "version; write the exact version Microsoft publishes, such as "
                                                   "0.19.6-aks.0.4.4")


@pytest.mark.parametrize("install, version", [("helm", "0.19.0"), ("helm", "0.19.2"), ("helm", "0.19.6"),
                                              ("managed", "0.19.6-aks.0.4.4"), ("managed", "0.19.6-aks.1.0.0")])
def test_any_version_within_0_19_is_accepted_quietly(install, version):
    # The stored Kueue sources end at 0.19.2, but nothing a user pins within 0.19 is refused or warned about.
    def edit(c):
        c["aks-kueue:kueue"] = {"install": install, "version": version}
    settings = parse_settings(flat(edited("dev", edit)))
    assert settings.kueue.version == version
    assert not [w for w in settings.warnings if "kueue.version" in w]
    if install == "helm":
        assert settings.kueue.chart_version == version


def test_a_managed_version_from_another_kueue_series_is_a_warning():
    def edit(c):
        c["aks-kueue:kueue"]["version"] = "0.20.1-aks.0.1.0"
    settings = parse_settings(flat(edited("prod", edit)))
    assert "aks-kueue:kueue.version: extension 0.20.1-aks.0.1.0 runs Kueue 0.20" in "\n".join(settings.warnings)


def test_any_helm_values_give_settings_errors_never_an_exception():
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from pydantic import ValidationError

    from aks_kueue.kueue.chart_values import CHART_KEYS
    from aks_kueue.settings.kueue import Kueue

    names = sorted(set(CHART_KEYS) | set(CHART_KEYS["controllerManager"]) | {"managerConfig", "featureGates", "name",
                                                                             "enabled", "controllerManagerConfigYaml"})
    texts = st.sampled_from(["featureGates: {A: true}\n", "waitForPodsReady: {timeout: 5m}\n", "[x]\n", "a: [\n",
                             "apiVersion: config.kueue.x-k8s.io/v1beta1\n", "integrations: {frameworks: [pod]}\n"])
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(names), texts)
    values = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(names), inner, max_size=3)), max_leaves=20)

    @settings(max_examples=150, deadline=None)
    @given(st.dictionaries(st.sampled_from(names), values, max_size=4),
           st.dictionaries(st.sampled_from(["TopologyAwareScheduling", "Nope"]), st.booleans(), max_size=2))
    def judge(chart, gates):
        try:
            kueue = Kueue.model_validate({"install": "helm", "values": chart, "featureGates": gates})
        except ValidationError as error:
            assert all(e["msg"] for e in error.errors())
            return
        assert isinstance(helm_values(kueue)["managerConfig"]["controllerManagerConfigYaml"], str)
        assert isinstance(kueue.warnings, list)

    judge()
