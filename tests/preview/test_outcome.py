"""One offline preview reads the model from the resources and runs the judge once."""

from __future__ import annotations

from aks_kueue.cli.common import load_stack_config
from aks_kueue.policies import base
from aks_kueue.preview import pack
from aks_kueue.preview.outcome import preview


def _counted(monkeypatch, module, name):
    calls = []
    original = getattr(module, name)

    def counting(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


def test_the_pack_and_the_preview_share_one_reading_and_one_judgement(monkeypatch):
    base._last.update(resources=None, key=None, reading=None, judgements={})  # nothing remembered from another test
    read = _counted(monkeypatch, base, "from_resources")
    judged = _counted(monkeypatch, base, "judge")
    fingerprints = _counted(monkeypatch, base, "fingerprint")
    views = _counted(monkeypatch, pack, "stack_view")
    config, root = load_stack_config("dev", None)
    outcome = preview(config, root)
    assert outcome.judgement is not None and outcome.violations
    assert read == ["from_resources"] and judged == ["judge"]
    # The stack policies and the preview read the same decoded values: found by identity, never fingerprinted.
    assert fingerprints == []
    assert len(views) == 1  # the preview's own view; the stack policies' views are the servicer's
