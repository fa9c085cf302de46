"""Read `Pulumi.yaml` and a stack file the way the Pulumi CLI hands config to a program."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aks_kueue.k8s.loader import LoadError, parse_json, parse_single, read_text

SECRET_PLACEHOLDER = "[secret]"


class StackFileError(Exception):
    """A stack or project file that cannot be used; the message names the file."""


@dataclass(frozen=True)
class StackConfig:
    project: str
    stack: str
    config: dict[str, str]
    secret_keys: list[str] = field(default_factory=list)


def project_root() -> Path:
    """The repository root: where Pulumi.yaml and __main__.py live."""
    return Path(__file__).resolve().parents[2]


def load_project(root: Path) -> dict[str, Any]:
    path = root / "Pulumi.yaml"
    doc = _read_yaml(path)
    if not isinstance(doc, dict) or "name" not in doc:
        raise StackFileError(f"{path}: not a Pulumi project file (no `name`)")
    return doc


def stack_path(root: Path, stack: str) -> Path:
    project = load_project(root)
    return root / project.get("stackConfigDir", ".") / f"Pulumi.{stack}.yaml"


def load_stack(path: Path, stack: str, root: Path) -> StackConfig:
    project = load_project(root)
    name = project["name"]
    doc = _read_yaml(path)
    if doc is None:
        doc = {}
    if not isinstance(doc, dict) or not isinstance(doc.get("config", {}), dict):
        raise StackFileError(f"{path}: a stack file is a map with a `config:` map inside")
    flat: dict[str, str] = {}
    secrets: list[str] = []
    for key, value in _project_defaults(project).items():
        flat[_qualify(key, name)] = _as_config_string(value)
    for key, value in (doc.get("config") or {}).items():
        full = _qualify(str(key), name)
        # Ciphertext needs the stack's secrets provider; offline, a placeholder stands in. A
        # `secure:` anywhere in a key (`pulumi config set --path --secret`) makes the whole key
        # secret, as Pulumi hands it to the program.
        opaque, had_secret = _blind(value)
        flat[full] = opaque if isinstance(opaque, str) else _as_config_string(opaque)
        if had_secret:
            secrets.append(full)
        _check_json_text(flat[full], f"{path}: {full}")
    return StackConfig(project=name, stack=stack, config=flat, secret_keys=secrets)


def _project_defaults(project: dict[str, Any]) -> dict[str, Any]:
    defaults = {}
    for key, decl in (project.get("config") or {}).items():
        if isinstance(decl, dict) and "default" in decl:
            defaults[key] = decl["default"]
        elif isinstance(decl, dict) and "value" in decl:
            defaults[key] = decl["value"]
        elif not isinstance(decl, dict):
            defaults[key] = decl
    return defaults


def _qualify(key: str, project: str) -> str:
    return key if ":" in key else f"{project}:{key}"


def _blind(value: Any) -> tuple[Any, bool]:
    """The value with every `{secure: ...}` replaced by the placeholder, and whether there was one."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET_PLACEHOLDER, True
        found = False
        out = {}
        for key, item in value.items():
            out[key], inner = _blind(item)
            found = found or inner
        return out, found
    if isinstance(value, list):
        items = [_blind(item) for item in value]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False


def _as_config_string(value: Any) -> str:
    """Pulumi passes strings as they are and everything else as JSON text (an unquoted date,
    which YAML 1.1 reads as a date, as the text Pulumi's YAML 1.2 reader keeps)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)


def _check_json_text(value: str, source: str) -> None:
    """Settings decode a value written as JSON text; hold it to the loader's bounds first."""
    if value[:1] not in ("{", "["):
        return
    try:
        parse_json(value, source)
    except LoadError as error:
        raise StackFileError(str(error)) from None
    except ValueError:
        pass  # not JSON after all: it stays a string


def _read_yaml(path: Path) -> Any:
    """One YAML document, read within the loader's bounds; duplicated keys are refused, as
    the Pulumi CLI refuses them."""
    try:
        return parse_single(read_text(path, what="a Pulumi YAML file"), str(path))
    except LoadError as error:
        raise StackFileError(str(error)) from None
