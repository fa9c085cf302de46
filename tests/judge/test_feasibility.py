"""Feasibility: one fixture pair per finding, the stacks clean, and the judge on hand-built models."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aks_kueue.aks.nodes import node_resources
from aks_kueue.aks.pools import Pool
from aks_kueue.aks.vm_sizes import lookup
from aks_kueue.judge import capacity, install, judge, provisioning, topology, workloads
from aks_kueue.judge.finding import Amount
from aks_kueue.model import Cluster, Install, KueueItem, Model
from tests.conftest import ROOT, SHARED, edited, model_of, needs_shared, stack_doc

FIXTURES = Path(__file__).parents[1] / "fixtures" / "feasibility"
FEASIBILITY = {capacity.QUOTA_ABOVE_CAPACITY, capacity.BORROWING_ABOVE_CAPACITY, capacity.FLAVOR_LANDS_NOWHERE,
               capacity.FLAVOR_RESOURCE_MISSING, capacity.TAINT_NOT_TOLERATED, capacity.GPUS_NOT_ADVERTISED,
               *workloads.KINDS, install.INSTALLERS_CONFLICT, install.INSTALLER_MISSING, install.NOT_AFTER_INSTALLER,
               install.CHART_SERIES, install.UNKNOWN_INTEGRATION, install.PIN_NOT_HELD, install.MANAGED_VERSION,
               install.MANAGED_PROVISIONING, install.MANAGED_REGION, provisioning.PROVISIONING_UNAVAILABLE,
               *provisioning.WORKLOAD_KINDS, topology.TOPOLOGY_NEEDS_NODES, *topology.WORKLOAD_KINDS}


class Analysis:
    """The judge's verdict on a config, limited to feasibility and install findings."""

    def __init__(self, config: dict):
        self.judgement = judge(model_of(config))
        self.findings = [f for f in self.judgement.findings if f.kind in FEASIBILITY]
        self.capacity = self.judgement.capacity


def analysis_of(config: dict) -> Analysis:
    return Analysis(config)


def fixture(name: str) -> dict:
    return yaml.safe_load((FIXTURES / name).read_text())["config"]


KINDS = sorted(p.name[:-len(".yaml")] for p in FIXTURES.glob("*.yaml") if not p.name.endswith(".ok.yaml"))


def test_every_finding_kind_has_a_fixture_pair():
    assert set(KINDS) >= {"quota-above-capacity", "borrowing-above-capacity", "flavor-lands-nowhere",
                          "flavor-resource-missing", "taint-not-tolerated", "workload-not-admitted",
                          "pod-fits-no-node", "podset-exceeds-pools", "podset-conflicting-flavors",
                          "managed-region", "podset-unprovisionable", "podset-exceeds-host", "topology-needs-nodes",
                          "topology-request-mismatch"}
    assert all((FIXTURES / f"{kind}.ok.yaml").exists() for kind in KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_fixture_triggers_its_finding_and_its_twin_is_clean(kind):
    findings = [f for f in analysis_of(fixture(f"{kind}.yaml")).findings if f.kind == kind]
    assert findings, kind
    for finding in findings:
        assert finding.key.startswith(("aks-kueue:", "azure-native:")), finding
        assert finding.fix and finding.object
        # The message carries the names it reports; figures are numbers with a unit.
        for value in finding.numbers.values():
            if isinstance(value, str) and value:
                assert value in finding.message + finding.key + finding.object, (value, finding)
            if isinstance(value, Amount):
                assert value.unit in ("cores", "bytes", "count") and value.value >= 0
    assert analysis_of(fixture(f"{kind}.ok.yaml")).findings == []


def test_borrowing_within_the_cohort_is_no_alarm():
    config = fixture("borrowing-within-cohort.ok.yaml")
    team_a = config["aks-kueue:queues"]["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"][0]
    gpu = team_a["resources"][2]
    a100 = config["aks-kueue:nodePools"][2]
    # nominal + borrowingLimit is above the pool, yet the cohort holds no more than the pool.
    assert int(gpu["nominalQuota"]) + int(gpu["borrowingLimit"]) > a100["maxCount"]
    assert analysis_of(config).findings == []


def test_quota_finding_numbers_follow_the_catalog():
    config = fixture("quota-above-capacity.yaml")
    t4 = config["aks-kueue:nodePools"][1]
    finding = next(f for f in analysis_of(config).findings if f.kind == "quota-above-capacity")
    assert finding.numbers["capacity"] == Amount(int(lookup(t4["vmSize"]).gpus) * t4["maxCount"], "count")
    # It names the key to edit: the nominalQuota of the largest contributor, not the flavor.
    assert finding.object.startswith("ClusterQueue ")
    assert finding.key.startswith("aks-kueue:queues.clusterQueues[") and finding.key.endswith(".nominalQuota")


def test_podset_packing_is_exact_for_identical_pods():
    config = fixture("podset-exceeds-pools.yaml")
    cpu = config["aks-kueue:nodePools"][0]
    finding = next(f for f in analysis_of(config).findings if f.kind == "podset-exceeds-pools")
    node = node_resources(Pool(name="cpu", vm_size=cpu["vmSize"], max_count=cpu["maxCount"], max_pods=cpu["maxPods"]))
    per_node = node.amounts["cpu"] // 5000
    assert finding.numbers["fit"] == per_node * cpu["maxCount"] < finding.numbers["count"]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_stacks_have_no_findings(stack):
    analysis = analysis_of(stack_doc(stack))
    assert analysis.findings == []
    assert analysis.capacity and all(row.verdict == "ok" for row in analysis.capacity)


@needs_shared()
def test_the_contract_example_has_no_findings():
    config = yaml.safe_load((SHARED / "contract" / "Pulumi.example.yaml").read_text())["config"]
    assert analysis_of(config).findings == []


def test_a_stack_quota_raised_past_the_pool_is_found():
    def more_gpus(config):
        flavors = config["aks-kueue:queues"]["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"]
        flavors[1]["resources"][2]["nominalQuota"] = "3"
    kinds = [f.kind for f in analysis_of(edited("dev", more_gpus)).findings]
    assert kinds == ["quota-above-capacity"]


def test_zones_add_no_capacity():
    def zonal(config):
        config["aks-kueue:nodePools"][0]["zones"] = ["1", "2", "3"]
    plain = {(r.flavor, r.resource): r.capacity for r in analysis_of(stack_doc("dev")).capacity}
    spread = {(r.flavor, r.resource): r.capacity for r in analysis_of(edited("dev", zonal)).capacity}
    assert plain == spread


def _model(pools=(), objects=(), installs=("helm",), **cluster) -> Model:
    """A model built by hand, as the policy pack could read it from resources alone."""
    base = {"name": "aks", "region": "eastus", "kubernetes_version": "1.34"}
    return Model(cluster=Cluster(**{**base, **cluster}), pools=tuple(pools),
                 installs=tuple(Install(mode, version="0.19.2" if mode == "helm" else None) for mode in installs),
                 objects=tuple(KueueItem(o, f"{o['kind']} {o['metadata']['name']}") for o in objects))


def test_a_flavor_pinning_one_zone_gets_that_zones_share():
    pool = Pool(name="cpu", vm_size="Standard_D8s_v5", max_count=6, max_pods=110, zones=("1", "2", "3"))
    flavor = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "z1"},
              "spec": {"nodeLabels": {"topology.kubernetes.io/zone": "eastus-1"}}}
    judgement = judge(_model([pool], [flavor]))
    assert [(p.name, n) for p, n in judgement.flavors["z1"].pools] == [("cpu", 2)]


# The policy pack builds the model from Pulumi resource inputs, without settings; these
# cases are findings settings would refuse first.
INSTALL_CASES = {
    "installers-conflict": (dict(installs=("helm", "managed")), dict(installs=("helm",))),
    "managed-kubernetes-version": (dict(installs=("managed",), kubernetes_version="1.33"),
                                   dict(installs=("managed",))),
    "managed-node-provisioning": (dict(installs=("managed",), sku="Automatic", node_provisioning="Auto"),
                                  dict(installs=("helm",), sku="Automatic", node_provisioning="Auto")),
    "managed-region": (dict(installs=("managed",), region="westeurope"), dict(installs=("managed",))),
}


@pytest.mark.parametrize("kind", list(INSTALL_CASES))
def test_install_findings_from_a_hand_built_model(kind):
    bad, good = INSTALL_CASES[kind]
    assert [f.kind for f in judge(_model(**bad)).findings if f.kind in FEASIBILITY] == [kind]
    assert [f for f in judge(_model(**good)).findings if f.kind in FEASIBILITY] == []


@pytest.mark.parametrize("installs,refused", [(("managed",), True), (("helm",), False)])
def test_aks_names_are_the_managed_extensions(installs, refused):
    flavor = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "aks-gpu"},
              "spec": {}}
    pool = Pool(name="cpu", vm_size="Standard_D8s_v5", max_count=1, max_pods=110)
    found = [f for f in judge(_model([pool], [flavor], installs)).findings if "aks-" in f.message
             and f.kind == "kueue-object-invalid"]
    assert bool(found) == refused


def test_the_benchmark_organisation_is_feasible_at_a_tenth():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_feasibility", ROOT / "benchmarks" / "feasibility.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    model = bench.organisation(1)
    assert (len(model.pools), len(model.workloads)) == (5, 50)
    assert [f for f in judge(model).findings if f.kind in FEASIBILITY] == []


def _aks_cpu(config):
    for cq in config["aks-kueue:queues"]["clusterQueues"]:
        flavor = cq["spec"]["resourceGroups"][0]["flavors"][0]
        if flavor["name"] == "cpu":
            flavor["name"] = "aks-cpu"


def test_the_managed_aks_cpu_flavor_is_counted_on_every_cpu_pool():
    analysis = analysis_of(edited("prod", _aks_cpu))
    assert analysis.findings == []
    rows = [r for r in analysis.capacity if r.flavor == "aks-cpu"]
    cpu = next(p for p in stack_doc("prod")["aks-kueue:nodePools"] if p["name"] == "cpu")
    node = node_resources(Pool(name="cpu", vm_size=cpu["vmSize"], max_count=cpu["maxCount"], max_pods=cpu["maxPods"]))
    assert {(r.resource, r.capacity) for r in rows if r.resource == "cpu"} == {
        ("cpu", node.amounts["cpu"] * cpu["maxCount"])}
    assert all(r.verdict == "ok" and "aks-cpu" in r.assumption for r in rows)
    # The queue is active (the flavor exists for admission), so a workload too large for
    # its quota is refused for quota, not for an inactive queue.
    def too_big(config):
        _aks_cpu(config)
        config["aks-kueue:expectedWorkloads"][1]["podSets"][1]["count"] = 100
    [finding] = analysis_of(edited("prod", too_big)).findings
    assert finding.kind == "workload-not-admitted" and "insufficient quota" in finding.message
    assert "inactive" not in finding.message


def test_a_managed_quota_above_every_cpu_pool_is_rejected():
    """500 CPU on aks-cpu over three 8-core nodes: rejected, saying what the placement assumes."""
    def edit(config):
        config["aks-kueue:nodePools"] = [{"name": "cpu", "vmSize": "Standard_D8s_v5", "minCount": 0, "maxCount": 3}]
        config["aks-kueue:queues"] = {"clusterQueues": [{"name": "big", "spec": {
            "namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                {"name": "aks-cpu", "resources": [{"name": "cpu", "nominalQuota": "500"}]}]}]}}],
            "localQueues": [{"name": "default", "namespace": "team", "spec": {"clusterQueue": "big"}}]}
        config.pop("aks-kueue:expectedWorkloads", None)
    [finding] = analysis_of(edited("prod", edit)).findings
    assert finding.kind == "quota-above-capacity" and finding.severity.value == "error"
    assert finding.key == "aks-kueue:queues.clusterQueues[0].spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"
    assert "every CPU user pool is counted" in finding.message


def test_a_workload_that_does_not_tolerate_its_flavors_taint_is_told_the_toleration_to_add():
    """Reported: a GPU workload without the pool's toleration was told to raise its queue's quotas; the
    cause sat only in Kueue's message ("untolerated taint ... in flavor a100")."""
    def untolerated(config):
        del config["aks-kueue:expectedWorkloads"][0]["podSets"][0]["tolerations"]
    [finding] = analysis_of(edited("prod", untolerated)).findings
    assert finding.kind == "workload-not-admitted" and "untolerated taint {sku gpu NoSchedule <nil>}" in finding.message
    assert finding.fix == ("add the toleration of flavor a100's taint sku=gpu:NoSchedule to podset workers: "
                           "tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}] (or give the "
                           "flavor that toleration in spec.tolerations, which Kueue adds to the pods it admits)")
    assert finding.key == "aks-kueue:expectedWorkloads[0].podSets[0].tolerations"
    assert "quota" not in finding.fix


def test_a_workload_refused_for_quota_keeps_the_quota_fix():
    def too_big(config):
        config["aks-kueue:expectedWorkloads"][0]["podSets"][0]["count"] = 50
    [finding] = analysis_of(edited("prod", too_big)).findings
    assert finding.kind == "workload-not-admitted" and "raise team-a's quotas" in finding.fix
