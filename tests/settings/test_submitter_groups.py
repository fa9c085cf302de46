"""`queues.localQueues[].submitterGroups`: Entra group object IDs, each named once per LocalQueue, and the
judge's word on placeholders."""

from __future__ import annotations

from datetime import date

import pytest

from aks_kueue.judge import judge
from aks_kueue.judge.stack import is_placeholder_id
from aks_kueue.settings import SettingsError, parse_settings
from tests.conftest import edited, flat, model_of

GROUP = "1c7e0b0d-5b0e-4c55-9a57-0f2f1d3c4b5a"


def groups(value):
    def edit(c):
        c["aks-kueue:queues"]["localQueues"][0]["submitterGroups"] = value
    return edited("dev", edit)


def problems(config) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        parse_settings(flat(config))
    return [str(p) for p in caught.value.problems]


def test_groups_parse():
    settings = parse_settings(flat(groups([GROUP, GROUP.replace("1c7e", "2d8f")])))
    assert settings.queues.local_queues[0].submitter_groups == [GROUP, GROUP.replace("1c7e", "2d8f")]


def test_every_bad_entry_is_reported_with_its_key_path():
    found = problems(groups(["team-a-devs", GROUP, GROUP.upper(), "12345678-1234-1234-1234-12345678"]))
    assert found == [
        "aks-kueue:queues.localQueues[0].submitterGroups[0]: 'team-a-devs' is not an Entra group object ID; use the "
        "group's object ID, a GUID such as 3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f809a1b (`az ad group show --group <name> "
        "--query id -o tsv` prints it)",
        f"aks-kueue:queues.localQueues[0].submitterGroups[2]: {GROUP.upper()} is already listed as "
        "submitterGroups[1]; list each group once",
        "aks-kueue:queues.localQueues[0].submitterGroups[3]: '12345678-1234-1234-1234-12345678' is not an Entra group "
        "object ID; use the group's object ID, a GUID such as 3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f809a1b (`az ad group show "
        "--group <name> --query id -o tsv` prints it)"]


@pytest.mark.parametrize("value,expected", [
    ("admins", "aks-kueue:queues.localQueues[0].submitterGroups: 'admins' is not valid: expected a valid list"),
    ([42], "aks-kueue:queues.localQueues[0].submitterGroups[0]: 42 is not valid: expected a valid string"),
])
def test_wrong_shapes_name_the_key(value, expected):
    assert problems(groups(value)) == [expected]


def test_a_misspelt_key_gets_a_suggestion():
    def edit(c):
        c["aks-kueue:queues"]["localQueues"][0]["submitterGroup"] = [GROUP]
    assert problems(edited("dev", edit)) == [
        "aks-kueue:queues.localQueues[0].submitterGroup: unknown key; did you mean 'submitterGroups'?"]


@pytest.mark.parametrize("object_id,placeholder", [
    ("00000000-0000-0000-0000-000000000000", True),
    ("00000000-0000-0000-0000-00000000000a", True),
    ("00000000-0000-0000-0000-00000000ffff", True),
    ("00000000-0000-0000-0000-00000001ffff", False),
    (GROUP, False),
])
def test_placeholder_ids(object_id, placeholder):
    assert is_placeholder_id(object_id) is placeholder


def test_the_judge_warns_about_placeholder_groups_and_not_real_ones():
    def kinds(config):
        return [(f.object, f.key) for f in judge(model_of(config), today=date(2026, 9, 1)).findings
                if f.kind == "placeholder-value" and f.object.startswith("submitter group")]
    assert kinds(groups(["00000000-0000-0000-0000-00000000000a", GROUP])) == [
        ("submitter group 00000000-0000-0000-0000-00000000000a", "aks-kueue:queues.localQueues[0].submitterGroups[0]")]
    assert kinds(groups([GROUP])) == []
