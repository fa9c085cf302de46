"""aks_kueue.compat, the one door for other packages' private names: every entry resolves against
the installed packages, each checked range is the pin in pyproject.toml, and nothing else in the
tree imports a private name of those packages."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from aks_kueue import compat
from tests.conftest import ROOT

# The packages whose private names go through compat: Pulumi, its policy SDK, the providers, the CEL
# bindings and Typer (with the Click it vendors).
GUARDED = ("pulumi", "pulumi_policy", "pulumi_azure_native", "pulumi_kubernetes", "cel", "typer", "click")
SOURCES = ("aks_kueue", "components", "policy", "tools", "benchmarks", "tests", "__main__.py")


def pins() -> dict[str, SpecifierSet]:
    text = (ROOT / "pyproject.toml").read_text()
    block = text[text.index("dependencies = ["):]
    block = block[:block.index("]")]
    return {Requirement(r).name.lower(): Requirement(r).specifier for r in re.findall(r'"([^"]+)"', block)}


@pytest.mark.parametrize("name", list(compat.PRIVATE))
def test_every_private_name_is_where_compat_says(name):
    try:
        value = compat.resolve(name)
    except compat.MovedError as error:
        pytest.fail(str(error))
    assert value is not None
    assert getattr(compat, name) is value


@pytest.mark.parametrize("name", list(compat.PRIVATE))
def test_each_checked_range_is_the_pin_and_holds_the_installed_version(name):
    entry = compat.PRIVATE[name]
    pinned = pins().get(entry.distribution)
    assert pinned is not None, f"{entry.distribution} is not pinned in pyproject.toml"
    assert SpecifierSet(entry.checked) == pinned, (
        f"pyproject.toml pins {entry.distribution}{pinned} but compat.PRIVATE[{name!r}] was checked against "
        f"{entry.checked}: re-check the private name against the new range, then update `checked`")
    assert version(entry.distribution) in pinned
    assert entry.why.strip()


def test_a_moved_name_fails_with_a_sentence_naming_the_entry(monkeypatch):
    moved = compat.Private("pulumi_policy.policy:_GoneServicer", "pulumi-policy", ">=1.20,<2", "a test")
    monkeypatch.setitem(compat.PRIVATE, "Gone", moved)
    with pytest.raises(compat.MovedError) as raised:
        compat.resolve("Gone")
    message = str(raised.value)
    assert message.startswith("aks_kueue.compat.Gone: pulumi_policy.policy:_GoneServicer is not there in "
                              f"pulumi-policy {version('pulumi-policy')}")
    assert "checked against pulumi-policy>=1.20,<2" in message and "PRIVATE['Gone']" in message
    with pytest.raises(AttributeError):
        compat.not_an_entry  # noqa: B018


def private_imports(path: Path) -> list[str]:
    """`from pkg._x import y`, `from pkg import _x`, `import pkg._x` for the guarded packages."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] in GUARDED and any(p.startswith("_") and not p.startswith("__") for p in parts[1:]):
                found.append(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{node.lineno}: {name}")
    return found


def test_no_other_module_imports_a_private_name_of_those_packages():
    files = [p for s in SOURCES for p in ([ROOT / s] if s.endswith(".py") else sorted((ROOT / s).rglob("*.py")))]
    files = [p for p in files if p != ROOT / "aks_kueue" / "compat.py"]
    assert len(files) > 300
    found = [hit for path in files for hit in private_imports(path)]
    assert found == [], "import these through aks_kueue.compat (with why and the version checked):\n" + "\n".join(found)


def test_the_scan_finds_a_private_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("from pulumi.runtime.sync_await import _sync_await\nfrom pulumi_kubernetes import _utilities\n"
                       "import pulumi._types\nfrom aks_kueue.compat import sync_await\nfrom pulumi.runtime import rpc\n")
    assert [hit.split(": ")[1] for hit in private_imports(planted)] == [
        "pulumi.runtime.sync_await._sync_await", "pulumi_kubernetes._utilities", "pulumi._types"]


def test_the_pure_core_takes_the_cel_core_without_loading_pulumi():
    script = ("import sys\nfrom aks_kueue import compat\ncompat.cel_core.compile('1 + 1')\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_policy', 'typer')))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_offline_run_registers_without_source_positions_and_puts_the_sdk_back():
    import pulumi.runtime.resource as sdk

    original = sdk._get_stack_trace
    with pytest.raises(RuntimeError), compat.without_source_positions():
        assert sdk._get_stack_trace is not original and list(sdk._get_stack_trace().frames) == []
        raise RuntimeError("the program failed")
    assert sdk._get_stack_trace is original
