"""Generated invalid stack configs: each is rejected with key-path messages, never a traceback."""

from __future__ import annotations

import copy
import json
import re

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from typer.testing import CliRunner

from aks_kueue.cli import app
from tests.conftest import refusals, stack_doc

# Free-form maps where any key is legal, so adding one proves nothing.
_OPEN_MAPS = {"labels", "values", "featureGates", "requests", "nodeSelector", "matchLabels"}
_LINE = re.compile(r"^(aks-kueue|azure-native):[\w.\[\]-]*: \S.*$")
# Never a number, a boolean word or an enum value of the contract.
_JUNK_TEXT = st.from_regex(r"\A[a-z]{1,4}[0-9]{1,3}[A-Z]{1,3}\Z")


def _paths(value, path=()):
    if isinstance(value, dict):
        yield path, value
        for key, child in value.items():
            if key not in ("values",):
                yield from _paths(child, path + (key,))
    elif isinstance(value, list):
        yield path, value
        for i, child in enumerate(value):
            yield from _paths(child, path + (i,))
    else:
        yield path, value


def _wrong_type(original):
    if isinstance(original, bool) or isinstance(original, (int, float)):
        return st.one_of(_JUNK_TEXT, st.lists(st.integers(), min_size=1, max_size=2), st.just({"x": 1}))
    if isinstance(original, str):
        return st.one_of(st.lists(_JUNK_TEXT, min_size=1, max_size=2), st.just({"x": "y"}))
    if isinstance(original, list):
        return st.one_of(st.just({"x": 1}), st.integers(min_value=2), _JUNK_TEXT)
    return st.one_of(st.integers(min_value=2), st.lists(st.integers(), min_size=1, max_size=2), _JUNK_TEXT)


@st.composite
def invalid_configs(draw):
    config = copy.deepcopy(stack_doc(draw(st.sampled_from(["dev", "prod"]))))
    candidates = [(p, v) for p, v in _paths(config) if p and p[0].startswith("aks-kueue:")]
    path, value = draw(st.sampled_from(candidates))
    parent = config
    for part in path[:-1]:
        parent = parent[part]
    if isinstance(value, dict) and path[-1] not in _OPEN_MAPS and draw(st.booleans()):
        value[draw(_JUNK_TEXT)] = draw(st.one_of(st.integers(), _JUNK_TEXT))
    else:
        parent[path[-1]] = draw(_wrong_type(value))
    return config


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(invalid_configs())
def test_invalid_configs_are_reported_by_key_path(config):
    problems = refusals(config)
    assert problems, f"accepted an invalid config: {config}"
    for problem in problems:
        assert _LINE.match(problem), problem


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(invalid_configs())
def test_the_cli_never_shows_a_traceback(tmp_path_factory, config):
    path = tmp_path_factory.mktemp("stack") / "Pulumi.fuzz.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    result = CliRunner().invoke(app, ["preview", "--config", str(path), "--json"])
    assert result.exit_code == 2 and json.loads(result.stdout)["result"] == "invalid"
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    # Each line names the stack file, then the key: `FILE: aks-kueue:key: reason`.
    assert all(line.startswith(f"{path}: ") and _LINE.match(line.removeprefix(f"{path}: "))
               for line in result.stderr.splitlines()[1:]), result.stderr
