"""The shape of the house, from the modules' own imports: no cycles, and arrows one way.

Every import statement counts, at module level, inside functions and under TYPE_CHECKING:
`from a.b import c` is an arrow to `a.b.c` when that is a module, else to `a.b`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGES = ("aks_kueue", "components")
CORE = ("aks_kueue.k8s", "aks_kueue.kueue", "aks_kueue.aks", "aks_kueue.admission")
# What each layer may not import: the pure core nothing above it, and each layer nothing above itself.
ABOVE_CORE = ("aks_kueue.settings", "aks_kueue.model", "aks_kueue.judge", "aks_kueue.policies", "aks_kueue.preview",
              "aks_kueue.cli", "components", "pulumi", "pulumi_policy", "pulumi_azure_native", "pulumi_kubernetes",
              "aks_kueue.replay")
FORBIDDEN = {
    **{core: ABOVE_CORE for core in CORE},
    # Replay drives the pure core in virtual time; stacks and flags are the CLI's to read.
    "aks_kueue.replay": tuple(f for f in ABOVE_CORE if f != "aks_kueue.replay"),
    "aks_kueue.settings": ("aks_kueue.model", "aks_kueue.judge", "aks_kueue.policies", "aks_kueue.preview",
                           "aks_kueue.cli", "components", "pulumi_policy"),
    "aks_kueue.model": ("aks_kueue.judge", "aks_kueue.policies", "aks_kueue.preview", "aks_kueue.cli", "components"),
    "aks_kueue.judge": ("aks_kueue.settings", "aks_kueue.policies", "aks_kueue.preview", "aks_kueue.cli",
                        "components", "pulumi", "pulumi_policy"),
    "aks_kueue.policies": ("aks_kueue.settings", "aks_kueue.preview", "aks_kueue.cli", "components"),
    "aks_kueue.preview": ("aks_kueue.cli", "components"),
    # The door to other packages' private names, which the pure core may use too: it rests on nothing of ours.
    "aks_kueue.compat": ("aks_kueue", "components"),
}


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imports(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """Every module this file imports, wherever the statement stands."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in known else base)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(path, name, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), and self-imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in edges:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in edges.get(node, ()):
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_there_is_no_import_cycle():
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    """A check that can fail: a made-up graph with a cycle through a type-only import."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_type_only_and_function_level_imports_count(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x.y\n"
                      "def f():\n    from z import w\n")
    assert imports(module, "m", {}) >= {"x.y", "z"}


@pytest.mark.parametrize("layer", list(FORBIDDEN))
def test_arrows_point_one_way(layer):
    wrong = sorted((module, target) for module, targets in graph().items()
                   if module == layer or module.startswith(layer + ".")
                   for target in targets
                   if any(target == f or target.startswith(f + ".") for f in FORBIDDEN[layer]))
    assert wrong == []


def test_the_flavor_assigner_sees_protocols_not_the_snapshot():
    edges = graph()
    for module in ("aks_kueue.admission.assigner", "aks_kueue.admission.preemption"):
        assert "aks_kueue.admission.snapshot" not in edges[module]
