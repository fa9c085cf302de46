"""The model and the judgement are remembered by content; inside one AnalyzeStack call of the
offline preview the content is fingerprinted once."""

from __future__ import annotations

from aks_kueue.policies import base
from tests.conftest import run_stack
from tests.policies.args import policy_resources


def _counting(monkeypatch, name):
    calls = []
    original = getattr(base, name)

    def counted(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(base, name, counted)
    return calls


def test_equal_content_is_judged_once_and_other_content_again(monkeypatch):
    base._last.update(key=None, reading=None, judgements={})
    read = _counting(monkeypatch, "from_resources")
    run = run_stack("dev")
    first = base.read_and_judge(policy_resources(run))
    assert base.read_and_judge(policy_resources(run)) == first  # fresh objects, equal content
    assert read == ["from_resources"]
    other = policy_resources(run)[:-1]
    base.read_and_judge(other)
    assert len(read) == 2


def test_inside_one_analysis_the_content_is_fingerprinted_once(monkeypatch):
    base._last.update(key=None, reading=None, judgements={})
    fingerprints = _counting(monkeypatch, "fingerprint")
    run = run_stack("dev")
    with base.same_resources():
        judged = [base.read_and_judge(policy_resources(run)) for _ in range(3)]
    assert fingerprints == ["fingerprint"] and judged[0] == judged[1] == judged[2]
    base.read_and_judge(policy_resources(run))  # outside: every call fingerprints what it is handed
    assert len(fingerprints) == 2
    assert base._analysis == {"open": False, "key": None}


def test_content_pickle_refuses_is_fingerprinted_by_its_text():
    class Row:
        def __init__(self, props):
            self.urn, self.resource_type, self.props, self.dependencies = "urn:a", "t", props, []

    unpicklable = {"spec": {"f": lambda: None}}
    first = base.fingerprint([Row(unpicklable)])
    assert first.startswith(b"r") and first == base.fingerprint([Row(unpicklable)])
    assert base.fingerprint([Row({"spec": {"f": 1}})]).startswith(b"p")
