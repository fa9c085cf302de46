"""The pack's one memo: the model and the judgement of the last resources a policy was handed,
found again by identity (the offline preview hands every policy the same decoded values) or by
content (the Pulumi engine's servicer decodes afresh for each policy)."""

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


def _forget():
    base._last.update(resources=None, key=None, reading=None, judgements={})


def test_equal_content_is_judged_once_and_other_content_again(monkeypatch):
    _forget()
    read = _counting(monkeypatch, "from_resources")
    run = run_stack("dev")
    first = base.read_and_judge(policy_resources(run))
    assert base.read_and_judge(policy_resources(run)) == first  # fresh objects, equal content
    assert read == ["from_resources"]
    other = policy_resources(run)[:-1]
    base.read_and_judge(other)
    assert len(read) == 2


def test_the_very_values_handed_again_are_not_fingerprinted(monkeypatch):
    _forget()
    fingerprints = _counting(monkeypatch, "fingerprint")
    read = _counting(monkeypatch, "from_resources")
    resources = policy_resources(run_stack("dev"))
    judged = [base.read_and_judge(resources) for _ in range(3)]
    assert fingerprints == [] and read == ["from_resources"] and judged[0] == judged[1] == judged[2]
    # Other objects: their content and the last resources' are fingerprinted, and found equal.
    base.read_and_judge(policy_resources(run_stack("dev")))
    assert len(fingerprints) == 2 and len(read) == 1
    base.read_and_judge(policy_resources(run_stack("dev")))  # the last key is remembered
    assert len(fingerprints) == 3 and len(read) == 1


def test_each_policy_reports_only_its_own_findings_and_each_once():
    from aks_kueue.judge.rules import policy_for
    from aks_kueue.policies import POLICIES
    from tests.policies.args import gpu_queue_stack, stack_violations

    _forget()
    resources = gpu_queue_stack(gpu_quota="3")
    reported = {p.name: [m for m, _ in stack_violations(p, resources)] for p in POLICIES}
    _, judgement = base.read_and_judge(resources)
    assert judgement.findings
    for finding in judgement.findings:
        owners = [name for name, messages in reported.items() if any(str(finding) in m for m in messages)]
        assert owners == [policy_for(finding)], finding


def test_content_pickle_refuses_is_fingerprinted_by_its_text():
    class Row:
        def __init__(self, props):
            self.urn, self.resource_type, self.props, self.dependencies = "urn:a", "t", props, []

    unpicklable = {"spec": {"f": lambda: None}}
    first = base.fingerprint([Row(unpicklable)])
    assert first.startswith(b"r") and first == base.fingerprint([Row(unpicklable)])
    assert base.fingerprint([Row({"spec": {"f": 1}})]).startswith(b"p")
