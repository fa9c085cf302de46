"""Team access (`queues.localQueues[].submitterGroups`) as the program registers it, for each way a cluster
authorizes Entra groups, checked against Kubernetes 1.34's schemas and the Azure SDK's input types."""

from __future__ import annotations

import pytest

from aks_kueue.aks import access
from aks_kueue.kueue.catalog import MANAGED_FRAMEWORKS
from aks_kueue.settings import SettingsError, parse_settings
from components.team_access import rbac
from tests.components.monitoring.conftest import offline_id
from tests.components.monitoring.test_azure import sdk_args_class, unknown_properties
from tests.conftest import edited, flat, run_config, run_stack, stack_doc

COMPONENT = "aksKueue:index:TeamAccess"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
ROLE_DEFINITION = "azure-native:authorization:RoleDefinition"
ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
CLUSTER = "azure-native:containerservice:ManagedCluster"
A, B, C = "1c7e0b0d-5b0e-4c55-9a57-0f2f1d3c4b5a", "a04f2f0e-8d1b-4f7e-b7c4-6e5d4c3b2a19", "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b"


def ours(run):
    """The resources the TeamAccess component registered."""
    (component,) = [r for r in run.registrations if r.type == COMPONENT]
    return [r for r in run.registrations if r.parent == component.urn]


def by_name(run, name):
    (found,) = [r for r in run.registrations if r.name == name]
    return found


def with_groups(stack: str, azure_rbac: bool, groups_of=None):
    """The stack with submitterGroups on its LocalQueues (team-a: A, team-b: B; dev's ml: A and B)."""
    def edit(c):
        c["aks-kueue:cluster"].setdefault("security", {})["azureRbac"] = azure_rbac
        for queue in c["aks-kueue:queues"]["localQueues"]:
            queue["submitterGroups"] = (groups_of or {}).get(queue["namespace"], {"team-a": [A], "team-b": [B],
                                                                                  "ml": [A, B]}[queue["namespace"]])
    return edited(stack, edit)


@pytest.fixture(scope="module")
def prod():
    """prod as `pulumi up` sends it (ids known), Azure RBAC on, the managed extension."""
    return run_stack("prod", preview=False)


@pytest.fixture(scope="module")
def helm_kubernetes_rbac():
    """dev (the Helm chart) with Kubernetes RBAC: groups A and B submit in namespace ml."""
    return run_config(with_groups("dev", azure_rbac=False), stack="dev", preview=False)


@pytest.fixture(scope="module")
def managed_kubernetes_rbac():
    """prod (the managed extension) with Kubernetes RBAC."""
    return run_config(with_groups("prod", azure_rbac=False), stack="prod", preview=False)


# --- every group may get credentials, once ---------------------------------------------------------

@pytest.mark.parametrize("run_name", ["prod", "helm_kubernetes_rbac", "managed_kubernetes_rbac"])
def test_each_group_gets_the_cluster_user_role_on_the_cluster_once(run_name, request):
    run = request.getfixturevalue(run_name)
    cluster = [r for r in run.registrations if r.type == CLUSTER][0]
    credentials = [r for r in ours(run) if r.name.startswith("team-access-credentials-")]
    groups = {r.inputs["principalId"] for r in credentials}
    assert len(credentials) == len(groups) == 2
    for assignment in credentials:
        assert assignment.inputs["scope"] == offline_id(cluster)
        assert assignment.inputs["principalType"] == "Group"
        assert assignment.inputs["roleDefinitionId"] == (
            "/subscriptions/00000000-0000-0000-0000-000000000000/providers/Microsoft.Authorization/roleDefinitions/"
            "4abbcc35-e782-43d8-92c5-2d3f1bd2253f")


def test_a_group_in_two_namespaces_gets_credentials_once_and_both_namespaces():
    config = with_groups("prod", azure_rbac=True, groups_of={"team-a": [A, C], "team-b": [C, B]})
    run = run_config(config, stack="prod", preview=False)
    credentials = sorted(r.inputs["principalId"] for r in ours(run) if r.name.startswith("team-access-credentials-"))
    assert credentials == sorted([A, B, C])
    namespaced = sorted((r.inputs["principalId"], r.inputs["scope"].rsplit("/", 1)[-1]) for r in ours(run)
                        if r.type == ROLE_ASSIGNMENT and "/namespaces/" in str(r.inputs["scope"]))
    assert namespaced == sorted([(A, "team-a"), (C, "team-a"), (C, "team-b"), (B, "team-b")])


# --- Azure RBAC for Kubernetes: a custom role at the namespace's scope ------------------------------

def test_with_azure_rbac_each_namespace_grant_is_an_azure_role_assignment_at_its_scope(prod):
    cluster = [r for r in prod.registrations if r.type == CLUSTER][0]
    (definition,) = [r for r in ours(prod) if r.type == ROLE_DEFINITION]
    grants = [r for r in ours(prod) if r.type == ROLE_ASSIGNMENT and r.name.startswith("team-access-team-")]
    groups = [q for q in stack_doc("prod")["aks-kueue:queues"]["localQueues"] if q.get("submitterGroups")]
    assert groups and sorted((g.inputs["principalId"], g.inputs["scope"]) for g in grants) == sorted(
        (q["submitterGroups"][0], f"{offline_id(cluster)}/namespaces/{q['namespace']}") for q in groups)
    for grant in grants:
        assert grant.inputs["roleDefinitionId"].endswith(f"/roleDefinitions/{definition.inputs['roleDefinitionId']}")
        assert definition.urn in grant.depends_on
        assert grant.inputs["principalType"] == "Group"
    # No Kubernetes RBAC object: Entra groups are authorized by Azure alone on such a cluster.
    assert not [r for r in ours(prod) if r.type.startswith("kubernetes:")]


def test_the_custom_role_grants_kueues_batch_user_actions_and_no_more(prod):
    (definition,) = [r for r in ours(prod) if r.type == ROLE_DEFINITION]
    (permissions,) = definition.inputs["permissions"]
    prefix = "Microsoft.ContainerService/managedClusters/"
    assert permissions == {"actions": [], "notActions": [], "notDataActions": [], "dataActions": [
        prefix + "batch/jobs/read", prefix + "batch/jobs/write", prefix + "batch/jobs/delete",
        prefix + "customresources/read", prefix + "customresources/write", prefix + "customresources/delete"]}
    assert definition.inputs["roleType"] == "CustomRole"
    # Created and assignable in the cluster's resource group only; stable name per cluster.
    assert definition.inputs["scope"] == definition.inputs["assignableScopes"][0]
    assert definition.inputs["roleDefinitionId"] == access.custom_role_id("rg-batch-prod", "aks-batch-prod",
                                                                          "batch-user")
    assert "aks-batch-prod" in definition.inputs["roleName"]


def test_with_only_batch_jobs_the_role_reads_custom_resources_but_writes_none():
    assert rbac.azure_data_actions(["batch/job", "pod"]) == [
        "Microsoft.ContainerService/managedClusters/batch/jobs/read",
        "Microsoft.ContainerService/managedClusters/batch/jobs/write",
        "Microsoft.ContainerService/managedClusters/batch/jobs/delete",
        "Microsoft.ContainerService/managedClusters/customresources/read"]
    assert "Microsoft.ContainerService/managedClusters/customresources/write" in rbac.azure_data_actions(
        ["ray.io/rayjob"])


def test_azure_scopes_and_role_ids():
    cluster = ("/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/rg-batch/providers/"
               "Microsoft.ContainerService/managedClusters/aks-batch")
    assert access.namespace_scope(cluster, "team-a") == cluster + "/namespaces/team-a"
    assert access.resource_group_id(cluster) == "/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/rg-batch"
    assert access.is_role(access.role_definition_id("s", access.CLUSTER_USER_ROLE.upper()), access.CLUSTER_USER_ROLE)
    assert not access.is_role(access.role_definition_id("s", "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b"),
                              access.CLUSTER_USER_ROLE)
    assert access.custom_role_id("rg", "a", "batch-user") != access.custom_role_id("rg", "b", "batch-user")


def test_every_team_access_azure_input_is_an_sdk_property(prod, managed_kubernetes_rbac):
    resources = [r for run in (prod, managed_kubernetes_rbac) for r in ours(run) if r.type.startswith("azure-native:")]
    assert {ROLE_ASSIGNMENT, ROLE_DEFINITION} == {r.type for r in resources}
    for resource in resources:
        assert unknown_properties(sdk_args_class(resource.type), resource.inputs) == [], resource.name


# --- Kubernetes RBAC: Kueue's batch-user role, bound in the namespace -------------------------------

def test_with_the_helm_chart_the_binding_names_the_charts_batch_user_cluster_role(helm_kubernetes_rbac):
    run = helm_kubernetes_rbac
    (binding,) = [r for r in ours(run) if r.type == ROLE_BINDING]
    assert binding.inputs["metadata"]["namespace"] == "ml"
    assert binding.inputs["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                         "name": "kueue-batch-user-role"}
    assert binding.inputs["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": A},
                                          {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": B}]
    assert not [r for r in ours(run) if r.type in (ROLE, ROLE_DEFINITION)]
    assert not [r for r in ours(run) if r.type == ROLE_ASSIGNMENT and r.name.startswith("team-access-ml-")]
    # After the namespace, and after the chart that ships the ClusterRole; on the cluster's provider.
    release = [r for r in run.registrations if r.type == "kubernetes:helm.sh/v3:Release"
               and r.inputs.get("name") == "kueue"][0]
    namespace = by_name(run, "queues-namespace-ml")
    assert {release.urn, namespace.urn} <= set(binding.depends_on)
    assert binding.provider == [r for r in run.registrations if r.type == "pulumi:providers:kubernetes"][0].urn
    # The chart names the ClusterRole after the release, as it names everything else.
    assert rbac.CHART_BATCH_USER_ROLE == f"{release.inputs['name']}-batch-user-role"


def test_with_the_managed_extension_an_equivalent_role_is_created_and_bound(managed_kubernetes_rbac):
    run = managed_kubernetes_rbac
    roles = {r.inputs["metadata"]["namespace"]: r for r in ours(run) if r.type == ROLE}
    bindings = {r.inputs["metadata"]["namespace"]: r for r in ours(run) if r.type == ROLE_BINDING}
    assert set(roles) == set(bindings) == {"team-a", "team-b"}
    for namespace, binding in bindings.items():
        assert binding.inputs["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                             "name": rbac.BATCH_USER_ROLE}
        assert roles[namespace].urn in binding.depends_on
    rules = roles["team-a"].inputs["rules"]
    edited_resources = {(rule["apiGroups"][0], rule["resources"][0]) for rule in rules if "create" in rule["verbs"]}
    # prod's integrations: batch/job, JobSet, RayJob, MPIJob; nothing else is writable.
    assert edited_resources == {("batch", "jobs"), ("jobset.x-k8s.io", "jobsets"), ("ray.io", "rayjobs"),
                                ("kubeflow.org", "mpijobs")}
    read_only = {(rule["apiGroups"][0], rule["resources"][0]) for rule in rules if "create" not in rule["verbs"]}
    assert {("kueue.x-k8s.io", "workloads"), ("kueue.x-k8s.io", "localqueues"),
            ("visibility.kueue.x-k8s.io", "localqueues/pendingworkloads")} <= read_only
    assert all(set(rule["verbs"]) <= {"get", "list", "watch"} for rule in rules if "create" not in rule["verbs"])


def test_without_integrations_the_managed_role_covers_what_the_extension_runs():
    rules = rbac.batch_user_rules(MANAGED_FRAMEWORKS)
    written = {rule["resources"][0] for rule in rules if "create" in rule["verbs"]}
    assert written == {"jobs", "jobsets", "rayjobs", "rayclusters", "rayservices", "mpijobs", "trainjobs"}


@pytest.mark.parametrize("run_name", ["helm_kubernetes_rbac", "managed_kubernetes_rbac"])
def test_kubernetes_rbac_objects_are_valid_kubernetes_1_34(run_name, request):
    import kubernetes_validate

    objects = [r for r in ours(request.getfixturevalue(run_name)) if r.type in (ROLE, ROLE_BINDING)]
    assert objects
    for resource in objects:
        kubernetes_validate.validate(resource.inputs, "1.34", strict=True)


def test_the_schema_check_would_catch_a_misspelt_binding():
    import kubernetes_validate

    binding = rbac.submitters_binding("ml", [A], "ClusterRole")
    binding["subjects"][0]["namespce"] = "ml"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(binding, "1.34", strict=True)


# --- nothing without groups, nothing without Kueue --------------------------------------------------

def test_a_stack_without_submitter_groups_registers_no_team_access():
    run = run_stack("dev")
    assert not [r for r in run.registrations if r.type == COMPONENT]
    assert "teamAccess" not in run.outputs


def test_the_summary_output_says_how_teams_get_in(prod, helm_kubernetes_rbac):
    summary = prod.outputs["teamAccess"]
    assert summary["authorization"] == "Azure RBAC"
    assert summary["namespaces"] == {"team-a": ["00000000-0000-0000-0000-00000000000a"],
                                     "team-b": ["00000000-0000-0000-0000-00000000000b"]}
    assert summary["getCredentials"] == "az aks get-credentials --resource-group rg-batch-prod --name aks-batch-prod"
    assert helm_kubernetes_rbac.outputs["teamAccess"]["role"].startswith("ClusterRole kueue-batch-user-role")


def test_without_kueue_there_is_no_team_access():
    """`kueue.install: none` (the day-2 helper's key) leaves nothing for a team to submit to: the settings
    refuse queues with it, so no group is let in."""
    config = with_groups("dev", azure_rbac=True)
    config["aks-kueue:kueue"] = {"install": "none"}
    with pytest.raises(SettingsError) as refused:
        parse_settings(flat(config))
    paths = [p.path for p in refused.value.problems]
    if paths == ["aks-kueue:kueue.install"]:
        pytest.skip("kueue.install: none is not accepted yet (the day-2 branch adds it)")
    assert "aks-kueue:queues" in paths


# --- the pack sees the groups from the resources ----------------------------------------------------

@pytest.mark.parametrize("unknown_outputs", [False, True], ids=["known", "unknown-outputs"])
@pytest.mark.parametrize("stack,azure_rbac", [("dev", False), ("prod", False), ("prod", True)])
def test_the_pack_reads_the_same_submitter_groups_as_the_program(stack, azure_rbac, unknown_outputs):
    from tests.model.test_parity import assert_parity

    config = with_groups(stack, azure_rbac, {"team-a": [A, C.upper()], "team-b": [C], "ml": [B]})
    assert_parity(config, stack, unknown_outputs)


def test_the_model_holds_each_group_once_keyed_where_it_is_first_named():
    from tests.conftest import model_of

    model = model_of(with_groups("prod", True, {"team-a": [A, C.upper()], "team-b": [C]}))
    assert [(g.object_id, g.key) for g in model.submitter_groups] == [
        (A, "aks-kueue:queues.localQueues[0].submitterGroups[0]"),
        (C, "aks-kueue:queues.localQueues[0].submitterGroups[1]")]
