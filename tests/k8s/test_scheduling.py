"""Kubernetes' node selector requirements, as the API server and the scheduler read them."""

from __future__ import annotations

import pytest

from aks_kueue.k8s.scheduling import SelectorError, label_selector_matches, requirement_matches

LABELS = {"kubernetes.azure.com/agentpool": "cpu", "cores": "8"}


@pytest.mark.parametrize("requirement, expected", [
    ({"key": "kubernetes.azure.com/agentpool", "operator": "In", "values": ["cpu", "gpu"]}, True),
    ({"key": "kubernetes.azure.com/agentpool", "operator": "NotIn", "values": ["cpu"]}, False),
    ({"key": "zone", "operator": "NotIn", "values": ["1"]}, True),
    ({"key": "zone", "operator": "DoesNotExist"}, True),
    ({"key": "cores", "operator": "Gt", "values": ["4"]}, True),
    ({"key": "cores", "operator": "Lt", "values": ["4"]}, False),
])
def test_requirements(requirement, expected):
    assert requirement_matches(requirement, LABELS) is expected


@pytest.mark.parametrize("requirement", [
    {"key": "kubernetes.azure.com/agentpool", "operator": "In", "values": True},
    {"key": "kubernetes.azure.com/agentpool", "operator": "In", "values": "cpu"},
    {"key": "kubernetes.azure.com/agentpool", "operator": "In", "values": [1]},
    {"key": "cores", "operator": "Gt", "values": ["4", "5"]},
    {"key": "cores", "operator": "Gt", "values": ["four"]},
    {"key": "cores", "operator": "Near", "values": ["4"]},
    {"key": [], "operator": "In", "values": ["t4"]},  # found by tests/policies/test_robustness.py
])
def test_requirements_the_api_server_refuses_raise(requirement):
    with pytest.raises(SelectorError):
        requirement_matches(requirement, LABELS)


def test_an_empty_label_selector_selects_everything():
    assert label_selector_matches({}, LABELS)
    assert not label_selector_matches({"matchLabels": {"cores": "16"}}, LABELS)
