"""The pack's policies as users configure them: names, order, enforcement levels, descriptions
and config schemas, pinned to the list the pack had before its policies were generated from the
rule registry (`data/policies.json`). A policy config naming any of these must keep working."""

from __future__ import annotations

import json
from pathlib import Path

from aks_kueue.policies import POLICIES

PINNED = json.loads((Path(__file__).parent / "data" / "policies.json").read_text())


def _listed(policy) -> dict:
    return {"name": policy.name, "level": policy.enforcement_level.value, "description": policy.description,
            "kind": type(policy).__name__,
            "config": dict(policy.config_schema.properties) if policy.config_schema else None}


def test_the_policies_are_todays_names_levels_descriptions_and_schemas():
    assert [_listed(p) for p in POLICIES] == PINNED


def test_the_pinned_list_is_the_whole_pack():
    assert len(PINNED) == 30 and len({p["name"] for p in PINNED}) == 30
