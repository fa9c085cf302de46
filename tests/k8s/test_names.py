"""k8s/names: one regex per Kubernetes name rule, with the API server's messages."""

import pytest

from aks_kueue.k8s import names


@pytest.mark.parametrize("value,ok", [("a", True), ("a-1", True), ("1a", True), ("-a", False), ("a-", False),
                                      ("A", False), ("a.b", False), ("a" * 63, True), ("a" * 64, False), (5, False)])
def test_dns1123_label(value, ok):
    assert (names.dns1123_label_problem(value) is None) is ok


@pytest.mark.parametrize("value,ok", [("a.b-c.d", True), ("a..b", False), ("a.", False), ("a" * 253, True),
                                      ("a" * 254, False), ("A.b", False)])
def test_dns1123_subdomain(value, ok):
    assert (names.dns1123_subdomain_problem(value) is None) is ok


@pytest.mark.parametrize("value,ok", [("a1", True), ("1a", False), ("a-b", True)])
def test_dns1035_label(value, ok):
    assert (names.dns1035_label_problem(value) is None) is ok


@pytest.mark.parametrize("value,problem", [
    ("nvidia.com/gpu", None), ("cpu", None), ("My_Name.x", None), ("/gpu", "prefix part must be non-empty"),
    ("Example.com/gpu", "prefix part a lowercase RFC 1123 subdomain"), ("example.com/", "name part must be non-empty"),
    ("a/b/c", "a qualified name must consist"), ("_x", "name part must consist"),
    ("a" * 64, "name part must be no more than 63 characters"),
])
def test_qualified_names(value, problem):
    found = names.qualified_name_problem(value)
    assert found is None if problem is None else found.startswith(problem)


@pytest.mark.parametrize("value,ok", [("", True), ("v1.2_3-x", True), ("-x", False), ("a" * 64, False), (1, False)])
def test_label_values(value, ok):
    assert (names.label_value_problem(value) is None) is ok


def test_messages_name_the_regex_as_kubernetes_does():
    assert names.dns1123_subdomain_problem("A") == (
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    assert names.dns1123_label_problem("a" * 64) == "must be no more than 63 characters"
