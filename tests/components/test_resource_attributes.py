"""A component keeps its own state in attributes of its own, never in one pulumi.Resource sets.

The SDK reads its `Resource` attributes after a component's constructor: `_aliases` aliases every
child the component registers (`runtime/resource.py` `all_aliases`), `_name` and `_type` make the
children's URNs. A component that stores something else under one of those names changes what the
SDK does with its children, silently, and only on the paths the offline run does not take.
"""

from __future__ import annotations

import ast
import inspect

import pulumi

from tests.conftest import ROOT


RESOURCE_CLASSES = ("Resource", "CustomResource", "ComponentResource", "ProviderResource")


def _assigned_to_self(tree: ast.AST) -> dict[str, int]:
    """`self.<name>` assigned anywhere in `tree` (plain, annotated, augmented or unpacked), by first line."""
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                    found.setdefault(part.attr, part.lineno)
    return found


def _sdk_attributes() -> set[str]:
    """What the SDK's resource classes assign to their instances (not ResourceOptions' fields)."""
    classes = [node for node in ast.parse(inspect.getsource(pulumi.resource)).body
               if isinstance(node, ast.ClassDef) and node.name in RESOURCE_CLASSES]
    return {name for node in classes for name in _assigned_to_self(node)}


def test_the_sdks_own_attributes_are_known():
    sdk = _sdk_attributes()
    assert "provider" not in sdk and {"_aliases", "_name", "_type", "_transformations", "_providers"} <= sdk


def test_no_component_stores_state_under_a_resource_attribute():
    sdk = _sdk_attributes()
    clashes = [f"{path.relative_to(ROOT)}:{line} self.{name}"
               for path in sorted((ROOT / "components").rglob("*.py"))
               for name, line in _assigned_to_self(ast.parse(path.read_text())).items() if name in sdk]
    assert not clashes, ("these components assign an attribute pulumi.Resource sets and reads itself; give theirs "
                         "another name:\n" + "\n".join(clashes))
