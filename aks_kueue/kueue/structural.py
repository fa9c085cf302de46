"""Validate an object against a CRD's structural schema, as the API server does.

Order as on the server: defaults first, then types, formats and limits, then the
`x-kubernetes-validations` CEL rules on the defaulted value. Rules that compare with
`oldSelf` only run on updates, so a create skips them. Unknown fields are errors, as
with kubectl's default strict field validation. Messages use the API server's words.

Speed: each schema node is compiled once, when a value first reaches it, into a
`_Compiled` holding what its checks need (a type test, its properties, the defaults of
the absent ones, its patterns and CEL programs), so subtrees no value reaches (most of
a PodSpec) are never looked at. A CEL rule that reads `self` only through fields
(`self.count`, `has(self.minCount)`, `size(self.spec.podSets)`) is given just what it
reads (see `_needs`): converting a whole pod template for `self.minCount <= self.count`
was most of the cost, and what a rule does not read cannot change its result.

Go's decoding (`go=True`): the same walk over a file a Go program decodes strictly with Go's
JSON rules (Kueue's Configuration, see config_api): `format` names the Go type behind a node,
which decides what it accepts and how a refusal is worded; a whole float is an integer, a null
leaves a field unset (or fails, where `x-go-null: fails`), a null list item or map value is
the zero value, and map keys are strings.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import replace
from functools import lru_cache
from typing import Any, Callable, Optional

from aks_kueue import compat
from aks_kueue.k8s import field
# FieldError and show are imported from here by kueue/configuration*.py and cli/simulate.py still (their owners move
# them to aks_kueue.k8s.field).
from aks_kueue.k8s.field import FieldError, show  # noqa: F401
from aks_kueue.k8s.quantity import QuantityError, parse_quantity
from aks_kueue.k8s.spelling import suggest
from aks_kueue.kueue.config_api import key_path, parse_duration

_ABSENT = object()
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")


@lru_cache(maxsize=None)
def _program(rule: str):
    return compat.cel_core.compile(rule)


_SELF_CHAIN = re.compile(r"(?<![\w.])self((?:\.[A-Za-z_][A-Za-z0-9_]*)*)")
_CALL = re.compile(r"\s*\(")
_CLOSE = re.compile(r"\s*\)")
_WRAPPER = re.compile(r"\b(size|has)\(\s*$")


class _Needs:
    """What a rule reads of a value: all of it, its size, only that it is there, or
    some of its fields (each with needs of its own)."""

    __slots__ = ("all", "size", "fields")

    def __init__(self):
        self.all = self.size = False
        self.fields: dict[str, _Needs] = {}


def _needs(rule: str) -> _Needs | None:
    """What the rule reads of `self`, from each `self.a.b` in it: inside `size(...)` only
    the size, inside `has(...)` only the presence, before a method call or anywhere else
    all of it. None when it reads all of `self` (a macro on it, an index, a comparison)."""
    root = _Needs()
    for match in _SELF_CHAIN.finditer(rule):
        path = match.group(1).split(".")[1:]
        end = match.end()
        if path and _CALL.match(rule, end):
            path, use = path[:-1], "all"  # self.a.exists(...): a method of a reads all of a
        else:
            wrapper = _WRAPPER.search(rule, 0, match.start())
            use = wrapper.group(1) if wrapper and _CLOSE.match(rule, end) else "all"
        if not path and use == "all":
            return None
        node = root
        for name in path:
            node = node.fields.setdefault(name, _Needs())
        if use == "all":
            node.all = True
        elif use == "size":
            node.size = True
    return root


def _project(value: Any, needs: _Needs) -> Any:
    """The part of `value` the rule can see; the same for it as the whole value."""
    if needs.all:
        return value
    if needs.fields:
        if not isinstance(value, dict):
            return value
        seen = {key: _project(value[key], child) for key, child in needs.fields.items() if key in value}
        if needs.size:
            for key in value:
                seen.setdefault(key, None)
        return seen
    if needs.size:
        if isinstance(value, list):
            return [None] * len(value)
        if isinstance(value, dict):
            return dict.fromkeys(value)
        return value
    return None  # only its presence is read


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


def validate_structural(schema: dict[str, Any], value: Any, path: str = "",
                        integer_note: str = "", unknown: Optional[Callable[[str, Any, str], FieldError]] = None,
                        go: bool = False) -> tuple[Any, list[FieldError]]:
    """Return the defaulted value and every error found in it.

    `integer_note` ends the message of an integer past its `format` (int32, int64): the
    API server itself does not check that format (it logs it as unrecognised), so who
    refuses the value depends on the kind; `{format}` in it names the format. `unknown(path,
    key, hint)` words an unknown key for a document that is not an API object (the chart's
    values); `hint` is the "did you mean" ending. A node with `properties` and no `type` walks
    a map and lets anything else be. `go` decodes with Go's rules (see above)."""
    errors = _Errors()
    errors.integer_note = integer_note
    errors.unknown = unknown
    result = _compiled(schema, go).walk(value, path, errors)
    return (None if result is _ABSENT else result), errors


class _Errors(list):
    """The errors found so far, and what to say of an integer past its format."""

    integer_note = ""
    unknown: Optional[Callable[[str, Any, str], FieldError]] = None


_INTEGER_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_INTEGER_WORDS = {"int32": "a 32-bit integer", "int64": "a 64-bit integer"}


# Compiled schemas, by the identity of the schema dict (kept alive here, so the id stays
# its own). The CRD schemas are loaded once; a caller's ad-hoc schemas are few.
_COMPILED: dict[tuple[int, bool], tuple[dict, "_Compiled"]] = {}
_COMPILED_LIMIT = 4096


def _compiled(schema: dict[str, Any], go: bool = False) -> "_Compiled":
    entry = _COMPILED.get((id(schema), go))
    if entry is not None and entry[0] is schema:
        return entry[1]
    if len(_COMPILED) >= _COMPILED_LIMIT:
        _COMPILED.clear()
    node = _Compiled(schema, go)
    _COMPILED[(id(schema), go)] = (schema, node)
    return node


def _is_integer(v: Any) -> bool:
    # JSON has one number type: the server takes 2.0 as an integer.
    return not isinstance(v, bool) and (isinstance(v, int) or (isinstance(v, float) and v.is_integer()))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str), "integer": _is_integer, "number": _is_number,
    "boolean": lambda v: isinstance(v, bool),
    "integer or string": lambda v: isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))}


def _is_float32(v: Any) -> bool:
    return _is_number(v) and not abs(v) > 3.4028234663852886e38  # NaN passes, as Go reads it


def _is_duration(v: Any) -> bool:
    return isinstance(v, str) and parse_duration(v) is not None


def _is_quantity(v: Any) -> bool:
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        return False
    try:
        parse_quantity(v if isinstance(v, (str, int)) else repr(v))
    except QuantityError:
        return False
    return True


def _go_type(schema: dict[str, Any]) -> str:
    """The Go type a node stands for (see config_api): a key of `_GO_TYPES`."""
    if schema.get("x-go-type") == "time.Duration":
        return "nanos"
    kind, form = schema.get("type"), schema.get("format")
    if kind in ("object", "array"):
        return kind
    return {"boolean": "bool", "integer": form, "number": form}.get(kind or "") or form or kind or ""


# Go type -> what a value of another type is told it must be, what it accepts, its zero value.
_GO_TYPES: dict[str, tuple[str, Callable[[Any], bool], Any]] = {
    "object": ("a map", _TYPE_CHECKS["object"], {}),
    "array": ("a list", _TYPE_CHECKS["array"], []),
    "bool": ("a boolean (true or false)", _TYPE_CHECKS["boolean"], False),
    "string": ("a string", _TYPE_CHECKS["string"], ""),
    "int64": ("an integer", _is_integer, 0),
    "int32": ("a 32-bit integer", _is_integer, 0),
    "nanos": ("an integer count of nanoseconds: Go reads this time.Duration as a number (120000000000 is 2m)",
              _is_integer, 0),
    "float": ("a number", _is_float32, 0),
    "double": ("a number", _is_number, 0),
    "duration": ("a duration such as \"30s\", \"5m\" or \"1h30m\"", _is_duration, "0s"),
    "quantity": ("a quantity such as \"5\", \"500m\" or \"5Gi\"", _is_quantity, "0"),
}
_GO_NULL = ("must be a duration such as \"5m\" (Go's duration decoder fails on null); remove the key to leave it "
            "unset")


class _Compiled:
    """One schema node, ready to check values; its children are compiled when first reached."""

    __slots__ = ("schema", "nullable", "type_test", "wanted", "walks_object", "props", "children", "extra",
                 "open_object", "defaults", "required", "max_props", "min_props", "items", "max_items",
                 "min_items", "list_type", "map_keys", "scalar", "enum", "rules", "_items_compiled",
                 "item_nullable", "item_type_name", "simple", "_extra_compiled", "go", "null_fails", "mismatch",
                 "go_range", "zero")

    def __init__(self, schema: dict[str, Any], go: bool = False):
        self.schema, self.go = schema, go
        self.nullable = bool(schema.get("nullable"))
        self.null_fails = schema.get("x-go-null") == "fails"
        self.wanted = "integer or string" if schema.get("x-kubernetes-int-or-string") else schema.get("type")
        self.type_test = _TYPE_CHECKS.get(self.wanted or "")
        self.walks_object = self.wanted == "object" or (self.wanted is None and "properties" in schema)
        self.props = schema.get("properties") or {}
        self.children: dict[str, _Compiled] = {}
        extra = schema.get("additionalProperties")
        self.extra = extra if isinstance(extra, dict) else None
        self._extra_compiled: Optional[_Compiled] = None
        self.open_object = bool(schema.get("x-kubernetes-preserve-unknown-fields") or extra is True)
        self.defaults = [(key, prop) for key, prop in self.props.items() if "default" in prop]
        self.required = schema.get("required") or ()
        self.max_props, self.min_props = schema.get("maxProperties"), schema.get("minProperties")
        self.items = schema.get("items") or {}
        self._items_compiled: Optional[_Compiled] = None
        self.item_nullable = bool(self.items.get("nullable"))
        self.item_type_name = _type_name(self.items)
        self.max_items, self.min_items = schema.get("maxItems"), schema.get("minItems")
        self.list_type = schema.get("x-kubernetes-list-type")
        self.map_keys = schema.get("x-kubernetes-list-map-keys") or []
        self.scalar = any(k in schema for k in ("maxLength", "minLength", "pattern", "format", "minimum", "maximum"))
        self.enum = schema.get("enum") if "enum" in schema else None
        self.rules = []
        for rule in schema.get("x-kubernetes-validations") or []:
            expression = rule["rule"]
            if "oldSelf" in expression:
                continue  # transition rules only run on updates
            where = rule["fieldPath"].lstrip(".") if rule.get("fieldPath") else None
            self.rules.append((expression, where, rule.get("message") or f"failed rule: {expression}",
                               _needs(expression)))
        # A leaf with nothing to check but its type: its parent checks it inline.
        self.simple = (self.wanted in ("string", "integer", "number", "boolean", "integer or string")
                       and not self.scalar and self.enum is None and not self.rules)
        self.mismatch = f"must be of type {self.wanted}"
        self.go_range = self.zero = None
        if go:
            kind = _go_type(schema)
            words, self.type_test, self.zero = _GO_TYPES[kind]
            self.mismatch = f"must be {words}"
            if kind in ("int32", "int64", "nanos"):
                self.go_range = _INTEGER_RANGES["int32" if kind == "int32" else "int64"]
            self.scalar = self.simple = False

    def child(self, key: Any) -> Optional["_Compiled"]:
        """The node for a key of this object: a property, additionalProperties, or None."""
        node = self.children.get(key)
        if node is None:
            if key in self.props:
                node = self.children[key] = _compiled(self.props[key], self.go)
            elif self.extra is not None:
                node = self._extra_compiled
                if node is None:
                    node = self._extra_compiled = _compiled(self.extra, self.go)
        return node

    def walk(self, value: Any, path: str, errors: list[FieldError]) -> Any:
        if value is None:
            if self.null_fails:
                errors.append(field.invalid(path, None, _GO_NULL))
            return None if self.nullable else _ABSENT  # the server prunes nulls of non-nullable fields
        if self.type_test is not None and not self.type_test(value):
            errors.append(field.invalid(path, value, self.mismatch))
            return value
        if self.walks_object and isinstance(value, dict):
            value = self._walk_object(value, path, errors)
        elif isinstance(value, list):
            value = self._walk_array(value, path, errors)
        elif self.scalar:
            _check_scalar(self.schema, value, path, errors)
        elif self.go_range is not None:
            value, (low, high) = int(value), self.go_range  # a whole float reaches Go as the JSON number
            if not low <= value <= high:
                errors.append(field.invalid(path, value, f"{self.mismatch} (from {low} to {high})"))
        if self.enum is not None and value not in self.enum:
            errors.append(field.not_supported(path, value, self.enum))
        if self.rules:
            self._run_rules(value, path, errors)
        return value

    def _walk_object(self, value: dict[str, Any], path: str, errors: list[FieldError]) -> dict:
        children = self.children
        result: dict[str, Any] = {}
        prefix = f"{path}." if path else ""
        for key, child in value.items():
            node = children.get(key)
            if node is None:
                node = self.child(key)
            if node is not None and node.simple:
                # Inline what node.walk would do when there is nothing to report.
                if child is None:
                    if node.nullable:
                        result[key] = None
                    continue
                test = node.type_test
                if test is None or test(child):
                    result[key] = child
                    continue
            if self.go:
                child_path = key_path(path, key)
            else:
                child_path = prefix + key if isinstance(key, str) else join(path, key)
            if node is not None:
                walked = node.walk(child, child_path, errors)
            elif self.open_object:
                walked = child
            else:
                hint = suggest(str(key), self.props) if self.go or isinstance(key, str) else ""
                words = getattr(errors, "unknown", None)
                errors.append(words(child_path, key, hint) if words else
                              field.unknown(child_path, fix=f"it is not part of this kind's schema{hint}"))
                continue
            if self.go and self.extra is not None and node is not None:  # a Go map: string keys, null is the zero
                key, walked = str(key), (_copy(node.zero) if child is None else walked)
            if walked is not _ABSENT:
                result[key] = walked
        for key, prop in self.defaults:
            if key not in result and (node := self.child(key)) is not None:  # a property: it has a node
                walked = node.walk(_copy(prop["default"]), prefix + key, errors)
                if walked is not _ABSENT:
                    result[key] = walked
        for key in self.required:
            if key not in result:
                errors.append(field.required(prefix + key))
        if self.max_props is not None and len(result) > self.max_props:
            errors.append(field.too_many(path, len(result), self.max_props))
        if self.min_props is not None and len(result) < self.min_props:
            errors.append(field.too_few(path, len(result), self.min_props))
        return result

    def _walk_array(self, value: list[Any], path: str, errors: list[FieldError]) -> list:
        items = self._items_compiled
        if items is None:
            items = self._items_compiled = _compiled(self.items, self.go)
        result = []
        simple, test = items.simple, items.type_test
        for index, item in enumerate(value):
            if simple and item is not None and (test is None or test(item)):
                result.append(item)
                continue
            if item is None and self.go:
                result.append(_copy(items.zero))  # Go's zero value
                continue
            if item is None and not self.item_nullable:
                # The server prunes nulls only from object fields, never from lists.
                errors.append(field.invalid(f"{path}[{index}]", None, f"must be of type {self.item_type_name}"))
                result.append(None)
                continue
            walked = items.walk(item, f"{path}[{index}]", errors)
            result.append(None if walked is _ABSENT else walked)
        if self.max_items is not None and len(result) > self.max_items:
            errors.append(field.too_many(path, len(result), self.max_items))
        if self.min_items is not None and len(result) < self.min_items:
            errors.append(field.too_few(path, len(result), self.min_items))
        if self.list_type in ("map", "set") and len(result) > 1:
            seen: set = set()
            for index, item in enumerate(result):
                key = ({k: item.get(k) for k in self.map_keys} if self.list_type == "map" and isinstance(item, dict)
                       else item)
                identity = _identity(key)
                if identity in seen:
                    errors.append(field.duplicate(f"{path}[{index}]", key))
                seen.add(identity)
        return result

    def _run_rules(self, value: Any, path: str, errors: list[FieldError]) -> None:
        for expression, where, message, needs in self.rules:
            at = join(path, where) if where else path
            seen = value if needs is None else _project(value, needs)
            try:
                passed = _program(expression).execute({"self": seen})
            except Exception as error:  # a missing field: the server rejects the object too
                what, advice = _evaluation_error(error)
                errors.append(replace(field.invalid(at, field.OMIT, f"{message} ({what})"), fix=advice))
                continue
            if passed is not True:
                errors.append(field.invalid(at, field.OMIT, message))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _evaluation_error(error: Exception) -> tuple[str, str]:
    """What the CEL bindings say of a rule they could not evaluate: their first sentence (what failed, for
    the message), and the advice they go on with (for the fix)."""
    what, *advice = _SENTENCE_END.split(str(error).strip(), maxsplit=1)
    return what, "".join(advice)


def _copy(value: Any) -> Any:
    """A default's own copy (scalars are shared, they cannot change)."""
    return value if isinstance(value, (str, int, float, bool)) or value is None else copy.deepcopy(value)


def _identity(key: Any) -> Any:
    """What makes two list entries the same, as their JSON would: exact for scalars
    (1, 1.0 and True differ), by their JSON for anything else."""
    if isinstance(key, dict):
        if len(key) == 1:
            (name, value), = key.items()
            if isinstance(value, (str, int, float, bool)) or value is None:
                return (name, type(value), value)
        elif all(isinstance(v, (str, int, float, bool)) or v is None for v in key.values()):
            return tuple(sorted((k, type(v).__name__, v) for k, v in key.items()))
    elif isinstance(key, (str, int, float, bool)) or key is None:
        return (type(key), key)
    return json.dumps(key, sort_keys=True)


def _type_name(schema: dict[str, Any]) -> str:
    return "integer or string" if schema.get("x-kubernetes-int-or-string") else schema.get("type", "object")


def _check_scalar(schema: dict[str, Any], value: Any, path: str, errors: list[FieldError]) -> None:
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(field.too_long(path, schema["maxLength"]))
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(field.invalid(path, value, f"should be at least {schema['minLength']} chars long"))
        if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            if schema.get("x-kubernetes-int-or-string"):
                errors.append(field.invalid(path, value, "must be a quantity, such as 60, 500m or 240Gi"))
            else:
                errors.append(field.invalid(path, value, f"should match '{schema['pattern']}'"))
        if schema.get("format") == "date-time" and not _RFC3339.match(value):
            errors.append(field.invalid(path, value, "must be a date-time (RFC 3339)"))
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        bounds = _INTEGER_RANGES.get(schema.get("format") or "")
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            fmt = schema["format"]
            note = getattr(errors, "integer_note", "").format(format=fmt)
            errors.append(field.invalid(path, value, f"must be {_INTEGER_WORDS[fmt]}, from {bounds[0]} to "
                                                        f"{bounds[1]}{note}"))
        minimum = schema.get("minimum")
        maximum = schema.get("maximum")
        if minimum is not None and value < minimum:
            errors.append(field.invalid(path, value, f"should be greater than or equal to {minimum}"))
        if maximum is not None and value > maximum:
            errors.append(field.invalid(path, value, f"should be less than or equal to {maximum}"))


