"""Stack files read as the Pulumi CLI reads them: yaml.v3, then Pulumi's config layer (issue 17).

Each case is the reported one first: what the program is handed, and what it says about it.
Kubernetes manifests keep Kubernetes' YAML 1.1 reading (tests/k8s/test_loader.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from aks_kueue.k8s.loader import STACK_FILE_LIMITS, LoadError
from aks_kueue.preview.stackfile import load_stack
from aks_kueue.settings import SettingsError, parse_settings
from tests.conftest import ROOT

DEV = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()


def stack(tmp_path, text: str, name: str = "case"):
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(text)
    return path


def with_max_pods(value: str) -> str:
    """dev with its first pool's maxPods written as given (unquoted)."""
    anchor = "      maxPods: 110\n"
    assert anchor in DEV
    return DEV.replace(anchor, f"      maxPods: {value}\n", 1)


def handed(tmp_path, text: str) -> dict[str, str]:
    return load_stack(stack(tmp_path, text), "case", ROOT).config


def problems(config: dict[str, str]) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        parse_settings(config)
    return [str(p) for p in caught.value.problems]


def test_max_pods_1_50_is_the_text_it_is_for_pulumi_not_110(tmp_path):
    config = handed(tmp_path, with_max_pods("1:50"))
    assert json.loads(config["aks-kueue:nodePools"])[0]["maxPods"] == "1:50"
    assert any(p.startswith("aks-kueue:nodePools[0].maxPods: '1:50' is not valid") for p in problems(config))


def test_gpu_driver_no_stays_the_text_no(tmp_path):
    text = DEV.replace("      gpuDriver: Install\n", "      gpuDriver: No\n", 1)
    assert text != DEV
    config = handed(tmp_path, text)
    pools = json.loads(config["aks-kueue:nodePools"])
    assert [p.get("gpuDriver") for p in pools if "gpuDriver" in p] == ["No"]
    found = [p for p in problems(config) if ".gpuDriver" in p]
    assert found and "'No'" in found[0] and "False" not in found[0]


@pytest.mark.parametrize("written, number", [("0777", 511), ("1_000", 1000), ("0x6E", 110), ("0o156", 110),
                                             ("0b1101110", 110), ("+110", 110)])
def test_integers_as_go_reads_them(tmp_path, written, number):
    config = handed(tmp_path, with_max_pods(written))
    assert json.loads(config["aks-kueue:nodePools"])[0]["maxPods"] == number
    if number == 110:
        parse_settings(config)  # a pool of 110 pods: valid


@pytest.mark.parametrize("written, given", [("yes", "yes"), ("No", "No"), ("on", "on"), ("y", "y"),
                                            ("true", "true"), ("True", "true"), ("TRUE", "true"), ("False", "false")])
def test_only_true_and_false_are_booleans(tmp_path, written, given):
    """What the program is handed; the settings then read `yes` for a boolean key as pydantic does,
    the same offline as under the Pulumi CLI, which hands over the same text."""
    config = handed(tmp_path, DEV.replace("config:\n", f"config:\n  aks-kueue:protect: {written}\n", 1))
    assert config["aks-kueue:protect"] == given


def test_an_unquoted_maintenance_date_is_named_and_quotes_are_asked_for(tmp_path):
    window = ("    maintenance:\n      autoUpgrade:\n"
              "        schedule: {weekly: {intervalWeeks: 1, dayOfWeek: Saturday}}\n"
              "        durationHours: 8\n        startTime: \"00:00\"\n        utcOffset: \"+00:00\"\n"
              "        startDate: 2026-12-24\n")
    anchor = "  aks-kueue:cluster:\n"
    assert anchor in DEV
    text = DEV.replace(anchor, anchor + window, 1)
    config = handed(tmp_path, text)
    assert json.loads(config["aks-kueue:cluster"])["maintenance"]["autoUpgrade"]["startDate"] == \
        "2026-12-24 00:00:00 +0000 UTC"
    [problem] = [p for p in problems(config) if "startDate" in p]
    assert "unquoted date" in problem and 'quote it: "2026-12-24"' in problem
    parse_settings(handed(tmp_path, text.replace("startDate: 2026-12-24", 'startDate: "2026-12-24"')))


@pytest.mark.parametrize("written", [".inf", "-.Inf", ".NAN", "[1, .nan]"])
def test_infinity_and_nan_are_refused_as_the_pulumi_cli_fails_on_them(tmp_path, written):
    with pytest.raises(LoadError) as caught:
        handed(tmp_path, with_max_pods(written))
    message = str(caught.value)
    assert "aks-kueue:nodePools[0].maxPods" in message and "json: unsupported value" in message
    assert caught.value.key.startswith("aks-kueue:nodePools[0].maxPods")
    assert "Traceback" not in message


def test_config_values_are_handed_over_as_go_writes_them(tmp_path):
    text = DEV.replace("config:\n", "config:\n  aks-kueue:note: {b: 1.0, a: [2.5e-7, 18446744073709551616]}\n"
                                    "  aks-kueue:big: 18446744073709551615\n", 1)
    config = handed(tmp_path, text)
    assert config["aks-kueue:note"] == '{"a":[2.5e-7,18446744073709552000],"b":1}'
    assert config["aks-kueue:big"] == "18446744073709551615"


def test_a_secure_value_is_a_map_with_only_text_under_secure(tmp_path):
    text = DEV.replace("config:\n", "config:\n  aks-kueue:a: {secure: 12}\n  aks-kueue:b: {secure: v1:AAAA}\n", 1)
    found = load_stack(stack(tmp_path, text), "case", ROOT)
    assert found.config["aks-kueue:a"] == '{"secure":12}' and found.config["aks-kueue:b"] == "[secret]"
    assert found.secret_keys == ["aks-kueue:b"]


# ---- regular files only, and a size cap -----------------------------------------------------

def _preview(path, timeout: int = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aks_kueue.cli", "preview", "--config", str(path), "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_a_named_pipe_is_refused_at_once(tmp_path):
    fifo = tmp_path / "Pulumi.pipe.yaml"
    os.mkfifo(fifo)
    with pytest.raises(LoadError, match=r"is a named pipe \(FIFO\), not a regular file"):
        load_stack(fifo, "pipe", ROOT)
    result = _preview(fifo)  # with no writer, opening it for reading would wait forever
    assert result.returncode == 2 and "named pipe (FIFO), not a regular file" in json.loads(result.stdout)["errors"][0]["message"]


def test_a_device_is_refused(tmp_path):
    with pytest.raises(LoadError, match="is a device, not a regular file"):
        load_stack(os.devnull, "null", ROOT)


def test_a_stack_file_past_the_cap_is_refused_with_a_sentence(tmp_path):
    items = ", ".join(f"x{i}" for i in range(STACK_FILE_LIMITS.max_bytes // 7))
    path = stack(tmp_path, DEV + f"  aks-kueue:allowReplacement: [{items}]\n", "big")
    assert path.stat().st_size > STACK_FILE_LIMITS.max_bytes
    with pytest.raises(LoadError) as caught:
        load_stack(path, "big", ROOT)
    assert "is larger than 1 MiB, the most this program reads from a stack or project file" in str(caught.value)
    assert "queueManifests" in str(caught.value)


def test_a_named_pipe_given_to_validate_reads_as_empty_instead_of_waiting(tmp_path):
    fifo = tmp_path / "queues.yaml"
    os.mkfifo(fifo)
    result = subprocess.run([sys.executable, "-m", "aks_kueue.cli", "validate", str(fifo), "--json"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode in (0, 2) and "Traceback" not in result.stderr
