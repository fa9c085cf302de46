"""`aks-kueue check-plan` and `aks-kueue preview --previous-outputs`, end to end."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app
from tests.conftest import edited
from tests.day2 import plans

runner = CliRunner()


def cli(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def write(tmp_path, name, value):
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return path


def test_a_replacement_exits_1_with_one_line_per_step(tmp_path):
    code, out, err = cli("check-plan", write(tmp_path, "plan.json", plans.document(plans.replace_pool())))
    assert code == 1
    *lines, summary = out.splitlines()
    assert len(lines) == 3 and all(line.startswith(plans.A100 + ": ") for line in lines)
    assert [line.split(": ")[1] for line in lines] == ["delete-replaced", "replace", "create-replacement"]
    assert all("Pulumi's reasons: vmSize" in line for line in lines) and "Traceback" not in err
    assert summary.startswith("check-plan: refused: 3 of 3 steps") and err == ""


def test_an_update_exits_0(tmp_path):
    code, out, err = cli("check-plan", write(tmp_path, "plan.json", plans.document(plans.SAME_AND_UPDATE)))
    # The verdict is the answer, so it is on stdout (it was on stderr).
    assert code == 0 and err == "" and out.startswith("check-plan: nothing that users depend on is replaced or deleted")


def test_a_destructive_step_that_passes_is_an_ok_line_on_stdout(tmp_path):
    kept = plans.state(plans.TEAM_A, {"metadata": {"name": "team-a"}}, retainOnDelete=True)
    doc = plans.document([plans.step("delete", plans.TEAM_A, old=kept), *plans.SAME_AND_UPDATE])
    code, out, err = cli("check-plan", write(tmp_path, "plan.json", doc))
    # Reported: the "ok:" lines went to stderr.
    assert code == 0 and err == ""
    assert out.splitlines() == [f"ok: {plans.TEAM_A}: delete: namespaces.team-a is retained (retainOnDelete): "
                                "nothing is deleted",
                                "check-plan: nothing that users depend on is replaced or deleted (4 steps; "
                                "allowReplacement from the plan's config)."]


def test_a_retained_delete_passes_and_a_plain_delete_does_not(tmp_path):
    kept = plans.state(plans.TEAM_A, {"metadata": {"name": "team-a"}}, retainOnDelete=True)
    pool = plans.state(plans.A100, plans.pool_inputs("a100", "x"))
    doc = plans.document([plans.step("delete", plans.TEAM_A, old=kept), plans.step("delete", plans.A100, old=pool)])
    code, out, _ = cli("check-plan", write(tmp_path, "plan.json", doc), "--json")
    result = json.loads(out)
    assert code == 1 and result["result"] == "rejected" and result["offending"] == 1
    assert [(s["entry"], s["offending"]) for s in result["steps"]] == [("namespaces.team-a", False),
                                                                     ("nodePools.a100", True)]


def test_allow_replacement_comes_from_the_stack_file_or_the_plan(tmp_path):
    plan = write(tmp_path, "plan.json", plans.document(plans.replace_pool()))
    stack = tmp_path / "Pulumi.prod.yaml"
    config = edited("prod", lambda c: c.update({"aks-kueue:allowReplacement": ["nodePools.a100"]}))
    stack.write_text(yaml.safe_dump({"config": config}))
    assert cli("check-plan", plan, "--config", stack)[0] == 0
    assert cli("check-plan", plan, "--stack", "prod")[0] == 1  # stacks/Pulumi.prod.yaml lists nothing
    listed = write(tmp_path, "listed.json", plans.document(plans.replace_pool(), allow=["nodePools.a100"]))
    code, out, _ = cli("check-plan", listed, "--json")
    assert code == 0 and json.loads(out)["allowReplacementFrom"] == "the plan's config"


@pytest.mark.parametrize("content,fragment", [
    ("not json", "not valid JSON"), ("[1, 2]", "not a `pulumi preview --json` document"),
    ('{"steps": [{"op": "replace", "urn": "x"}]}', "not a Pulumi URN"),
])
def test_an_unusable_plan_exits_2_with_a_sentence(tmp_path, content, fragment):
    code, out, err = cli("check-plan", write(tmp_path, "plan.json", content))
    assert code == 2 and fragment in err and "Traceback" not in err and out == ""
    assert cli("check-plan", tmp_path / "missing.json")[0] == 2


def _outputs_of_prod(tmp_path):
    from aks_kueue.preview.run import run_program
    from aks_kueue.preview.stackfile import load_stack, stack_path
    from tests.conftest import ROOT

    outputs = run_program(load_stack(stack_path(ROOT, "prod"), "prod", ROOT), ROOT, preview=False).outputs
    return write(tmp_path, "outputs.json", outputs)


def test_preview_refuses_a_replacement_against_previous_outputs(tmp_path, fake_pack):
    previous = _outputs_of_prod(tmp_path)
    moved = tmp_path / "Pulumi.prod.yaml"
    moved.write_text(yaml.safe_dump({"config": edited(
        "prod", lambda c: c["aks-kueue:nodePools"][1].update(vmSize="Standard_NC48ads_A100_v4"))}))
    code, out, err = cli("preview", "--config", moved, "--previous-outputs", previous, "--json")
    assert code == 1 and "Traceback" not in err
    assert ("aks-kueue:nodePools[1].vmSize: Standard_NC24ads_A100_v4 -> Standard_NC48ads_A100_v4 replaces "
            "AgentPool a100") in err
    assert "every pod running on them" in err and "`nodePools.a100`" in err
    # The same stack, unchanged, passes against its own outputs, guarded.
    code, out, err = cli("preview", "--stack", "prod", "--previous-outputs", previous, "--json")
    assert code == 0 and "unguarded" not in err
    assert not [f for f in json.loads(out)["findings"] if f["kind"].startswith("day2-")]


@pytest.mark.parametrize("content,fragment", [("{", "not valid JSON"), ("[]", "a JSON object of stack outputs")])
def test_unusable_previous_outputs_exit_2(tmp_path, content, fragment, fake_pack):
    code, _, err = cli("preview", "--stack", "dev", "--previous-outputs", write(tmp_path, "o.json", content))
    assert code == 2 and fragment in err and "Traceback" not in err


def test_versioned_tokens_and_import_replacement_exit_1(tmp_path):
    """Reported: a versioned AgentPool token and an import-replacement step exited 0."""
    urn = ("urn:pulumi:prod::aks-kueue::aksKueue:index:NodePools$"
           "azure-native:containerservice/v20250901:AgentPool::pools-a100")
    old = plans.state(urn, plans.pool_inputs("a100", "Standard_NC24ads_A100_v4"))
    for op in ("delete", "import-replacement"):
        plan = write(tmp_path, f"{op}.json", plans.document([plans.step(op, urn, old=old)]))
        code, out, err = cli("check-plan", plan)
        assert code == 1 and out.startswith(f"{urn}: {op}: ") and "nodePools.a100" in out and "Traceback" not in err


def _outputs_of(stack, tmp_path):
    from aks_kueue.preview.run import run_program
    from aks_kueue.preview.stackfile import load_stack, stack_path
    from tests.conftest import ROOT

    outputs = run_program(load_stack(stack_path(ROOT, stack), stack, ROOT), ROOT, preview=False).outputs
    return write(tmp_path, f"{stack}-outputs.json", outputs)


def test_a_refusal_carries_its_findings_and_the_resources_it_would_register(tmp_path):
    """Reported: a guard refusal gave "result": "rejected" with empty `violations` and `resources`."""
    previous = _outputs_of("prod", tmp_path)
    moved = tmp_path / "Pulumi.prod.yaml"
    moved.write_text(yaml.safe_dump({"config": edited(
        "prod", lambda c: c["aks-kueue:nodePools"][1].update(vmSize="Standard_NC48ads_A100_v4"))}))
    code, out, err = cli("preview", "--config", moved, "--previous-outputs", previous, "--json")
    document = json.loads(out)
    assert code == 1 and document["result"] == "rejected"
    refusals = [f for f in document["findings"] if f["kind"].startswith("day2-")]
    assert refusals and all(f["severity"] == "error" and "replaces AgentPool a100" in f["message"] for f in refusals)
    assert refusals[0]["key"] == "aks-kueue:nodePools[1].vmSize"
    pools = [r for r in document["resources"] if r["type"] == "azure-native:containerservice:AgentPool"]
    assert {p["inputs"]["vmSize"] for p in pools if p["name"] == "pools-a100"} == {"Standard_NC48ads_A100_v4"}
    assert len(document["resources"]) > 50 and document["violations"]  # the pack ran over them too
    assert not [f for f in document["findings"] if f["kind"] == "day2-unguarded"]
    # The text preview says the refusal first.
    code, out, _ = cli("preview", "--config", moved, "--previous-outputs", previous)
    assert code == 1 and " ".join(out.split()).startswith(
        f"aks-kueue preview of stack prod: REFUSED by the day-2 guard ({len(refusals)} change{'s' if len(refusals) != 1 else ''})")


def test_the_previews_own_json_is_not_previous_outputs(tmp_path):
    """Reported: given the preview's JSON instead of `pulumi stack output --json`, it exited 0 with
    "last deployment exported no `day2`"."""
    code, preview_json, _ = cli("preview", "--stack", "dev", "--json")
    assert code == 0
    given = write(tmp_path, "preview.json", preview_json)
    code, out, err = cli("preview", "--stack", "dev", "--previous-outputs", given, "--json")
    assert code == 2 and "this is the JSON of `aks-kueue preview`" in err and "pulumi stack output --json" in err
    assert json.loads(out)["errors"][0]["file"] == str(given)
    plan = write(tmp_path, "plan.json", plans.document(plans.SAME_AND_UPDATE))
    code, _, err = cli("preview", "--stack", "dev", "--previous-outputs", plan)
    assert code == 2 and "this is a plan (`pulumi preview --json`)" in err


def test_another_stacks_outputs_are_said_to_be_of_another_cluster(tmp_path):
    """Reported: given another stack's outputs, it printed 14 refusals without saying they were of another cluster."""
    dev = _outputs_of("dev", tmp_path)
    code, out, err = cli("preview", "--stack", "prod", "--previous-outputs", dev, "--json")
    assert code == 1
    warning = err.splitlines()[0]
    assert warning.startswith("warning: day2: the previous outputs are of another cluster: aks-batch-dev in resource "
                              "group rg-batch-dev, while stack prod deploys aks-batch-prod in rg-batch-prod")
    assert "pulumi stack output --json --show-secrets --stack prod" in warning
    assert json.loads(out)["findings"][0]["kind"] == "day2-other-cluster"


def test_a_named_pipe_is_refused_at_once_not_waited_on(tmp_path):
    """Reported: check-plan read its file unbounded, so a FIFO with no writer hung it."""
    import os

    fifo = tmp_path / "plan.json"
    os.mkfifo(fifo)
    code, out, err = cli("check-plan", fifo, "--json")
    assert code == 2 and "is a named pipe (FIFO), not a regular file" in err and "Traceback" not in err
    assert json.loads(out)["result"] == "invalid"


def test_a_workers_token_rotation_passes_on_the_generations_its_stack_file_keeps(tmp_path):
    """The old token's delete is a rotation's last step when the stack no longer keeps its generation."""
    token = plans.state(plans.token_secret(1), {"metadata": {"name": "multikueue-sa-token-1"}})
    plan = write(tmp_path, "plan.json", plans.document([plans.step("delete", plans.token_secret(1), old=token)]))
    stack = tmp_path / "Pulumi.fleet-westus3.yaml"
    config = edited("fleet-westus3", lambda c: c["aks-kueue:fleet"].update(tokenGenerations=[2]))
    stack.write_text(yaml.safe_dump({"config": config}))
    code, out, _ = cli("check-plan", plan, "--config", stack)
    assert code == 0 and "ok: " in out and "no longer in aks-kueue:fleet.tokenGenerations" in out
    # The shipped worker keeps generation 1: the same delete is refused.
    code, out, _ = cli("check-plan", plan, "--stack", "fleet-westus3")
    assert code == 1 and "deletes fleet.manager" in out
