"""Policy pack config, reconciled as the Pulumi engine does before it calls `Configure`.

The JSON is the one of `pulumi preview --policy-pack-config`: `"all"` sets every
policy's level, a policy's entry is a level or an object with `enforcementLevel` and
properties. The engine starts from each policy's default level and its schema's
`default`s, applies `all`, then each policy's entry, and validates the properties
against the schema (`ReconcilePolicyPackConfig` in pulumi/pulumi). This module does the
same, with jsonschema for the properties' values, and is stricter in two ways the engine is not, because a typo there silently
changes nothing: an unknown policy name and an unknown property are errors too.
"""

from __future__ import annotations

from typing import Any, Optional

from pulumi_policy import EnforcementLevel

from aks_kueue.k8s.field import FieldError, Path
from aks_kueue.k8s.spelling import suggest
from aks_kueue.policies.base import settings

LEVELS = tuple(level.value for level in EnforcementLevel)
# The JSON Schema keywords this pack's schemas use, each of whose errors `_schema_error` words itself.
SUPPORTED_KEYWORDS = {"type", "enum", "minimum", "maximum", "items", "default", "description"}


def reconcile(policies: list, config: Optional[dict]) -> dict[str, tuple[str, dict[str, Any]]]:
    """policy name -> (enforcement level, properties with defaults); ValueError when invalid."""
    problem = config_error(policies, config)
    if problem:
        raise ValueError(str(problem))
    result = {p.name: (p.enforcement_level.value, settings(p.config_schema, {})) for p in policies}
    config = config or {}
    if "all" in config:
        result = {name: (config["all"], props) for name, (_, props) in result.items()}
    for name, entry in config.items():
        if name == "all":
            continue
        level, props = result[name]
        if isinstance(entry, str):
            level = entry
        else:
            level = entry.get("enforcementLevel", level)
            props = {**props, **{k: v for k, v in entry.items() if k != "enforcementLevel"}}
        result[name] = (level, props)
    return result


def config_error(policies: list, config: Any) -> Optional[FieldError]:
    """The first thing wrong with a policy config, at its key (`all`, a policy's name, `NAME.PROPERTY`, ...;
    none for the whole document); `str()` is the sentence. None when it is valid."""
    if config is None:
        return None
    if not isinstance(config, dict):
        return FieldError("", "the policy config must be a JSON object of policy names")
    by_name = {p.name: p for p in policies}
    for name, entry in config.items():
        if name == "all":
            if entry not in LEVELS:
                return FieldError("all", f"{entry!r} is not an enforcement level{suggest(str(entry), LEVELS)}; use "
                                         f"one of {', '.join(LEVELS)}")
            continue
        if name not in by_name:
            return FieldError(str(name), f"not a policy of this pack{suggest(str(name), by_name)}; its policies are "
                                         f"{', '.join(sorted(by_name))}")
        if isinstance(entry, str):
            entry = {"enforcementLevel": entry}
        if not isinstance(entry, dict):
            return FieldError(name, f"{entry!r} must be an enforcement level or an object")
        if "enforcementLevel" in entry and entry["enforcementLevel"] not in LEVELS:
            return FieldError(str(Path(name, "enforcementLevel")), f"{entry['enforcementLevel']!r} is not an "
                              f"enforcement level{suggest(str(entry['enforcementLevel']), LEVELS)}; use one of "
                              f"{', '.join(LEVELS)}")
        schema = by_name[name].config_schema
        properties = schema.properties if schema else {}
        for key, value in entry.items():
            if key == "enforcementLevel":
                continue
            if key not in properties:
                known = ["enforcementLevel", *properties]
                return FieldError(str(Path(name, key)), f"not a setting of this policy{suggest(str(key), known)}; "
                                                        f"it takes {', '.join(known)}")
            problem = _schema_error(properties[key], value, Path(name, key))
            if problem:
                return problem
    return None


def _schema_error(schema: dict, value: Any, where: Path) -> Optional[FieldError]:
    """The first way `value` breaks its property's schema (jsonschema, Draft 7), in a sentence."""
    # Imported here: a preview without policy config properties never needs it, and it is slow to import.
    from jsonschema import Draft7Validator
    from jsonschema.exceptions import best_match

    error = best_match(Draft7Validator(schema).iter_errors(value))
    if error is None:
        return None
    at = where
    for step in error.absolute_path:
        at = at.index(step) if isinstance(step, int) else at.key(step)
    wanted = error.validator_value
    wording = {"type": f"is not of type {wanted}", "minimum": f"is below the minimum {wanted}",
               "maximum": f"is above the maximum {wanted}",
               "enum": f"is not one of {', '.join(map(str, wanted)) if isinstance(wanted, list) else wanted}"}
    return FieldError(str(at), f"{error.instance!r} {wording.get(error.validator, error.message)}")
