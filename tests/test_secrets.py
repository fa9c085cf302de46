"""What `aks_kueue.secrets` takes out of text, and what it leaves (names, vocabulary, indexes)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from aks_kueue.judge.finding import ERROR, Finding
from aks_kueue.secrets import SECRET_TEXT, Secrets
from aks_kueue.settings import SettingsError, parse_settings
from aks_kueue.settings.vocabulary import config_secrets, vocabulary
from tests.conftest import flat, stack_doc

POOLS = [{"name": "gpu", "vmSize": "Standard_NC8as_T4_v3", "minCount": 3, "maxCount": 1, "maxPods": 110,
          "taints": ["sku=s3cr3t:NoSchedule"], "labels": {"team": "alpha-team"}, "gpuDriver": "Install"}]
CONFIG = {"aks-kueue:nodePools": json.dumps(POOLS), "azure-native:location": "westeurope",
          "aks-kueue:queues": json.dumps({"resourceFlavors": [{"name": "gpu", "nodePool": "gpu"}]})}


@pytest.fixture(scope="module")
def secrets() -> Secrets:
    return config_secrets(CONFIG, ["nodePools", "azure-native:location"])


@pytest.mark.parametrize("text, expected", [
    ("pool gpu of Standard_NC8as_T4_v3", f"pool gpu of {SECRET_TEXT}"),
    ("STANDARD_NC8AS_T4_V3 in WestEurope", f"{SECRET_TEXT} in {SECRET_TEXT}"),
    ("minCount 3 is above maxCount 1.", f"minCount {SECRET_TEXT} is above maxCount {SECRET_TEXT}."),
    ("nodePools[1].maxCount and nodePools[3]", "nodePools[1].maxCount and nodePools[3]"),
    ("Kubernetes 1.35, 3.5 cores, x-1, 110-a", "Kubernetes 1.35, 3.5 cores, x-1, 110-a"),
    ("taint sku=s3cr3t:NoSchedule or {key: sku, value: s3cr3t}",
     f"taint {SECRET_TEXT} or {{key: sku, value: {SECRET_TEXT}}}"),
    ("label team=alpha-team, not alpha-team-b", f"label team={SECRET_TEXT}, not alpha-team-b"),
    ("nvidia.com/gpu, flavor gpu, gpuDriver Install, NoSchedule", "nvidia.com/gpu, flavor gpu, gpuDriver Install, "
                                                                  "NoSchedule"),
])
def test_secret_values_are_taken_out_as_whole_words(secrets, text, expected):
    assert secrets.text(text) == expected


def test_a_value_cut_short_replaces_the_whole_message(secrets):
    message = secrets.text("'Standard_NC8as...' is not a VM size")
    assert "Standard_NC8as" not in message and "nodePools" in message and "not shown" in message
    assert secrets.text("'Standard_D...' is not a VM size") == "'Standard_D...' is not a VM size"


def test_names_vocabulary_and_booleans_are_not_secret(secrets):
    assert {"gpu", "Install", "NoSchedule", "110", "westeurope"} & set(secrets.values) == {"110", "westeurope"}
    assert "cpu" in vocabulary() and "BestEffortFIFO" in vocabulary() and "nodePools" in vocabulary()
    assert config_secrets({"aks-kueue:protect": "true"}, ["protect"]).values == ()
    assert not config_secrets(CONFIG, [])


def test_values_inside_dataclasses_lists_and_maps_are_taken_out(secrets):
    finding = Finding(kind="k", severity=ERROR, object="node pool gpu", key="aks-kueue:nodePools[0]",
                      message="Standard_NC8as_T4_v3 "
                      "is small",
                      fix="use a larger size than Standard_NC8as_T4_v3",
                      numbers={"vmSize": "Standard_NC8as_T4_v3", "count": 3})
    [hidden] = secrets.value([finding])
    assert hidden.severity is ERROR and hidden.object == "node pool gpu"
    assert SECRET_TEXT in hidden.message and SECRET_TEXT in hidden.fix and hidden.numbers["vmSize"] == SECRET_TEXT
    assert hidden.numbers["count"] == 3  # numbers as numbers are figures

    @dataclass(frozen=True)
    class Row:
        text: str

    assert secrets.value({"a": (Row("westeurope"),)}) == {"a": (Row(SECRET_TEXT),)}


def test_holds_finds_a_value_inside_a_longer_word(secrets):
    assert secrets.holds("MSProm-westeurope-aks") and not secrets.text("MSProm-westeurope-aks") != \
        "MSProm-westeurope-aks"
    assert not secrets.holds("eastus")


@pytest.mark.parametrize("edit, path", [
    (lambda c: c["aks-kueue:nodePools"][0].update(vmSize="Standard_Planted_D9"), "aks-kueue:nodePools[0].vmSize"),
    (lambda c: c["aks-kueue:nodePools"][0].update(maxCount="plantedcount"), "aks-kueue:nodePools[0].maxCount"),
    (lambda c: c["aks-kueue:nodePools"][0].update(gpuDriver="PlantedDriver"), "aks-kueue:nodePools[0].gpuDriver"),
    (lambda c: c["aks-kueue:nodePools"][0].update(osDiskType="P" * 80), "aks-kueue:nodePools[0].osDiskType"),
])
def test_a_settings_error_about_a_secret_value_names_the_key_and_never_the_value(edit, path):
    config = stack_doc("prod")
    edit(config)
    hidden = config_secrets(flat(config), ["nodePools"])
    with pytest.raises(SettingsError) as caught:
        parse_settings(flat(config), secrets=hidden)
    [problem] = [p for p in caught.value.problems if p.path == path]
    planted = json.dumps(config["aks-kueue:nodePools"][0])
    assert problem.message and all(v not in problem.message for v in hidden.values if len(v) > 3)
    assert "Planted" not in problem.message and "planted" not in problem.message and "PPPP" not in problem.message
    # Without the key secret, the same problem shows the value.
    with pytest.raises(SettingsError) as plain:
        parse_settings(flat(config))
    shown = next(p.message for p in plain.value.problems if p.path == path)
    assert any(part in shown for part in ("Planted", "planted", "PPPP")) and planted
