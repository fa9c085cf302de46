"""The JSON contract (`cli.md`) on every path: with `--json` (or `-o json`) every subcommand prints exactly
one JSON document on stdout, whatever its exit code, and every `errors` list has one shape,
`[{"file"?, "document"?, "key"?, "message"}]`.

Reported: a bad flag, `--format markdown --json` and `check-plan` on a missing or non-plan file printed
nothing on stdout; `errors` were strings in `preview` and another shape in `validate`/`simulate`."""

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
ERROR_KEYS = {"file", "line", "document", "key", "message"}
MIXED = str(ROOT / "tests" / "fixtures" / "validate-mixed.yaml")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("inputs")

    def write(name: str, text: str) -> str:
        path = root / name
        path.write_text(text)
        return str(path)

    old = edited("dev", lambda c: c["aks-kueue:cluster"].update(kubernetesVersion="1.31"))
    preview_doc = {"project": "aks-kueue", "stack": "dev", "resources": [], "violations": [], "outputs": {},
                   "findings": [], "capacity": {}, "result": "ok"}
    return {
        "yaml": write("broken.yaml", "kind: [unclosed\n"),
        "list": write("list.yaml", "kind: Namespace\n---\n- 1\n"),
        "json": write("not.json", "{not json"),
        "notplan": write("list.json", "[1, 2]"),
        "stack": write("Pulumi.old.yaml", yaml.safe_dump({"config": old})),
        "policy": write("policy.json", json.dumps({"kueue-quota-fits-capacty": "advisory"})),
        "preview": write("preview.json", json.dumps(preview_doc)),
        "trace": write("trace.jsonl", '{"name": "a", "queue": "q", "submitted": 0, "runtime": "1m"}\n{"name": \n'),
        "queue": write("queue.yaml", yaml.safe_dump({
            "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "cq"},
            "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [
                {"name": "cpu", "nominalQuota": 1, "lendingLimit": 2}]}]}]}})),
    }


# (command line, the exit code, the `result`): {name} is a file of the fixture above.
CASES = {
    "preview": [
        (["--jsn", "--json"], 2, "invalid"),
        (["--json", "--format", "markdown"], 2, "invalid"),
        (["--json", "-o", "yaml"], 2, "invalid"),
        (["--stack", "no-such-stack", "--json"], 2, "invalid"),
        (["--stack", "dev", "--config", "{stack}", "-o", "json"], 2, "invalid"),
        (["--config", "{stack}", "--json"], 2, "invalid"),
        (["--policy-config", "{policy}", "--json"], 2, "invalid"),
        (["--policy-config", "{json}", "--json"], 2, "invalid"),
        (["--previous-outputs", "/no/such/file", "--json"], 2, "invalid"),
        (["--previous-outputs", "{preview}", "--json"], 2, "invalid"),
    ],
    "validate": [
        (["--json"], 2, "invalid"),
        (["{queue}", "--jsn", "-o", "json"], 2, "invalid"),
        (["/no/such/file", "--json"], 2, "invalid"),
        (["{yaml}", "-o", "json"], 2, "invalid"),
        (["{queue}", "--integrations", "batch/jobb", "--json"], 2, "invalid"),
        (["{queue}", "--stack", "no-such-stack", "--json"], 2, "invalid"),
        (["{queue}", "--stack", "dev", "--integrations", "pod", "--json"], 2, "invalid"),
        (["{queue}", "-o", "yaml", "--json"], 2, "invalid"),
        (["{queue}", "--json"], 1, "rejected"),
        ([MIXED, "-o", "json"], 1, "rejected"),
    ],
    "simulate": [
        (["--json"], 2, "invalid"),
        (["{queue}", "--json", "-n"], 2, "invalid"),
        (["/no/such/file", "--json"], 2, "invalid"),
        (["{yaml}", "--json"], 2, "invalid"),
        (["{queue}", "--integrations", "nope", "-o", "json"], 2, "invalid"),
        (["{queue}", "--stack", "no-such-stack", "--json"], 2, "invalid"),
        (["{queue}", "--json"], 1, "rejected"),
    ],
    "replay": [
        (["--json"], 2, "invalid"),
        (["/no/such/trace.jsonl", "--queues", "{queue}", "--json"], 2, "invalid"),
        (["{trace}", "--queues", "{queue}", "-o", "json"], 2, "invalid"),
        (["{trace}", "--queues", "{queue}", "-o", "yaml", "--json"], 2, "invalid"),
        (["{trace}", "--stack", "no-such-stack", "--json"], 2, "invalid"),
        (["{trace}", "--queues", "{queue}", "--bogus", "--json"], 2, "invalid"),
    ],
    "check-plan": [
        (["--json"], 2, "invalid"),
        (["/no/such/plan.json", "--json"], 2, "invalid"),
        (["{json}", "-o", "json"], 2, "invalid"),
        (["{notplan}", "--json"], 2, "invalid"),
        (["{notplan}", "--stack", "no-such-stack", "--json"], 2, "invalid"),
        (["{notplan}", "--bogus", "--json"], 2, "invalid"),
    ],
}


def cases():
    return [pytest.param(command, args, code, result, id=f"{command}-{i}")
            for command, table in CASES.items() for i, (args, code, result) in enumerate(table)]


def commands_with_json() -> set[str]:
    from typer.main import get_command

    group = get_command(app)
    return {name for name, command in group.commands.items()
            if any("--json" in getattr(p, "opts", ()) for p in command.params)}


def test_every_subcommand_with_json_has_its_error_paths_here():
    assert commands_with_json() == set(CASES)


@pytest.mark.parametrize("command, args, code, result", cases())
def test_one_document_on_stdout_for_every_exit(files, command, args, code, result):
    argv = [command, *(a.format(**files) for a in args)]
    done = runner.invoke(app, argv)
    assert done.exit_code == code, (done.stdout, done.stderr)
    document = json.loads(done.stdout)  # exactly one document: json.loads refuses anything after it
    assert isinstance(document, dict) and document["result"] == result
    if code == 2:
        assert done.stderr.strip(), "the sentences go to stderr as well"
    for error in document.get("errors", []):
        assert set(error) <= ERROR_KEYS and isinstance(error["message"], str) and error["message"]
    if result == "invalid":
        assert document["errors"]


def test_a_bad_flag_in_a_real_process_prints_its_document_and_clicks_sentence():
    done = subprocess.run([sys.executable, "-m", "aks_kueue.cli", "validate", "-o", "json"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Missing argument 'PATH...'" in done.stderr
    assert json.loads(done.stdout) == {"objects": [], "skipped": [],
                                       "summary": {"objects": 0, "valid": 0, "invalid": 0, "skipped": 0},
                                       "result": "invalid",
                                       "errors": [{"message": "validate: Missing argument 'PATH...'."}]}


def test_errors_have_one_shape_with_their_file_document_and_key(files):
    settings = json.loads(runner.invoke(app, ["preview", "--config", files["stack"], "--json"]).stdout)["errors"]
    assert settings == [{"file": files["stack"], "key": "aks-kueue:cluster.kubernetesVersion",
                         "message": settings[0]["message"]}]
    assert settings[0]["message"].startswith(f"{files['stack']}: aks-kueue:cluster.kubernetesVersion: Kubernetes 1.31 "
                                             "is too old")
    broken = json.loads(runner.invoke(app, ["simulate", files["list"], "--json"]).stdout)["errors"]
    assert broken == [{"file": files["list"], "document": 1, "message": broken[0]["message"]}]
    flag = json.loads(runner.invoke(app, ["validate", files["queue"], "--integrations", "x", "--json"]).stdout)
    assert [set(e) for e in flag["errors"]] == [{"message"}]
    plan = json.loads(runner.invoke(app, ["check-plan", files["json"], "--json"]).stdout)["errors"]
    assert plan == [{"file": files["json"], "message": plan[0]["message"]}] and "not valid JSON" in plan[0]["message"]


def test_the_errors_type_is_the_one_every_document_uses():
    from aks_kueue.cli.output import invalid
    from aks_kueue.k8s.loader import LoadError
    from aks_kueue.preview.errors import InputError

    document = invalid({"objects": []}, [LoadError("a.yaml", 2, "bad"), InputError("flag", key="k"), ValueError("v")])
    assert document == {"objects": [], "result": "invalid", "errors": [
        {"file": "a.yaml", "document": 2, "message": "a.yaml document 2: bad"},
        {"key": "k", "message": "flag"}, {"message": "v"}]}
