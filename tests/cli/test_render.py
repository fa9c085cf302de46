"""The text preview, as a reviewer reads it at 100 columns.

Reported: prod's text preview was 412 lines, 238 of them the stack-outputs table (mostly the
internal `day2` JSON); the verdicts began at line 334; every run repeated nine "Azure subscription"
reminders under the same heading and a 440-character "unguarded" line."""

from __future__ import annotations

import json
from functools import lru_cache

from typer.testing import CliRunner

from aks_kueue.cli import app
from aks_kueue.cli.render import lines, output_summary
from aks_kueue.preview.outcome import preview
from aks_kueue.preview.stackfile import StackConfig
from tests.conftest import FILLED_PROD, ROOT, filled_doc, flat
from tests.fleet_stacks import MANAGER, WORKERS, config as fleet_config, qualified, worker_stack_outputs

WIDTH = 100


@lru_cache(maxsize=None)
def prod_outcome():
    # prod with its placeholders filled in: as shipped it is rejected for them (issue 28).
    return preview(StackConfig("aks-kueue", "prod", flat(filled_doc("prod"))), ROOT)


@lru_cache(maxsize=None)
def prod_lines(show_outputs: bool = False, unfold: bool = False) -> tuple[str, ...]:
    return tuple(lines(prod_outcome(), WIDTH, show_outputs, unfold))


def first(text: str, shown) -> int:
    return next(i for i, line in enumerate(shown) if text in line)


def test_the_verdicts_and_the_capacity_table_come_first():
    shown = prod_lines()
    assert shown[0] == "aks-kueue preview of stack prod: passes every mandatory policy, 9 advisory"
    verdicts = first("Policy verdicts, advisory (9)", shown)
    assert verdicts < 40, f"verdicts at line {verdicts + 1}"
    assert first("Quota against capacity", shown) > verdicts
    assert first("Resources (65", shown) > first("Quota against capacity", shown)
    assert first("Stack outputs", shown) > first("Resources (65", shown)
    # The whole preview, down from 412 lines; a bound, not the count, so a new warning does not break it.
    assert len(shown) < 200, len(shown)
    assert max(len(line.rstrip()) for line in shown) <= WIDTH


def test_the_day2_record_is_named_not_shown_unless_asked_for():
    shown = prod_lines()
    assert [line.split()[:1] for line in shown if line.strip().startswith("day2")] == [["day2"]]
    assert "(the day-2 guard's record for the next update)" in shown[first(" day2 ", shown)]
    assert not any('"schema"' in line or "replace-forcing" in line for line in shown)
    full = "\n".join(prod_lines(show_outputs=True))
    assert '"schema": 1' in full and '"kueueInstall": "managed"' in full


def test_alike_reminders_are_said_under_one_heading_and_unguarded_once():
    # Issue 28: the nine checks filled about 40 of 133 lines; folded, they are one line naming the flag.
    shown = prod_lines()
    text = "\n".join(shown)
    assert text.count("Azure subscription") == 1
    assert "Azure subscription: 9 checks only Azure can answer, to run against the subscription before the first " \
           "pulumi up; --show-azure-checks lists each with its az command" in " ".join(" ".join(shown).split())
    assert text.count("check with: az ") == 0
    unguarded = [line for line in shown if "unguarded" in line]
    assert len(unguarded) == 1 and len(unguarded[0]) <= WIDTH
    # Unfolded, each of the nine keeps its key and its command, under the one heading.
    unfolded = "\n".join(prod_lines(unfold=True))
    assert unfolded.count("Azure subscription") == 1 and unfolded.count("check with: az ") == 9
    assert len(prod_lines(unfold=True)) > len(shown) + 30


def test_the_flag_unfolds_the_azure_checks_and_json_always_has_them():
    folded = CliRunner().invoke(app, ["preview", "--config", str(FILLED_PROD)])
    unfolded = CliRunner().invoke(app, ["preview", "--config", str(FILLED_PROD), "--show-azure-checks"])
    assert folded.exit_code == unfolded.exit_code == 0
    assert folded.stdout.count("check with: az") == 0 and unfolded.stdout.count("check with: az") == 9
    done = CliRunner().invoke(app, ["preview", "--config", str(FILLED_PROD), "--json"])
    assert done.stdout.count('"kind": "check-in-azure"') == 9


def test_the_unguarded_warning_is_not_repeated_on_stderr():
    done = CliRunner().invoke(app, ["preview", "--config", str(FILLED_PROD)])
    assert done.exit_code == 0 and "unguarded" not in done.stderr
    assert "unguarded" in done.stdout


def test_a_fleet_manager_sets_its_quota_against_its_workers_not_no_quota(tmp_path):
    # Issue 28: the manager's preview said "no ClusterQueue or Cohort sets a quota" while its ClusterQueues set
    # 200 cpu and 5 GPUs each.
    def manager(stack_outputs=None):
        return preview(StackConfig("aks-kueue", MANAGER, flat(fleet_config(MANAGER))), ROOT,
                       stack_outputs=stack_outputs)

    alone = " ".join(" ".join(lines(manager(), WIDTH)).split())
    assert "no ClusterQueue or Cohort sets a quota" not in alone
    assert "none of its 2 workers' outputs were read" in alone
    files = {}
    for stack in WORKERS:
        files[qualified(stack)] = tmp_path / f"{stack}.json"
        files[qualified(stack)].write_text(json.dumps(dict(worker_stack_outputs(stack).values)))
    done = manager(files)
    rows = {row.resource: row for row in done.judgement.fleet_quota}
    assert rows["nvidia.com/gpu"].manager > 0 and rows["nvidia.com/gpu"].workers_read == 2
    assert rows["nvidia.com/gpu"].workers == sum(rows["nvidia.com/gpu"].per_worker.values()) > 0
    shown = lines(done, WIDTH)
    assert "Manager quota against its 2 of 2 workers'" in " ".join(" ".join(shown).split())
    gpu = next(line for line in shown if "nvidia.com/gpu" in line)
    ratio = rows["nvidia.com/gpu"].manager / rows["nvidia.com/gpu"].workers
    assert f"{ratio:.2f}x" in gpu
    assert "no ClusterQueue or Cohort sets a quota" not in "\n".join(shown)


def test_the_resource_tree_is_compact():
    shown = prod_lines()
    tree = shown[first("Resources (65", shown):first("Stack outputs", shown)]
    assert len(tree) < 60
    joined = "\n".join(tree)
    assert "ClusterQueue ×3: team-a, team-b, training" in joined
    assert "AgentPool a100  Standard_NC24ads_A100_v4, 0..4 nodes, sku=gpu:NoSchedule" in joined


def test_an_output_is_summarised_in_one_line():
    assert output_summary("rg") == "rg"
    assert output_summary({"a": {"deep": 1}, "b": 2}) == "{a, b}"
    assert output_summary(list(range(3))) == "[3 items]"
    assert output_summary("x" * 100, 10) == "x" * 9 + "…"


def test_a_mandatory_violation_says_so_first(tmp_path):
    from tests.conftest import ROOT

    done = CliRunner().invoke(app, ["preview", "--config", str(ROOT / "tests" / "fixtures" / "feasibility" /
                                                                "quota-above-capacity.yaml")])
    text = " ".join(done.stdout.split())
    assert done.exit_code == 1 and text.startswith("aks-kueue preview of stack quota-above-capacity: REJECTED: 1 "
                                                   "mandatory violation")
