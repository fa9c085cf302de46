"""The Pulumi-free core: quantities, the structural validator, and the dependency direction."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import pytest

from aks_kueue.k8s.quantity import QuantityError, parse_quantity
from aks_kueue.kueue.structural import validate_structural
from tests.conftest import ROOT


@pytest.mark.parametrize("text,value", [
    ("60", 60), ("500m", Fraction(1, 2)), ("240Gi", 240 * 2**30), ("1.5Gi", 3 * 2**29), ("1e3", 1000),
    ("2k", 2000), (".5", Fraction(1, 2)), ("+1", 1), ("-1", -1), (7, 7), ("100n", Fraction(1, 10**7)),
])
def test_quantities_are_exact(text, value):
    assert parse_quantity(text) == value


@pytest.mark.parametrize("bad", ["12 cores", "1.5 Gi", "", "Gi", "1GB", True, 0.5, None, [1]])
def test_bad_quantities(bad):
    with pytest.raises(QuantityError):
        parse_quantity(bad)


SCHEMA = {
    "type": "object",
    "required": ["size"],
    "properties": {
        "size": {"type": "integer", "minimum": 1},
        "mode": {"type": "string", "enum": ["A", "B"], "default": "A"},
        "items": {"type": "array", "maxItems": 2, "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
    "x-kubernetes-validations": [{"rule": "self.mode == 'A' || self.size > 2", "message": "B needs size > 2"},
                                 {"rule": "self.size == oldSelf.size", "message": "immutable"}],
}


def test_defaults_are_applied_before_rules():
    value, errors = validate_structural(SCHEMA, {"size": 1})
    assert errors == [] and value["mode"] == "A"


def test_every_structural_failure_is_reported_with_its_path():
    _, errors = validate_structural(SCHEMA, {"mode": "C", "items": [{"name": "x"}, {"name": "x"}, {}],
                                             "extra": 1, "free": {"anything": [1]}})
    text = [str(e) for e in errors]
    assert 'mode: Unsupported value: "C": supported values: "A", "B"' in text
    assert 'items[1]: Duplicate value: {"name": "x"}' in text
    assert "items: Too many: 3: must have at most 2 items" in text
    assert 'extra: unknown field "extra"; it is not part of this kind\'s schema' in text  # the fix after "; "
    assert "size: Required value" in text
    assert not any(t.startswith("free") for t in text)


def test_cel_rules_run_and_transition_rules_are_skipped():
    _, errors = validate_structural(SCHEMA, {"size": 2, "mode": "B"})
    assert [str(e) for e in errors] == ["Invalid value: B needs size > 2"]


def test_type_errors_stop_descent():
    _, errors = validate_structural(SCHEMA, {"size": "two"})
    assert [str(e) for e in errors][0] == 'size: Invalid value: "two": must be of type integer'


def test_the_core_never_imports_pulumi():
    code = ("import sys; sys.modules['pulumi'] = None; "
            "import aks_kueue.kueue.validate, aks_kueue.settings, aks_kueue.model.from_settings, aks_kueue.judge, "
            "aks_kueue.admission.quota")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("module", ["aks_kueue.kueue.configuration", "components.kueue_install.values", "aks_kueue.model.from_settings", "aks_kueue.judge",
                                    "aks_kueue.kueue.validate", "aks_kueue.settings", "aks_kueue.cli"])
def test_each_module_imports_on_its_own(module):
    done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _cq(spec, metadata=None, api="kueue.x-k8s.io/v1beta2"):
    from aks_kueue.kueue.validate import load_object, validate_object

    obj = load_object({"apiVersion": api, "kind": "ClusterQueue",
                       "metadata": metadata or {"name": "cq"}, "spec": {"namespaceSelector": {}, **spec}})
    return [str(e) for e in validate_object(obj)], obj


def _one_flavor(name="f", **quota):
    return {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
        {"name": name, "resources": [{"name": "cpu", "nominalQuota": "1", **quota}]}]}]}


@pytest.mark.parametrize("spec,metadata,fragment", [
    ({"cohortName": "team-a\n"}, None, "spec.cohortName: Invalid value"),             # RE2 `$` is the end
    (_one_flavor(nominalQuota="10\n"), None, "nominalQuota: Invalid value"),
    ({}, {"name": "cq\n"}, "metadata.name: Invalid value"),
    ({"namespaceSelector": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["x", None]}]}},
     None, "values[1]: Invalid value: null: must be of type string"),
    ({"namespaceSelector": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["bad value!"]}]}},
     None, "values[0]: Invalid value"),
    ({"cohortName": "c", "fairSharing": {"weight": "1n"}}, None, "spec.fairSharing: Invalid value"),
    ({}, {"name": "cq", "labelz": {}}, 'metadata.labelz: unknown field "metadata.labelz"'),
    ({}, {"name": "cq", "annotations": {"Bad Key": "x"}}, "metadata.annotations: Invalid value"),
])
def test_fidelity_rejections(spec, metadata, fragment):
    errors, _ = _cq(spec, metadata)
    assert any(fragment in e for e in errors), errors


def test_fidelity_acceptances():
    long_a, long_b = "x" * 80 + "-a", "x" * 80 + "-b"
    spec = {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
        {"name": long_a, "resources": [{"name": "cpu", "nominalQuota": "1"}]},
        {"name": long_b, "resources": [{"name": "cpu", "nominalQuota": "1"}]}]}]}
    assert _cq(spec)[0] == []                                    # long names are not duplicates
    assert _cq({}, {"name": "cq", "namespace": "ignored"})[0] == []   # the server clears it
    assert _cq(_one_flavor(nominalQuota="1e99999999"))[0] == []  # parses at once, as Go does
    from aks_kueue.kueue.validate import load_object, validate_object

    wpc = load_object({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
                       "metadata": {"name": "p"}, "value": 2147483647})
    assert validate_object(wpc) == []                            # the largest int32 (past it: see below)
    topology = load_object({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology", "metadata": {"name": "t"},
                            "spec": {"levels": [{"nodeLabel": "kubernetes.io/hostname"}]}})
    assert validate_object(topology) == []


def test_v1beta1_admission_checks_replace_the_strategy_like_kueue():
    from aks_kueue.kueue.convert import cluster_queue_spec_to_v1beta2

    spec = {"admissionChecks": ["a"], "admissionChecksStrategy": {"admissionChecks": [{"name": "b"}]}}
    assert cluster_queue_spec_to_v1beta2(spec)["admissionChecksStrategy"] == {"admissionChecks": [{"name": "a"}]}
    assert "admissionChecksStrategy" not in cluster_queue_spec_to_v1beta2({"admissionChecks": []})


def test_v1beta1_objects_are_checked_against_their_own_schema():
    errors, _ = _cq({"cohortName": "x"}, api="kueue.x-k8s.io/v1beta1")
    assert errors == ['spec.cohortName: unknown field "spec.cohortName"; it is not part of this kind\'s schema; '
                      "did you mean 'cohort'?"]
    errors, obj = _cq({"cohort": "x"}, api="kueue.x-k8s.io/v1beta1")
    assert errors == [] and obj.manifest["spec"]["cohortName"] == "x"


def test_v1beta1_workload_priority_becomes_a_reference():
    from aks_kueue.kueue.convert import workload_spec_to_v1beta2

    spec = workload_spec_to_v1beta2({"priorityClassSource": "scheduling.k8s.io/priorityclass",
                                     "priorityClassName": "system-high", "priority": 5})
    assert spec == {"priorityClassRef": {"group": "scheduling.k8s.io", "kind": "PriorityClass",
                                         "name": "system-high"}, "priority": 5}


def test_v1beta1_multikueue_cluster_source_moves_under_cluster_source():
    from aks_kueue.kueue.validate import load_object, validate_object

    obj = load_object({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "MultiKueueCluster",
                       "metadata": {"name": "worker"},
                       "spec": {"kubeConfig": {"location": "worker-secret", "locationType": "Secret"}}})
    assert validate_object(obj) == []
    assert obj.manifest["spec"] == {"clusterSource": {"kubeConfig": {"location": "worker-secret",
                                                                     "locationType": "Secret"}}}


def _judge(manifest):
    from aks_kueue.kueue.validate import load_object, validate_object

    return [str(e) for e in validate_object(load_object(manifest))]


V1B2 = "kueue.x-k8s.io/v1beta2"


def test_misspelt_fields_get_a_hint():
    errors = _judge({"apiVersion": V1B2, "kind": "ClusterQueue", "metadata": {"name": "cq", "lables": {}},
                     "spec": {"namespaceSelector": {}, "cohortNme": "x", "resourceGroups": [
                         {"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [
                             {"name": "cpu", "nominalQuta": "1"}]}]}]}})
    assert ("metadata.lables: unknown field \"metadata.lables\"; it is not part of ObjectMeta; did you mean "
            "'labels'?") in errors
    assert ("spec.cohortNme: unknown field \"spec.cohortNme\"; it is not part of this kind's schema; "
            "did you mean 'cohortName'?") in errors
    assert any(e.startswith("spec.resourceGroups[0].flavors[0].resources[0].nominalQuta:")
               and e.endswith("did you mean 'nominalQuota'?") for e in errors)
    assert any(e.endswith("unknown field \"spec.zzz\"; it is not part of this kind's schema")
               for e in _judge({"apiVersion": V1B2, "kind": "Cohort", "metadata": {"name": "c"}, "spec": {"zzz": 1}}))


@pytest.mark.parametrize("value,ok", [(2**31 - 1, True), (-(2**31), True), (2**31, False), (-(2**31) - 1, False)])
def test_int32_fields_hold_what_kueue_can_decode(value, ok):
    """The API server does not check `format: int32`; Kueue's Go types do."""
    priority_class = {"apiVersion": V1B2, "kind": "WorkloadPriorityClass", "metadata": {"name": "p"}, "value": value}
    errors = _judge(priority_class)
    assert (errors == []) == ok, errors
    if not ok:
        assert errors == [f"value: Invalid value: {value}: must be a 32-bit integer, from -2147483648 to 2147483647: "
                          "Kueue reads this field as int32 and could not decode the WorkloadPriorityClass at all, "
                          "although the API server would store it (no Kueue webhook checks a WorkloadPriorityClass)"]
    workload = {"apiVersion": V1B2, "kind": "Workload", "metadata": {"name": "w", "namespace": "ns"},
                "spec": {"queueName": "q", "podSets": [{"name": "main", "count": value if value > 0 else 1,
                                                        "template": {"spec": {"containers": [{"name": "c"}]}}}]}}
    errors = _judge(workload)
    if value > 0 and not ok:
        assert errors == [f"spec.podSets[0].count: Invalid value: {value}: must be a 32-bit integer, from "
                          "-2147483648 to 2147483647: Kueue's webhook decodes this field as int32 and cannot read "
                          "the Workload, so the API server refuses it"]
    else:
        assert errors == []


def test_a_local_queue_name_must_fit_a_label_value():
    from aks_kueue.kueue.validate import ReferenceRules, load_object, validate_set

    def queue(name):
        return load_object({"apiVersion": V1B2, "kind": "LocalQueue", "metadata": {"name": name, "namespace": "ns"},
                            "spec": {"clusterQueue": "cq"}})

    cq = load_object({"apiVersion": V1B2, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": {}})
    long, fits = queue("q" * 64), queue("q" * 63)
    assert _judge(long.manifest) == []  # Kueue accepts it...
    found = validate_set([cq, long, fits], ReferenceRules())
    assert [(e.object.name, e.field) for e in found] == [("q" * 64, "metadata.name")]  # ...the program does not
    assert "kueue.x-k8s.io/queue-name label" in found[0].message
    assert "Kueue itself accepts up to 253 characters" in found[0].fix


def test_odd_workload_status_gets_sentences():
    from aks_kueue.kueue.workload_webhook import validate_workload_status

    spec = {"podSets": [{"name": "main", "count": 2}]}
    for status, field in (({"admission": {"podSetAssignments": [{"name": "main", "count": 2, "resourceUsage": "x"}]}},
                           "status.admission.podSetAssignments[0].resourceUsage"),
                          ({"admission": {"podSetAssignments": [{"name": "main", "flavors": "x"}]}},
                           "status.admission.podSetAssignments[0].flavors"),
                          ({"reclaimablePods": [{"name": "main", "count": "1"}]}, "status.reclaimablePods[main].count"),
                          ({"reclaimablePods": "x"}, "status.reclaimablePods")):
        assert [e.field for e in validate_workload_status({"spec": spec, "status": status})] == [field]
