"""The feasibility analysis: one fixture pair per finding, the stacks clean, the pure function."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from aks_kueue.feasibility import ERROR, FeasibilityInputs, InstallFacts, PoolSpec, analyse
from aks_kueue.feasibility.adapter import inputs_from_settings
from aks_kueue.feasibility.pools import node_resources
from aks_kueue.queues import plan_queues
from aks_kueue.settings import parse_settings
from aks_kueue.aks.vm_sizes import lookup
from tests.conftest import ROOT, SHARED, edited, flat, needs_shared, stack_doc

FIXTURES = Path(__file__).parents[1] / "fixtures" / "feasibility"


def settings_of(config: dict):
    settings = parse_settings(flat(config))
    return settings, plan_queues(settings, ROOT)


def analysis_of(config: dict):
    return analyse(inputs_from_settings(*settings_of(config)))


def fixture(name: str) -> dict:
    return yaml.safe_load((FIXTURES / name).read_text())["config"]


KINDS = sorted(p.name[:-len(".yaml")] for p in FIXTURES.glob("*.yaml") if not p.name.endswith(".ok.yaml"))


def test_every_finding_kind_has_a_fixture_pair():
    assert set(KINDS) >= {"quota-above-capacity", "borrowing-above-capacity", "flavor-lands-nowhere",
                          "flavor-resource-missing", "taint-not-tolerated", "workload-not-admitted",
                          "pod-fits-no-node", "podset-exceeds-pools", "podset-conflicting-flavors",
                          "managed-region"}
    assert all((FIXTURES / f"{kind}.ok.yaml").exists() for kind in KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_fixture_triggers_its_finding_and_its_twin_is_clean(kind):
    findings = [f for f in analysis_of(fixture(f"{kind}.yaml")).findings if f.kind == kind]
    assert findings, kind
    for finding in findings:
        assert finding.field.startswith(("aks-kueue:", "azure-native:")), finding
        assert finding.fix and finding.object
        # The message carries the numbers it reports.
        for value in finding.numbers.values():
            if isinstance(value, (str, int)) and not isinstance(value, bool) and len(str(value)) > 0:
                assert str(value) in finding.message + finding.field + finding.object, (value, finding)
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
    assert finding.numbers["capacity"] == str(int(lookup(t4["vmSize"]).gpus) * t4["maxCount"])
    assert finding.object == "ResourceFlavor t4" and finding.field == "aks-kueue:queues.resourceFlavors[1]"


def test_podset_packing_is_exact_for_identical_pods():
    config = fixture("podset-exceeds-pools.yaml")
    cpu = config["aks-kueue:nodePools"][0]
    finding = next(f for f in analysis_of(config).findings if f.kind == "podset-exceeds-pools")
    node = node_resources(PoolSpec(name="cpu", vm_size=cpu["vmSize"], max_count=cpu["maxCount"],
                                   max_pods=cpu["maxPods"]))
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


def test_a_flavor_pinning_one_zone_gets_that_zones_share():
    pool = PoolSpec(name="cpu", vm_size="Standard_D8s_v5", max_count=6, max_pods=110, zones=("1", "2", "3"))
    flavor = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "z1"},
              "spec": {"nodeLabels": {"topology.kubernetes.io/zone": "eastus-1"}}}
    analysis = analyse(FeasibilityInputs((pool,), (flavor,), (), InstallFacts("eastus", "1.34")))
    assert [(p.name, n) for p, n in analysis.flavors["z1"].pools] == [("cpu", 2)]


# The policy pack builds the inputs from Pulumi resource inputs, without settings. The
# analysis must need nothing else; these cases are findings settings would refuse first.
HELM = InstallFacts(region="eastus", kubernetes_version="1.34", installers=("helm",))
MANAGED = dataclasses.replace(HELM, installers=("managed",))
INSTALL_CASES = {
    "installers-conflict": (dataclasses.replace(HELM, installers=("helm", "managed")), HELM),
    "managed-kubernetes-version": (dataclasses.replace(MANAGED, kubernetes_version="1.33"), MANAGED),
    "managed-node-provisioning": (dataclasses.replace(MANAGED, sku="Automatic", node_provisioning="Auto"),
                                  dataclasses.replace(HELM, sku="Automatic", node_provisioning="Auto")),
    "managed-integration": (dataclasses.replace(MANAGED, integrations=("batch/job", "kubeflow.org/pytorchjob")),
                            dataclasses.replace(MANAGED, integrations=("batch/job", "kubeflow.org/mpijob"))),
    "managed-region": (dataclasses.replace(MANAGED, region="westeurope"), MANAGED),
}


@pytest.mark.parametrize("kind", list(INSTALL_CASES))
def test_install_findings_from_plain_inputs(kind):
    bad, good = INSTALL_CASES[kind]
    found = analyse(FeasibilityInputs((), (), (), bad)).findings
    assert [f.kind for f in found] == [kind]
    assert analyse(FeasibilityInputs((), (), (), good)).findings == []


@pytest.mark.parametrize("install,expected", [(MANAGED, ["managed-reserved-name"]), (HELM, [])])
def test_aks_names_are_the_managed_extensions(install, expected):
    flavor = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "aks-gpu"},
              "spec": {}}
    pool = PoolSpec(name="cpu", vm_size="Standard_D8s_v5", max_count=1, max_pods=110)
    found = analyse(FeasibilityInputs((pool,), (flavor,), (), install)).findings
    assert [f.kind for f in found] == expected


def test_settings_and_hand_built_inputs_agree():
    """What the policy pack would build from AgentPool inputs gives the same verdicts."""
    settings, plan = settings_of(fixture("quota-above-capacity.yaml"))
    built = inputs_from_settings(settings, plan)
    by_hand = tuple(PoolSpec(name=p.name, vm_size=p.vm_size, max_count=p.max_count, max_pods=p.max_pods,
                             labels=dict(p.labels), taints=p.taints, gpu_driver=p.gpu_driver,
                             daemonsets=p.daemonsets) for p in built.pools)
    again = analyse(dataclasses.replace(built, pools=by_hand, sources={}))
    assert [(f.kind, f.numbers) for f in again.findings] == [(f.kind, f.numbers) for f in analyse(built).findings]
    assert all(f.severity == ERROR for f in again.findings)


def test_the_benchmark_organisation_is_feasible_at_a_tenth():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_feasibility", ROOT / "benchmarks" / "feasibility.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    inputs = bench.organisation(1)
    assert (len(inputs.pools), len(inputs.workloads)) == (5, 50)
    assert analyse(inputs).findings == []


def test_managed_aks_flavors_are_admitted_but_not_modelled():
    def use_aks_cpu(config):
        for cq in config["aks-kueue:queues"]["clusterQueues"]:
            cq["spec"]["resourceGroups"][0]["flavors"][0]["name"] = "aks-cpu"
    analysis = analysis_of(edited("prod", use_aks_cpu))
    assert analysis.findings == []
    assert {r.verdict for r in analysis.capacity if r.flavor == "aks-cpu"} == {"not modelled"}
    # The queue is active (the flavor exists for admission), so a workload too large for
    # its quota is refused for quota, not for an inactive queue.
    def too_big(config):
        use_aks_cpu(config)
        config["aks-kueue:expectedWorkloads"][1]["podSets"][1]["count"] = 100
    [finding] = analysis_of(edited("prod", too_big)).findings
    assert finding.kind == "workload-not-admitted" and "insufficient quota" in finding.message
    assert "inactive" not in finding.message
