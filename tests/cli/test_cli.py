"""`aks-kueue preview` end to end: the contract's JSON, exit codes, and no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app
from tests.conftest import ROOT, edited


runner = CliRunner()


def cli(*args):
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def write_stack(tmp_path, config: dict):
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return path


def test_dev_json_follows_the_contract():
    # A real process, as a user runs it: the console script's module, stdout only JSON.
    done = subprocess.run([sys.executable, "-m", "aks_kueue.cli", "preview", "--stack", "dev", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert list(doc) == ["project", "stack", "resources", "violations", "outputs", "findings", "capacity", "result"]
    assert doc["result"] == "ok" and {r["verdict"] for r in doc["capacity"]["flavors"]} == {"ok"}
    # Warnings only: the dev stack's authorized range is a documentation range, the checks only
    # Azure can answer (each with its az command), and, without --previous-outputs, the day-2
    # guard saying the preview is unguarded.
    assert {f["severity"] for f in doc["findings"]} == {"warning"}
    # dev is a development stack: the baseline items it leaves out (Free tier, no monitoring, so no
    # Defender) are warnings.
    assert {f["kind"] for f in doc["findings"]} == {"placeholder-value", "check-in-azure", "day2-unguarded",
                                                    "aks-paid-tier", "aks-monitoring", "aks-defender"}
    for finding in doc["findings"]:
        assert set(finding) == {"kind", "severity", "object", "key", "message", "fix", "numbers", "documentation"}
        # A rule's finding points at its rule's explanation; the day-2 guard's kinds are no rules.
        assert finding["documentation"] == (f"docs/reference/policies.md#{finding['kind']}"
                                            if finding["kind"] != "day2-unguarded" else "")
    assert (doc["project"], doc["stack"]) == ("aks-kueue", "dev")
    for violation in doc["violations"]:  # dev may carry advisory ones, never a mandatory one
        assert set(violation) == {"policy", "enforcementLevel", "urn", "message"}
        assert violation["enforcementLevel"] == "advisory"
    urns = {r["urn"] for r in doc["resources"]}
    for resource in doc["resources"]:
        assert set(resource) == {"urn", "type", "name", "parent", "dependsOn", "provider", "inputs", "options"}
        assert resource["urn"].startswith("urn:pulumi:dev::aks-kueue::")
        assert all(dep in urns for dep in resource["dependsOn"])
        assert resource["provider"] is None or resource["provider"] in urns
    assert doc["outputs"]["kubeconfig"] == "[secret]"
    pool = next(r for r in doc["resources"] if r["name"] == "pools-cpu")
    assert isinstance(pool["inputs"]["maxCount"], int)


def test_default_stack_is_dev_and_human_output_is_a_tree(fake_pack):
    code, out, _ = cli("preview")
    assert code == 0
    assert out.startswith("aks-kueue preview of stack dev: ") and "AgentPool t4  Standard_NC8as_T4_v3" in out
    assert "[secret]" in out
    assert out.index("Policy verdicts") < out.index("Quota against capacity") < out.index("Resources (") \
        < out.index("Stack outputs")


def test_an_infeasible_quota_exits_1_with_its_findings(tmp_path):
    fixture = ROOT / "tests" / "fixtures" / "feasibility" / "quota-above-capacity.yaml"
    code, out, _ = cli("preview", "--config", str(fixture), "--json")
    doc = json.loads(out)
    assert code == 1 and any(v["enforcementLevel"] == "mandatory" for v in doc["violations"])
    assert [f["kind"] for f in doc["findings"] if f["severity"] == "error"] == ["quota-above-capacity"]
    row = next(r for r in doc["capacity"]["flavors"] if (r["flavor"], r["resource"]) == ("t4", "nvidia.com/gpu"))
    # Figures are numbers with a unit, not display strings.
    assert (row["quota"], row["capacity"], row["headroom"], row["unit"], row["verdict"]) == (3, 2, -1, "count", "over")
    cpu = next(r for r in doc["capacity"]["flavors"] if (r["flavor"], r["resource"]) == ("t4", "cpu"))
    assert cpu["unit"] == "cores" and isinstance(cpu["capacity"], (int, float))
    code, out, _ = cli("preview", "--config", str(fixture))
    text = "".join(out.split())  # the terminal wraps long keys
    assert code == 1 and "aks-kueue:queues.clusterQueues[0].spec.resourceGroups[0].flavors[1].resources[2]" \
        ".nominalQuota:thenominalQuota" in text


def test_a_warning_finding_is_reported(fake_pack):
    # Whether it rejects the stack is the pack's call (tests/test_preview_policies.py).
    fixture = ROOT / "tests" / "fixtures" / "feasibility" / "managed-region.yaml"
    code, out, _ = cli("preview", "--config", str(fixture), "--json")
    found = json.loads(out)["findings"]
    assert code == 0 and [f["severity"] for f in found if f["kind"] == "managed-region"] == ["warning"]


def test_config_flag_reads_any_stack_file(tmp_path, fake_pack):
    path = write_stack(tmp_path, edited("prod", lambda c: None))
    code, out, _ = cli("preview", "--config", str(path), "--json")
    assert code == 0 and json.loads(out)["stack"] == "bad"


def test_stack_and_config_together_is_a_bad_flag(tmp_path):
    code, _, err = cli("preview", "--stack", "dev", "--config", str(tmp_path / "x.yaml"))
    assert code == 2 and "either --stack or --config" in err


def test_unknown_flag_exits_2():
    assert cli("preview", "--colour")[0] == 2


def test_missing_stack_names_the_known_ones():
    code, _, err = cli("preview", "--stack", "staging")
    known = "dev, fleet-manager, fleet-swedencentral, fleet-westus3, prod"
    assert code == 2 and f"no such stack file; known stacks: {known}" in err


def test_unreadable_yaml(tmp_path):
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text("config:\n  aks-kueue:cluster: [unclosed\n")
    code, _, err = cli("preview", "--config", str(path))
    assert code == 2 and f"{path}: not valid YAML at line" in err and "Traceback" not in err


INVALID = {
    "wrong type": (lambda c: c["aks-kueue:nodePools"][0].update(maxCount="ten"), "aks-kueue:nodePools[0].maxCount"),
    "unknown key": (lambda c: c["aks-kueue:cluster"].update(teir="Free"), "aks-kueue:cluster.teir"),
    "bad version": (lambda c: c["aks-kueue:cluster"].update(kubernetesVersion="1.31"),
                    "aks-kueue:cluster.kubernetesVersion"),
    "min above max": (lambda c: c["aks-kueue:nodePools"][1].update(minCount=3), "aks-kueue:nodePools[1].minCount"),
    "bad pool name": (lambda c: c["aks-kueue:nodePools"][1].update(name="GPU_pool"), "aks-kueue:nodePools[1].name"),
    "helm-only key in managed mode": (
        lambda c: c["aks-kueue:kueue"].update(install="managed", version=None, integrations=None),
        "aks-kueue:kueue.featureGates"),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_invalid_stack_files_exit_2_naming_the_key(case, tmp_path):
    edit, key_path = INVALID[case]

    def apply(c):
        edit(c)
        c["aks-kueue:kueue"] = {k: v for k, v in c["aks-kueue:kueue"].items() if v is not None}
    code, out, err = cli("preview", "--config", str(write_stack(tmp_path, edited("dev", apply))), "--json")
    assert code == 2 and json.loads(out)["result"] == "invalid"
    assert key_path in [f["key"] for f in json.loads(out)["findings"]]
    assert f"{key_path}: " in err and "Traceback" not in err
