"""Each rule family of Kueue's validation rejects a bad queue config, naming the key path: the
judge's blocking findings on the model of the settings, as the program prints them."""

from __future__ import annotations

import pytest
import yaml

from aks_kueue.kueue.convert import cluster_queue_spec_to_v1beta2, to_v1beta2
from aks_kueue.judge import judge
from tests.conftest import ROOT, edited, model_of, refusals

CQ0 = "aks-kueue:queues.clusterQueues[0]"
RES0 = f"{CQ0}.spec.resourceGroups[0].flavors[0].resources[0]"


def plan(config):
    return model_of(config)


def problems(stack: str, edit) -> list[str]:
    found = refusals(edited(stack, edit))
    assert found, "the program accepted the config"
    return found


def queues(c):
    return c["aks-kueue:queues"]


def cq0(c):
    return queues(c)["clusterQueues"][0]["spec"]


def first_resource(c):
    return cq0(c)["resourceGroups"][0]["flavors"][0]["resources"][0]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_stacks_are_valid(stack):
    assert plan(edited(stack, lambda c: None)).objects


def test_quantity_syntax():
    found = problems("prod", lambda c: first_resource(c).update(nominalQuota="12 cores"))
    assert found == [f'{RES0}.nominalQuota: Invalid value: "12 cores": must be a quantity, such as 60, 500m or 240Gi']


def test_quantity_given_as_a_float_must_be_quoted():
    found = problems("prod", lambda c: first_resource(c).update(nominalQuota=0.5))
    assert found == [f"{RES0}.nominalQuota: Invalid value: 0.5: must be of type integer or string"]


def test_negative_quota():
    found = problems("prod", lambda c: first_resource(c).update(nominalQuota="-1"))
    assert found == [f'{RES0}.nominalQuota: Invalid value: "-1": must be greater than or equal to 0']


def test_list_limits():
    def edit(c):
        group = cq0(c)["resourceGroups"][0]
        cq0(c)["resourceGroups"] = [group] + [
            {"coveredResources": [f"example.com/r{i}"],
             "flavors": [{"name": "cpu", "resources": [{"name": f"example.com/r{i}", "nominalQuota": "1"}]}]}
            for i in range(16)]
    assert f"{CQ0}.spec.resourceGroups: Too many: 17: must have at most 16 items" in problems("prod", edit)


def test_resources_must_match_covered_resources_in_number():
    def edit(c):
        cq0(c)["resourceGroups"][0]["flavors"][0]["resources"].pop()
    assert problems("prod", edit) == [f"{CQ0}.spec.resourceGroups[0]: Invalid value: flavors must have the same "
                                      "number of resources as the coveredResources"]


def test_resources_must_match_covered_resources_in_order():
    def edit(c):
        resources = cq0(c)["resourceGroups"][0]["flavors"][0]["resources"]
        resources[0], resources[1] = resources[1], resources[0]
    found = problems("prod", edit)
    assert f'{RES0}.name: Invalid value: "memory": must match the name in coveredResources' in found


def test_a_resource_in_two_groups():
    def edit(c):
        cq0(c)["resourceGroups"].append({"coveredResources": ["cpu"], "flavors": [
            {"name": "spare", "resources": [{"name": "cpu", "nominalQuota": "1"}]}]})
        queues(c)["resourceFlavors"].append({"name": "spare", "spec": {}})
    assert f'{CQ0}.spec.resourceGroups[1].coveredResources[0]: Duplicate value: "cpu"' in problems("prod", edit)


def test_borrowing_limit_without_cohort():
    def edit(c):
        del cq0(c)["cohortName"]
        first_resource(c)["borrowingLimit"] = "4"
    found = problems("prod", edit)
    assert f"{CQ0}.spec: Invalid value: borrowingLimit must be nil when cohort is empty" in found


def test_lending_limit_without_cohort():
    def edit(c):
        cq0(c).pop("cohortName")
        for group in cq0(c)["resourceGroups"]:
            for flavor in group["flavors"]:
                for resource in flavor["resources"]:
                    resource.pop("borrowingLimit", None)
        first_resource(c)["lendingLimit"] = "4"
    assert f'{RES0}.lendingLimit: Invalid value: "4": must be nil when cohort is empty' in problems("prod", edit)


def test_lending_limit_above_nominal_quota():
    found = problems("prod", lambda c: first_resource(c).update(lendingLimit="65"))
    assert found == [f'{RES0}.lendingLimit: Invalid value: "65": must be less than or equal to the nominalQuota']


def test_fungibility_preference_needs_try_next_flavor():
    def edit(c):
        cq0(c)["flavorFungibility"] = {"preference": "PreemptionOverBorrowing"}
    assert problems("prod", edit) == [f"{CQ0}.spec.flavorFungibility: Invalid value: preference can only be set "
                                      "when both whenCanBorrow and whenCanPreempt are TryNextFlavor"]


def test_preemption_borrow_within_cohort_needs_reclaim():
    def edit(c):
        cq0(c)["preemption"] = {"reclaimWithinCohort": "Never", "borrowWithinCohort": {"policy": "LowerPriority"}}
    found = problems("prod", edit)
    assert len(found) == 1 and found[0].startswith(f"{CQ0}.spec.preemption: Invalid value:")


def test_unknown_enum_value():
    found = problems("prod", lambda c: cq0(c).update(queueingStrategy="Random"))
    assert found == [f'{CQ0}.spec.queueingStrategy: Unsupported value: "Random": supported values: '
                     '"StrictFIFO", "BestEffortFIFO"']


def test_unknown_spec_field():
    found = problems("prod", lambda c: cq0(c).update(cohorts="research"))
    assert found == [f'{CQ0}.spec.cohorts: unknown field "spec.cohorts"; it is not part of this kind\'s schema; '
                     "did you mean 'cohortName'?"]


@pytest.mark.parametrize("edit,path,kind", [
    (lambda c: queues(c)["localQueues"][0]["spec"].update(clusterQueue="team-z"),
     "aks-kueue:queues.localQueues[0].spec.clusterQueue", "ClusterQueue"),
    (lambda c: cq0(c)["resourceGroups"][0]["flavors"][0].update(name="v100"),
     f"{CQ0}.spec.resourceGroups[0].flavors[0].name", "ResourceFlavor"),
    (lambda c: queues(c)["resourceFlavors"][0].setdefault("spec", {}).update(topologyName="dc"),
     "aks-kueue:queues.resourceFlavors[0].spec.topologyName", "Topology"),
])
def test_dangling_references(edit, path, kind):
    found = problems("prod", edit)
    assert any(p.startswith(f"{path}: Not found: {kind} ") for p in found), found


def test_implicit_cohorts_are_accepted_as_in_kueue():
    """Kueue creates a cohort for any cohortName or parentName; Kueue's docs and Microsoft's AKS sample
    rely on it, so an undeclared cohort is not refused."""
    def edit(c):
        queues(c)["cohorts"] = [{"name": "research", "spec": {"parentName": "org"}}]  # org is implicit
        for cq in queues(c)["clusterQueues"]:
            cq["spec"]["cohortName"] = "physics"  # both queues share an implicit cohort
    assert refusals(edited("prod", edit)) == []
    findings = judge(model_of(edited("prod", edit))).findings
    assert not [f for f in findings if f.kind == "cohort-single-member"]


def test_a_cohort_only_one_cluster_queue_names_is_a_warning():
    def edit(c):
        queues(c)["clusterQueues"][1]["spec"]["cohortName"] = "reserch"  # a typo splits team-b off
    assert refusals(edited("prod", edit)) == []
    warned = [f for f in judge(model_of(edited("prod", edit))).findings if f.kind == "cohort-single-member"]
    assert [(f.severity.value, f.key) for f in warned] == [
        ("warning", "aks-kueue:queues.clusterQueues[1].spec.cohortName")]
    assert "'reserch'" in warned[0].message and "research" in warned[0].message


def test_cohort_cycle():
    def edit(c):
        queues(c)["cohorts"] = [{"name": "research", "spec": {"parentName": "org"}},
                                {"name": "org", "spec": {"parentName": "research"}}]
    found = problems("prod", edit)
    assert any("cohort cycle" in p and p.startswith("aks-kueue:queues.cohorts[") for p in found), found


def test_hierarchical_cohorts_are_fine():
    def edit(c):
        queues(c)["cohorts"] = [{"name": "org", "spec": {}}, {"name": "research", "spec": {"parentName": "org"}}]
    kinds = [o.kind for o in plan(edited("prod", edit)).objects]
    assert kinds.count("Cohort") == 2


def test_duplicate_names():
    def edit(c):
        queues(c)["clusterQueues"][1]["name"] = "team-a"
    found = problems("prod", edit)
    assert any(p.startswith("aks-kueue:queues.clusterQueues[1].name: Duplicate value: \"team-a\"") for p in found)


def test_aks_names_are_reserved_in_managed_mode():
    def rename(c):
        queues(c)["workloadPriorityClasses"][0]["name"] = "aks-high"
    found = problems("prod", rename)
    assert found[0].startswith('aks-kueue:queues.workloadPriorityClasses[0].name: Invalid value: "aks-high": '
                               "the AKS managed Kueue extension owns")

    def helm_mode(c):
        rename(c)
        c["aks-kueue:expectedWorkloads"][0]["priorityClass"] = "aks-high"
    assert plan(edited("dev", helm_mode)).of_kind("WorkloadPriorityClass")[0].name == "aks-high"


def test_managed_mode_may_reference_the_extension_flavors():
    def edit(c):
        cq0(c)["resourceGroups"][0]["flavors"][0]["name"] = "aks-cpu"
    plan(edited("prod", edit))


def test_priority_value_must_be_an_integer():
    found = problems("prod", lambda c: queues(c)["workloadPriorityClasses"][0].update(value="1000"))
    assert found == ['aks-kueue:queues.workloadPriorityClasses[0].value: Invalid value: "1000": '
                     "must be of type integer"]


def test_flavor_names_an_unknown_pool():
    found = problems("prod", lambda c: queues(c)["resourceFlavors"][1].update(nodePool="v100"))
    assert found[0] == ("aks-kueue:queues.resourceFlavors[1].nodePool: flavor 'a100' names pool 'v100': "
                        "no such pool; pools: cpu, a100, h100")


def test_flavor_cannot_use_the_system_pool():
    found = problems("prod", lambda c: queues(c)["resourceFlavors"][0].update(nodePool="system"))
    assert "never holds Kueue quota" in found[0]


def test_pool_derived_flavor_carries_the_pool_taints_and_merges_the_spec():
    def edit(c):
        queues(c)["resourceFlavors"][1]["spec"] = {"tolerations": [
            {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}
    flavor = next(o for o in plan(edited("prod", edit)).objects if o.name == "a100")
    assert flavor.manifest["spec"] == {
        "nodeLabels": {"kubernetes.azure.com/agentpool": "a100"},
        "nodeTaints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}],
        "tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}


def test_unset_namespace_selector_admits_nothing():
    found = problems("prod", lambda c: cq0(c).pop("namespaceSelector"))
    assert found[0].startswith(f"{CQ0}.spec.namespaceSelector: Required value: unset means no namespace")


def test_selector_that_misses_the_namespace():
    def edit(c):
        cq0(c)["namespaceSelector"] = {"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["elsewhere"]}]}
    found = problems("prod", edit)
    assert found[0].startswith(f"{CQ0}.spec.namespaceSelector: Invalid value: it does not select namespace 'team-a'")


def test_local_queue_in_a_system_namespace():
    found = problems("prod", lambda c: queues(c)["localQueues"][0].update(namespace="kube-system"))
    assert found[0].startswith("aks-kueue:queues.localQueues[0].namespace: Invalid value: 'kube-system'")


def test_v1beta1_spellings_are_converted():
    def edit(c):
        spec = cq0(c)
        spec["cohort"] = spec.pop("cohortName")
        spec["flavorFungibility"] = {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"}
    cq = next(o for o in plan(edited("prod", edit)).objects if o.kind == "ClusterQueue")
    assert cq.manifest["spec"]["cohortName"] == "research" and "cohort" not in cq.manifest["spec"]
    assert cq.manifest["spec"]["flavorFungibility"] == {"whenCanBorrow": "MayStopSearch",
                                                        "whenCanPreempt": "MayStopSearch"}


def test_v1beta1_admission_checks_become_a_strategy():
    assert cluster_queue_spec_to_v1beta2({"admissionChecks": ["prov"]}) == {
        "admissionChecksStrategy": {"admissionChecks": [{"name": "prov"}]}}
    assert to_v1beta2({"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "Cohort", "spec": {}})["apiVersion"] == \
        "kueue.x-k8s.io/v1beta2"


def test_expected_workload_must_name_a_defined_queue():
    found = problems("prod", lambda c: c["aks-kueue:expectedWorkloads"][0].update(queue="team-c/default"))
    assert found == ["aks-kueue:expectedWorkloads[0].queue: LocalQueue 'team-c/default' is not defined by this "
                     "stack (queues.localQueues or queueManifests); point it at one that is"]


MANIFESTS = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ProvisioningRequestConfig
metadata: {name: prov}
spec:
  provisioningClassName: best-effort-atomic-scale-up.autoscaling.x-k8s.io
---
apiVersion: v1
kind: List
items:
  - apiVersion: kueue.x-k8s.io/v1beta2
    kind: AdmissionCheck
    metadata: {name: prov}
    spec:
      controllerName: kueue.x-k8s.io/provisioning-request
      parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: prov}
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: ClusterQueue
    metadata: {name: scale-up}
    spec:
      cohort: research
      admissionChecks: [prov]
      namespaceSelector: {}
      resourceGroups:
        - coveredResources: [cpu]
          flavors: [{name: cpu, resources: [{name: cpu, nominalQuota: "0"}]}]
"""


def test_queue_manifests_are_loaded_converted_and_deployed(tmp_path):
    path = tmp_path / "kueue.yaml"
    path.write_text(MANIFESTS)
    result = plan(edited("prod", lambda c: c.update({"aks-kueue:queueManifests": [str(path)]})))
    cq = next(o for o in result.objects if o.name == "scale-up")
    assert cq.manifest["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    assert cq.manifest["spec"]["cohortName"] == "research"
    assert cq.manifest["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "prov"}]}
    kinds = [o.kind for o in result.objects]
    assert kinds.index("ProvisioningRequestConfig") < kinds.index("AdmissionCheck") < kinds.index("ClusterQueue")


@pytest.mark.parametrize("text,reason", [
    ("kind: [", "not valid YAML at line"),
    ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Queue\nmetadata: {name: x}\n", "kind 'Queue' is not a Kueue kind"),
    ("apiVersion: kueue.x-k8s.io/v1alpha1\nkind: ClusterQueue\n", "apiVersion 'kueue.x-k8s.io/v1alpha1'"),
])
def test_bad_queue_manifests(tmp_path, text, reason):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    found = problems("prod", lambda c: c.update({"aks-kueue:queueManifests": [str(path)]}))
    assert found[0].startswith(f"aks-kueue:queueManifests[0]: {path}") and reason in found[0], found


def test_invalid_object_in_a_manifest_names_file_and_document(tmp_path):
    path = tmp_path / "cq.yaml"
    path.write_text("---\n" + yaml.safe_dump({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
                                              "metadata": {"name": "x"}, "spec": {"queueingStrategy": "Fast"}}))
    found = problems("prod", lambda c: c.update({"aks-kueue:queueManifests": [str(path)]}))
    assert found == [f'aks-kueue:queueManifests[0]: {path} document 0 (ClusterQueue x): spec.queueingStrategy: '
                     'Unsupported value: "Fast": supported values: "StrictFIFO", "BestEffortFIFO"']


def test_missing_manifest_file():
    found = problems("prod", lambda c: c.update({"aks-kueue:queueManifests": ["kueue/none.yaml"]}))
    assert found == ["aks-kueue:queueManifests[0]: kueue/none.yaml: no such file"]


def test_one_judgement_checks_each_object_once(monkeypatch):
    from aks_kueue.judge import objects

    model = model_of(yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"], "prod")
    calls = []
    original = objects.checked_object
    monkeypatch.setattr(objects, "checked_object", lambda item: calls.append(item.key) or original(item))
    first = judge(model)
    assert len(model.objects) > 5 and sorted(calls) == sorted(item.key for item in model.objects)
    assert judge(model).findings == first.findings and len(calls) == len(model.objects)  # remembered
