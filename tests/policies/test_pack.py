"""The pack as the engine runs it: through pulumi_policy's servicer over recorded previews
(`evaluate`), and as a real analyzer process over gRPC."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import grpc
import pytest
import yaml
from google.protobuf import empty_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from aks_kueue.judge import judge
from aks_kueue.model.from_resources import from_resources
from aks_kueue.policies import PACK_NAME, PACK_VERSION, POLICIES
from aks_kueue.policies.base import INTERNAL_FAILURE
from aks_kueue.preview.pack import (analyzer_resources, configure_request, evaluate, policy_config_error, violation,
                                    wire_inputs)
from aks_kueue.preview.recorder import UNKNOWN
from tests.conftest import ROOT, SHARED, filled, filled_doc, model_of, needs_shared, run_config, run_filled, run_stack
from tests.policies.args import gpu_queue_stack

FIXTURES = Path(__file__).parents[1] / "fixtures" / "feasibility"
KINDS = sorted(p.name[:-len(".yaml")] for p in FIXTURES.glob("*.yaml") if not p.name.endswith(".ok.yaml"))
# The policy that carries each finding kind of a fixture.
POLICY_OF = {
    "quota-above-capacity": "kueue-quota-fits-capacity", "borrowing-above-capacity": "kueue-quota-fits-capacity",
    "flavor-lands-nowhere": "kueue-flavors-match-pools", "flavor-resource-missing": "kueue-flavors-match-pools",
    "taint-not-tolerated": "kueue-flavors-match-pools", "workload-not-admitted": "kueue-expected-workloads-fit",
    "pod-fits-no-node": "kueue-expected-workloads-fit", "podset-exceeds-pools": "kueue-expected-workloads-fit",
    "podset-conflicting-flavors": "kueue-expected-workloads-fit", "managed-region": "kueue-managed-extension-region",
    "podset-unprovisionable": "kueue-expected-workloads-fit", "podset-exceeds-host": "kueue-expected-workloads-fit",
    "topology-request-mismatch": "kueue-expected-workloads-fit", "topology-needs-nodes": "kueue-flavors-match-pools",
    "gpus-not-advertised": "aks-kueue-warnings",
}
LEVEL_OF = {kind: "advisory" if kind in ("managed-region", "gpus-not-advertised") else "mandatory"
            for kind in POLICY_OF}
SECURITY = {p.name for p in POLICIES if p.name.startswith("aks-") and not p.name.startswith("aks-kueue-")}


def fixture_config(name: str) -> dict:
    return yaml.safe_load((FIXTURES / name).read_text())["config"]


def example_config() -> dict:
    return yaml.safe_load((SHARED / "contract" / "Pulumi.example.yaml").read_text())["config"]


@lru_cache(maxsize=None)
def recorded(name: str):
    """One program run per stack or fixture for the whole module; prod and the contract's example with their
    placeholders filled in (as shipped they are rejected for them: `test_the_shipped_placeholders_...`)."""
    if name == "dev":
        return run_stack(name)
    if name == "prod":
        return run_filled(name)
    if name == "shipped prod":
        return run_stack("prod")
    if name == "example":
        return run_config(filled(example_config()))
    if name == "shipped example":
        return run_config(example_config())
    return run_config(fixture_config(name))


def config_of(name: str) -> dict:
    if name == "dev":
        return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{name}.yaml").read_text())["config"]
    if name == "prod":
        return filled_doc(name)
    return filled(example_config()) if name == "example" else fixture_config(name)


def mandatory(violations):
    return [v for v in violations if v.enforcement_level == "mandatory"]


# --- clean stacks ------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_stacks_have_no_mandatory_violation(stack):
    violations = evaluate(recorded(stack))
    assert mandatory(violations) == []
    assert not any(INTERNAL_FAILURE in v.message for v in violations)


@pytest.mark.parametrize("name", ["shipped prod", pytest.param("shipped example", marks=needs_shared())])
def test_the_shipped_placeholders_are_the_only_mandatory_violations(name):
    """Issue 28: a production stack copied unchanged must not pass. The shipped prod stack and the contract's
    example are rejected for their placeholders alone, one violation per key to fill in."""
    violations = mandatory(evaluate(recorded(name)))
    assert violations and {v.policy for v in violations} == {"aks-kueue-no-placeholders"}
    for key in ("aks-kueue:cluster.security.entraAdminGroupObjectIds[0]: ",
                "aks-kueue:cluster.security.apiServerAuthorizedIpRanges[0]: "):
        assert sum(key in v.message for v in violations) == 1, (key, violations)


@needs_shared()
def test_the_contract_example_passes_every_mandatory_policy():
    """The contract's example is a production stack without `aks-kueue:monitoring`: there the
    defaults turn on what production requires (managed Prometheus, Container Insights, and with
    the latter Defender's workspace), so the baseline holds."""
    run = recorded("example")
    assert mandatory(evaluate(run)) == []
    types = {r.type for r in run.registrations}
    assert {"azure-native:monitor:AzureMonitorWorkspace", "azure-native:operationalinsights:Workspace"} <= types


def test_prod_meets_the_security_baseline_even_with_the_prod_config():
    prod_config = json.loads((ROOT / "policy" / "config" / "prod.json").read_text())
    assert policy_config_error(prod_config) is None
    for config in (None, prod_config):
        violations = evaluate(recorded("prod"), config)
        assert [v for v in violations if v.policy in SECURITY] == [] and mandatory(violations) == []


# --- findings through the real policies -------------------------------------------------------


# aks-kueue-warnings reports every warning: a fixture's own is told apart by its words.
WORDS_OF = {"gpus-not-advertised": "but nothing advertises them"}


@pytest.mark.parametrize("kind", KINDS)
def test_each_finding_fixture_is_a_violation_and_its_twin_is_not(kind):
    def of_kind(violations):
        return [v for v in violations if v.policy == POLICY_OF[kind] and WORDS_OF.get(kind, "") in v.message]
    found = of_kind(evaluate(recorded(f"{kind}.yaml")))
    assert found and all(v.enforcement_level == LEVEL_OF[kind] and v.urn for v in found), found
    assert of_kind(evaluate(recorded(f"{kind}.ok.yaml"))) == []
    assert mandatory(evaluate(recorded(f"{kind}.ok.yaml"))) == []


def _verdicts(judgement):
    return sorted((f.severity.value, f.kind, f.object, json.dumps(f.to_json()["numbers"], sort_keys=True))
                  for f in judgement.findings)


def test_hand_built_resources_give_the_settings_verdicts():
    """Resources written by hand, with no model ConfigMap, are judged like the program's own."""
    resources = gpu_queue_stack(gpu_quota="3")  # with the program's device plugin DaemonSet on t4
    rebuilt = judge(from_resources(resources).model)
    expected = judge(model_of(fixture_config("quota-above-capacity.yaml")))
    feasibility = {"quota-above-capacity", "flavor-lands-nowhere", "taint-not-tolerated"}
    assert [v for v in _verdicts(rebuilt) if v[1] in feasibility] == \
        [v for v in _verdicts(expected) if v[1] in feasibility] != []
    assert rebuilt.capacity == expected.capacity


# --- config, levels, unknowns ----------------------------------------------------------------


def test_levels_follow_the_config_as_the_engine_reconciles_it():
    run = recorded("quota-above-capacity.yaml")
    assert {v.enforcement_level for v in evaluate(run) if v.policy == "kueue-quota-fits-capacity"} == \
        {"mandatory"}
    lowered = evaluate(run, {"kueue-quota-fits-capacity": "advisory"})
    assert {v.enforcement_level for v in lowered if v.policy == "kueue-quota-fits-capacity"} == {"advisory"}
    assert evaluate(run, {"all": "disabled"}) == []
    # A policy's own entry wins over "all".
    only = evaluate(run, {"all": "disabled", "kueue-quota-fits-capacity": {"enforcementLevel": "mandatory"}})
    assert only and {v.policy for v in only} == {"kueue-quota-fits-capacity"}


@pytest.mark.parametrize("config, expected", [
    ({"kueue-quota-fit": "mandatory"}, "kueue-quota-fit: not a policy of this pack"),
    ({"all": "strict"}, "all: 'strict' is not an enforcement level"),
    ({"kueue-quota-fits-capacity": {"enforcementLevel": "warn"}}, "enforcementLevel: 'warn' is not"),
    ({"kueue-quota-fits-capacity": {"vmOverheadPercent": 80}}, "vmOverheadPercent: 80 is above the maximum 50"),
    ({"kueue-quota-fits-capacity": {"vmOverheadPercent": "7.5"}}, "is not of type number"),
    ({"kueue-quota-fits-capacity": {"overhead": 5}}, "overhead: not a setting of this policy"),
    ({"kueue-managed-extension-region": {"additionalRegions": "westeurope"}}, "is not of type array"),
    ([], "must be a JSON object"),
])
def test_an_invalid_config_is_one_clear_sentence(config, expected):
    problem = policy_config_error(config)
    assert problem is not None and expected in str(problem), problem
    with pytest.raises(ValueError):
        evaluate(recorded("dev"), config)


def test_valid_configs_pass():
    assert policy_config_error({"all": "advisory", "kueue-quota-fits-capacity": {
        "enforcementLevel": "mandatory", "vmOverheadPercent": 10}}) is None
    assert policy_config_error(None) is None and policy_config_error({}) is None


def test_an_unknown_value_gives_the_runtimes_advisory_not_a_crash():
    run = copy.deepcopy(recorded("prod"))
    pool = next(r for r in run.registrations if r.name == "pools-a100")
    pool.raw_inputs = {**pool.raw_inputs, "maxCount": UNKNOWN}
    violations = evaluate(run)
    assert mandatory(violations) == []
    cannot = [v for v in violations if v.policy == "kueue-quota-fits-capacity"]
    assert len(cannot) == 1 and cannot[0].enforcement_level == "advisory"
    assert cannot[0].message.startswith("can't run policy 'kueue-quota-fits-capacity' from policy pack "
                                        f"'{PACK_NAME}@v{PACK_VERSION}' during preview: string value at .maxCount")


def test_secrets_reach_the_pack_as_secret_markers_and_are_unwrapped_by_it():
    provider = next(r for r in recorded("prod").registrations if r.type == "pulumi:providers:kubernetes")
    wire = wire_inputs(provider)
    assert wire["kubeconfig"]["4dabf18193072939515e22adb298388d"] == "1b47061264138c4ac30d75fd1eb44270"
    assert provider.additional_secret_outputs == ["kubeconfig"]


# --- the pack process, as the engine starts it --------------------------------------------------


def test_the_pack_serves_its_policies_over_grpc():
    process = subprocess.Popen([sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:0", "policy"],
                               cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        port = int(process.stdout.readline())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = analyzer_pb2_grpc.AnalyzerStub(channel)
            info = stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=30)
            assert info.name == PACK_NAME and info.supportsConfig
            served = {p.name: p.enforcementLevel for p in info.policies}
            assert served == {p.name: (analyzer_pb2.MANDATORY if p.enforcement_level.value == "mandatory"
                                       else analyzer_pb2.ADVISORY) for p in POLICIES}
            assert served["kueue-quota-fits-capacity"] == analyzer_pb2.MANDATORY
            assert served["aks-network-policy"] == analyzer_pb2.MANDATORY
            assert served["aks-kueue-warnings"] == analyzer_pb2.ADVISORY
            # The process judges a recorded preview as the offline path does.
            run = recorded("quota-above-capacity.yaml")
            stub.Configure(configure_request(POLICIES, None), timeout=30)
            response = stub.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=analyzer_resources(run)),
                                         timeout=60)
            over_grpc = [violation(d, d.urn or None) for d in response.diagnostics]
            offline = [v for v in evaluate(run) if v.policy in {p.policy for p in over_grpc}]
            assert {v.policy for v in over_grpc} >= {"kueue-quota-fits-capacity"}
            assert sorted(over_grpc, key=str) == sorted(offline, key=str)
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("config, expected", [
    ({"kueue-quota-fits-capacty": "advisory"},
     "kueue-quota-fits-capacty: not a policy of this pack; did you mean 'kueue-quota-fits-capacity'?"),
    ({"all": "advisry"}, "all: 'advisry' is not an enforcement level; did you mean 'advisory'?"),
    ({"kueue-quota-fits-capacity": {"enforcementLevel": "mandatry"}}, "did you mean 'mandatory'?"),
    ({"kueue-quota-fits-capacity": {"vmOverheadPrecent": 5}},
     "vmOverheadPrecent: not a setting of this policy; did you mean 'vmOverheadPercent'?"),
])
def test_a_misspelt_policy_name_level_or_setting_gets_one_suggestion(config, expected):
    """Reported: no "did you mean" for a policy name in --policy-config (keys, integrations and gates had one)."""
    problem = policy_config_error(config)
    assert problem is not None and expected in str(problem), problem
