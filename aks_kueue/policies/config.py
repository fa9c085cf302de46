"""Policy pack config, reconciled as the Pulumi engine does before it calls `Configure`.

The JSON is the one of `pulumi preview --policy-pack-config`: `"all"` sets every
policy's level, a policy's entry is a level or an object with `enforcementLevel` and
properties. The engine starts from each policy's default level and its schema's
`default`s, applies `all`, then each policy's entry, and validates the properties
against the schema (`ReconcilePolicyPackConfig` in pulumi/pulumi). This module does the
same, and is stricter in two ways the engine is not, because a typo there silently
changes nothing: an unknown policy name and an unknown property are errors too.
"""

from __future__ import annotations

from typing import Any, Optional

from pulumi_policy import EnforcementLevel

from aks_kueue.k8s.spelling import suggest

LEVELS = tuple(level.value for level in EnforcementLevel)
_JSON_TYPES = {"string": (str,), "boolean": (bool,), "object": (dict,), "array": (list,),
               "number": (int, float), "integer": (int,)}
# The JSON Schema keywords this pack's schemas use, all of which `_schema_errors` checks.
SUPPORTED_KEYWORDS = {"type", "enum", "minimum", "maximum", "items", "default", "description"}


def reconcile(policies: list, config: Optional[dict]) -> dict[str, tuple[str, dict[str, Any]]]:
    """policy name -> (enforcement level, properties with defaults); ValueError when invalid."""
    problem = config_error(policies, config)
    if problem:
        raise ValueError(problem)
    result = {p.name: (p.enforcement_level.value, _defaults(p)) for p in policies}
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


def _defaults(policy) -> dict[str, Any]:
    schema = policy.config_schema
    return {k: v["default"] for k, v in (schema.properties if schema else {}).items() if "default" in v}


def config_error(policies: list, config: Any) -> Optional[str]:
    if config is None:
        return None
    if not isinstance(config, dict):
        return "the policy config must be a JSON object of policy names"
    by_name = {p.name: p for p in policies}
    for name, entry in config.items():
        if name == "all":
            if entry not in LEVELS:
                return (f"\"all\": {entry!r} is not an enforcement level{suggest(str(entry), LEVELS)}; use one of "
                        f"{', '.join(LEVELS)}")
            continue
        if name not in by_name:
            return (f"{name!r} is not a policy of this pack{suggest(str(name), by_name)}; its policies are "
                    f"{', '.join(sorted(by_name))}")
        if isinstance(entry, str):
            entry = {"enforcementLevel": entry}
        if not isinstance(entry, dict):
            return f"{name}: {entry!r} must be an enforcement level or an object"
        if "enforcementLevel" in entry and entry["enforcementLevel"] not in LEVELS:
            return (f"{name}.enforcementLevel: {entry['enforcementLevel']!r} is not an enforcement level"
                    f"{suggest(str(entry['enforcementLevel']), LEVELS)}; use one of {', '.join(LEVELS)}")
        schema = by_name[name].config_schema
        properties = schema.properties if schema else {}
        for key, value in entry.items():
            if key == "enforcementLevel":
                continue
            if key not in properties:
                known = ["enforcementLevel", *properties]
                return (f"{name}.{key}: not a setting of this policy{suggest(str(key), known)}; it takes "
                        f"{', '.join(known)}")
            problem = _schema_error(properties[key], value, f"{name}.{key}")
            if problem:
                return problem
    return None


def _schema_error(schema: dict, value: Any, where: str) -> Optional[str]:
    kind = schema.get("type")
    if kind is not None:
        ok = isinstance(value, _JSON_TYPES[kind]) and not (isinstance(value, bool) and kind in ("number", "integer"))
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            ok = True
        if not ok:
            return f"{where}: {value!r} is not of type {kind}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where}: {value!r} is not one of {', '.join(map(str, schema['enum']))}"
    if "minimum" in schema and value < schema["minimum"]:
        return f"{where}: {value!r} is below the minimum {schema['minimum']}"
    if "maximum" in schema and value > schema["maximum"]:
        return f"{where}: {value!r} is above the maximum {schema['maximum']}"
    if "items" in schema and isinstance(value, list):
        for index, item in enumerate(value):
            problem = _schema_error(schema["items"], item, f"{where}[{index}]")
            if problem:
                return problem
    return None
