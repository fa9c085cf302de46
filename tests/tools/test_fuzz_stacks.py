"""The fuzz harness (tools/fuzz_stacks.py): its mutations, its checks, and a handful of real runs."""

from __future__ import annotations

import json
import random

import yaml

from tools import fuzz_stacks
from tools.fuzz_stacks import Run, check, mutate

DEV = (fuzz_stacks.ROOT / "stacks" / "Pulumi.dev.yaml").read_text()


def test_mutations_are_reproducible_from_the_seed_and_change_the_stack():
    first = [mutate(DEV, random.Random(f"17-{i}")) for i in range(12)]
    again = [mutate(DEV, random.Random(f"17-{i}")) for i in range(12)]
    assert first == again
    assert len(set(first)) > 8
    plain = yaml.safe_dump(yaml.safe_load(DEV), sort_keys=False, allow_unicode=True, width=10_000)
    assert sum(text != plain for text in first) > 8


def test_each_kind_of_failure_is_caught():
    json_run = Run("x", ["preview"], "result")
    assert check(json_run, 0, '{"result": "ok"}', "", "", hung=False) == []
    assert check(json_run, 2, '{"result": "ok"}\n{"result": "ok"}', "", "", hung=False) == ["json error"]
    assert check(json_run, 2, '["result"]', "", "", hung=False) == ["json error"]
    assert check(json_run, 3, '{"result": "ok"}', "", "", hung=False) == ["exit code 3"]
    assert check(Run("x", []), 1, "", "Traceback (most recent call last):", "", hung=False) == ["traceback"]
    assert check(Run("x", []), 1, "", "", "ValueError: boom", hung=False) == ["traceback"]
    assert check(json_run, None, "", "", "", hung=True) == ["hang"]


def test_a_handful_of_mutations_run_clean(tmp_path, capsys):
    code = fuzz_stacks.main(["--seed", "3", "--count", "2", "--jobs", "2", "--no-hostile", "--out", str(tmp_path)])
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["runs"] == 6 and summary["mutations"] == 2
    assert (summary["tracebacks"], summary["hangs"], summary["jsonErrors"], summary["badExitCodes"]) == (0, 0, 0, 0)
    assert code == 0


def test_a_hang_is_killed_and_counted(monkeypatch):
    """A worker whose run passes the timeout is replaced, and the run counts as a hang."""
    seen = []
    workers = fuzz_stacks.Workers(1, timeout=1.0, start_method="fork")  # the child keeps the patch
    monkeypatch.setattr(fuzz_stacks, "_in_process", lambda args: __import__("time").sleep(30))
    workers.run_all([Run("sleeps", ["x"])], seen.append)
    assert [o.problems for o in seen] == [["hang"]]
