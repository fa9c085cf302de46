"""The conventions people have in their fingers (pulumi, kubectl, az, helm), each reported missing:
`--version`, `-s` for `--stack`, `-o json` for `--json`, `--policy-pack-config` beside `--policy-config`,
`--stack` on validate/simulate taking the stack's queues; help without type metavars or broken lines;
simulate's table header never wrapped."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys

import pytest
import yaml
from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.versions import KUEUE_API_VERSION, KUEUE_CHART_VERSION
from tests.conftest import ROOT, model_of, stack_doc

runner = CliRunner()
COMMANDS = ("preview", "report", "validate", "simulate", "check-plan", "sample-job")


def cli(*args, env=None):
    done = runner.invoke(app, [str(a) for a in args], env=env)
    return done.exit_code, done.stdout, done.stderr


def test_version_names_the_program_the_kueue_it_pins_and_the_pulumi_packages():
    from importlib.metadata import version

    done = subprocess.run([sys.executable, "-m", "aks_kueue.cli", "--version"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    out = done.stdout
    assert out.startswith(f"aks-kueue {version('aks-kueue')}\n")
    assert f"Kueue chart {KUEUE_CHART_VERSION}" in out and f"API {KUEUE_API_VERSION}" in out
    for package in ("pulumi", "pulumi-policy", "pulumi-azure-native", "pulumi-kubernetes"):
        assert f"{package} {version(package)}" in out or f"SDK {version(package)}" in out, package


@pytest.mark.parametrize("command", ["preview", "report", "validate", "simulate", "check-plan", "sample-job"])
def test_s_is_short_for_stack_everywhere(command):
    from typer.main import get_command

    params = get_command(app).commands[command].params
    stack = next(p for p in params if "--stack" in p.opts)
    assert "-s" in stack.opts


def test_o_json_is_json():
    with_o = cli("validate", ROOT / "tests" / "fixtures" / "validate-mixed.yaml", "-o", "json")
    with_json = cli("validate", ROOT / "tests" / "fixtures" / "validate-mixed.yaml", "--json")
    assert with_o[0] == with_json[0] == 1 and json.loads(with_o[1]) == json.loads(with_json[1])
    code, out, err = cli("validate", ROOT / "tests" / "fixtures" / "validate-mixed.yaml", "-o", "yaml")
    assert code == 2 and out == "" and "-o yaml: not an output format of validate; use text or json" in err


def test_o_json_on_preview_is_the_json_document():
    code, out, _ = cli("preview", "-s", "dev", "-o", "json")
    assert code == 0 and json.loads(out)["stack"] == "dev"


def test_policy_pack_config_is_accepted_beside_policy_config(tmp_path):
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"kueue-quota-fits-capacity": "advisory"}))
    fixture = ROOT / "tests" / "fixtures" / "feasibility" / "quota-above-capacity.yaml"
    assert cli("preview", "--config", fixture, "--json")[0] == 1
    for flag in ("--policy-config", "--policy-pack-config"):
        code, out, err = cli("preview", "--config", fixture, flag, config, "--json")
        assert code == 0, (flag, err)


def test_simulate_stack_takes_the_stacks_queues_so_a_sample_job_is_admitted_from_the_cli(tmp_path):
    code, sample, err = cli("sample-job", "-s", "prod", "--queue", "team-a/default", "--gpus", "1")
    assert code == 0, err
    job = tmp_path / "job.yaml"
    job.write_text(sample)
    # Reported: `simulate --stack` took the stack's integrations only, so this job reached no ClusterQueue.
    code, out, err = cli("simulate", job, "--stack", "prod", "--json")
    assert code == 0, err
    [workload] = json.loads(out)["workloads"]
    assert (workload["clusterQueue"], workload["mode"]) == ("team-a", "Fit")


def test_validate_stack_takes_the_stacks_queue_objects_before_the_files(tmp_path):
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    code, out, _ = cli("validate", empty, "-s", "prod", "--json")
    document = json.loads(out)
    model = model_of(stack_doc("prod"), "prod")
    expected = [(o.manifest["kind"], o.manifest["metadata"]["name"]) for o in model.objects]
    assert code == 0 and [(o["kind"], o["name"]) for o in document["objects"]] == expected
    assert {o["file"] for o in document["objects"]} == {"stack prod"}
    # Text says the stack's objects once, not one line each.
    code, out, _ = cli("validate", empty, "-s", "prod")
    assert code == 0 and out.splitlines()[0] == f"ok      stack prod: {len(expected)} queue objects"


def test_the_stacks_objects_count_as_given_first(tmp_path):
    """Given again in a file, a stack's ClusterQueue is a duplicate, as the API server would say."""
    model = model_of(stack_doc("dev"), "dev")
    queue = next(o.manifest for o in model.objects if o.manifest["kind"] == "ClusterQueue")
    again = tmp_path / "again.yaml"
    again.write_text(yaml.safe_dump(queue))
    code, out, err = cli("simulate", again, "-s", "dev", "--json")
    assert code == 1 and "Duplicate value" in err and "already defines" in err
    assert json.loads(out)["result"] == "rejected"


def help_text(command: str, width: int) -> str:
    done = runner.invoke(app, [command, "--help"], env={"COLUMNS": str(width), "TERM": "dumb"})
    assert done.exit_code == 0
    return done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_help_shows_no_type_metavars(command):
    text = help_text(command, 120)
    # Reported: `<bool>` for flags, `{paths}...` and `<list[str]>` for arguments.
    assert not re.search(r"<(bool|str|path|int|list\[str\]|text)>", text), text
    assert not re.search(r"\{[A-Za-z.]+\}", text), text


@pytest.mark.parametrize("command", COMMANDS)
def test_help_keeps_each_sentence_on_one_line_when_it_fits(command):
    from typer.main import get_command

    text = " ".join(help_text(command, 400).split("│"))
    doc = inspect.cleandoc(get_command(app).commands[command].help or "")
    for paragraph in doc.split("\n\n"):
        assert "\n" not in paragraph  # reflowed: the terminal wraps it, not the source
        assert any(paragraph in " ".join(line.split()) for line in text.splitlines()), paragraph


def test_simulates_header_is_never_wrapped_at_140_or_100_columns():
    files = [str(p) for p in sorted((ROOT / "tests" / "fixtures" / "simulate").glob("*.yaml"))]
    for width in (140, 100, 80):
        done = runner.invoke(app, ["simulate", *files], env={"COLUMNS": str(width), "TERM": "dumb"})
        assert done.exit_code == 0
        header = next(line for line in done.stdout.splitlines() if "workload" in line)
        assert [cell.strip() for cell in re.split(r"[┃|]", header) if cell.strip()] == [
            "workload", "clusterQueue", "mode", "borrows", "flavors", "message"], (width, header)
