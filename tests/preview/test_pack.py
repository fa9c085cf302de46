"""The offline pack run decodes each distinct Struct once and gives the verdicts the servicer
gives when it decodes afresh for every policy."""

from __future__ import annotations

import contextlib

import pulumi_policy.policy as servicer_module
import pytest
from google.protobuf import json_format

from aks_kueue.policies import base
from aks_kueue.preview import pack
from aks_kueue.preview.run import run_program
from aks_kueue.preview.stackfile import load_stack
from tests.conftest import ROOT, run_stack

ERROR_FIXTURES = ["quota-above-capacity", "taint-not-tolerated", "workload-not-admitted"]


def _fixture_run(name):
    path = ROOT / "tests" / "fixtures" / "feasibility" / f"{name}.yaml"
    return run_program(load_stack(path, name, ROOT), ROOT, True)


@contextlib.contextmanager
def _afresh():
    """What the servicer does without `decoded_once`: every policy decodes its own copy, and builds
    each resource's options and provider again."""
    yield pack.Decoding(lambda struct: servicer_module.unknown_checking_proxy(
        servicer_module.deserialize_properties(json_format.MessageToDict(struct))), lambda step, function: function)


@pytest.mark.parametrize("run", [lambda: run_stack("prod"), *[lambda n=n: _fixture_run(n) for n in ERROR_FIXTURES]])
def test_decoding_once_changes_no_verdict(monkeypatch, run):
    recorded = run()
    base._last.update(resources=None, key=None, reading=None, judgements={})
    once = pack.evaluate(recorded)
    monkeypatch.setattr(pack, "decoded_once", _afresh)
    # ... and the request is the protobuf message the engine sends, read field by field by each policy.
    monkeypatch.setattr(pack, "_StackRequest", lambda resources: pack.analyzer_pb2.AnalyzeStackRequest(
        resources=resources))
    base._last.update(resources=None, key=None, reading=None, judgements={})
    assert pack.evaluate(recorded) == once
    assert once  # the fixtures are rejected and prod has its advisory warnings: something to compare


def test_each_distinct_struct_is_decoded_once(monkeypatch):
    recorded = run_stack("prod")
    calls = []
    original = json_format.MessageToDict

    def counting(message, *args, **kwargs):
        calls.append(message.SerializeToString(deterministic=True))
        return original(message, *args, **kwargs)

    monkeypatch.setattr(json_format, "MessageToDict", counting)
    sent = pack.analyzer_resources(recorded)
    distinct = {r.properties.SerializeToString(deterministic=True) for r in sent}
    distinct |= {r.provider.properties.SerializeToString(deterministic=True) for r in sent if r.HasField("provider")}
    with pack.decoded_once():
        stack_policies = len([p for p in pack.POLICIES if hasattr(p, "validate") and p.validate])
        servicer = pack._PolicyAnalyzerServicer("t", "0", pack.POLICIES, pack.EnforcementLevel.ADVISORY)
        servicer.AnalyzeStack(pack.analyzer_pb2.AnalyzeStackRequest(resources=sent), None)
    assert stack_policies > 1 and len(sent) > 10
    assert sorted(calls) == sorted(distinct)  # each once, however many policies read it


def test_the_servicer_module_is_put_back_even_after_an_error():
    names = (servicer_module.json_format, servicer_module.deserialize_properties,
             servicer_module.unknown_checking_proxy)
    with pytest.raises(RuntimeError), pack.decoded_once():
        assert servicer_module.json_format is not names[0]
        raise RuntimeError("a policy crashed")
    assert (servicer_module.json_format, servicer_module.deserialize_properties,
            servicer_module.unknown_checking_proxy) == names
