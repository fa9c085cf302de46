"""Plain YAML scalars as the Pulumi CLI reads them: Go's gopkg.in/yaml.v3, then Pulumi's config layer.

The Pulumi CLI reads `Pulumi.yaml` and `Pulumi.<stack>.yaml` with gopkg.in/yaml.v3 (sdk/go.mod pins
v3.0.1), whose `resolve` (resolve.go, v3 branch) is YAML 1.2's core schema with Go's number parsers,
not the YAML 1.1 rules Kubernetes' sigs.k8s.io/yaml and PyYAML apply. What that means, case by case:

- booleans are `true`, `True`, `TRUE`, `false`, `False`, `FALSE` only: `yes`, `No`, `on`, `off`, `y`
  stay text; nulls are empty, `~`, `null`, `Null`, `NULL`;
- integers go through Go's `strconv.ParseInt(s, 0, 64)` after every `_` is removed: `1_000` is 1000,
  `0x1F` 31, `0o17` and `0777` octal (15, 511), `0b101` 5, a sign is allowed; past int64, uint64; a
  number Go cannot read as an integer but that has a float's shape is a float (`09` is 9.0, `1e3`
  1000.0); `1:50` (YAML 1.1's base 60) is text;
- `.inf`, `-.Inf`, `.nan` and their casings are infinities and NaN, which Pulumi's config layer then
  cannot encode (`json: unsupported value`): the stack file reader refuses them;
- a value of the shape YYYY-M-D, optionally with a time (`T`, `t` or a space, then h:m:s, a fraction
  and, after a `T`, `Z` or an offset), is a timestamp (`time.Time`), and Pulumi's config layer hands
  the program `time.Time.String()` of it: `2026-12-24` becomes `2026-12-24 00:00:00 +0000 UTC`;
- everything else is text. Quoted, literal (`|`) and folded (`>`) scalars are always text.

`resolve` returns the value the program is handed, timestamps as that text. Explicit standard
tags (`!!int 12`, `!!str 3`) are resolved as yaml.v3 resolves them (a mismatch is an error, as
there); any other tag leaves the text as it is.
"""

from __future__ import annotations

import base64
import binascii
import calendar
import math
import re
from typing import Any

_INT64 = (-(2 ** 63), 2 ** 63 - 1)
_UINT64_MAX = 2 ** 64 - 1

# resolve.go's resolveMap: looked up first for every scalar whose first character has a hint.
_MAP: dict[str, Any] = {
    **dict.fromkeys(("true", "True", "TRUE"), True), **dict.fromkeys(("false", "False", "FALSE"), False),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), None),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
# resolve.go's resolveTable: S sign, D digit, M map only, . float.
_HINT = {**dict.fromkeys("+-", "S"), **dict.fromkeys("0123456789", "D"), **dict.fromkeys("yYnNtTfFoO~", "M"),
         ".": "."}
# yamlStyleFloat, matched against the text without underscores.
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# What Go's strconv.ParseFloat reads of a text starting with '.': digits may be separated by single
# underscores (strconv's underscoreOK).
_DOT_FLOAT = re.compile(r"\.[0-9]+(_[0-9]+)*([eE][-+]?[0-9]+(_[0-9]+)*)?")


class GoTimestamp(str):
    """A timestamp, as the text Pulumi's config layer makes of it; unlike text, not a valid map key."""

    __slots__ = ()


class TagError(ValueError):
    """An explicit tag the value does not fit (`!!int abc`): yaml.v3 fails the whole file."""


def resolve(value: str, tag: str = "") -> Any:
    """The value of a plain scalar (or one with an explicit tag), as yaml.v3 and Pulumi read it."""
    short = _short_tag(tag)
    if short == "!!binary":
        try:
            return base64.b64decode(value.encode("ascii"), validate=False).decode("utf-8", "replace")
        except (binascii.Error, UnicodeEncodeError):
            raise TagError(f"!!binary value {value!r} is not valid base64") from None
    if short not in ("", "!!str", "!!bool", "!!int", "!!float", "!!null", "!!timestamp"):
        return value  # an application tag (`!Ref`, `!`): yaml.v3 keeps the text
    if short == "!!str":
        return value
    found_tag, found = _resolve_plain(value, timestamps=short in ("", "!!timestamp"))
    if short in ("", found_tag):
        return found
    if short == "!!float" and found_tag == "!!int":
        return float(found)
    raise TagError(f"cannot decode {found_tag} `{value}` as a {short}")


def _short_tag(tag: str) -> str:
    prefix = "tag:yaml.org,2002:"
    return "!!" + tag[len(prefix):] if tag.startswith(prefix) else tag


def _resolve_plain(value: str, timestamps: bool) -> tuple[str, Any]:
    hint = _HINT.get(value[0]) if value else "N"
    if hint is None:
        return "!!str", value
    if value in _MAP:
        found = _MAP[value]
        kind = "!!bool" if isinstance(found, bool) else "!!null" if found is None else "!!float"
        return kind, found
    if hint == ".":
        if _DOT_FLOAT.fullmatch(value):
            number = float(value.replace("_", ""))
            if math.isfinite(number):
                return "!!float", number
        return "!!str", value
    if hint in ("D", "S"):
        if timestamps:
            stamp = go_timestamp(value)
            if stamp is not None:
                return "!!timestamp", GoTimestamp(stamp)
        plain = value.replace("_", "")
        whole = _parse_int(plain, signed=True)
        if whole is None:
            whole = _parse_int(plain, signed=False)
        if whole is not None:
            return "!!int", whole
        if _YAML_FLOAT.fullmatch(plain):
            number = float(plain)
            if math.isfinite(number):  # ParseFloat reports a range error past float64
                return "!!float", number
        # resolve.go's 0b/0o branches only take what ParseInt(s, 0, 64) took already.
    return "!!str", value


def _parse_int(text: str, signed: bool) -> int | None:
    """Go's strconv.ParseInt(text, 0, 64) (signed) or ParseUint(text, 0, 64): None where Go errs."""
    sign = 1
    if signed and text[:1] in ("+", "-"):
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if not text:
        return None
    base, digits = 10, text
    if len(text) >= 2 and text[0] == "0":
        prefix = text[1].lower()
        base, digits = {"x": (16, text[2:]), "o": (8, text[2:]), "b": (2, text[2:])}.get(prefix, (8, text[1:]))
    allowed = "0123456789abcdefABCDEF"[:base if base <= 10 else 10 + (base - 10) * 2]
    if not digits or any(c not in allowed for c in digits):
        return None
    number = sign * int(digits, base)
    low, high = _INT64 if signed else (0, _UINT64_MAX)
    return number if low <= number <= high else None


# ---- timestamps ----------------------------------------------------------------------------

_DATE = re.compile(r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{1,2})-(?P<d>[0-9]{1,2})")
_TIME = re.compile(r"(?P<h>[0-9]{1,2}):(?P<mi>[0-9]{1,2}):(?P<s>[0-9]{1,2})(?:[.,](?P<f>[0-9]+))?")
_ZONE = re.compile(r"Z|(?P<sign>[+-])(?P<zh>[0-9]{2}):(?P<zm>[0-9]{2})")


def go_timestamp(text: str) -> str | None:
    """`time.Time.String()` of what yaml.v3's parseTimestamp reads from `text`, or None.

    The four layouts it tries (resolve.go's allowedTimestampFormats): `2006-1-2T15:4:5.999999999Z07:00`,
    the same with a lower-case `t`, `2006-1-2 15:4:5.999999999` (no zone) and `2006-1-2`. Go's
    time.Parse reads 1 or 2 digits for month, day, hour, minute and second, takes any number of
    fraction digits (keeping 9), and checks the ranges and the day of the month. A time without a
    zone is UTC. Pulumi then marshals the timestamp back into YAML (RFC 3339, `Z` for a zero offset)
    and reads it again before it makes it text, so a zero offset is always `+0000 UTC`; any other
    offset is named by itself (`+0200 +0200`), as on a machine whose own zone is UTC (where the
    machine's zone has that offset on that day, Go names it after the zone instead, `+0200 CEST`).
    """
    if len(text) < 5 or not text[:4].isdigit() or text[4] != "-":
        return None
    date = _DATE.match(text)
    if date is None:
        return None
    rest = text[date.end():]
    clock, zone = None, None
    if rest:
        separator, rest = rest[0], rest[1:]
        if separator not in "Tt ":
            return None
        clock = _TIME.match(rest)
        if clock is None:
            return None
        rest = rest[clock.end():]
        if separator == " ":
            if rest:
                return None
        else:
            zone = _ZONE.fullmatch(rest)
            if zone is None:
                return None
    year, month, day = int(date["y"]), int(date["mo"]), int(date["d"])
    if not 1 <= month <= 12 or day < 1 or day > _days_in(year, month):
        return None
    hour = minute = second = nanos = 0
    if clock is not None:
        hour, minute, second = int(clock["h"]), int(clock["mi"]), int(clock["s"])
        if hour >= 24 or minute >= 60 or second >= 60:
            return None
        nanos = int((clock["f"] or "0")[:9].ljust(9, "0"))
    offset = 0
    if zone is not None and zone["sign"]:
        zone_hours, zone_minutes = int(zone["zh"]), int(zone["zm"])
        if zone_hours > 24 or zone_minutes > 60:
            return None
        offset = (zone_hours * 60 + zone_minutes) * (-1 if zone["sign"] == "-" else 1)
    fraction = f".{nanos:09d}".rstrip("0") if nanos else ""
    if offset == 0:
        name = "+0000 UTC"
    else:
        numeric = f"{'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
        name = f"{numeric} {numeric}"
    return f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}{fraction} {name}"


def _days_in(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1] if year > 0 else (29 if month == 2 else
                                                                   calendar.monthrange(2001, month)[1])


GO_TIMESTAMP_TEXT = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)? [+-]\d{4} \S+")


def is_go_timestamp_text(value: Any) -> bool:
    """Whether `value` is the text Pulumi makes of an unquoted timestamp (`2026-12-24 00:00:00 +0000 UTC`)."""
    return isinstance(value, str) and GO_TIMESTAMP_TEXT.fullmatch(value) is not None


# ---- Pulumi's config layer: values as the program is handed them ----------------------------

def go_json(value: Any) -> str:
    """JSON text as Go's encoding/json writes it (keys sorted, floats in Go's shortest form); the
    caller refuses infinities and NaN first, which encoding/json cannot write."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        import json

        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{" + ",".join(f"{go_json(str(k))}:{go_json(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    raise TypeError(f"no JSON for {type(value).__name__}")


def go_float(number: float) -> str:
    """encoding/json's float64: the shortest digits, fixed notation from 1e-6 up to 1e21, else
    exponent notation with `e-7` rather than `e-07`."""
    from decimal import Decimal

    if number == 0:
        return "-0" if math.copysign(1, number) < 0 else "0"
    if 1e-6 <= abs(number) < 1e21:
        return format(Decimal(repr(number)).normalize(), "f")
    # Python's repr writes this range as strconv's 'e' format does: shortest digits, two exponent digits.
    text = repr(number)
    if len(text) >= 4 and text[-4] == "e" and text[-3] == "-" and text[-2] == "0":
        text = text[:-2] + text[-1]
    return text
