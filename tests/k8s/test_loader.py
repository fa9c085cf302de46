"""The bounded loader: what it reads, what it refuses, and that hostile files end quickly.

The crash inputs of issue 11 (500-deep nesting, a device, an alias bomb, an endless
stream) run through the real command in a subprocess whose memory and CPU time are
capped by setrlimit: a runaway would be killed or hit MemoryError and fail the test;
nothing here measures time.
"""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from aks_kueue.k8s.loader import DEFAULT_LIMITS, Limits, LoadError, load_file, loads_json, parse_documents, \
    parse_single, read_text

ROOT = Path(__file__).parents[2]


def parse(text: str, limits: Limits = DEFAULT_LIMITS):
    return parse_documents(text, "f.yaml", limits)


def refused(text: str, limits: Limits = DEFAULT_LIMITS) -> str:
    with pytest.raises(LoadError) as caught:
        parse(text, limits)
    return str(caught.value)


def test_values_are_read_as_kubernetes_reads_them():
    [doc] = parse("a: yes\nb: 0x10\nc: '1'\nd: 2024-01-01T00:00:00Z\ne: ~\nf: 1.5\ng: !!str 3\nh:\n")
    assert doc == {"a": True, "b": 16, "c": "1", "d": "2024-01-01T00:00:00Z", "e": None, "f": 1.5, "g": "3",
                   "h": None}


def test_it_matches_pyyaml_on_ordinary_manifests():
    text = (ROOT / "tests" / "fixtures" / "simulate" / "team-queue.yaml").read_text()
    assert parse(text) == list(yaml.safe_load_all(text))


def test_documents_keep_their_index_and_empty_ones_count():
    assert parse("---\n---\na: 1\n") == [None, {"a": 1}]
    assert "f.yaml document 2:" in refused("a: 1\n---\nb: 2\n---\nc: 1\nc: 2\n")


def test_duplicated_keys_are_refused_in_yaml_and_json():
    message = refused("metadata:\n  name: a\n  name: b\n")
    assert "the key 'name' appears twice" in message and "line 3" in message
    with pytest.raises(LoadError, match="the key 'a' appears twice"):
        loads_json('{"a": 1, "a": 2}', "p.json")


def test_merge_keys_are_honoured_and_are_not_duplicates():
    [doc] = parse("base: &b {x: 1, y: 2}\nother: &o {y: 3, z: 4}\nm:\n  <<: [*b, *o]\n  x: 0\n")
    assert doc["m"] == {"x": 0, "y": 2, "z": 4}  # own keys win, then the first merged map


def test_aliases_give_separate_values():
    [doc] = parse("a: &t {k: [1]}\nb: *t\n")
    doc["a"]["k"].append(2)
    assert doc["b"] == {"k": [1]}


@pytest.mark.parametrize("text, phrase", [
    ("a: !Ref x\n", "the tag '!Ref' has no meaning"),
    ("? [1]\n: 2\n", "a map key must be a plain value"),
    ("a: *nothing\n", "names no anchor"),
    ("a: [\n", "not valid YAML at line 2"),
    ("s: !!set {a, b}\n", "has no meaning"),
])
def test_odd_yaml_gets_a_sentence(text, phrase):
    assert phrase in refused(text)


def test_a_control_character_is_refused_in_one_line():
    reason = refused("\x1f")
    assert "control characters are not allowed" in reason and "\n" not in reason, reason


def test_nesting_is_bounded_at_the_stated_depth():
    limits = Limits(max_depth=5)
    assert parse("[[[[[1]]]]]", limits) == [[[[[[1]]]]]]
    assert "nested deeper than 5 levels" in refused("[[[[[[1]]]]]]", limits)
    assert "nested deeper than 5 levels" in refused("a:\n b:\n  c:\n   d:\n    e:\n     f: 1\n", limits)
    assert "nested deeper than 5 levels" in refused('{"a": [[[[[1]]]]]}', limits)


def test_alias_expansion_is_bounded():
    limits = Limits(max_alias_nodes=100)
    # Ten aliases of an 11-node list add 110 nodes.
    text = "a: &a [1,2,3,4,5,6,7,8,9,10]\nb: [" + ", ".join(["*a"] * 10) + "]\n"
    assert "aliases expand to more than 100 nodes" in refused(text, limits)
    assert len(parse(text)[0]["b"]) == 10


def test_json_is_read_as_json_and_flow_yaml_still_works():
    assert parse('{\n\t"a": [1, 2]\n}') == [{"a": [1, 2]}]  # tabs: JSON, not YAML
    assert parse("{a: 1}") == [{"a": 1}]


def test_single_document_files():
    assert parse_single("", "s.yaml") is None
    with pytest.raises(LoadError, match="a second YAML document"):
        parse_single("a: 1\n---\nb: 2\n", "s.yaml")


def test_files_size_and_devices(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("a: " + "x" * 200 + "\n")
    with pytest.raises(LoadError, match="larger than 100 bytes"):
        read_text(big, Limits(max_bytes=100))
    with pytest.raises(LoadError, match="is a device, not a file"):
        read_text(os.devnull)
    with pytest.raises(LoadError, match="is a directory"):
        read_text(tmp_path)
    with pytest.raises(LoadError, match="no such file"):
        read_text(tmp_path / "none.yaml")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("a: é".encode("latin-1"))
    with pytest.raises(LoadError, match="not UTF-8"):
        read_text(latin)
    bom = tmp_path / "bom.yaml"
    bom.write_bytes("\ufeffa: 1\n".encode())
    assert load_file(bom) == [{"a": 1}]


class EndlessStream(io.RawIOBase):
    """Standard input that never ends; it counts what is asked of it."""

    def __init__(self):
        self.asked = 0

    def readable(self):
        return True

    def readinto(self, buffer):
        self.asked += len(buffer)
        buffer[:] = b"a" * len(buffer)
        return len(buffer)


def test_standard_input_is_read_at_most_one_byte_past_the_limit(monkeypatch):
    endless = EndlessStream()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(endless, buffer_size=16)))
    with pytest.raises(LoadError, match="standard input: is larger than 1,000 bytes"):
        read_text("-", Limits(max_bytes=1000))
    assert endless.asked <= 1000 + 1 + 16


def test_a_10000_workload_backlog_with_aliases_loads():
    template = ("template: &pod {spec: {containers: [{name: c, image: i, resources: {requests: {cpu: '1', memory: "
                "1Gi}, limits: {cpu: '2'}}}], tolerations: [{key: k, operator: Exists, effect: NoSchedule}], "
                "nodeSelector: {pool: gpu}}}\n")
    workloads = "".join(f"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {{name: w{i}, "
                        f"namespace: ns}}\nspec: {{queueName: q, podSets: [{{name: main, count: 2, template: "
                        f"{{spec: {{containers: []}}}}}}]}}\n" for i in range(10_000))
    documents = parse(template + workloads)
    assert len(documents) == 10_001
    # The same backlog with each pod template written as an alias of one anchor.
    document = ("---\nt: &pod {spec: {containers: [{name: c, resources: {requests: {cpu: '1'}}}]}}\n"
                "w: {podSets: [{name: main, template: *pod}, {name: b, template: *pod}]}\n")
    aliased = document * 10_000
    assert len(parse(aliased)) == 10_000


# The crash inputs of issue 11, through the real command, with memory and CPU capped ----------

def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (768 * 1024 * 1024,) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))


def run_capped(args: list[str], stdin=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aks_kueue.cli", *args], cwd=ROOT, preexec_fn=_limited,
                          capture_output=True, text=True, stdin=stdin)


def alias_bomb() -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"  # 9**10: about 3.5 billion nodes written out


@pytest.mark.parametrize("name, content, phrase", [
    ("bomb.yaml", alias_bomb(), "YAML aliases expand to more than 1,000,000 nodes"),
    ("deep.yaml", "a:\n" + "".join("  " * (i + 1) + "a:\n" for i in range(500)), "nested deeper than 100 levels"),
    ("deep.json", "[" * 500 + "]" * 500, "nested deeper than 100 levels"),
])
@pytest.mark.parametrize("command", ["validate", "simulate"])
def test_hostile_manifests_exit_2_with_a_sentence(tmp_path, name, content, phrase, command):
    path = tmp_path / name
    path.write_text(content)
    result = run_capped([command, str(path), "--json"])
    assert result.returncode == 2, result.stderr
    assert phrase in result.stderr and "Traceback" not in result.stderr and "internal error" not in result.stderr
    assert phrase in json.loads(result.stdout)["errors"][0]["message"]


def test_a_device_path_exits_2():
    result = run_capped(["validate", "/dev/zero"])
    assert result.returncode == 2 and "/dev/zero: is a device, not a file" in result.stderr


def test_an_endless_standard_input_exits_2():
    with subprocess.Popen(["yes", "a: b"], stdout=subprocess.PIPE) as endless:
        result = run_capped(["validate", "-"], stdin=endless.stdout)
        endless.kill()
    assert result.returncode == 2 and "standard input: is larger than 64 MiB" in result.stderr


def test_a_deeply_nested_stack_file_exits_2(tmp_path):
    stack = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
    nested = "".join("  " * (i + 3) + "a:\n" for i in range(500))
    path = tmp_path / "Pulumi.deep.yaml"
    path.write_text(stack.replace("\n  aks-kueue:kueue:\n", "\n  aks-kueue:kueue:\n    values:\n      x:\n" + nested, 1))
    result = run_capped(["preview", "--config", str(path)])
    assert result.returncode == 2, result.stderr
    assert f"{path}: nested deeper than 100 levels" in result.stderr and "Traceback" not in result.stderr


def test_a_duplicated_key_in_a_stack_file_exits_2(tmp_path):
    stack = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()
    path = tmp_path / "Pulumi.twice.yaml"
    path.write_text(stack.replace("config:\n", "config:\n  aks-kueue:resourceGroupName: rg-a\n", 1))
    result = run_capped(["preview", "--config", str(path)])
    assert result.returncode == 2
    assert "the key 'aks-kueue:resourceGroupName' appears twice" in result.stderr
