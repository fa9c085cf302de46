"""Validate an object against a CRD's structural schema, as the API server does.

Order as on the server: defaults first, then types, formats and limits, then the
`x-kubernetes-validations` CEL rules on the defaulted value. Rules that compare with
`oldSelf` only run on updates, so a create skips them. Unknown fields are errors, as
with kubectl's default strict field validation. Messages use the API server's words.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

_ABSENT = object()
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message


def show(value: Any) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


@lru_cache(maxsize=None)
def _program(rule: str):
    import cel

    return cel.compile(rule)


@lru_cache(maxsize=None)
def _pattern(pattern: str) -> re.Pattern:
    """CRD patterns are Go RE2; RE2 allows `^(?i)...`, Python wants flags up front."""
    flags = 0
    if "(?i)" in pattern:
        pattern, flags = pattern.replace("(?i)", ""), re.IGNORECASE
    # RE2's `$` is the end of the text; Python's also matches before a final newline.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern, flags)


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def validate_structural(schema: dict[str, Any], value: Any, path: str = "") -> tuple[Any, list[FieldError]]:
    """Return the defaulted value and every error found in it."""
    errors: list[FieldError] = []
    result = _walk(schema, value, path, errors)
    return (None if result is _ABSENT else result), errors


def _walk(schema: dict[str, Any], value: Any, path: str, errors: list[FieldError]) -> Any:
    if value is None and not schema.get("nullable"):
        return _ABSENT  # the server prunes nulls of non-nullable fields, then defaults them
    if value is None:
        return None
    if not _type_ok(schema, value, path, errors):
        return value
    if isinstance(value, dict) and schema.get("type") == "object":
        value = _walk_object(schema, value, path, errors)
    elif isinstance(value, list):
        value = _walk_array(schema, value, path, errors)
    else:
        _check_scalar(schema, value, path, errors)
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(show(v) for v in schema["enum"])
        errors.append(FieldError(path, f"Unsupported value: {show(value)}: supported values: {allowed}"))
    _run_rules(schema, value, path, errors)
    return value


def _type_name(schema: dict[str, Any]) -> str:
    return "integer or string" if schema.get("x-kubernetes-int-or-string") else schema.get("type", "object")


def _type_ok(schema: dict[str, Any], value: Any, path: str, errors: list[FieldError]) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        ok = isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
        wanted = "integer or string"
    else:
        wanted = schema.get("type")
        checks = {
            "object": lambda v: isinstance(v, dict),
            "array": lambda v: isinstance(v, list),
            "string": lambda v: isinstance(v, str),
            # JSON has one number type: the server takes 2.0 as an integer.
            "integer": lambda v: not isinstance(v, bool) and (
                isinstance(v, int) or (isinstance(v, float) and v.is_integer())),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "boolean": lambda v: isinstance(v, bool),
        }
        ok = checks[wanted](value) if wanted in checks else True
    if not ok:
        errors.append(FieldError(path, f"Invalid value: {show(value)}: must be of type {wanted}"))
    return ok


def _walk_object(schema: dict[str, Any], value: dict[str, Any], path: str, errors: list[FieldError]) -> dict:
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    open_object = schema.get("x-kubernetes-preserve-unknown-fields") or extra is True
    result: dict[str, Any] = {}
    for key, child in value.items():
        child_path = join(path, key)
        if key in props:
            walked = _walk(props[key], child, child_path, errors)
        elif isinstance(extra, dict):
            walked = _walk(extra, child, child_path, errors)
        elif open_object:
            walked = child
        else:
            errors.append(FieldError(child_path, f"unknown field {show(key)}; it is not part of this kind's schema"))
            continue
        if walked is not _ABSENT:
            result[key] = walked
    for key, prop in props.items():
        if key not in result and "default" in prop:
            walked = _walk(prop, copy.deepcopy(prop["default"]), join(path, key), errors)
            if walked is not _ABSENT:
                result[key] = walked
    for key in schema.get("required") or []:
        if key not in result:
            errors.append(FieldError(join(path, key), "Required value"))
    if "maxProperties" in schema and len(result) > schema["maxProperties"]:
        errors.append(FieldError(path, f"Too many: {len(result)}: must have at most {schema['maxProperties']} items"))
    if "minProperties" in schema and len(result) < schema["minProperties"]:
        errors.append(FieldError(path, f"Too few: {len(result)}: must have at least {schema['minProperties']} items"))
    return result


def _walk_array(schema: dict[str, Any], value: list[Any], path: str, errors: list[FieldError]) -> list:
    items = schema.get("items") or {}
    result = []
    for index, item in enumerate(value):
        if item is None and not items.get("nullable"):
            # The server prunes nulls only from object fields, never from lists.
            errors.append(FieldError(join(path, index), f"Invalid value: null: must be of type "
                                                        f"{_type_name(items)}"))
            result.append(None)
            continue
        walked = _walk(items, item, join(path, index), errors)
        result.append(None if walked is _ABSENT else walked)
    if "maxItems" in schema and len(result) > schema["maxItems"]:
        errors.append(FieldError(path, f"Too many: {len(result)}: must have at most {schema['maxItems']} items"))
    if "minItems" in schema and len(result) < schema["minItems"]:
        errors.append(FieldError(path, f"Too few: {len(result)}: must have at least {schema['minItems']} items"))
    list_type = schema.get("x-kubernetes-list-type")
    if list_type in ("map", "set"):
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen: set[str] = set()
        for index, item in enumerate(result):
            key = {k: item.get(k) for k in keys} if list_type == "map" and isinstance(item, dict) else item
            identity = json.dumps(key, sort_keys=True)
            if identity in seen:
                errors.append(FieldError(join(path, index), f"Duplicate value: {show(key)}"))
            seen.add(identity)
    return result


def _check_scalar(schema: dict[str, Any], value: Any, path: str, errors: list[FieldError]) -> None:
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(FieldError(path, f"Too long: may not be more than {schema['maxLength']} bytes"))
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(FieldError(path, f"Invalid value: {show(value)}: should be at least "
                                           f"{schema['minLength']} chars long"))
        if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            if schema.get("x-kubernetes-int-or-string"):
                errors.append(FieldError(path, f"Invalid value: {show(value)}: must be a quantity, such as "
                                               "60, 500m or 240Gi"))
            else:
                errors.append(FieldError(path, f"Invalid value: {show(value)}: should match '{schema['pattern']}'"))
        if schema.get("format") == "date-time" and not _RFC3339.match(value):
            errors.append(FieldError(path, f"Invalid value: {show(value)}: must be a date-time (RFC 3339)"))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        # The server applies `format` to strings only, so int32 is not a range check.
        minimum = schema.get("minimum")
        maximum = schema.get("maximum")
        if minimum is not None and value < minimum:
            errors.append(FieldError(path, f"Invalid value: {value}: should be greater than or equal to {minimum}"))
        if maximum is not None and value > maximum:
            errors.append(FieldError(path, f"Invalid value: {value}: should be less than or equal to {maximum}"))


def _run_rules(schema: dict[str, Any], value: Any, path: str, errors: list[FieldError]) -> None:
    for rule in schema.get("x-kubernetes-validations") or []:
        expression = rule["rule"]
        if "oldSelf" in expression:
            continue
        where = join(path, rule["fieldPath"].lstrip(".")) if rule.get("fieldPath") else path
        message = rule.get("message") or f"failed rule: {expression}"
        try:
            passed = _program(expression).execute({"self": value})
        except Exception as error:  # a missing field: the server rejects the object too
            errors.append(FieldError(where, f"Invalid value: {message} ({error})"))
            continue
        if passed is not True:
            errors.append(FieldError(where, f"Invalid value: {message}"))
