"""Random day-2 edits of prod against its previous outputs: what replaces or deletes is refused unless
acknowledged.

The previous outputs are what the real program exports after `pulumi up` of prod (under mocks),
once with protection on and once with `protect: false`. Each example draws one to three edits
from `edits.EDITS`, an acknowledgement (none, some or all of what they destroy, plus stray
entries) and this update's `protect`; the guard's verdict must be the promise of
`edits.expected_refused`. Two examples also go through `aks-kueue preview --previous-outputs` for
the exit code. `python benchmarks/day2_guard.py` runs a larger sample and prints the figures.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from aks_kueue.cli import app
from tests.conftest import edited, stack_doc
from tests.day2.edits import EDITS, ENTRIES, acknowledgement, apply_edits, try_one
from tests.test_day2_program import deployed

EXAMPLES = 200


@pytest.fixture(scope="module")
def states():
    protected = deployed(stack_doc("prod"))
    unprotected = deployed(edited("prod", lambda c: c.update({"aks-kueue:protect": False})), previous=protected)
    return {"protected": protected, "unprotected": unprotected}


def draws():
    edits = st.lists(st.sampled_from(EDITS), min_size=1, max_size=3, unique_by=lambda e: e.name)
    return st.tuples(edits, st.sampled_from(["none", "some", "all"]), st.lists(st.sampled_from(ENTRIES), max_size=2),
                     st.sampled_from([None, True, False]), st.sampled_from(["protected", "unprotected"]),
                     st.randoms(use_true_random=False))


def test_random_day2_edits_of_prod_are_refused_unless_acknowledged(states):
    tally: Counter = Counter()
    wrong: list = []

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(draws())
    def one(drawn):
        edits, how, stray, protect, state, rnd = drawn
        destroyed = set().union(*(e.destroys for e in edits))
        try_one(tuple(edits), acknowledgement(destroyed, how, stray, rnd), protect, states[state], tally, wrong)

    one()
    print(f"\nday-2 property: {tally['tried']} edits of prod tried ({tally['destructive']} destructive), "
          f"{tally['refused']} refused, {tally['accepted']} accepted, {tally['invalid']} not valid settings")
    assert wrong == []
    # The sample exercises both sides of the promise.
    assert tally["tried"] >= EXAMPLES // 2 and tally["refused"] >= 10 and tally["accepted"] >= 10


runner = CliRunner()


@pytest.mark.parametrize("names,allow,state,code", [
    (("cpu maxPods", "remove team-b queue"), (), "protected", 1),
    (("cpu maxPods", "remove team-b queue", "cpu maxCount"),
     ("nodePools.cpu", "queues.ClusterQueue/team-b", "queues.LocalQueue/team-b/default",
      "queues.AdmissionCheck/team-b-provisioning"), "unprotected", 0),
])
def test_the_preview_exits_1_on_a_refusal_and_0_once_acknowledged(names, allow, state, code, states, tmp_path):
    edits = tuple(e for e in EDITS if e.name in names)
    config = apply_edits(edits, allow, None)
    stack = tmp_path / "Pulumi.prod.yaml"
    stack.write_text(yaml.safe_dump({"config": config}))
    previous = tmp_path / "outputs.json"
    previous.write_text(json.dumps(states[state]))
    result = runner.invoke(app, ["preview", "--config", str(stack), "--previous-outputs", str(previous), "--json"])
    assert result.exit_code == code, result.stderr[-2000:]
    assert ("the day-2 guard refused this update" in result.stderr) is (code == 1)
