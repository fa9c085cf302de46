"""Every Kueue object the program emits passes the real v0.19.2 CRDs; Namespaces pass Kubernetes 1.34."""

from __future__ import annotations

import json

import pytest

from aks_kueue.kueue.schemas import all_kinds, extract
from aks_kueue.kueue.structural import validate_structural
from aks_kueue.preview.run import run_program
from aks_kueue.preview.stackfile import load_stack
from tests.conftest import REFERENCE, ROOT, needs_shared, run_stack

CRD_DIR = REFERENCE / "kueue-crds"
EXAMPLE = ROOT.parent / "shared" / "contract" / "Pulumi.example.yaml"
KUEUE_TYPE = "kubernetes:kueue.x-k8s.io/v1beta2:"


def _run(source: str):
    if source == "example":
        return run_program(load_stack(EXAMPLE, "example", ROOT), ROOT)
    return run_stack(source)


@pytest.fixture(scope="module")
def upstream_schemas():
    return extract(CRD_DIR)


@needs_shared()
def test_packaged_schemas_equal_the_upstream_crds(upstream_schemas):
    packaged = {kind: {"namespaced": k.namespaced, "schema": k.schema, "v1beta1": k.v1beta1}
                for kind, k in all_kinds().items()}
    assert json.loads(json.dumps(packaged)) == json.loads(json.dumps(upstream_schemas))


def _crd_object(resource) -> dict:
    """The object as the API server receives it: the CRD schema sees everything but metadata."""
    return {k: v for k, v in resource.inputs.items() if k != "metadata"}


@needs_shared()
@pytest.mark.parametrize("source", ["dev", "prod", "example"])
def test_emitted_objects_pass_the_real_crds(source, upstream_schemas):
    run = _run(source)
    kueue = [r for r in run.registrations if r.type.startswith(KUEUE_TYPE)]
    assert kueue, "the stack defines queue objects"
    for resource in kueue:
        kind = resource.type.rsplit(":", 1)[1]
        assert resource.inputs["kind"] == kind and resource.inputs["apiVersion"] == "kueue.x-k8s.io/v1beta2"
        schema = upstream_schemas[kind]["schema"]
        body_schema = {**schema, "properties": {k: v for k, v in schema["properties"].items() if k != "metadata"}}
        _, errors = validate_structural(body_schema, _crd_object(resource))
        assert errors == [], f"{resource.name}: {errors}"
        metadata = resource.inputs["metadata"]
        assert ("namespace" in metadata) is upstream_schemas[kind]["namespaced"]


@needs_shared()
@pytest.mark.parametrize("source", ["dev", "prod", "example"])
def test_namespaces_pass_kubernetes_1_34(source):
    import kubernetes_validate

    namespaces = [r for r in _run(source).registrations if r.type == "kubernetes:core/v1:Namespace"]
    assert namespaces
    for resource in namespaces:
        kubernetes_validate.validate(resource.inputs, "1.34", strict=True)


@pytest.mark.parametrize("source", ["dev", "prod"])
def test_preview_lists_kueue_objects_after_the_installer(source):
    run = _run(source)
    installer = next(r for r in run.registrations if r.type == "azure-native:kubernetesconfiguration:Extension"
                     or (r.type == "kubernetes:helm.sh/v3:Release" and r.inputs["chart"].endswith("/kueue")))
    kueue = [r for r in run.registrations if r.type.startswith(KUEUE_TYPE)]
    kinds = {r.type.rsplit(":", 1)[1] for r in kueue}
    assert {"ResourceFlavor", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass"} <= kinds
    for resource in kueue:
        assert installer.urn in resource.depends_on, resource.name
    by_name = {r.name: r for r in run.registrations}
    for lq in (r for r in kueue if r.type.endswith(":LocalQueue")):
        namespace = lq.inputs["metadata"]["namespace"]
        ns = by_name[f"queues-namespace-{namespace}"]
        cq = by_name[f"queues-clusterqueue-{lq.inputs['spec']['clusterQueue']}"]
        assert {ns.urn, cq.urn} <= set(lq.depends_on)
    order = [r.urn for r in run.registrations]
    for cq in (r for r in kueue if r.type.endswith(":ClusterQueue")):
        for flavor in (f["name"] for g in cq.inputs["spec"]["resourceGroups"] for f in g["flavors"]):
            flavor_urn = by_name[f"queues-resourceflavor-{flavor}"].urn
            assert flavor_urn in cq.depends_on and order.index(flavor_urn) < order.index(cq.urn)


def test_prod_has_two_teams_in_a_cohort_with_limits_and_a_flavor_per_gpu_pool():
    run = run_stack("prod")
    cqs = [r.inputs["spec"] for r in run.registrations if r.type == KUEUE_TYPE + "ClusterQueue"]
    assert len(cqs) >= 2 and len({cq["cohortName"] for cq in cqs}) == 1
    limits = {k for cq in cqs for g in cq["resourceGroups"] for f in g["flavors"] for r in f["resources"] for k in r}
    assert {"borrowingLimit", "lendingLimit"} <= limits
    flavors = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in run.registrations
               if r.type == KUEUE_TYPE + "ResourceFlavor"}
    gpu_pools = [p.inputs["agentPoolName"] for p in run.of_type("azure-native:containerservice:AgentPool")
                 if "gpuProfile" in p.inputs]
    for pool in gpu_pools:
        assert any(spec["nodeLabels"] == {"kubernetes.azure.com/agentpool": pool} for spec in flavors.values())
    assert run.of_type(KUEUE_TYPE + "WorkloadPriorityClass")


def test_namespaces_carry_the_labels_their_cluster_queue_selects():
    run = run_stack("prod")
    namespaces = {r.inputs["metadata"]["name"]: r.inputs["metadata"]["labels"]
                  for r in run.of_type("kubernetes:core/v1:Namespace")}
    assert namespaces["team-a"]["kueue-team"] == "team-a"
    assert namespaces["team-b"]["kueue-team"] == "team-b"
