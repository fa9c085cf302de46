"""Kueue's Configuration judged as Kueue v0.19.2 reads it: strict decoding, v1beta1 conversion,
defaults, feature gates and `config.Validate`. Every document here is written from the rules in
`apis/config/v1beta{1,2}` and `pkg/config/validation.go`."""

from __future__ import annotations

from fractions import Fraction

import pytest
import yaml

from aks_kueue.kueue import catalog as cat
from aks_kueue.kueue.chart_values import chart_configuration
from aks_kueue.kueue.config_api import V1BETA1, V1BETA2, parse_duration
from aks_kueue.kueue.configuration import (ConfigurationTextError, check_configuration_document,
                                           judge_configuration, parse_configuration)
from tests.messages import breaks

V2 = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
V1 = "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"


def errors(text: str, **kwargs) -> list[str]:
    return [str(e) for e in judge_configuration(yaml.safe_load(text), **kwargs).errors]


def test_the_charts_own_configuration_starts_kueue():
    assert check_configuration_document(chart_configuration(list(cat.CHART_DEFAULT_FRAMEWORKS))) == []
    assert check_configuration_document(chart_configuration(list(cat.FRAMEWORKS)) | {
        "featureGates": {"SparkApplicationIntegration": True}}) == []


def test_a_misspelled_nested_key_stops_kueue_with_a_suggestion():
    found = check_configuration_document(yaml.safe_load(V2 + "waitForPodsReady:\n  timeot: 5m\n"))
    assert [str(e) for e in found] == [
        'waitForPodsReady.timeot: unknown field "waitForPodsReady.timeot": Kueue reads its Configuration strictly and would not '
        "start; did you mean 'timeout'?"]


@pytest.mark.parametrize("text,path,suggestion", [
    ("metrics:\n  customLabels:\n  - {name: team, sourceKnd: LocalQueue}\n", "metrics.customLabels[0].sourceKnd",
     "sourceKind"),
    ("multiKueue:\n  clusterProfile:\n    accessProviders:\n    - {name: a, execConfig: {comand: x}}\n",
     "multiKueue.clusterProfile.accessProviders[0].execConfig.comand", "command"),
    ("leaderElection: {leaderElection: true}\n", "leaderElection.leaderElection", "leaderElect"),
    ("Integrations: {frameworks: [pod]}\n", "Integrations", "integrations"),
])
def test_unknown_fields_at_any_depth(text, path, suggestion):
    found = errors(V2 + text)
    assert len(found) == 1 and found[0].startswith(f"{path}: unknown field") and f"'{suggestion}'" in found[0]


def test_metadata_is_not_a_configuration_key():
    # Kueue's "opt-in namespace management" page (v0.19.2) writes one; strict decoding refuses it.
    assert errors(V2 + "metadata: {name: config, namespace: kueue-system}\nmanageJobsWithoutQueueName: true\n") == [
        'metadata: unknown field "metadata": Kueue would not start; a Configuration is a file Kueue reads, not an '
        "API object, and has no metadata (Kueue's own opt-in namespace guide shows one; it fails the same way)"]


def test_keys_v1beta2_removed_say_what_replaces_them():
    assert errors(V2 + "waitForPodsReady: {enable: true}\n") == [
        'waitForPodsReady.enable: unknown field "waitForPodsReady.enable": it was removed in '
        "config.kueue.x-k8s.io/v1beta2, so Kueue would not start; its presence turns waitForPodsReady on; set timeout "
        "instead"]
    assert "exists only in config.kueue.x-k8s.io/v1beta2" in errors(V1 + "resources: {quotaCheckStrategy: "
                                                                         "BlockUndeclared}\n")[0]


@pytest.mark.parametrize("text", [V2 + "waitForPodsReady: {timeot: 5m}\n", V2 + "waitForPodsReady: {enable: true}\n",
                                  V2 + "data: {}\n", V2 + "spec: {}\n", V2 + "metadata: {name: x}\n",
                                  V1 + "resources: {quotaCheckStrategy: BlockUndeclared}\n"])
def test_an_unknown_key_is_said_in_one_sentence_and_its_advice_is_the_fix(text):
    (found,) = judge_configuration(yaml.safe_load(text)).errors
    assert found.message.startswith(f'unknown field "{found.field}"') and breaks(found.message) is None, found


@pytest.mark.parametrize("text,path,fragment", [
    ("waitForPodsReady: {timeout: 300}\n", "waitForPodsReady.timeout", 'must be a duration such as "30s"'),
    ("waitForPodsReady: {timeout: 5 minutes}\n", "waitForPodsReady.timeout", "must be a duration"),
    ("controller: {cacheSyncTimeout: 2m}\n", "controller.cacheSyncTimeout", "integer count of nanoseconds"),
    ("manageJobsWithoutQueueName: \"true\"\n", "manageJobsWithoutQueueName", "must be a boolean"),
    ("clientConnection: {burst: 3000000000}\n", "clientConnection.burst", "32-bit integer"),
    ("webhook: {port: 9443.5}\n", "webhook.port", "must be an integer"),
    ("leaderElection: {leaseDuration: null}\n", "leaderElection.leaseDuration", "fails on null"),
    ("namespace: 7\n", "namespace", "must be a string"),
    ("integrations: {frameworks: batch/job}\n", "integrations.frameworks", "must be a list"),
    ("featureGates: {PartialAdmission: 1}\n", "featureGates.PartialAdmission", "must be a boolean"),
    ("resources:\n  transformations:\n  - {input: nvidia.com/mig-1g.5gb, outputs: {example.com/mem: 5 GB}}\n",
     "resources.transformations[0].outputs[example.com/mem]", "must be a quantity"),
])
def test_values_of_the_wrong_type(text, path, fragment):
    found = errors(V2 + text)
    assert len(found) == 1 and found[0].startswith(f"{path}: Invalid value") and fragment in found[0], found


def test_null_leaves_a_pointer_unset_and_a_whole_float_is_an_integer():
    assert errors(V2 + "waitForPodsReady: {timeout: 5m, recoveryTimeout: null}\nwebhook: {port: 9443.0}\n") == []


def test_v1beta1_is_accepted_and_converted_as_kueue_converts_it():
    report = judge_configuration(yaml.safe_load(V1 + """
integrations:
  frameworks: [batch/job, kubeflow.org/pytorchjob]
  podOptions: {namespaceSelector: {matchLabels: {a: b}}}
fairSharing: {enable: true}
queueVisibility: {updateIntervalSeconds: 5}
"""))
    assert report.errors == [] and report.api_version == "config.kueue.x-k8s.io/v1beta1"
    effective = report.effective
    assert effective["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    # v1beta1 leaves waitForPodsReady off unless enabled; v1beta2 would turn it on.
    assert "waitForPodsReady" not in effective
    assert effective["fairSharing"] == {"preemptionStrategies": ["LessThanOrEqualToFinalShare",
                                                                 "LessThanInitialShare"]}
    assert "podOptions" not in effective["integrations"] and "queueVisibility" not in effective
    assert effective["integrations"]["frameworks"] == ["batch/job", "kubeflow.org/pytorchjob"]
    said = " ".join(str(w) for w in report.warnings)
    assert "waitForPodsReady: is off in this v1beta1 file" in said and "podOptions: is dropped" in said


def test_v1beta1_wait_for_pods_ready_defaults_differ():
    report = judge_configuration(yaml.safe_load(V1 + "waitForPodsReady: {enable: true}\n"))
    assert report.errors == []
    assert report.effective["waitForPodsReady"]["timeout"] == "5m"
    assert report.effective["waitForPodsReady"]["blockAdmission"] is True
    v2 = judge_configuration(yaml.safe_load(V2))
    assert v2.effective["waitForPodsReady"]["timeout"] == "30m"
    assert v2.effective["waitForPodsReady"]["blockAdmission"] is False
    # An explicit zero survives v1beta1's defaults and the conversion; Kueue then refuses it.
    assert errors(V1 + "waitForPodsReady: {enable: true, timeout: 0s}\n") == [
        "waitForPodsReady.timeout: Required value: must be specified (a duration greater than 0)"]


@pytest.mark.parametrize("text,path,fragment", [
    ("waitForPodsReady: {timeout: -5m}\n", "waitForPodsReady.timeout", "greater than or equal to 0"),
    ("waitForPodsReady:\n  timeout: 5m\n  requeuingStrategy: {timestamp: Admission}\n",
     "waitForPodsReady.requeuingStrategy.timestamp", '"Creation", "Eviction"'),
    ("waitForPodsReady:\n  timeout: 5m\n  requeuingStrategy: {backoffLimitCount: -1}\n",
     "waitForPodsReady.requeuingStrategy.backoffLimitCount", "greater than or equal to 0"),
    ("integrations: {frameworks: [batch/job, kubeflow.org/pytorchjobs]}\n", "integrations.frameworks[1]",
     "did you mean 'kubeflow.org/pytorchjob'"),
    ("integrations: {frameworks: [pod, pod]}\n", "integrations.frameworks[1]", "Duplicate value"),
    ("integrations: {frameworks: [batch/job], externalFrameworks: [Job.v1.batch]}\n",
     "integrations.externalFrameworks[0]", "already manages this kind"),
    ("integrations: {externalFrameworks: [MyJob]}\n", "integrations.externalFrameworks[0]", "Kind.version.group"),
    ("managedJobsNamespaceSelector: {}\n", "managedJobsNamespaceSelector", 'should not match the "kube-system"'),
    ("managedJobsNamespaceSelector:\n  matchExpressions:\n  - {key: kubernetes.io/metadata.name, operator: NotIn, "
     "values: [kube-system]}\n", "managedJobsNamespaceSelector", 'should not match the "kueue-system"'),
    ("fairSharing: {preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]}\n",
     "fairSharing.preemptionStrategies", "Unsupported value"),
    ("admissionFairSharing: {usageHalfLifeTime: -1h}\n", "admissionFairSharing.usageHalfLifeTime",
     "greater than or equal to 0"),
    ("admissionFairSharing:\n  usageHalfLifeTime: 168h\n  resourceWeights: {nvidia.com/gpu: -1}\n",
     "admissionFairSharing.resourceWeights[nvidia.com/gpu]", "greater than or equal to 0"),
    ("internalCertManagement: {webhookServiceName: 1-webhook}\n", "internalCertManagement.webhookServiceName",
     "DNS-1035 label"),
    ("resources:\n  transformations:\n  - {input: a.com/x, strategy: Keep}\n", "resources.transformations[0].strategy",
     '"Retain", "Replace"'),
    ("resources: {quotaCheckStrategy: IgnoreUndeclared, excludeResourcePrefixes: [example.com/]}\n",
     "resources.quotaCheckStrategy", "not allowed when quotaCheckStrategy is IgnoreUndeclared"),
    ("resources:\n  deviceClassMappings:\n  - name: example.com/gpu\n    deviceClassNames: [gpu.example.com]\n"
     "    sources: [{capacity: {name: memory, driver: gpu.example.com, deviceSelector: {cel: {expression: 'true'}}}}]\n",
     "resources.deviceClassMappings[0].sources[0].capacity", "KueueDRAIntegrationConsumableCapacity"),
    ("resources:\n  deviceClassMappings:\n  - {name: example.com/gpu, deviceClassNames: []}\n",
     "resources.deviceClassMappings[0].deviceClassNames", "at least one device class name"),
    ("objectRetentionPolicies: {workloads: {afterFinished: -1s}}\n", "objectRetentionPolicies.workloads.afterFinished",
     "greater than or equal to 0"),
    ("tls: {minVersion: VersionTLS11}\n", "tls", "VersionTLS12 or VersionTLS13"),
    ("tls: {minVersion: VersionTLS13, cipherSuites: [TLS_AES_128_GCM_SHA256]}\n", "tls.cipherSuites",
     "may not be specified"),
    ("visibilityServer: {bindPort: 0}\n", "visibilityServer.bindPort", "valid port number"),
    ("visibilityServer: {bindAddress: localhost}\n", "visibilityServer.bindAddress", "valid IP address"),
    ("metrics:\n  customLabels:\n  - {name: team, sourceKind: Workload}\n", "metrics.customLabels[0].trackedValues",
     "must not be empty when sourceKind is 'Workload'"),
    ("metrics:\n  customLabels:\n  - {name: 9team}\n", "metrics.customLabels[0].name", "^[a-zA-Z][a-zA-Z0-9_]*$"),
    ("multiKueue: {incrementalDispatcherConfig: {stepSize: 2}}\n", "multiKueue.incrementalDispatcherConfig",
     "only valid when dispatcherName is set to the incremental dispatcher"),
    ("multiKueue: {origin: not a label}\n", "multiKueue.origin", "a valid label"),
])
def test_rules_that_stop_the_manager(text, path, fragment):
    found = errors(V2 + text)
    assert any(f.startswith(f"{path}: ") and fragment in f for f in found), found


def test_feature_gates_from_the_file_are_judged_as_kueue_judges_them():
    assert errors(V2 + "featureGates: {TopologyAwareSchedulng: true}\n") == [
        'featureGates.TopologyAwareSchedulng: unrecognized feature gate "TopologyAwareSchedulng": Kueue 0.19 would '
        "not start; did you mean 'TopologyAwareScheduling'?"]
    assert "locked to true" in errors(V2 + "featureGates: {HierarchicalCohorts: false}\n")[0]
    assert "turning KueueDRAIntegration off leaves" in errors(V2 + "featureGates: {KueueDRAIntegration: false}\n")[0]
    # The alpha gate that turns waitForPodsReady off also turns its validation off.
    assert errors(V2 + "waitForPodsReady: {timeout: -5m}\nfeatureGates: {DisableWaitForPodsReady: true}\n") == []


def test_gates_on_the_command_line_and_in_the_file_stop_kueue():
    found = errors(V2 + "featureGates: {PartialAdmission: false}\n", command_line_gates={"TopologyAwareScheduling": True},
                   command_line_key="aks-kueue:kueue.featureGates")
    assert len(found) == 1 and found[0].startswith("featureGates: feature gates are also set on the command line "
                                                   "(--feature-gates, from aks-kueue:kueue.featureGates)")
    # The command line alone decides the gates; an empty flag is no flag.
    report = judge_configuration(yaml.safe_load(V2 + "featureGates: {PartialAdmission: false}\n"),
                                 command_line_gates={})
    assert report.errors == [] and report.gates["PartialAdmission"] is False


def test_capacity_sources_need_their_alpha_gate_which_the_command_line_can_turn_on():
    text = V2 + ("resources:\n  deviceClassMappings:\n  - name: example.com/gpu\n    deviceClassNames: [gpu.example.com]\n"
                 "    sources: [{capacity: {name: memory, driver: gpu.example.com, deviceSelector: {cel: {expression: "
                 "'true'}}}}]\n")
    assert errors(text) and errors(text, command_line_gates={"KueueDRAIntegrationConsumableCapacity": True}) == []


@pytest.mark.parametrize("document,fragment", [
    ({"kind": "Configuration"}, "apiVersion: Required value"),
    ({"apiVersion": "config.kueue.x-k8s.io/v1beta2"}, "kind: Required value"),
    ({"apiVersion": "config.kueue.x-k8s.io/v1beta3", "kind": "Configuration"}, "did you mean"),
    ({"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Config"}, "must be Configuration"),
    ([1, 2], "must be a map"),
])
def test_a_document_that_is_not_a_configuration(document, fragment):
    assert any(fragment in str(e) for e in check_configuration_document(document))


def test_the_text_is_read_strictly_and_within_bounds():
    with pytest.raises(ConfigurationTextError, match="has the key 'waitForPodsReady' twice"):
        parse_configuration("waitForPodsReady: {timeout: 5m}\nwaitForPodsReady: {timeout: 10m}\n")
    for deep in ("{a: " * 500 + "1" + "}" * 500, "[" * 50_000 + "]" * 50_000):
        with pytest.raises(ConfigurationTextError, match="nested more than 100 levels"):
            parse_configuration(deep)
    with pytest.raises(ConfigurationTextError, match="longer than 256 KiB"):
        parse_configuration("# " + "x" * 300_000)
    with pytest.raises(ConfigurationTextError, match="not valid YAML"):
        parse_configuration("a: [unclosed\n")


@pytest.mark.parametrize("text,seconds", [
    ("1h30m", 5400), ("1.5h", 5400), ("-5m", -300), ("0", 0), (".5s", Fraction(1, 2)), ("300ms", Fraction(3, 10)),
    ("1h0m0s", 3600), ("5", None), ("", None), ("5 m", None), ("1d", None), ("-", None),
])
def test_go_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_v1beta1_and_v1beta2_differ_where_the_go_types_differ():
    beta2, beta1 = V1BETA2["properties"], V1BETA1["properties"]
    assert "visibilityServer" in beta2 and "visibilityServer" not in beta1
    assert "queueVisibility" in beta1 and "enable" in beta1["waitForPodsReady"]["properties"]
    assert "quotaCheckStrategy" not in beta1["resources"]["properties"]


def _field_names(shape, names: set) -> set:
    while "items" in shape or "additionalProperties" in shape:
        shape = shape.get("items") or shape["additionalProperties"]
    for name, child in (shape.get("properties") or {}).items():
        names.add(name)
        _field_names(child, names)
    return names


_NAMES = sorted(_field_names(V1BETA2, set()) | _field_names(V1BETA1, set()) | set(cat.FEATURE_GATES)
                | {"pod", "batch/job", "-5m", "5m", "0s", "IgnoreUndeclared", "Workload", "kube-system"})


def test_any_document_gets_sentences_never_an_exception():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=True),
                        st.sampled_from(_NAMES), st.text(max_size=8), st.dates())
    values = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.sampled_from(_NAMES), st.integers()), inner,
                                                     max_size=4)), max_leaves=30)
    documents = st.fixed_dictionaries(
        {"apiVersion": st.sampled_from(["config.kueue.x-k8s.io/v1beta2", "config.kueue.x-k8s.io/v1beta1"]),
         "kind": st.just("Configuration")},
        optional={name: values for name in sorted(V1BETA2["properties"]) if name not in ("apiVersion", "kind")})

    @settings(max_examples=150, deadline=None)
    @given(documents, st.one_of(st.none(), st.dictionaries(st.sampled_from(sorted(cat.FEATURE_GATES)), st.booleans(),
                                                           max_size=3)))
    def judge(document, command_line):
        report = judge_configuration(document, command_line_gates=command_line)
        assert all(isinstance(e.message, str) and e.message for e in report.errors + report.warnings)
        if not report.errors:
            assert report.effective is not None

    judge()


def _typed(shape, st):
    """Documents that decode: every value of the type its field wants, at odd corners of its range."""
    if "properties" in shape:
        return st.fixed_dictionaries({}, optional={k: _typed(v, st) for k, v in shape["properties"].items()
                                                   if k not in ("apiVersion", "kind")})
    if "items" in shape:
        return st.lists(_typed(shape["items"], st), max_size=3)
    if "additionalProperties" in shape:
        return st.dictionaries(st.sampled_from(_NAMES), _typed(shape["additionalProperties"], st), max_size=3)
    kind = "nanos" if shape.get("x-go-type") else shape.get("format") or shape["type"]
    return {
        "boolean": st.booleans(), "string": st.one_of(st.sampled_from(_NAMES), st.text(max_size=6)),
        "int64": st.integers(-5, 70000), "int32": st.integers(-5, 70000), "nanos": st.integers(-5, 5),
        "float": st.floats(-5, 5), "double": st.floats(-5, 5),
        "duration": st.sampled_from(["-5m", "0", "0s", "5m", "1h30m"]),
        "quantity": st.sampled_from(["1", "500m", "-1", "5Gi"]),
    }[kind]


@pytest.mark.parametrize("version,shape", [("config.kueue.x-k8s.io/v1beta2", V1BETA2),
                                           ("config.kueue.x-k8s.io/v1beta1", V1BETA1)])
def test_well_typed_documents_decode_and_are_validated_without_an_exception(version, shape):
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=150, deadline=None)
    @given(_typed(shape, st))
    def judge(body):
        report = judge_configuration({"apiVersion": version, "kind": "Configuration", **body})
        # Well-typed documents always decode; what remains are Kueue's validation rules.
        assert report.effective is not None and report.effective["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
        assert all(e.field and e.message for e in report.errors)

    judge()
