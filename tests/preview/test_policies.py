"""`aks-kueue preview` with the policy pack: violations, the exit rule, --policy-config, --format.

The CLI's own rules are pinned with a stand-in pack (`policy_fakes`); the verdicts of the
real policies are tested through the real `aks_kueue.policies` at the end.
"""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.k8s.field import FieldError
from tests.conftest import FILLED_PROD, ROOT
from tests.policies.fakes import violation

FEASIBILITY = ROOT / "tests" / "fixtures" / "feasibility"
runner = CliRunner()


def cli(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def write_json(tmp_path, value, name="policy.json"):
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


# ---- the CLI's rules, with a stand-in pack ----

def test_a_mandatory_violation_exits_1_and_fills_violations(fake_pack):
    fake_pack.violations = [
        violation("aks-network-policy", "advisory", "no network policy"),
        violation("kueue-quota-fits-capacity", "mandatory", "3 GPUs on 2", urn_of_type=":ClusterQueue"),
    ]
    code, out, _ = cli("preview", "--stack", "dev", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["result"] == "rejected"
    assert [v["policy"] for v in doc["violations"]] == ["aks-network-policy", "kueue-quota-fits-capacity"]
    assert all(set(v) == {"policy", "enforcementLevel", "urn", "message"} for v in doc["violations"])
    assert doc["violations"][1]["urn"] in {r["urn"] for r in doc["resources"]}


def test_advisory_violations_alone_exit_0(fake_pack):
    fake_pack.violations = [violation("aks-network-policy", "advisory", "no network policy")]
    code, out, _ = cli("preview", "--stack", "dev", "--json")
    assert code == 0 and len(json.loads(out)["violations"]) == 1 and json.loads(out)["result"] == "ok"


def test_the_exit_code_follows_the_pack_not_the_findings(fake_pack):
    # An error finding still shows, but only a mandatory violation rejects: a policy config
    # that lowers the feasibility policy must be able to let the preview pass.
    code, out, _ = cli("preview", "--config", FEASIBILITY / "quota-above-capacity.yaml", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["violations"] == [] and doc["result"] == "ok"
    assert [f["kind"] for f in doc["findings"] if f["severity"] == "error"] == ["quota-above-capacity"]


def test_policy_config_json_reaches_the_pack(fake_pack, tmp_path):
    config = {"all": "advisory", "kueue-quota-fits-capacity": {"enforcementLevel": "mandatory",
                                                               "vmOverheadPercent": 10}}
    code, _, _ = cli("preview", "--policy-config", write_json(tmp_path, config), "--json")
    assert code == 0 and fake_pack.configs == [config]


def test_no_policy_config_means_none(fake_pack):
    cli("preview", "--json")
    assert fake_pack.configs == [None]


def invalid_document(out: str) -> dict:
    """On exit 2, --json still prints its one document, saying why."""
    doc = json.loads(out)
    assert doc["result"] == "invalid" and doc["resources"] == [] and doc["violations"] == [] and doc["errors"]
    return doc


@pytest.mark.parametrize("content, expected", [
    ("{\"all\": \"advisory\",}", "not valid JSON at line 1 column"),
    ("\udcff", "not UTF-8"),
])
def test_an_unreadable_policy_config_exits_2(fake_pack, tmp_path, content, expected):
    path = tmp_path / "policy.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    code, out, err = cli("preview", "--policy-config", path, "--json")
    assert code == 2 and expected in err and str(path) in err
    assert expected in invalid_document(out)["errors"][0]["message"]
    assert "Traceback" not in err and fake_pack.configs == []


def test_a_missing_policy_config_exits_2(fake_pack, tmp_path):
    code, out, err = cli("preview", "--policy-config", tmp_path / "nope.json")
    assert code == 2 and out == "" and "cannot read the policy config" in err and fake_pack.configs == []


def test_a_config_the_pack_refuses_exits_2_with_its_sentence(fake_pack, tmp_path):
    fake_pack.config_problem = FieldError("all", "'sometimes' is not an enforcement level; use advisory, mandatory "
                                                 "or disabled")
    code, out, err = cli("preview", "--policy-config", write_json(tmp_path, {"all": "sometimes"}), "--json")
    assert code == 2 and invalid_document(out)["errors"] == [{
        "file": str(tmp_path / "policy.json"), "key": "all",
        "message": f"{tmp_path / 'policy.json'}: all: {fake_pack.config_problem.message}"}]
    assert err.strip() == f"{tmp_path / 'policy.json'}: all: {fake_pack.config_problem.message}"


def test_invalid_settings_give_structured_findings_in_json(tmp_path):
    code, out, err = cli("preview", "--config", write_json_stack(tmp_path), "--json")
    doc = invalid_document(out)
    assert code == 2 and err.startswith("invalid stack config:")
    [finding] = doc["findings"]
    assert finding["key"] == "aks-kueue:cluster.kubernetesVersion" and finding["severity"] == "error"
    assert "too old" in finding["message"]


def write_json_stack(tmp_path):
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    config["config"]["aks-kueue:cluster"]["kubernetesVersion"] = "1.31"
    path = tmp_path / "Pulumi.old.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_json_is_an_alias_of_format_json(fake_pack):
    fake_pack.violations = [violation("aks-network-policy", "advisory", "no network policy")]
    assert cli("preview", "--json")[:2] == cli("preview", "--format", "json")[:2]


@pytest.mark.parametrize("flags, expected", [
    (["--format", "yaml"], "--format yaml: not an output format of preview; use text or json or markdown"),
    (["-o", "jsn"], "--format jsn: not an output format of preview; use text or json or markdown; "
                    "did you mean 'json'?"),
])
def test_bad_format_flags_exit_2(fake_pack, flags, expected):
    code, out, err = cli("preview", *flags)
    assert code == 2 and out == "" and expected in err and fake_pack.configs == []


def test_json_with_another_format_exits_2_with_its_document(fake_pack):
    # Reported: `--format markdown --json` exited 2 with nothing on stdout.
    code, out, err = cli("preview", "--json", "--format", "markdown")
    assert code == 2 and "--json means --format json" in err and fake_pack.configs == []
    assert invalid_document(out)["errors"] == [
        {"message": "--json means --format json; it cannot go with --format markdown"}]


def test_human_output_groups_verdicts_with_their_fix_hints():
    code, out, _ = cli("preview", "--config", FEASIBILITY / "quota-above-capacity.yaml")
    text = " ".join(out.split())
    assert code == 1
    # The verdicts first, then the capacity table (a reviewer reads the verdict first).
    assert text.index("Policy verdicts, mandatory (1)") < text.index("Policy verdicts, advisory (") \
        < text.index("Quota against capacity")
    assert "kueue-quota-fits-capacity (ClusterQueue " in text
    assert ".nominalQuota: the nominalQuota for nvidia.com/gpu on flavor t4 adds up to 3" in text
    assert "fix: lower those nominalQuotas by 1 in all" in text


def test_each_finding_is_printed_once():
    _, out, _ = cli("preview", "--stack", "prod")
    assert out.count("documentation range") == 1


def test_human_output_says_when_every_policy_passed():
    from rich.console import Console

    from aks_kueue.cli.render import print_verdicts
    from aks_kueue.preview.outcome import Outcome

    console = Console(record=True, width=120)
    print_verdicts(console, Outcome(project="aks-kueue", stack="clean"))
    assert console.export_text().strip() == "Policy verdicts: every policy passed."


# ---- the real policy pack ----

def finding_fixtures():
    return sorted(p for p in FEASIBILITY.glob("*.yaml") if not p.name.endswith(".ok.yaml"))


@pytest.mark.parametrize("fixture", finding_fixtures(), ids=lambda p: p.stem)
def test_every_error_fixture_is_rejected_by_a_mandatory_policy(fixture, tmp_path):
    code, out, err = cli("preview", "--config", fixture, "--json")
    doc = json.loads(out)
    found = [f for f in doc["findings"] if not f["kind"].startswith("day2-")]  # day2-unguarded is always there
    assert found, "the fixture no longer triggers its finding"
    mandatory = [v for v in doc["violations"] if v["enforcementLevel"] == "mandatory"]
    if fixture.stem == "managed-region":  # a warning: advisory unless the policy config makes it mandatory
        assert not mandatory and code == 0
        mandatory = [v for v in doc["violations"] if v["policy"] == "kueue-managed-extension-region"]
        assert mandatory and json.loads(cli("preview", "--config", fixture, "--json", "--policy-config",
                                            ROOT / "policy" / "config" / "prod.json")[1])["result"] == "rejected"
        return
    assert mandatory and code == 1, (doc["violations"], err)
    twin = json.loads(cli("preview", "--config", fixture.with_name(f"{fixture.stem}.ok.yaml"), "--json")[1])
    ours = {v["policy"] for v in mandatory} - {v["policy"] for v in twin["violations"]}
    assert ours, doc["violations"]
    # Made advisory by the policy config, the same violations no longer reject the stack.
    relaxed = write_json(tmp_path, {policy: "advisory" for policy in ours})
    code, out, err = cli("preview", "--config", fixture, "--json", "--policy-config", relaxed)
    still = [v for v in json.loads(out)["violations"] if v["enforcementLevel"] == "mandatory"]
    assert all(v["policy"] not in ours for v in still), err


@pytest.mark.parametrize("fixture", sorted(FEASIBILITY.glob("*.ok.yaml")), ids=lambda p: p.name[:-len(".ok.yaml")])
def test_every_feasible_twin_passes(fixture):
    code, out, err = cli("preview", "--config", fixture, "--json")
    doc = json.loads(out)
    assert code == 0, (doc["violations"], err)
    assert all(v["enforcementLevel"] != "mandatory" for v in doc["violations"])


def rejected_fixture():
    """quota-above-capacity's violations, and the policy behind the mandatory one."""
    code, out, _ = cli("preview", "--config", FEASIBILITY / "quota-above-capacity.yaml", "--json")
    assert code == 1
    violations = json.loads(out)["violations"]
    return violations, next(v["policy"] for v in violations if v["enforcementLevel"] == "mandatory")


def test_turning_the_policy_advisory_exits_0(tmp_path):
    before, policy = rejected_fixture()
    config = write_json(tmp_path, {policy: "advisory"})
    code, out, err = cli("preview", "--config", FEASIBILITY / "quota-above-capacity.yaml", "--json",
                         "--policy-config", config)
    after = json.loads(out)["violations"]
    assert code == 0, err
    assert [v["message"] for v in after if v["policy"] == policy] == \
        [v["message"] for v in before if v["policy"] == policy]
    assert {v["enforcementLevel"] for v in after if v["policy"] == policy} == {"advisory"}


def test_disabling_the_policy_removes_its_violations(tmp_path):
    _, policy = rejected_fixture()
    config = write_json(tmp_path, {policy: {"enforcementLevel": "disabled"}})
    code, out, err = cli("preview", "--config", FEASIBILITY / "quota-above-capacity.yaml", "--json",
                         "--policy-config", config)
    assert [v for v in json.loads(out)["violations"] if v["policy"] == policy] == []
    assert code == (1 if any(v["enforcementLevel"] == "mandatory" for v in json.loads(out)["violations"]) else 0)


def test_a_per_policy_level_wins_over_all(tmp_path):
    _, policy = rejected_fixture()
    lowered = write_json(tmp_path, {"all": "advisory"}, "all.json")
    code, out, err = cli("preview", "--config", FEASIBILITY / "quota-above-capacity.yaml", "--json",
                         "--policy-config", lowered)
    assert code == 0 and {v["enforcementLevel"] for v in json.loads(out)["violations"]} == {"advisory"}, err
    kept = write_json(tmp_path, {"all": "advisory", policy: {"enforcementLevel": "mandatory"}}, "kept.json")
    code, out, err = cli("preview", "--config", FEASIBILITY / "quota-above-capacity.yaml", "--json",
                         "--policy-config", kept)
    assert code == 1, err
    assert {v["policy"] for v in json.loads(out)["violations"] if v["enforcementLevel"] == "mandatory"} == {policy}


@pytest.mark.parametrize("config", [{"all": "sometimes"}, ["all", "advisory"]])
def test_an_invalid_config_is_refused_by_the_real_pack(tmp_path, config):
    code, out, err = cli("preview", "--stack", "dev", "--json", "--policy-config", write_json(tmp_path, config))
    assert code == 2 and invalid_document(out) and err.startswith(str(tmp_path / "policy.json") + ": ")
    assert "Traceback" not in err


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_stacks_pass_every_mandatory_policy(stack):
    # With the stack's own policy config when it has one, as the PR workflow runs it; prod with its placeholders
    # filled in (tests/fixtures/stacks/prod-filled.yaml), as it is rejected until they are (issue 28).
    pack_config = ROOT / "policy" / "config" / f"{stack}.json"
    extra = ["--policy-config", pack_config] if pack_config.exists() else []
    which = ["--config", FILLED_PROD] if stack == "prod" else ["--stack", stack]
    code, out, err = cli("preview", *which, "--json", *extra)
    assert code == 0, (json.loads(out)["violations"], err)
