"""Plain scalars as the Pulumi CLI reads them (Go's yaml.v3), case by case, beside Kubernetes' reading.

Each expected value is what gopkg.in/yaml.v3's resolve.go (v3 branch) and Go's strconv and
time.Parse give, worked through by hand from their source; the last column is what the
Kubernetes dialect (YAML 1.1) gives the same text, which the manifests keep.
"""

from __future__ import annotations

import math

import pytest

from aks_kueue.k8s.loader import Dialect, LoadError, parse_single
from aks_kueue.k8s.yaml12 import go_float, go_json, go_timestamp, resolve


REFUSED = object()  # the Kubernetes dialect refuses the text


def pulumi(text: str):
    return parse_single(f"v: {text}\n", "Pulumi.s.yaml", dialect=Dialect.PULUMI)["v"]


def kubernetes(text: str):
    return parse_single(f"v: {text}\n", "m.yaml")["v"]


@pytest.mark.parametrize("text, as_pulumi, as_kubernetes", [
    # booleans: true/false in three casings only
    ("true", True, True), ("True", True, True), ("TRUE", True, True),
    ("false", False, False), ("False", False, False), ("FALSE", False, False),
    ("yes", "yes", True), ("No", "No", False), ("on", "on", True), ("OFF", "OFF", False), ("y", "y", "y"),
    ("tRUE", "tRUE", "tRUE"),
    # nulls
    ("~", None, None), ("null", None, None), ("NULL", None, None), ("nULL", "nULL", "nULL"),
    # base 60 is gone
    ("1:50", "1:50", 110), ("00:00", "00:00", "00:00"), ("1:00:00", "1:00:00", 3600),
    # integers: Go's ParseInt(s, 0, 64) after removing underscores
    ("0777", 511, 511), ("1_000", 1000, 1000), ("0x1F", 31, 31), ("0X1f", 31, "0X1f"), ("0o17", 15, "0o17"),
    ("0O17", 15, "0O17"), ("0b101", 5, 5), ("-0b101", -5, -5), ("+12", 12, 12), ("-0x10", -16, -16),
    ("1__0", 10, 10), ("1_", 1, 1), ("9223372036854775807", 2 ** 63 - 1, 2 ** 63 - 1),
    ("18446744073709551615", 2 ** 64 - 1, 2 ** 64 - 1),
    # floats: what ParseInt refuses but has a float's shape
    ("09", 9.0, "09"), ("1e3", 1000.0, "1e3"), ("1.5", 1.5, 1.5), (".5", 0.5, 0.5), ("-.5", -0.5, "-.5"),
    ("1.", 1.0, 1.0), ("1_0.5", 10.5, 10.5), ("184467440737095516160", 1.8446744073709552e20, 184467440737095516160),
    ("1e400", "1e400", "1e400"), ("0o8", "0o8", "0o8"), ("0x", "0x", "0x"), ("+", "+", "+"),
    # special floats
    (".inf", math.inf, math.inf), ("-.Inf", -math.inf, -math.inf), ("+.INF", math.inf, math.inf),
    (".iNf", ".iNf", ".iNf"),
    # timestamps: Go's time.Time.String() of what yaml.v3 parses; Kubernetes keeps the text
    ("2026-12-24", "2026-12-24 00:00:00 +0000 UTC", "2026-12-24"),
    ("2026-1-2", "2026-01-02 00:00:00 +0000 UTC", "2026-1-2"),
    ("2026-12-24T10:00:00Z", "2026-12-24 10:00:00 +0000 UTC", "2026-12-24T10:00:00Z"),
    ("2026-12-24t10:00:00+00:00", "2026-12-24 10:00:00 +0000 UTC", "2026-12-24t10:00:00+00:00"),
    ("2026-12-24T10:00:00.250+02:00", "2026-12-24 10:00:00.25 +0200 +0200", "2026-12-24T10:00:00.250+02:00"),
    ("2026-12-24T1:2:3-05:30", "2026-12-24 01:02:03 -0530 -0530", "2026-12-24T1:2:3-05:30"),
    ("2026-12-24 10:00:00", "2026-12-24 10:00:00 +0000 UTC", "2026-12-24 10:00:00"),
    ("2026-12-24 10:00:00.1234567891", "2026-12-24 10:00:00.123456789 +0000 UTC", "2026-12-24 10:00:00.1234567891"),
    ("2026-02-30", "2026-02-30", "2026-02-30"),            # no such day: text
    ("2026-12-24T10:00:00", "2026-12-24T10:00:00", "2026-12-24T10:00:00"),  # a T needs a zone
    ("2026-12-24 10:00:00Z", "2026-12-24 10:00:00Z", "2026-12-24 10:00:00Z"),  # a space takes none
    ("2026-12-24T24:00:00Z", "2026-12-24T24:00:00Z", "2026-12-24T24:00:00Z"),
    ("12026-12-24", "12026-12-24", "12026-12-24"),
    # text
    ("Standard_D8s_v5", "Standard_D8s_v5", "Standard_D8s_v5"), ("'0777'", "0777", "0777"), ('"true"', "true", "true"),
    ("!!str 12", "12", "12"), ("!Ref foo", "foo", REFUSED), ("! 12", "12", "12"), ("!!float 1", 1.0, 1.0),
    ("!!int 0x10", 16, 16), ("!!timestamp 2026-12-24", "2026-12-24 00:00:00 +0000 UTC", "2026-12-24"),
    ("!!binary aGk=", "hi", "aGk="),
])
def test_each_scalar_as_yaml_v3_reads_it(text, as_pulumi, as_kubernetes):
    got = pulumi(text)
    assert got == as_pulumi and isinstance(got, type(as_pulumi))
    if as_kubernetes is REFUSED:
        with pytest.raises(LoadError, match="has no meaning in a Kubernetes object"):
            kubernetes(text)
    else:
        assert kubernetes(text) == as_kubernetes


@pytest.mark.parametrize("text, phrase", [
    ("!!int abc", "cannot decode !!str `abc` as a !!int"),
    ("!!bool yes", "cannot decode !!str `yes` as a !!bool"),
    ("!!int 1.5", "cannot decode !!float `1.5` as a !!int"),
    ("!!null x", "cannot decode !!str `x` as a !!null"),
])
def test_a_value_its_tag_does_not_fit_is_refused_as_yaml_v3_fails(text, phrase):
    with pytest.raises(LoadError, match="the Pulumi CLI fails on it") as caught:
        pulumi(text)
    assert phrase in str(caught.value)


@pytest.mark.parametrize("key", ["1", "true", "~", "1.5", "2026-12-24"])
def test_a_map_key_that_is_not_text_is_refused_as_pulumi_refuses_it(key):
    with pytest.raises(LoadError, match=r"is not text; the Pulumi CLI refuses it \("):
        parse_single(f"config:\n  {key}: a\n", "Pulumi.s.yaml", dialect=Dialect.PULUMI)
    assert parse_single(f"config:\n  '{key}': a\n", "Pulumi.s.yaml", dialect=Dialect.PULUMI) == {"config": {key: "a"}}


def test_collections_keep_merge_keys_and_ignore_tags():
    doc = parse_single("base: &b {x: 1}\nm: !!omap\n  <<: *b\n  y: <<\nl: !custom [a]\n", "Pulumi.s.yaml",
                       dialect=Dialect.PULUMI)
    assert doc == {"base": {"x": 1}, "m": {"x": 1, "y": "<<"}, "l": ["a"]}


def test_json_looking_text_is_read_as_yaml_v3_reads_it():
    assert parse_single('{"a": yes, "b": NaN}', "Pulumi.s.yaml", dialect=Dialect.PULUMI) == {"a": "yes", "b": "NaN"}


@pytest.mark.parametrize("value, text", [
    (8.0, "8"), (0.5, "0.5"), (1e20, "100000000000000000000"), (1e21, "1e+21"), (1.5e-7, "1.5e-7"),
    (1e-10, "1e-10"), (-0.0, "-0"), (123456789.0, "123456789"), (2.5e-6, "0.0000025"), (1e-100, "1e-100"),
])
def test_floats_are_written_as_go_encoding_json_writes_them(value, text):
    assert go_float(value) == text


def test_json_is_written_with_sorted_keys():
    assert go_json({"b": [1, 2.0, None, True], "a": "x"}) == '{"a":"x","b":[1,2,null,true]}'


def test_timestamps_outside_the_layouts_are_not_timestamps():
    assert go_timestamp("2026-12-24T10:00:00+2:00") is None
    assert go_timestamp("2026-12-24x") is None
    assert go_timestamp("0000-02-29") == "0000-02-29 00:00:00 +0000 UTC"  # year 0 is a leap year in Go
    assert resolve("2026-12-24", "tag:yaml.org,2002:str") == "2026-12-24"
