"""The Kueue chart's values: every key the chart has, and values the chart would render into an
object Kubernetes or Kueue's manager refuses."""

from __future__ import annotations

import pytest
import yaml

from aks_kueue.kueue.chart_values import CHART_KEYS, OPEN, check_chart_values, fullname
from tests.conftest import REFERENCE, needs_shared


def errors(values: dict) -> list[str]:
    return [str(e) for e in check_chart_values(values).errors]


def warnings(values: dict) -> list[str]:
    return [str(w) for w in check_chart_values(values).warnings]


def _tree(values: dict) -> dict:
    """The key tree of the chart's values.yaml: maps with keys nest, anything else is a leaf."""
    return {k: (_tree(v) if isinstance(v, dict) and v else None) for k, v in values.items()}


def _ours(keys: dict) -> dict:
    return {k: (_ours(v) if isinstance(v, dict) else None) for k, v in keys.items()}


@needs_shared()
def test_the_key_tree_is_the_charts():
    chart = yaml.safe_load((REFERENCE / "kueue-chart-values.yaml").read_text())
    expected = _tree(chart)
    # Kubernetes objects the chart passes through are open maps here, whatever their defaults hold.
    for path in (("controllerManager", "manager", "resources"), ("controllerManager", "manager", "podSecurityContext"),
                 ("controllerManager", "manager", "containerSecurityContext"), ("metrics", "serviceMonitor", "tlsConfig")):
        node = expected
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = None
    for side in ("backend", "frontend"):
        viz = expected["kueueViz"][side]
        for key in ("resources", "podSecurityContext", "containerSecurityContext"):
            viz[key] = None
        viz["ingress"]["annotations"] = None
    assert _ours(CHART_KEYS) == expected


def test_the_defaults_are_clean():
    defaults = {"controllerManager": {"replicas": 1, "readinessProbe": {"initialDelaySeconds": 5, "periodSeconds": 10,
                                                                        "timeoutSeconds": 1, "failureThreshold": 3,
                                                                        "successThreshold": 1},
                                      "manager": {"logLevel": 2, "image": {"pullPolicy": "IfNotPresent"},
                                                  "resources": {"limits": {"cpu": "2", "memory": "512Mi"},
                                                                "requests": {"cpu": "500m", "memory": "512Mi"}}},
                                      "podDisruptionBudget": {"enabled": False, "minAvailable": 1}},
                "metricsService": {"ports": [{"name": "https", "port": 8443, "protocol": "TCP", "targetPort": 8443}],
                                   "type": "ClusterIP"},
                "webhookService": {"ports": [{"port": 443, "protocol": "TCP", "targetPort": 9443}], "type": "ClusterIP",
                                   "ipDualStack": {"enabled": False, "ipFamilies": ["IPv6", "IPv4"],
                                                   "ipFamilyPolicy": "PreferDualStack"}},
                "mutatingWebhook": {"reinvocationPolicy": "Never"}, "enablePrometheus": False}
    report = check_chart_values(defaults)
    assert report.errors == [] and report.warnings == []


@pytest.mark.parametrize("replicas,fragment", [
    (-1, "Invalid value: -1: must be a whole number from 0 to 2147483647"),
    (2.5, "Invalid value: 2.5: must be a whole number"),
    ("two", 'Invalid value: "two": must be a whole number'),
    (True, "Invalid value: true: must be a whole number"),
    (2**31, "Invalid value: 2147483648: must be a whole number from 0 to 2147483647"),
])
def test_replicas_the_deployment_would_refuse(replicas, fragment):
    found = errors({"controllerManager": {"replicas": replicas}})
    assert len(found) == 1 and found[0].startswith(f"controllerManager.replicas: {fragment}")
    assert "the chart's default is 1" in found[0]


def test_zero_replicas_is_allowed_with_a_warning():
    assert errors({"controllerManager": {"replicas": 0}}) == []
    assert "webhooks, which fail closed" in warnings({"controllerManager": {"replicas": 0}})[0]


@pytest.mark.parametrize("values,path,fragment", [
    ({"controllerManger": {}}, "controllerManger", "did you mean 'controllerManager'"),
    ({"controllerManager": {"replcas": 2}}, "controllerManager.replcas", "did you mean 'replicas'"),
    ({"controllerManager": {"manager": {"image": {"pullPolicy": "always"}}}},
     "controllerManager.manager.image.pullPolicy", "did you mean 'Always'"),
    ({"controllerManager": {"manager": {"logLevel": 0}}}, "controllerManager.manager.logLevel", "--zap-log-level"),
    ({"controllerManager": {"manager": {"logLevel": "verbose"}}}, "controllerManager.manager.logLevel", "debug, info"),
    ({"controllerManager": {"manager": {"resources": {"requests": {"cpu": "3"}, "limits": {"cpu": "2"}}}}},
     "controllerManager.manager.resources.requests.cpu", "less than or equal to cpu limit"),
    ({"controllerManager": {"manager": {"resources": {"limits": {"memory": "lots"}}}}},
     "controllerManager.manager.resources.limits.memory", "is not a quantity"),
    ({"controllerManager": {"manager": {"podAnnotations": {"team": 7}}}},
     "controllerManager.manager.podAnnotations.team", "must be a string"),
    ({"controllerManager": {"nodeSelector": {"pool": "ops pool"}}}, "controllerManager.nodeSelector.pool",
     "a valid label"),
    ({"controllerManager": {"tolerations": [{"operator": "Exists", "value": "x"}]}},
     "controllerManager.tolerations[0].operator", "value must be empty"),
    ({"controllerManager": {"tolerations": [{"key": "a", "effect": "NoSchedule", "tolerationSeconds": 5}]}},
     "controllerManager.tolerations[0].effect", "must be 'NoExecute'"),
    ({"controllerManager": {"dnsPolicy": "None"}}, "controllerManager.dnsPolicy", "Unsupported value"),
    ({"controllerManager": {"livenessProbe": {"successThreshold": 2}}}, "controllerManager.livenessProbe.successThreshold",
     "must be 1"),
    ({"controllerManager": {"readinessProbe": {"periodSeconds": -1}}}, "controllerManager.readinessProbe.periodSeconds",
     "must be a whole number from 0"),
    ({"controllerManager": {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}},
     "controllerManager.strategy.rollingUpdate", "may not be specified"),
    ({"controllerManager": {"podDisruptionBudget": {"minAvailable": "150%"}}},
     "controllerManager.podDisruptionBudget.minAvailable", "greater than 100%"),
    ({"controllerManager": {"imagePullSecrets": ["regcred"]}}, "controllerManager.imagePullSecrets", "{name: <secret>}"),
    ({"metricsService": {"ports": [{"port": 70000}]}}, "metricsService.ports[0].port", "between 1 and 65535"),
    ({"metricsService": {"ports": [{"name": "a", "port": 1}, {"port": 2}]}}, "metricsService.ports[1].name",
     "Required value"),
    ({"metricsService": {"type": "ExternalName"}}, "metricsService.type", "Unsupported value"),
    ({"webhookService": {"ports": [{"port": 443, "targetPort": "webhook_server"}]}}, "webhookService.ports[0].targetPort",
     "IANA service name"),
    ({"webhookService": {"ipDualStack": {"ipFamilies": ["IPv4", "IPv4"]}}}, "webhookService.ipDualStack.ipFamilies",
     "distinct families"),
    ({"mutatingWebhook": {"reinvocationPolicy": "Always"}}, "mutatingWebhook.reinvocationPolicy", '"IfNeeded"'),
    ({"enableCertManager": "false"}, "enableCertManager", 'even "false", as true'),
    ({"fullnameOverride": "kq"}, "fullnameOverride", "deploy/kq-controller-manager"),
    ({"nameOverride": "queue"}, "nameOverride", "deploy/kueue-queue-controller-manager"),
])
def test_values_the_chart_would_render_into_an_invalid_object(values, path, fragment):
    found = errors(values)
    assert len(found) == 1 and found[0].startswith(f"{path}: ") and fragment in found[0], found


def test_feature_gates_as_the_chart_takes_them():
    report = check_chart_values({"controllerManager": {"featureGates": [
        {"name": "TopologyAwareScheduling", "enabled": True}, {"name": "LocalQueueMetrics", "enabled": False}]}})
    assert report.errors == [] and report.command_line_gates == {"TopologyAwareScheduling": True,
                                                                 "LocalQueueMetrics": False}
    assert errors({"controllerManager": {"featureGates": [{"name": "PartialAdmission", "enabled": "false"}]}}) == [
        'controllerManager.featureGates[0].enabled: Invalid value: "false": must be true or false; the chart renders '
        "PartialAdmission=%t, which Kueue cannot read otherwise"]
    assert "did you mean 'enabled'" in errors({"controllerManager": {"featureGates": [
        {"name": "PartialAdmission", "enable": True}]}})[0]
    assert errors({"controllerManager": {"featureGates": {"PartialAdmission": True}}})[0].startswith(
        "controllerManager.featureGates: Invalid value")
    assert check_chart_values({"controllerManager": {"featureGates": []}}).command_line_gates == {}


def test_a_disruption_budget_that_blocks_every_drain_is_a_warning():
    values = {"controllerManager": {"replicas": 1, "podDisruptionBudget": {"enabled": True, "minAvailable": 1}}}
    assert errors(values) == [] and "upgrades would stall" in warnings(values)[0]
    values["controllerManager"]["replicas"] = 2
    assert warnings(values) == []


def test_open_maps_take_any_keys():
    assert errors({"controllerManager": {"manager": {"podSecurityContext": {"runAsUser": 1000}},
                                         "nodeSelector": {"kubernetes.azure.com/mode": "system"}},
                   "certManager": {"issuerRef": {"name": "x", "kind": "ClusterIssuer"}}}) == []
    assert CHART_KEYS["controllerManager"]["manager"]["resources"] == OPEN


def test_fullname_follows_the_charts_helper():
    assert fullname({}) == "kueue" and fullname({"nameOverride": "kueue"}) == "kueue"
    assert fullname({"nameOverride": "ue"}) == "kueue"  # the release name contains it
    assert fullname({"fullnameOverride": "x" * 70 + "-"}) == "x" * 63


def _keys(tree: dict, names: set) -> set:
    for key, child in tree.items():
        names.add(key)
        if isinstance(child, dict):
            _keys(child, names)
    return names


def test_any_values_get_sentences_never_an_exception():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    names = sorted(_keys(CHART_KEYS, set()) | {"name", "enabled", "port", "targetPort", "key", "operator", "Exists",
                                               "cpu", "limits", "requests", "type", "rollingUpdate", "maxSurge"})
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**33, 2**33), st.floats(allow_nan=True),
                        st.sampled_from(names), st.text(max_size=6))
    values = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(names), inner, max_size=4)), max_leaves=25)

    @settings(max_examples=200, deadline=None)
    @given(st.dictionaries(st.sampled_from(sorted(CHART_KEYS)), values, max_size=5))
    def judge(chart):
        report = check_chart_values(chart)
        assert all(e.message for e in report.errors + report.warnings)

    judge()
