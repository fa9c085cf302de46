"""Read `Pulumi.yaml` and a stack file the way the Pulumi CLI hands config to a program.

The CLI reads both with Go's yaml.v3 (YAML 1.2, `aks_kueue/k8s/yaml12.py`), then its config layer
(pulumi/pulumi sdk/go/common/resource/config, object.go and value.go) turns each top-level value
into the text the program gets: a string as it is, anything else as Go's encoding/json writes it
(an unquoted timestamp as Go's `time.Time.String()`). The files must be regular files of at most
1 MiB (`STACK_FILE_LIMITS`). A file that cannot be used is a `LoadError` naming it, and the stack
key where one is at fault (`aks-kueue:cluster.kubernetesVersion`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Optional

from aks_kueue.k8s.field import FieldError
from aks_kueue.k8s.loader import STACK_FILE_LIMITS, Dialect, LoadError, parse_json, parse_single, read_text
from aks_kueue.k8s.yaml12 import go_json

if TYPE_CHECKING:
    from aks_kueue.judge.finding import Finding
    from aks_kueue.secrets import Secrets
    from aks_kueue.settings.root import Settings

SECRET_PLACEHOLDER = "[secret]"


@dataclass(frozen=True)
class StackConfig:
    """A stack's config as the Pulumi CLI hands it to the program: `config` maps `namespace:key` to
    text, `secret_keys` are the keys set with --secret; `path` is the stack file it was read from."""

    project: str
    stack: str
    config: dict[str, str]
    secret_keys: list[str] = field(default_factory=list)
    path: Optional[Path] = field(default=None, compare=False)

    def secrets(self) -> "Secrets":
        """The values of the secret keys, which no message may show."""
        from aks_kueue.settings.vocabulary import config_secrets

        return config_secrets(self.config, self.secret_keys)

    def settings(self) -> "Settings":
        """The stack's settings; SettingsError (no secret value in it) when its config fails them."""
        from aks_kueue.settings.root import parse_settings

        return parse_settings(self.config, secrets=self.secrets())

    def errors(self, problems: Iterable[FieldError | Finding]) -> list[LoadError]:
        """Each problem of this stack's config at its stack key (a `SettingsError`'s, from `settings()` or
        `model.from_settings`; a blocking finding of the judge, which the program refuses too) as a
        LoadError of the stack file: `str()` is `FILE: aks-kueue:cluster.kubernetesVersion: reason; fix`,
        and the JSON item has `file` and `key`. Secret values are taken out. The one place a command
        turns what is wrong with a stack's config into its errors."""
        at_keys = [p if isinstance(p, FieldError) else FieldError(p.key, p.message, p.fix) for p in problems]
        return [LoadError.at(str(self.path or ""), problem) for problem in self.secrets().value(at_keys)]


def project_root() -> Path:
    """The repository root: where Pulumi.yaml and __main__.py live."""
    return Path(__file__).resolve().parents[2]


def load_project(root: Path) -> dict[str, Any]:
    path = root / "Pulumi.yaml"
    doc = _read_yaml(path)
    if not isinstance(doc, dict) or "name" not in doc:
        raise LoadError(str(path), None, "not a Pulumi project file (no `name`)")
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
        raise LoadError(str(path), None, "a stack file is a map with a `config:` map inside")
    flat: dict[str, str] = {}
    secrets: list[str] = []
    for key, value in _project_defaults(project).items():
        full = _qualify(key, name)
        flat[full] = _as_config_string(value, str(root / "Pulumi.yaml"), full)
    for key, value in (doc.get("config") or {}).items():
        full = _qualify(str(key), name)
        # Ciphertext needs the stack's secrets provider; offline, a placeholder stands in. A
        # `secure:` anywhere in a key (`pulumi config set --path --secret`) makes the whole key
        # secret, as Pulumi hands it to the program.
        flat[full] = _as_config_string(_blind(value), str(path), full)
        if _has_secure(value):
            secrets.append(full)
        _check_json_text(flat[full], str(path), full)
    return StackConfig(project=name, stack=stack, config=flat, secret_keys=secrets, path=path)


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


def _is_secure(value: Any) -> bool:
    """Pulumi's isSecureValue: a map whose only key is `secure`, with text in it."""
    return isinstance(value, dict) and len(value) == 1 and isinstance(value.get("secure"), str)


def _blind(value: Any) -> Any:
    """The value with every `{secure: ...}` replaced by the placeholder."""
    if _is_secure(value):
        return SECRET_PLACEHOLDER
    if isinstance(value, dict):
        return {key: _blind(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_blind(item) for item in value]
    return value


def _has_secure(value: Any) -> bool:
    """Whether a `{secure: ...}` is anywhere in the value: then the whole key is secret."""
    if _is_secure(value):
        return True
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return any(_has_secure(item) for item in items)


def _as_config_string(value: Any, source: str, key: str) -> str:
    """The text Pulumi hands the program for one top-level value (stack key `key` of file `source`): a
    string as it is, anything else as encoding/json writes it."""
    value = _decoded_again(value, source, key)
    return value if isinstance(value, str) else go_json(value)


_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def _decoded_again(value: Any, source: str, key: str, spot: str = "") -> Any:
    """`value` as the program gets it: the CLI decodes an object's JSON again, reading a number past
    int64 inside it as a float64. Infinities and NaN (`.inf`, `.nan`) make the CLI fail, so they are refused."""
    if isinstance(value, float) and not math.isfinite(value):
        shown = "NaN" if math.isnan(value) else "-Infinity" if value < 0 else "Infinity"
        raise LoadError(source, None, f"is {shown} (YAML 1.2 reads .inf and .nan as numbers), which the Pulumi "
                        "CLI cannot hand to a program: it encodes config as JSON, which has no such number, and "
                        "fails (json: unsupported value); write a number, or quote the value if text is meant",
                        key=f"{key}{spot}")
    if isinstance(value, dict):
        return {k: _decoded_again(v, source, key, f"{spot}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [_decoded_again(v, source, key, f"{spot}[{i}]") for i, v in enumerate(value)]
    if spot and isinstance(value, int) and not isinstance(value, bool) and not _INT64[0] <= value <= _INT64[1]:
        return float(value)
    return value


def _check_json_text(value: str, source: str, key: str) -> None:
    """Settings decode a value written as JSON text; hold it to the loader's bounds first."""
    if value[:1] not in ("{", "["):
        return
    try:
        parse_json(value, source)
    except LoadError as error:
        raise LoadError(source, None, error.reason, key=key) from None
    except ValueError:
        pass  # not JSON after all: it stays a string


def _read_yaml(path: Path) -> Any:
    """One YAML document of a regular file, read as the Pulumi CLI reads it (yaml.v3) within the stack
    file bounds; duplicated keys are refused, as the Pulumi CLI refuses them."""
    return parse_single(read_text(path, STACK_FILE_LIMITS, what="a Pulumi YAML file", regular_only=True),
                        str(path), STACK_FILE_LIMITS, Dialect.PULUMI)
