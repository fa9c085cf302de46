"""The pure core's imports, read from the modules' own source: no cycles and no arrow upwards.

Every import counts: at the top, under `if TYPE_CHECKING:` and inside functions. The pure
core (Kubernetes rules, the Kueue API and validation, the admission core) imports nothing
from the layers above it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "aks_kueue"
CORE = ("aks_kueue.admission", "aks_kueue.kueue", "aks_kueue.k8s")
ABOVE = ("aks_kueue.settings", "aks_kueue.components", "aks_kueue.policies", "aks_kueue.cli", "aks_kueue.preview",
         "aks_kueue.model", "aks_kueue.judge", "aks_kueue.feasibility", "pulumi", "pulumi_azure_native",
         "pulumi_kubernetes", "components")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imported(path: Path, known: dict[str, Path]) -> set[str]:
    """Every module `path` imports, anywhere in it; `from package import name` names the
    submodule when there is one."""
    own = module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in known else base)
    return found


def graph(prefixes: tuple[str, ...]) -> dict[str, set[str]]:
    known = modules()
    inside = {name for name in known if name.startswith(prefixes)}
    return {name: {m for m in imported(known[name], known) if m in inside and m != name} for name in inside}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_pure_core_has_no_import_cycle():
    edges = graph(CORE)
    assert {"aks_kueue.admission.assigner", "aks_kueue.admission.snapshot", "aks_kueue.admission.preemption"} <= set(edges)
    assert cycles(edges) == []


def test_the_cycle_finder_finds_type_only_and_function_level_imports(tmp_path):
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    source = tmp_path / "aks_kueue" / "x.py"
    source.parent.mkdir()
    source.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from aks_kueue import y\n"
                      "def f():\n    import aks_kueue.z\n")
    known = {"aks_kueue.y": source, "aks_kueue.z": source}
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path / "aks_kueue"
    try:
        assert imported(source, known) >= {"aks_kueue.y", "aks_kueue.z"}
    finally:
        PACKAGE = saved


def test_the_pure_core_imports_nothing_from_above():
    known = modules()
    wrong = {(name, target) for name, path in known.items() if name.startswith(CORE)
             for target in imported(path, known) if target.startswith(ABOVE)}
    assert wrong == set()


def test_the_flavor_assigner_sees_protocols_not_the_snapshot():
    known = modules()
    assert "aks_kueue.admission.snapshot" not in imported(known["aks_kueue.admission.assigner"], known)
    assert "aks_kueue.admission.snapshot" not in imported(known["aks_kueue.admission.preemption"], known)
