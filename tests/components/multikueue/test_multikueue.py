"""The example fleet's programs under Pulumi's mocks: what a worker creates for its manager and
mirrors of it, and what the manager creates for its workers, in dependency order, after Kueue."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest
import yaml

from aks_kueue.kueue import multikueue as mk
from aks_kueue.kueue.schemas import all_kinds
from aks_kueue.kueue.structural import validate_structural
from aks_kueue.model.fleet import FLEET_OUTPUT, KUBECONFIG_OUTPUT
from aks_kueue.model.fleet_outputs import StackOutputs
from components.multikueue import worker_kubeconfig
from tests.fleet_stacks import (MANAGER, SWEDEN, WEST, WORKERS, config, manager_outputs, qualified, run,
                                service_account_kubeconfig, worker_outputs)

KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
SECRET = "kubernetes:core/v1:Secret"
KUEUE_MIRROR = Path("/work/.mirror/kubernetes-sigs+kueue/repo")
# The ClusterRole of Kueue v0.19.2's create-multikueue-kubeconfig.sh, rule for rule, as read there.
SCRIPT_RULES = [
    ("batch", "jobs", "create delete get list watch"), ("batch", "jobs/status", "get"),
    ("", "pods", "create delete get list watch"),
    ("apps", "statefulsets", "create delete get list watch"), ("apps", "statefulsets/status", "get"),
    ("leaderworkerset.x-k8s.io", "leaderworkersets", "create delete get list watch"),
    ("leaderworkerset.x-k8s.io", "leaderworkersets/status", "get"),
    ("jobset.x-k8s.io", "jobsets", "create delete get list watch"), ("jobset.x-k8s.io", "jobsets/status", "get"),
    ("kueue.x-k8s.io", "workloads", "create delete get list watch update patch"),
    ("kueue.x-k8s.io", "clusterqueues localqueues", "get list watch"),
    ("kueue.x-k8s.io", "workloads/status", "get patch update"),
    *[rule for kind in ("tfjobs", "paddlejobs", "pytorchjobs", "xgboostjobs", "mpijobs")
      for rule in (("kubeflow.org", kind, "create delete get list watch"), ("kubeflow.org", f"{kind}/status", "get"))],
    ("ray.io", "rayjobs", "create delete get list watch"), ("ray.io", "rayjobs/status", "get"),
    ("ray.io", "rayclusters", "create delete get list watch update patch"), ("ray.io", "rayclusters/status", "get"),
    ("ray.io", "rayservices", "create delete get list watch"), ("ray.io", "rayservices/status", "get"),
    ("workload.codeflare.dev", "appwrappers", "create delete get list watch"),
    ("workload.codeflare.dev", "appwrappers/status", "get"),
]


def by_type(run_, token):
    return [r for r in run_.registrations if r.type == token]


def one(run_, token, name=None):
    found = [r for r in by_type(run_, token) if name is None or r.name == name]
    assert len(found) == 1, [r.name for r in found]
    return found[0]


def urn_of(run_, name):
    return next(r.urn for r in run_.registrations if r.name == name)


def installer(run_):
    return next(r for r in run_.registrations if r.type == "kubernetes:helm.sh/v3:Release"
                and r.inputs["chart"].endswith("/kueue"))


@pytest.fixture(scope="module")
def worker():
    """A worker's update (the token controller's data filled in), having read the manager's outputs."""
    return run(WEST, others={MANAGER: StackOutputs({FLEET_OUTPUT: manager_outputs()})}, preview=False)


@pytest.fixture(scope="module")
def manager():
    workers = {stack: StackOutputs({FLEET_OUTPUT: worker_outputs(stack),
                                    KUBECONFIG_OUTPUT: service_account_kubeconfig(f"aks-{stack}")})
               for stack in WORKERS}
    return run(MANAGER, others=workers)


# ---- the worker ---------------------------------------------------------------------------------

def test_the_worker_creates_the_multikueue_service_account_after_kueue(worker):
    account = one(worker, "kubernetes:core/v1:ServiceAccount")
    assert account.inputs["metadata"]["name"] == "multikueue-sa"
    assert account.inputs["metadata"]["namespace"] == "kueue-system"
    assert installer(worker).urn in account.depends_on


def test_the_worker_role_is_exactly_the_documented_one(worker):
    role = one(worker, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "fleet-role")
    rules = [(r["apiGroups"][0], " ".join(r["resources"]), " ".join(r["verbs"])) for r in role.inputs["rules"]]
    assert rules == SCRIPT_RULES
    binding = one(worker, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "fleet-binding")
    assert binding.inputs["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                         "name": role.inputs["metadata"]["name"]}
    assert binding.inputs["subjects"] == [{"kind": "ServiceAccount", "name": "multikueue-sa",
                                           "namespace": "kueue-system"}]


@pytest.mark.skipif(not KUEUE_MIRROR.is_dir(), reason="the Kueue source mirror is not on this machine")
def test_the_documented_role_is_what_the_upstream_script_creates():
    script = subprocess.run(["git", "--git-dir", str(KUEUE_MIRROR), "show",
                             "v0.19.2:site/static/examples/multikueue/create-multikueue-kubeconfig.sh"],
                            capture_output=True, text=True, check=True).stdout
    manifests = script.split("kubectl apply -f - <<EOF\n", 1)[1].split("\nEOF", 1)[0]
    role = next(d for d in yaml.safe_load_all(manifests.replace("${MULTIKUEUE_SA}", "multikueue-sa")
                                             .replace("${NAMESPACE}", "kueue-system")) if d["kind"] == "ClusterRole")
    assert [dict(r) for r in mk.WORKER_RULES] == role["rules"]
    assert role["metadata"]["name"] == mk.CLUSTER_ROLE


def test_a_long_lived_token_secret_per_generation(worker):
    [token] = by_type(worker, SECRET)
    assert token.inputs["type"] == "kubernetes.io/service-account-token"
    assert token.inputs["metadata"]["annotations"] == {"kubernetes.io/service-account.name": "multikueue-sa"}
    assert token.inputs["metadata"]["name"] == "multikueue-sa-token-1"
    assert set(token.options["additionalSecretOutputs"]) == {"data", "stringData"}
    assert {urn_of(worker, "fleet-sa"), urn_of(worker, "fleet-binding")} <= set(token.depends_on)

    def rotating(c):
        c["aks-kueue:fleet"]["tokenGenerations"] = [2, 1]
    held_one = manager_outputs()
    held_one["workers"][0]["tokenGeneration"] = 1
    both = run(WEST, config(WEST, rotating), {MANAGER: StackOutputs({FLEET_OUTPUT: held_one})})
    assert sorted(s.inputs["metadata"]["name"] for s in by_type(both, SECRET)) == [
        "multikueue-sa-token-1", "multikueue-sa-token-2"]


def test_the_kubeconfig_is_a_secret_output(worker):
    assert worker.outputs[KUBECONFIG_OUTPUT] == "[secret]" and KUBECONFIG_OUTPUT in worker.secret_outputs
    assert worker.outputs[FLEET_OUTPUT]["role"] == "worker"   # the plain summary the manager judges
    assert FLEET_OUTPUT not in worker.secret_outputs


def test_the_kubeconfig_is_a_static_token_one_kueue_accepts():
    data = {"token": base64.b64encode(b"t0ken").decode(), "ca.crt": base64.b64encode(b"ca-pem").decode()}
    server = "https://w.hcp.westus3.azmk8s.io:443"
    deployer = yaml.safe_dump({"clusters": [{"name": "x", "cluster": {"server": server}}],
                               "users": [{"name": "x", "user": {"exec": {"command": "kubelogin"}}}]})
    config_ = yaml.safe_load(worker_kubeconfig(data, deployer, "aks-fleet-westus3"))
    assert config_["users"] == [{"name": "aks-fleet-westus3-multikueue-sa", "user": {"token": "t0ken"}}]
    assert config_["clusters"][0]["cluster"] == {"server": server,
                                                 "certificate-authority-data": data["ca.crt"]}
    assert mk.kubeconfig_problems(config_) == []
    assert worker_kubeconfig({}, deployer, "x") is None   # until the token controller fills the Secret


def test_the_worker_mirrors_the_manager_teams(worker):
    teams = manager_outputs()["teams"]
    queues = sorted((r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"], r.inputs["spec"]["clusterQueue"])
                    for r in by_type(worker, KUEUE + "LocalQueue"))
    assert queues == sorted((q["namespace"], q["name"], q["spec"]["clusterQueue"]) for q in teams["localQueues"])
    namespaces = sorted(r.inputs["metadata"]["name"] for r in by_type(worker, "kubernetes:core/v1:Namespace"))
    assert namespaces == sorted({q["namespace"] for q in teams["localQueues"]})
    classes = sorted((r.inputs["metadata"]["name"], r.inputs["value"])
                     for r in by_type(worker, KUEUE + "WorkloadPriorityClass"))
    assert classes == sorted((c["name"], c["value"]) for c in teams["workloadPriorityClasses"])
    # Each mirrored namespace carries the labels the worker's own ClusterQueue selects.
    labels = {r.inputs["metadata"]["name"]: r.inputs["metadata"]["labels"]
              for r in by_type(worker, "kubernetes:core/v1:Namespace")}
    assert labels["team-a"]["kueue-team"] == "team-a"


# ---- the manager --------------------------------------------------------------------------------

MULTIKUEUE_KINDS = ("MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck", "ClusterQueue")


def test_one_kubeconfig_secret_per_worker_kept_secret(manager):
    secrets = {r.inputs["metadata"]["name"]: r for r in by_type(manager, SECRET)}
    assert sorted(secrets) == ["multikueue-swedencentral-h100", "multikueue-westus3-a100"]
    for secret in secrets.values():
        assert secret.inputs["metadata"]["namespace"] == "kueue-system"
        assert secret.inputs["stringData"] == {"kubeconfig": "[secret]"}
        assert "stringData.kubeconfig" in secret.secret_paths
        assert set(secret.options["additionalSecretOutputs"]) == {"data", "stringData"}
        assert installer(manager).urn in secret.depends_on


def test_multikueue_objects_in_dependency_order_after_kueue(manager):
    order = [r.urn for r in manager.registrations]
    objects = {(r.type.rsplit(":", 1)[1], r.inputs["metadata"]["name"]): r for r in manager.registrations
               if r.type.startswith(KUEUE)}
    for worker in ("westus3-a100", "swedencentral-h100"):
        cluster = objects[("MultiKueueCluster", worker)]
        secret = urn_of(manager, f"fleet-kubeconfig-{worker}")
        assert cluster.inputs["spec"] == {"clusterSource": {"kubeConfig": {
            "location": f"multikueue-{worker}", "locationType": "Secret"}}}
        assert secret in cluster.depends_on and order.index(secret) < order.index(cluster.urn)
    config_ = objects[("MultiKueueConfig", "multikueue")]
    assert config_.inputs["spec"] == {"clusters": ["westus3-a100", "swedencentral-h100"]}   # the declared order
    check = objects[("AdmissionCheck", "multikueue")]
    assert check.inputs["spec"]["controllerName"] == "kueue.x-k8s.io/multikueue"
    assert check.inputs["spec"]["parameters"] == {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig",
                                                  "name": "multikueue"}
    chain = [objects[("MultiKueueCluster", "westus3-a100")], config_, check]
    for team in ("team-a", "team-b"):
        cq = objects[("ClusterQueue", team)]
        assert cq.inputs["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "multikueue"}]}
        for before, after in zip(chain, [*chain[1:], cq]):
            assert before.urn in after.depends_on and order.index(before.urn) < order.index(after.urn)
    for resource in objects.values():
        assert installer(manager).urn in resource.depends_on


def test_multikueue_objects_pass_the_vendored_crds(manager):
    kinds = all_kinds()
    checked = 0
    for resource in manager.registrations:
        if not resource.type.startswith(KUEUE) or resource.type.rsplit(":", 1)[1] not in MULTIKUEUE_KINDS:
            continue
        kind = resource.type.rsplit(":", 1)[1]
        schema = kinds[kind].schema
        body_schema = {**schema, "properties": {k: v for k, v in schema["properties"].items() if k != "metadata"}}
        _, errors = validate_structural(body_schema, {k: v for k, v in resource.inputs.items() if k != "metadata"})
        assert errors == [], f"{resource.name}: {errors}"
        assert ("namespace" in resource.inputs["metadata"]) is kinds[kind].namespaced
        checked += 1
    assert checked == 2 + 1 + 1 + 2


def test_the_vendored_crds_refuse_a_config_of_21_clusters():
    schema = all_kinds()["MultiKueueConfig"].schema
    body = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "MultiKueueConfig",
            "spec": {"clusters": [f"w{i}" for i in range(21)]}}
    body_schema = {**schema, "properties": {k: v for k, v in schema["properties"].items() if k != "metadata"}}
    _, errors = validate_structural(body_schema, body)
    assert errors


def test_the_manager_installs_the_job_crds_it_runs(manager):
    files = sorted(r.inputs["file"] for r in by_type(manager, "kubernetes:yaml/v2:ConfigFile"))
    assert files == list(mk.crd_urls("jobset.x-k8s.io/jobset"))


def test_a_worker_without_a_kubeconfig_gets_no_cluster():
    workers = {WEST: StackOutputs({FLEET_OUTPUT: worker_outputs(WEST), KUBECONFIG_OUTPUT: "[secret]"}),
               SWEDEN: StackOutputs({FLEET_OUTPUT: worker_outputs(SWEDEN)})}
    partial = run(MANAGER, others=workers)
    assert [r.inputs["metadata"]["name"] for r in by_type(partial, SECRET)] == ["multikueue-westus3-a100"]
    assert one(partial, KUEUE + "MultiKueueConfig").inputs["spec"]["clusters"] == ["westus3-a100"]
    bootstrap = run(MANAGER)
    assert not by_type(bootstrap, KUEUE + "MultiKueueConfig") and not by_type(bootstrap, SECRET)
    assert one(bootstrap, KUEUE + "AdmissionCheck")   # its ClusterQueues wait, inactive, for the workers
    assert bootstrap.outputs[FLEET_OUTPUT]["workers"] == [
        {"name": "westus3-a100", "stack": qualified(WEST)}, {"name": "swedencentral-h100", "stack": qualified(SWEDEN)}]


def test_what_a_worker_makes_of_a_secret_manager_output_is_secret(monkeypatch):
    """A manager whose queues are a secret stack key exports its teams as a secret; the worker keeps
    them secret: its mirrored objects, its model carrier and its own `fleet` output."""
    from aks_kueue.preview import mocks

    # The engine lists the output among the reference's secret output names (a file cannot say so).
    plain_reference = mocks.OfflineMocks.new_resource

    def secret_teams(self, args):
        found = plain_reference(self, args)
        if args.typ == mocks.STACK_REFERENCE and args.inputs.get("name") == qualified(MANAGER):
            found[1]["secretOutputNames"] = [FLEET_OUTPUT]
        return found

    monkeypatch.setattr(mocks.OfflineMocks, "new_resource", secret_teams)
    worker = run(WEST, others={MANAGER: StackOutputs({FLEET_OUTPUT: manager_outputs()})})
    assert FLEET_OUTPUT in worker.secret_outputs
    carrier = next(r for r in worker.registrations if r.name == "model-aks-kueue-model")
    assert "data.fleet.json" in carrier.secret_paths
    assert all(r.inputs["spec"] == "[secret]" for r in by_type(worker, KUEUE + "LocalQueue"))
