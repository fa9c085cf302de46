"""Fuzz the commands with mutated stack files and hostile YAML: no traceback, no hang, one JSON document.

Each mutation starts from a stack of the repository (`stacks/Pulumi.dev.yaml`, `Pulumi.prod.yaml`, and
prod with its placeholders filled in, `tests/fixtures/stacks/prod-filled.yaml`, which passes the gate where the
shipped one is rejected) or the contract's example, and changes it a few times, either in its values (a key removed,
renamed or added, a value replaced by an odd one, a list item doubled, a value wrapped in
`secure:`) or in its text (an unquoted YAML 1.2 oddity such as `1:50`, `0777`, `yes`, `.inf` or a
date, a tag, an anchor or alias, a tab, a second document, a cut). Every mutated file is
previewed three times, `aks-kueue preview --config FILE` with `--json`, `--format markdown` and
the text format; then `validate` and `simulate` (JSON and text) read each hostile file of a fixed
set (an alias bomb, 500 levels of nesting, a named pipe, a device, a directory, files past the
size caps, binary, Latin-1, custom tags, duplicated keys), and `preview --config` reads the
hostile files meant for it (a pipe, a device, a stack file past 1 MiB, an alias bomb as a stack).

A run fails when its exit code is not 0, 1 or 2, when "Traceback" is in what it printed (or, in
process, a command raised), when it takes longer than the timeout, or when `--json` did not print
exactly one JSON document (an object with a `result`, or for validate/simulate a `summary`).

    venv/bin/python tools/fuzz_stacks.py --seed 17 --count 3000 --jobs 2
    venv/bin/python tools/fuzz_stacks.py --count 20 --subprocess     # each run its own process

By default each of `--jobs` worker processes runs the command in process (typer's CliRunner, the
same code path as the console script, less ~2 s of start-up per run) and is replaced after 100
runs; a worker whose run passes the timeout is killed, and the run counts as a hang. With
`--subprocess` every run is `python -m aks_kueue.cli ...`, as a user runs it. Failures are written
to `--out` (the mutated file and what each run printed); the summary is the last line, and the
exit code is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing
import os
import random
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, Callable, Optional

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BASES = [ROOT / "stacks" / "Pulumi.dev.yaml", ROOT / "stacks" / "Pulumi.prod.yaml",
         ROOT / "tests" / "fixtures" / "stacks" / "prod-filled.yaml",
         ROOT.parent / "shared" / "contract" / "Pulumi.example.yaml"]
FORMATS = (["--json"], ["--format", "markdown"], [])
EXIT_CODES = {0, 1, 2}

# Values a mutation puts in place of another: wrong types, bounds, YAML and Pulumi oddities.
ODD_VALUES: list[Any] = [
    None, "", " ", True, False, 0, -1, 1, 3, 2 ** 31, 2 ** 63, -(2 ** 63) - 1, 1.5, 1e308, -0.0, "NaN",
    "yes", "No", "1:50", "0777", "2026-12-24", "[secret]", "x" * 300, "ünïcödé", "a\nb", "'", "\"", "{", "*",
    "Standard_NC24ads_A100_v4", "Standard_D2s_v5", "1.33", "1.35", "0.19.2", "eastus", "helm", "managed", "none",
    "Install", "None", "cpu", "nvidia.com/gpu", "64", "0", "-1", "1e3", "1Gi", "999999Ti", "sku=gpu:NoSchedule",
    "team-a/default", "00000000-0000-0000-0000-000000000000", "203.0.113.0/24", "10.0.0.0/8", "not a cidr",
    [], [1], ["a", "b"], [None], {}, {"a": 1}, {"name": "x"}, {"secure": "v1:AAAA"}, {"secure": 1},
    [[[[[[[[[[1]]]]]]]]]], {"spec": {"x": {"y": {"z": [1, 2, {"w": None}]}}}},
]
# Raw text a mutation writes unquoted as a value, read by yaml.v3 as Pulumi reads it.
RAW_VALUES = ["1:50", "0777", "0x1F", "0o17", "0b101", "1_000", "yes", "No", "on", "~", ".inf", "-.Inf", ".nan",
              "2026-12-24", "2026-12-24T10:00:00+02:00", "!!int abc", "!!bool yes", "!!str 12", "!Ref x",
              "!!binary aGk=", "&a 1", "*nothing", "[1, 2", "{a: 1", "'unterminated", "\"\\x\"", "|\n    text",
              ">-\n    folded", "<<: {}", "? complex\n  : key", "@reserved", "`tick", "%TAG", "\t1", "1 # comment",
              "18446744073709551616", "-9223372036854775809", "1e400", "0.000000001", "True", "FALSE", "Null"]
TEXT_EDITS = ["\t", "---\n", "...\n", "  - \n", ": :\n", "&anchor ", "*anchor ", "!!map ", "\x00", "\ufeff", "# c\n",
              "key: value\n", "  nested:\n    deeper: 1\n"]
KEY_TYPOS = ["nodePool", "nodepools", "clusterQueue", "queues2", "kueue ", "aks-kueue:unknown", "spec", "name"]


# ---- mutations -------------------------------------------------------------------------------

def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key and index path below `value`, each before the paths below it."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    return [path for key, child in items for path in (prefix + (key,), *_paths(child, prefix + (key,)))]


def _parent(doc: Any, path: tuple) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


def _tree_mutation(doc: dict, rng: random.Random) -> None:
    paths = _paths(doc.get("config") or {})
    if not paths:
        return
    path = ("config",) + rng.choice(paths)
    try:
        parent, last = _parent(doc, path), path[-1]
        operation = rng.randrange(7)
        if operation == 0:  # remove
            del parent[last]
        elif operation in (1, 2):  # replace by an odd value
            parent[last] = copy.deepcopy(rng.choice(ODD_VALUES))
        elif operation == 3 and isinstance(parent, dict):  # rename the key
            parent[rng.choice(KEY_TYPOS)] = parent.pop(last)
        elif operation == 4 and isinstance(parent, list):  # double an item
            parent.insert(last, copy.deepcopy(parent[last]))
        elif operation == 5:  # wrap in secure:, as `pulumi config set --secret` writes
            parent[last] = {"secure": "v1:" + "A" * rng.randrange(4, 40)}
        else:  # add an unknown key next to it
            target = parent if isinstance(parent, dict) else parent[last] if isinstance(parent[last], dict) else None
            if target is not None:
                target[rng.choice(KEY_TYPOS) + str(rng.randrange(10))] = copy.deepcopy(rng.choice(ODD_VALUES))
    except (KeyError, IndexError, TypeError):
        pass


def _text_mutation(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    index = rng.randrange(len(lines))
    line = lines[index]
    operation = rng.randrange(5)
    if operation in (0, 1) and ":" in line and not line.lstrip().startswith("#"):
        head = line.split(":", 1)[0]
        lines[index] = f"{head}: {rng.choice(RAW_VALUES)}"
    elif operation == 2:
        position = rng.randrange(len(line) + 1)
        lines[index] = line[:position] + rng.choice(TEXT_EDITS) + line[position:]
    elif operation == 3:
        lines.insert(index, line)  # a duplicated line: often a duplicated key
    else:
        return "\n".join(lines)[:rng.randrange(len(text) + 1)]  # cut short
    return "\n".join(lines)


def mutate(base: str, rng: random.Random) -> str:
    """One mutated stack file: one to three changes of the values, then up to two of the text."""
    doc = yaml.safe_load(base)
    for _ in range(rng.randrange(1, 4)):
        _tree_mutation(doc, rng)
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10_000)
    # Half the files keep their text as written: most text changes end in a file nothing reads
    # further, and the other half should reach the settings, the program and the pack.
    for _ in range(rng.choice((0, 0, 1, 2))):
        text = _text_mutation(text, rng)
    return text


# ---- hostile files ---------------------------------------------------------------------------

def _alias_bomb() -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


def hostile_files(directory: Path) -> tuple[list[Path], list[Path]]:
    """(files for validate and simulate, files for preview --config), written into `directory`."""
    def write(name: str, content: str | bytes) -> Path:
        path = directory / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return path

    dev = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
    deep = "a:\n" + "".join("  " * (i + 1) + "a:\n" for i in range(500))
    manifests = [
        write("bomb.yaml", _alias_bomb()), write("deep.yaml", deep), write("deep.json", "[" * 500 + "]" * 500),
        write("empty.yaml", ""), write("comments.yaml", "# nothing\n"), write("binary.yaml", bytes(range(256))),
        write("latin1.yaml", "a: é\n".encode("latin-1")), write("bom.yaml", "\ufeffkind: List\nitems: []\n"),
        write("tabs.yaml", "a:\n\tb: 1\n"), write("tags.yaml", "a: !Ref x\nb: !!set {a, b}\n"),
        write("duplicate.yaml", "metadata:\n  name: a\n  name: b\n"),
        write("merge.yaml", "a: &x 1\nb:\n  <<: *x\n"), write("complex-key.yaml", "? [1]\n: 2\n"),
        write("list.yaml", "apiVersion: v1\nkind: List\nitems: [1, null, {kind: ClusterQueue}]\n"),
        write("not-a-map.yaml", "- 1\n- 2\n"), write("scalar.yaml", "just text\n"),
        write("many-docs.yaml", "---\n" * 10_000), write("unclosed.yaml", "a: [1, 2\n"),
        write("kueue-junk.yaml", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: 1}\n"
                                 "spec: {resourceGroups: [{flavors: 7}]}\n"),
        write("workload-junk.yaml", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w}\n"
                                    "spec: {podSets: [{count: -1, template: {}}]}\n"),
        write("job-junk.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, labels: "
                               "{kueue.x-k8s.io/queue-name: q}}\nspec: {parallelism: .inf, template: 3}\n"),
        write("huge-flow.yaml", "items: [" + ", ".join(["x"] * 200_000) + "]\n"),
        write("big.yaml", b"a: " + b"x" * (64 * 1024 * 1024 + 10) + b"\n"),
    ]
    folder = directory / "folder"
    folder.mkdir(exist_ok=True)
    (folder / "a.yaml").write_text("kind: ClusterQueue\n")
    manifests.append(folder)
    fifo = directory / "pipe.yaml"
    if hasattr(os, "mkfifo") and not fifo.exists():
        os.mkfifo(fifo)
    manifests += [fifo, Path(os.devnull), directory / "missing.yaml"]
    stacks = [
        write("Pulumi.bomb.yaml", "config:\n  aks-kueue:x: *a0\n" + _alias_bomb()),
        write("Pulumi.deep.yaml", dev + "  aks-kueue:deep:\n" + "".join("  " * (i + 2) + "a:\n" for i in range(500))),
        write("Pulumi.big.yaml", dev + "  aks-kueue:allowReplacement: [" + ", ".join(["x"] * 600_000) + "]\n"),
        write("Pulumi.binary.yaml", bytes(range(256))), write("Pulumi.list.yaml", "- config\n"),
        write("Pulumi.keys.yaml", "config:\n  1: a\n  true: b\n"),
        write("Pulumi.inf.yaml", dev.replace("maxPods: 110", "maxPods: .inf", 1)),
        write("Pulumi.tags.yaml", dev.replace("maxPods: 110", "maxPods: !!int abc", 1)),
        fifo, Path(os.devnull), folder, directory / "Pulumi.missing.yaml",
    ]
    return manifests, stacks


# ---- running ---------------------------------------------------------------------------------

@dataclass
class Run:
    label: str
    args: list[str]
    json_shape: Optional[str] = None     # the key the one JSON document must have, for a --json run


@dataclass
class Outcome:
    run: Run
    code: Optional[int]
    stdout: str = ""
    stderr: str = ""
    raised: str = ""
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)


def check(run: Run, code: Optional[int], stdout: str, stderr: str, raised: str, hung: bool) -> list[str]:
    if hung:
        return ["hang"]
    problems = ["traceback"] if raised or "Traceback" in stdout or "Traceback" in stderr else []
    if code not in EXIT_CODES:
        problems.append(f"exit code {code}")
    if run.json_shape is not None:
        try:
            document = json.loads(stdout)
        except ValueError:
            document = None
        if not isinstance(document, dict) or run.json_shape not in document:
            problems.append("json error")
    return problems


def _in_process(args: list[str]) -> tuple[Optional[int], str, str, str]:
    from typer.testing import CliRunner

    from aks_kueue.cli import app

    result = CliRunner().invoke(app, args, catch_exceptions=True)
    raised = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raised = "".join(traceback.format_exception(*result.exc_info))
    return result.exit_code, result.stdout, result.stderr, raised


def _worker(connection: Connection) -> None:
    os.environ.setdefault("COLUMNS", "200")
    while True:
        try:
            args = connection.recv()
        except EOFError:
            return
        if args is None:
            return
        connection.send(_in_process(args))


class Workers:
    """`jobs` worker processes, each running one command at a time in process; one past the timeout
    is killed and replaced, and one that has run `recycle` commands is replaced too."""

    def __init__(self, jobs: int, timeout: float, recycle: int = 100, start_method: Optional[str] = None):
        self.jobs, self.timeout, self.recycle = jobs, timeout, recycle
        # fork is fast, but forking a process that runs other threads (gRPC's, in a test process that
        # ran the Pulumi mocks) can copy a held lock into the child, which then hangs: spawn there.
        forkable = hasattr(os, "fork") and threading.active_count() == 1
        self.context = multiprocessing.get_context(start_method or ("fork" if forkable else "spawn"))

    def _start(self) -> dict:
        parent, child = self.context.Pipe()
        process = self.context.Process(target=_worker, args=(child,), daemon=True)
        process.start()
        child.close()
        return {"process": process, "connection": parent, "done": 0, "run": None, "started": 0.0}

    def run_all(self, runs: list[Run], report: Callable[[Outcome], None]) -> None:
        pending = list(reversed(runs))
        workers = [self._start() for _ in range(self.jobs)]
        try:
            while pending or any(w["run"] is not None for w in workers):
                for worker in workers:
                    if worker["run"] is None and pending:
                        worker["run"] = pending.pop()
                        worker["started"] = time.monotonic()
                        worker["connection"].send(worker["run"].args)
                busy = [w for w in workers if w["run"] is not None]
                deadline = min(w["started"] for w in busy) + self.timeout
                ready = wait([w["connection"] for w in busy], timeout=max(0.0, deadline - time.monotonic()))
                now = time.monotonic()
                for index, worker in enumerate(workers):
                    run, seconds = worker["run"], now - worker["started"]
                    if run is not None and worker["connection"] in ready:
                        try:
                            code, stdout, stderr, raised = worker["connection"].recv()
                        except (EOFError, OSError):  # the worker died: as a crash
                            code, stdout, stderr, raised = None, "", "", "the worker process died"
                        report(Outcome(run, code, stdout, stderr, raised, seconds,
                                       check(run, code, stdout, stderr, raised, hung=False)))
                        worker["run"] = None
                        worker["done"] += 1
                        if worker["done"] >= self.recycle or raised == "the worker process died":
                            self._stop(worker)
                            workers[index] = self._start()
                    elif run is not None and seconds > self.timeout:
                        report(Outcome(run, None, seconds=seconds, problems=["hang"]))
                        self._stop(worker, kill=True)
                        workers[index] = self._start()
        finally:
            for worker in workers:
                self._stop(worker)

    @staticmethod
    def _stop(worker: dict, kill: bool = False) -> None:
        try:
            if not kill:
                worker["connection"].send(None)
        except (OSError, ValueError):
            pass
        worker["process"].join(0 if kill else 5)
        if worker["process"].is_alive():
            worker["process"].kill()
            worker["process"].join()
        worker["connection"].close()


def run_subprocesses(runs: list[Run], jobs: int, timeout: float, report: Callable[[Outcome], None]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def one(run: Run) -> Outcome:
        started = time.monotonic()
        try:
            done = subprocess.run([sys.executable, "-m", "aks_kueue.cli", *run.args], cwd=ROOT, capture_output=True,
                                  text=True, errors="replace", timeout=timeout, stdin=subprocess.DEVNULL,
                                  env={**os.environ, "COLUMNS": "200"})
        except subprocess.TimeoutExpired:
            return Outcome(run, None, seconds=time.monotonic() - started, problems=["hang"])
        return Outcome(run, done.returncode, done.stdout, done.stderr, "", time.monotonic() - started,
                       check(run, done.returncode, done.stdout, done.stderr, "", hung=False))

    with ThreadPoolExecutor(jobs) as pool:
        for outcome in pool.map(one, runs):
            report(outcome)


# ---- the campaign ----------------------------------------------------------------------------

def plan(seed: int, count: int, directory: Path, hostile: bool) -> tuple[list[Run], int]:
    bases = [(path.stem.split(".", 1)[-1], path.read_text()) for path in BASES if path.is_file()]
    runs: list[Run] = []
    for index in range(count):
        rng = random.Random(f"{seed}-{index}")
        name, base = bases[index % len(bases)]
        path = directory / f"Pulumi.fuzz-{index:05d}-{name}.yaml"
        path.write_text(mutate(base, rng), encoding="utf-8", errors="surrogatepass")
        for form in FORMATS:
            runs.append(Run(f"mutation {index} ({name}) {' '.join(form) or 'text'}",
                            ["preview", "--config", str(path), *form], "result" if form == ["--json"] else None))
    files = 0
    if hostile:
        manifests, stacks = hostile_files(directory)
        files = len(manifests) + len(stacks)
        commands = [(f"{command} {path.name}", [command, str(path)], "summary")
                    for path in manifests for command in ("validate", "simulate")]
        commands += [(f"preview --config {path.name}", ["preview", "--config", str(path)], "result") for path in stacks]
        for label, args, shape in commands:
            runs += [Run(f"{label} --json", [*args, "--json"], shape), Run(label, args)]
    return runs, files


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--count", type=int, default=100, help="mutated stack files (each previewed 3 times)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds a run may take before it is a hang")
    parser.add_argument("--out", type=Path, default=None, help="where failures are written (default: a temp dir)")
    parser.add_argument("--no-hostile", dest="hostile", action="store_false", help="mutations only")
    parser.add_argument("--subprocess", action="store_true", help="every run its own `python -m aks_kueue.cli`")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="fuzz-stacks-"))
    out = args.out or work / "failures"
    out.mkdir(parents=True, exist_ok=True)
    runs, files = plan(args.seed, args.count, work, args.hostile)
    counts: dict[str, int] = {"runs": 0, "traceback": 0, "hang": 0, "json error": 0, "exit code": 0}
    codes: dict[str, int] = {}
    slowest = [0.0, ""]
    failures: list[Outcome] = []
    started = time.monotonic()

    def report(outcome: Outcome) -> None:
        counts["runs"] += 1
        codes[str(outcome.code)] = codes.get(str(outcome.code), 0) + 1
        if outcome.seconds > slowest[0]:
            slowest[:] = [outcome.seconds, outcome.run.label]
        for problem in outcome.problems:
            counts["exit code" if problem.startswith("exit code") else problem] += 1
        if outcome.problems:
            failures.append(outcome)
            _keep(outcome, out, len(failures))
        if counts["runs"] % 300 == 0:
            print(f"{counts['runs']}/{len(runs)} runs, {len(failures)} failed, {time.monotonic() - started:.0f} s",
                  file=sys.stderr, flush=True)

    if args.subprocess:
        run_subprocesses(runs, args.jobs, args.timeout, report)
    else:
        Workers(args.jobs, args.timeout).run_all(runs, report)
    summary = {"seed": args.seed, "mutations": args.count, "hostileFiles": files, "runs": counts["runs"],
               "exitCodes": dict(sorted(codes.items())), "tracebacks": counts["traceback"], "hangs": counts["hang"],
               "jsonErrors": counts["json error"], "badExitCodes": counts["exit code"],
               "slowestSeconds": round(slowest[0], 1), "slowestRun": slowest[1],
               "mode": "subprocess" if args.subprocess else "in-process workers", "jobs": args.jobs,
               "seconds": round(time.monotonic() - started), "failures": str(out) if failures else None}
    for outcome in failures[:20]:
        print(f"FAILED {outcome.run.label}: {', '.join(outcome.problems)}", file=sys.stderr)
    print(json.dumps(summary))
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


def _keep(outcome: Outcome, out: Path, index: int) -> None:
    """The failing file and what the run printed, to reproduce it."""
    target = out / f"{index:04d}"
    target.mkdir(parents=True, exist_ok=True)
    for arg in outcome.run.args:
        path = Path(arg)
        try:
            if path.is_file() and stat.S_ISREG(path.stat().st_mode) and path.stat().st_size < 4 * 1024 * 1024:
                shutil.copy(path, target / path.name)
        except OSError:
            pass
    (target / "run.json").write_text(json.dumps({
        "args": outcome.run.args, "problems": outcome.problems, "code": outcome.code, "seconds": outcome.seconds,
        "stdout": outcome.stdout[-20_000:], "stderr": outcome.stderr[-20_000:], "raised": outcome.raised}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
