"""What a team may do in its namespace, as Kubernetes RBAC objects and as an Azure custom role.

Kueue's own answer is the `batch-user` role: create, watch and delete the jobs of every integration,
and read (never write) the namespace's Workloads and LocalQueues and the LocalQueues' pending
workloads. Kueue v0.19.2's chart ships it as the aggregated ClusterRole `<fullname>-batch-user-role`
(kubernetes-sigs/kueue, charts/kueue/templates/rbac/batch_user_role.yaml: it aggregates every
ClusterRole labelled `rbac.kueue.x-k8s.io/batch-user: "true"`, the `*_editor_role.yaml` of the job
integrations and `workload_viewer_role.yaml`, `localqueue_viewer_role.yaml`,
`pending_workloads_lq_viewer_role.yaml`). The program installs the chart as release `kueue`, whose
fullname is `kueue` (templates/_helpers.tpl, `aks_kueue.kueue.chart_values.fullname`), so the
ClusterRole is `kueue-batch-user-role`.

- Helm install: a RoleBinding in the namespace binds that ClusterRole to the team's groups (a
  RoleBinding grants a ClusterRole's rules in its own namespace only).
- Managed extension: Microsoft does not document which RBAC objects the extension ships or what it
  names them, and a RoleBinding to a ClusterRole that does not exist is accepted and grants nothing.
  So the program creates the equivalent Role in the namespace (the same rules, for the integrations
  in force) and binds that.
- Azure RBAC for Kubernetes (`cluster.security.azureRbac`): Kubernetes bindings do not reach Entra
  groups (`aks_kueue/aks/access.py`), so the same grant is an Azure custom role assigned at the
  namespace's scope. Azure's vocabulary is coarser: batch Jobs have their own data actions, but every
  custom resource shares `customresources/{read,write,delete}`. Reading custom resources covers
  Workloads and LocalQueues; writing is granted only when an integration whose jobs are custom
  resources (JobSet, RayJob, MPIJob, ...) is in force, and then it also covers other custom
  resources of the namespace, such as its Workloads and LocalQueues. That is more than Kueue's role
  grants; Azure's ABAC conditions on custom resource groups could narrow it, but they are in
  preview and Microsoft advises against them in production (entra-id-authorization.md).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from aks_kueue.aks import access
from aks_kueue.kueue.chart_values import fullname
from components.kubernetes_object import RBAC_API, RBAC_GROUP, manifest, role_binding

# The program's release renders as `kueue` (it refuses nameOverride and fullnameOverride).
CHART_BATCH_USER_ROLE = f"{fullname({})}-batch-user-role"
BATCH_USER_ROLE = "aks-kueue-batch-user"
BINDING = "aks-kueue-submitters"
EDIT_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
VIEW_VERBS = ("get", "list", "watch")

# The jobs Kueue's batch-user role lets its holder manage, per integration: (API group, resource), as
# the chart's `*_editor_role.yaml` files carrying the batch-user label list them at v0.19.2. Pods,
# Deployments, StatefulSets and AppWrappers have no editor role in it.
EDITABLE_JOBS: dict[str, tuple[str, str]] = {
    "batch/job": ("batch", "jobs"),
    "jobset.x-k8s.io/jobset": ("jobset.x-k8s.io", "jobsets"),
    "ray.io/rayjob": ("ray.io", "rayjobs"),
    "ray.io/raycluster": ("ray.io", "rayclusters"),
    "ray.io/rayservice": ("ray.io", "rayservices"),
    "kubeflow.org/mpijob": ("kubeflow.org", "mpijobs"),
    "kubeflow.org/pytorchjob": ("kubeflow.org", "pytorchjobs"),
    "kubeflow.org/tfjob": ("kubeflow.org", "tfjobs"),
    "kubeflow.org/paddlejob": ("kubeflow.org", "paddlejobs"),
    "kubeflow.org/xgboostjob": ("kubeflow.org", "xgboostjobs"),
    "kubeflow.org/jaxjob": ("kubeflow.org", "jaxjobs"),
    "trainer.kubeflow.org/trainjob": ("trainer.kubeflow.org", "trainjobs"),
    "sparkoperator.k8s.io/sparkapplication": ("sparkoperator.k8s.io", "sparkapplications"),
    "leaderworkerset.x-k8s.io/leaderworkerset": ("leaderworkerset.x-k8s.io", "leaderworkersets"),
}
# What the role lets its holder read besides the jobs.
VIEWED: tuple[tuple[str, str], ...] = (("kueue.x-k8s.io", "workloads"), ("kueue.x-k8s.io", "localqueues"))
PENDING_WORKLOADS = ("visibility.kueue.x-k8s.io", "localqueues/pendingworkloads")


def editable_jobs(frameworks: Iterable[str]) -> list[tuple[str, str]]:
    """(group, resource) of the jobs of the integrations in force, in the table's order."""
    wanted = set(frameworks)
    return [job for framework, job in EDITABLE_JOBS.items() if framework in wanted]


def batch_user_rules(frameworks: Iterable[str]) -> list[dict[str, Any]]:
    """The rules of Kueue's batch-user role, limited to the integrations in force."""
    rules: list[dict[str, Any]] = []
    for group, resource in editable_jobs(frameworks):
        rules.append({"apiGroups": [group], "resources": [resource], "verbs": list(EDIT_VERBS)})
        rules.append({"apiGroups": [group], "resources": [f"{resource}/status"], "verbs": ["get"]})
    for group, resource in VIEWED:
        rules.append({"apiGroups": [group], "resources": [resource], "verbs": list(VIEW_VERBS)})
        rules.append({"apiGroups": [group], "resources": [f"{resource}/status"], "verbs": ["get"]})
    rules.append({"apiGroups": [PENDING_WORKLOADS[0]], "resources": [PENDING_WORKLOADS[1]], "verbs": list(VIEW_VERBS)})
    return rules


def batch_user_role(namespace: str, frameworks: Iterable[str]) -> dict[str, Any]:
    return manifest(RBAC_API, "Role", BATCH_USER_ROLE, namespace, rules=batch_user_rules(frameworks))


def submitters_binding(namespace: str, groups: Sequence[str], role_kind: str) -> dict[str, Any]:
    """Binds the batch-user role (`ClusterRole` from the chart, or this program's `Role`) to the groups.
    AKS puts the Entra group object IDs of a signed-in user in the `groups` Kubernetes sees."""
    role = CHART_BATCH_USER_ROLE if role_kind == "ClusterRole" else BATCH_USER_ROLE
    return role_binding("RoleBinding", BINDING, role_kind, role,
                        [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": group} for group in groups], namespace)


def azure_data_actions(frameworks: Iterable[str]) -> list[str]:
    """The Azure custom role's data actions: what the batch-user role allows, in Azure's terms."""
    jobs = editable_jobs(frameworks)
    actions = [action for group, resource in jobs if (group, resource) == ("batch", "jobs")
               for action in access.data_actions(group, resource)]
    custom = any((group, resource) != ("batch", "jobs") for group, resource in jobs)
    verbs = ("read", "write", "delete") if custom else ("read",)
    return actions + [f"{access.DATA_ACTION_PREFIX}/{access.CUSTOM_RESOURCES}/{verb}" for verb in verbs]
