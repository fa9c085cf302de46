"""Each policy of the pack, called with arguments built as the engine builds them: a violating
case and a passing case per policy, with no CLI, no servicer and no program run."""

from __future__ import annotations

import copy

import pytest
from pulumi_policy import EnforcementLevel
from pulumi_policy.proxy import UnknownValueError

from aks_kueue.policies import POLICIES
from aks_kueue.policies.base import INTERNAL_FAILURE
from tests.policies.args import (CLUSTER, CLUSTER_PROPS, EXTENSION, POOL, PROVIDER, UNKNOWN, carrier, gpu_queue_stack,
                                 kueue, pool_props, resource, stack_violations, workload)

BY_NAME = {p.name: p for p in POLICIES}


def policy(name):
    return BY_NAME[name]


def messages(found):
    return [message for message, _ in found]


def test_names_are_kebab_case_and_unique_with_descriptions():
    names = [p.name for p in POLICIES]
    assert len(names) == len(set(names)) == 30
    for p in POLICIES:
        assert p.name == p.name.lower() and " " not in p.name and p.description.endswith(".")
        assert p.enforcement_level in (EnforcementLevel.MANDATORY, EnforcementLevel.ADVISORY)


def test_the_base_stack_passes_every_mandatory_policy():
    shape = {"cpu": "6", "memory": "40Gi", "nvidia.com/gpu": "1"}
    resources = gpu_queue_stack(workloads=[workload("ft", shape)], environment="development")
    for p in POLICIES:
        if p.enforcement_level == EnforcementLevel.MANDATORY:
            assert stack_violations(p, resources) == [], p.name
    # Its authorized range is a documentation range: a warning, advisory, in a development stack ...
    warned = stack_violations(policy("aks-kueue-warnings"), resources)
    assert any("203.0.113.0/24 is a documentation range" in m and u.endswith("::main-aks") for m, u in warned)
    # ... and the one mandatory violation of a production one (issue 28).
    production = gpu_queue_stack(workloads=[workload("ft", shape)])
    assert [p.name for p in POLICIES if p.enforcement_level == EnforcementLevel.MANDATORY
            and stack_violations(p, production)] == ["aks-kueue-no-placeholders"]


# --- Kueue and capacity -------------------------------------------------------------------------


def test_unreadable_pool_is_reported_not_skipped_silently():
    resources = gpu_queue_stack()
    resources[1] = resource(POOL, "pools-cpu", pool_props("cpu", "Standard_D8s_v5", "ten"))
    found = stack_violations(policy("aks-kueue-resources-readable"), resources)
    assert messages(found) == ["AgentPool pools-cpu: AgentPool pools-cpu.maxCount is 'ten', not a whole number; "
                               "give the resource the shape the pack reads, or remove it "
                               "(see docs/reference/policies.md#resource-unreadable)"]
    assert found[0][1].endswith("::pools-cpu")


def test_an_unknown_vm_size_needs_the_capacity_tag():
    resources = gpu_queue_stack()
    resources[1] = resource(POOL, "pools-cpu", pool_props("cpu", "Standard_Z99", 3))
    assert "not in the VM size catalog" in messages(stack_violations(policy("aks-kueue-resources-readable"),
                                                                     resources))[0]
    resources[1] = resource(POOL, "pools-cpu", pool_props("cpu", "Standard_Z99", 3, tags={
        "aks-kueue-node-capacity": "cpu=8;memory=32Gi"}))
    assert stack_violations(policy("aks-kueue-resources-readable"), resources) == []


def test_kueue_objects_are_checked_by_kueues_rules():
    def bad_quota(objects):
        objects[2][1]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "12 cores"

    found = stack_violations(policy("kueue-objects-valid"), gpu_queue_stack(edit=bad_quota))
    assert len(found) == 1 and found[0][0].startswith(
        "ClusterQueue ml: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota")
    assert found[0][1].endswith("::clusterqueue-ml")


def test_the_stack_key_of_each_object_comes_from_the_model_configmap():
    def bad_quota(objects):
        objects[2][1]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "12 cores"

    resources = gpu_queue_stack(edit=bad_quota)
    resources.append(carrier([], keys={"ClusterQueue ml": "aks-kueue:queues.clusterQueues[0]"}))
    [(message, _)] = stack_violations(policy("kueue-objects-valid"), resources)
    assert message.startswith("aks-kueue:queues.clusterQueues[0].spec.resourceGroups[0].flavors[0].resources[0]"
                              ".nominalQuota: Invalid value")


def test_a_local_queue_namespace_must_exist_and_be_selected():
    def elsewhere(objects):
        objects[3][1]["metadata"]["namespace"] = "nowhere"

    found = messages(stack_violations(policy("kueue-objects-valid"), gpu_queue_stack(edit=elsewhere)))
    assert found == ["LocalQueue nowhere/default: namespace: namespace 'nowhere' is neither created by this stack "
                     "nor declared existing; create the namespace with this stack, "
                     "or list it in queues.existingNamespaces (see docs/reference/policies.md#namespace-unusable)"]


def test_exactly_one_installer():
    resources = gpu_queue_stack()
    both = resources + [resource(EXTENSION, "kueue-extension", {"extensionType": "Microsoft.Kueue"})]
    found = messages(stack_violations(policy("kueue-single-installer"), both))
    assert len(found) == 1 and "both as the AKS managed extension and from the Helm chart" in found[0]
    none = [r for r in resources if r.resource_type != "kubernetes:helm.sh/v3:Release"]
    assert "installs Kueue neither" in messages(stack_violations(policy("kueue-single-installer"), none))[0]
    assert stack_violations(policy("kueue-single-installer"), resources) == []


def test_install_mode_wants_objects_after_the_installer_and_a_pinned_series():
    resources = gpu_queue_stack()
    orphan_type, orphan = kueue("Cohort", "research", {})
    found = messages(stack_violations(policy("kueue-install-mode"),
                                      resources + [resource(orphan_type, "cohort-research", orphan)]))
    assert found == ["Cohort research: it does not depend on the Kueue installer; add dependsOn on the installer "
                     "(see docs/reference/policies.md#object-not-after-installer)"]
    resources[3] = resource("kubernetes:helm.sh/v3:Release", "kueue-helm", {
        "chart": "oci://registry.k8s.io/kueue/charts/kueue", "version": "0.18.1"})
    assert "is not a 0.19.x release" in " ".join(messages(stack_violations(policy("kueue-install-mode"), resources)))
    assert stack_violations(policy("kueue-install-mode"), gpu_queue_stack()) == []


def _preview_train_stack(environment):
    resources = gpu_queue_stack(installer="managed", environment=environment)
    resources[3] = resource(EXTENSION, "kueue-extension", {"extensionType": "microsoft.kueue",
                                                           "releaseTrain": "preview", "autoUpgradeMinorVersion": True})
    return resources


def test_no_preview_release_train_in_production_without_opt_in():
    train = policy("kueue-no-preview-train-in-prod")
    found = messages(stack_violations(train, _preview_train_stack("production")))
    assert len(found) == 1 and "preview release train with auto-upgrade in a production stack" in found[0]
    assert stack_violations(train, _preview_train_stack("development")) == []
    assert stack_violations(train, _preview_train_stack("production"), {"allowPreviewReleaseTrain": True}) == []
    assert stack_violations(train, gpu_queue_stack(installer="managed", environment="production")) == []


def test_quota_above_the_pools_is_mandatory_and_the_overhead_is_configurable():
    quota = policy("kueue-quota-fits-capacity")
    assert quota.enforcement_level == EnforcementLevel.MANDATORY
    found = stack_violations(quota, gpu_queue_stack(gpu_quota="3"))
    assert len(found) == 1 and "nvidia.com/gpu on flavor t4 adds up to 3" in found[0][0]
    # It is pinned to the ClusterQueue whose nominalQuota to lower.
    assert found[0][1].endswith("::clusterqueue-ml") and ".nominalQuota:" in found[0][0]
    assert stack_violations(quota, gpu_queue_stack()) == []
    # The memory quotas fit the pools at 7.5% VM overhead, not at 20%.
    over = messages(stack_violations(quota, gpu_queue_stack(), {"vmOverheadPercent": 20}))
    assert len(over) == 2 and all("the nominalQuota for memory" in m for m in over)


def test_a_flavor_that_lands_nowhere():
    def v100(objects):
        objects[1][1]["spec"]["nodeLabels"] = {"kubernetes.azure.com/agentpool": "v100"}

    found = messages(stack_violations(policy("kueue-flavors-match-pools"), gpu_queue_stack(edit=v100)))
    assert any("selects nodes labelled kubernetes.azure.com/agentpool=v100" in m for m in found)
    assert stack_violations(policy("kueue-flavors-match-pools"), gpu_queue_stack()) == []


def test_expected_workloads_must_fit_and_exist():
    fits = policy("kueue-expected-workloads-fit")
    too_big = workload("big", {"cpu": "12", "nvidia.com/gpu": "1"})
    found = stack_violations(fits, gpu_queue_stack(workloads=[too_big]))
    assert len(found) == 1 and "one pod requests cpu 12" in found[0][0]
    assert found[0][1].endswith("::expected")
    lost = workload("lost", {"cpu": "1"}, tolerate_gpu=False)
    lost["spec"]["queueName"] = "missing"
    assert "LocalQueue 'ml/missing' is not defined by this stack" in messages(
        stack_violations(fits, gpu_queue_stack(workloads=[lost])))[0]
    ok = workload("ok", {"cpu": "6", "memory": "40Gi", "nvidia.com/gpu": "1"})
    assert stack_violations(fits, gpu_queue_stack(workloads=[ok])) == []


def test_a_gpu_asked_for_by_limits_only_is_judged_too_big_for_a_one_gpu_node():
    """Limits stand in for requests (the usual way to ask for a GPU): two GPUs by limits alone do
    not fit a one-GPU T4 node, for the capacity check as for admission."""
    pod = {"containers": [{"name": "main", "resources": {"limits": {"nvidia.com/gpu": "2"},
                                                          "requests": {"cpu": "1"}}}],
           "tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}
    limits_only = workload("limits", {})
    limits_only["spec"]["podSets"][0]["template"]["spec"] = pod
    [(message, _)] = stack_violations(policy("kueue-expected-workloads-fit"),
                                      gpu_queue_stack(gpu_quota="4", workloads=[limits_only]))
    assert "one pod requests nvidia.com/gpu 2, cpu 1" in message and "allocates nvidia.com/gpu 1" in message


def test_managed_extension_limits():
    limits = policy("kueue-managed-extension-limits")
    old = gpu_queue_stack(installer="managed")
    old[0] = resource(CLUSTER, "main-aks", {**CLUSTER_PROPS, "kubernetesVersion": "1.33"})
    found = stack_violations(limits, old)
    assert len(found) == 1 and "below the managed Kueue extension's 1.34" in found[0][0] and found[0][1].endswith("::main-aks")
    assert stack_violations(limits, gpu_queue_stack(installer="managed")) == []


def _provisioning(provisioning_class: str):
    """The base stack's queue behind a ProvisioningRequest check with this class."""
    def edit(objects):
        objects[2][1]["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "gpu", "onFlavors": ["t4"]}]}
        objects[:0] = [
            kueue("ProvisioningRequestConfig", "gpu", {"provisioningClassName": provisioning_class}),
            kueue("AdmissionCheck", "gpu", {"controllerName": "kueue.x-k8s.io/provisioning-request", "parameters": {
                "apiGroup": "kueue.x-k8s.io", "kind": "ProvisioningRequestConfig", "name": "gpu"}})]
    return edit


def test_provisioning_request_checks_must_be_answerable_on_aks():
    supported = policy("kueue-provisioning-request-supported")
    assert supported.enforcement_level == EnforcementLevel.MANDATORY
    found = stack_violations(supported, gpu_queue_stack(edit=_provisioning("queued-provisioning.gke.io")))
    assert len(found) == 1 and "is not a class AKS's cluster autoscaler provides" in found[0][0]
    assert found[0][1].endswith("::provisioningrequestconfig-gpu") or found[0][1].endswith("::admissioncheck-gpu")
    answered = gpu_queue_stack(edit=_provisioning("best-effort-atomic-scale-up.autoscaling.x-k8s.io"))
    assert stack_violations(supported, answered) == []
    answered[0] = resource(CLUSTER, "main-aks", {**CLUSTER_PROPS, "nodeProvisioningProfile": {"mode": "Auto"}})
    [(message, urn)] = stack_violations(supported, answered)
    assert "node auto-provisioning" in message and urn.endswith("::admissioncheck-gpu")


def test_managed_extension_region_is_a_warning_and_configurable():
    region = policy("kueue-managed-extension-region")
    assert region.enforcement_level == EnforcementLevel.ADVISORY
    abroad = gpu_queue_stack(installer="managed")
    abroad[0] = resource(CLUSTER, "main-aks", {**CLUSTER_PROPS, "location": "westeurope"})
    assert "not westeurope" in messages(stack_violations(region, abroad))[0]
    assert stack_violations(region, abroad, {"additionalRegions": ["westeurope"]}) == []
    assert stack_violations(region, gpu_queue_stack(installer="managed")) == []


# --- the AKS security baseline -----------------------------------------------------------------


def _edited(path, value):
    props = copy.deepcopy(CLUSTER_PROPS)
    target = props
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return props


def _cluster_only(props, environment="production", extra=()):
    return [resource(CLUSTER, "main-aks", props), carrier([], environment), *extra]


@pytest.mark.parametrize("name, path, value, expected", [
    ("aks-local-accounts-disabled", ("disableLocalAccounts",), False, "local accounts are enabled"),
    ("aks-azure-rbac", ("aadProfile", "enableAzureRBAC"), False, "enableAzureRBAC are not both true"),
    ("aks-network-policy", ("networkProfile", "networkPolicy"), "none", "network policy engine is none"),
    ("aks-api-server-access-restricted", ("apiServerAccessProfile", "authorizedIPRanges"), [],
     "public to every address"),
    ("aks-api-server-access-restricted", ("apiServerAccessProfile", "authorizedIPRanges"),
     ["0.0.0.0/1", "128.0.0.0/1"], "taken together, admit every IPv4 address"),
    ("aks-auto-upgrade-channels", ("autoUpgradeProfile", "upgradeChannel"), "none", "upgrade channel is none"),
    ("aks-system-pool-isolated", ("agentPoolProfiles", 0, "nodeTaints"), [], "system pool system lacks the taint"),
])
def test_baseline_item_is_mandatory_in_production_and_a_warning_in_development(name, path, value, expected):
    assert policy(name).enforcement_level == EnforcementLevel.MANDATORY
    found = stack_violations(policy(name), _cluster_only(_edited(path, value)))
    assert len(found) == 1 and expected in found[0][0] and found[0][1].endswith("::main-aks"), found
    assert stack_violations(policy(name), _cluster_only(CLUSTER_PROPS)) == []
    # In development the same finding is advisory, reported by aks-kueue-warnings instead.
    assert stack_violations(policy(name), _cluster_only(_edited(path, value), "development")) == []
    warned = messages(stack_violations(policy("aks-kueue-warnings"), _cluster_only(_edited(path, value),
                                                                                   "development")))
    assert any(expected in m for m in warned)


def test_a_private_cluster_needs_no_authorized_ranges():
    private = _edited(("apiServerAccessProfile",), {"enablePrivateCluster": True})
    assert stack_violations(policy("aks-api-server-access-restricted"), _cluster_only(private)) == []


def test_a_system_agent_pool_resource_is_judged_too():
    system = resource(POOL, "pools-sys2", pool_props("sys2", "Standard_D4s_v5", 3, mode="System"))
    found = messages(stack_violations(policy("aks-system-pool-isolated"), _cluster_only(CLUSTER_PROPS, extra=[system])))
    assert found and "system pool sys2 lacks" in found[0]


def test_a_baseline_property_of_the_wrong_shape_is_reported_not_a_crash():
    odd = _cluster_only(_edited(("apiServerAccessProfile", "authorizedIPRanges"), "10.0.0.0/8"))
    found = messages(stack_violations(policy("aks-kueue-resources-readable"), odd))
    assert found and "apiServerAccessProfile.authorizedIPRanges is '10.0.0.0/8', not a list" in found[0]
    assert not any(INTERNAL_FAILURE in m for p in POLICIES for m in messages(stack_violations(p, odd)))


def test_the_kubeconfig_stays_with_a_provider_that_keeps_it_secret():
    secret = policy("aks-kubeconfig-secret")
    kubeconfig = "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\n"
    kept = resource(PROVIDER, "main-k8s", {"kubeconfig": kubeconfig}, secret_outputs=["kubeconfig"])
    assert stack_violations(secret, _cluster_only(CLUSTER_PROPS, extra=[kept])) == []
    plain = resource(PROVIDER, "main-k8s", {"kubeconfig": kubeconfig})
    assert "not kept secret" in messages(stack_violations(secret, _cluster_only(CLUSTER_PROPS, extra=[plain])))[0]
    leaked = resource("kubernetes:core/v1:ConfigMap", "leak", {"data": {"config": kubeconfig}})
    found = stack_violations(secret, _cluster_only(CLUSTER_PROPS, extra=[kept, leaked]))
    assert len(found) == 1 and "not kept secret" in found[0][0]
    # An unknown kubeconfig (a first preview) is not read, so the policy still runs.
    unknown = resource(PROVIDER, "main-k8s", {"kubeconfig": UNKNOWN}, secret_outputs=["kubeconfig"])
    assert stack_violations(secret, _cluster_only(CLUSTER_PROPS, extra=[unknown])) == []


def test_without_the_model_configmap_a_stack_is_judged_as_production():
    weak = _edited(("disableLocalAccounts",), False)
    assert stack_violations(policy("aks-local-accounts-disabled"), [resource(CLUSTER, "main-aks", weak)])


# --- preview-time unknowns and odd values ------------------------------------------------------


def test_an_unknown_pool_size_raises_as_the_runtime_expects():
    resources = gpu_queue_stack()
    resources[2] = resource(POOL, "pools-t4", pool_props("t4", "Standard_NC8as_T4_v3", UNKNOWN))
    with pytest.raises(UnknownValueError):
        stack_violations(policy("kueue-quota-fits-capacity"), resources)


def test_nothing_reports_an_internal_failure_on_the_base_stack():
    resources = gpu_queue_stack(workloads=[workload("ok", {"cpu": "1"})])
    for p in POLICIES:
        if type(p).__name__ == "StackValidationPolicy":
            assert not any(INTERNAL_FAILURE in m for m in messages(stack_violations(p, resources)))


def test_config_schemas_use_only_keywords_the_offline_check_enforces():
    from aks_kueue.policies.config import SUPPORTED_KEYWORDS

    def keywords(schema):
        found = set(schema)
        if isinstance(schema.get("items"), dict):
            found |= keywords(schema["items"])
        return found

    for p in POLICIES:
        for prop in (p.config_schema.properties if p.config_schema else {}).values():
            assert keywords(prop) <= SUPPORTED_KEYWORDS, (p.name, prop)
