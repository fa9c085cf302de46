"""ruff's rules (pyproject.toml `[tool.ruff.lint]`) on the whole tree, and no function above a
cyclomatic complexity of 35.

Two measures of complexity: ruff's C901 (McCabe's, as flake8 counts it: branches and loops) and
radon's, which counts each `and`/`or` and comprehension too and is the one issue 29 measured
(`radon cc -s -n E`). A function may be exempted only by `# noqa: C901` on its `def` line, with why.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function

from tests.conftest import ROOT

MAX_COMPLEXITY = 35
EXEMPT = "noqa: C901"


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    run = _ruff(".")
    assert run.returncode == 0, f"`ruff check .` finds problems (venv/bin/ruff check --fix fixes some):\n{run.stdout}"


def test_ruff_reads_the_projects_rules(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n\n\ndef f():\n    return f'no placeholder'\n")
    run = _ruff("--config", str(ROOT / "pyproject.toml"), str(planted))
    assert run.returncode == 1 and "F401" in run.stdout and "F541" in run.stdout, run.stdout


def _functions(blocks) -> list[Function]:
    found = []
    for block in blocks:
        if isinstance(block, Class):
            found += _functions(block.methods)
        else:
            found.append(block)
            found += _functions(block.closures)
    return found


def too_complex(path: Path, source: str) -> list[str]:
    """`path:line name (complexity)` of each function above MAX_COMPLEXITY that is not exempted."""
    lines = source.splitlines()
    found = {(f.lineno, f.fullname): f.complexity for f in _functions(cc_visit(source))}  # a method may come twice
    return [f"{path}:{line} {name} ({complexity})" for (line, name), complexity in sorted(found.items())
            if complexity > MAX_COMPLEXITY and EXEMPT not in lines[line - 1]]


def test_a_function_above_the_limit_is_found(tmp_path):
    branches = "\n".join(f"    if x == {i} or y:\n        return {i}" for i in range(18))
    source = f"def busy(x, y):\n{branches}\n    return None\n"
    assert too_complex(Path("busy.py"), source) == ["busy.py:1 busy (37)"]
    assert too_complex(Path("busy.py"), source.replace("y):", f"y):  # {EXEMPT}: a reason", 1)) == []


def test_no_function_is_above_the_limit():
    tracked = subprocess.run(["git", "ls-files", "*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    found = [problem for name in tracked.stdout.split() if (ROOT / name).is_file()
             for problem in too_complex(Path(name), (ROOT / name).read_text())]
    assert not found, (f"functions above a cyclomatic complexity of {MAX_COMPLEXITY} (radon's count: each branch, "
                       f"loop, `and`/`or` and comprehension): split them into steps:\n" + "\n".join(found))


# Kubernetes' field-error phrases (apimachinery's field.ErrorType strings), written once, in k8s/field.py.
K8S_PHRASES = ("Required value", "Invalid value", "Unsupported value", "Duplicate value", "Not found:", "Forbidden:",
               "Too long:", "Too many:")


def _literal_texts(tree) -> list[tuple[int, str]]:
    """Every string literal of a module, f-strings' literal parts included, with its line."""
    import ast

    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_kubernetes_phrases_are_written_only_in_k8s_field():
    import ast

    home = ROOT / "aks_kueue" / "k8s" / "field.py"
    found = []
    for path in sorted((ROOT / "aks_kueue").rglob("*.py")):
        if path == home:
            continue
        for line, text in _literal_texts(ast.parse(path.read_text(encoding="utf-8"))):
            found += [f"{path.relative_to(ROOT)}:{line}: {phrase}" for phrase in K8S_PHRASES
                      if text.lstrip().startswith(phrase)]
    assert not found, "build these with aks_kueue.k8s.field's constructors:\n" + "\n".join(found)


def test_the_phrase_check_finds_a_hand_typed_phrase():
    import ast

    tree = ast.parse('raise error(key, f"Invalid value: {show(text)}: {problem}")')
    assert any(text.startswith("Invalid value") for _, text in _literal_texts(tree))
