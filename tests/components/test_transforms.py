"""The program's stack transform goes through Pulumi's current API, and the offline run's monitor runs
it as the engine would (the SDK's mock monitor records transforms without running them)."""

from __future__ import annotations

import re

import pulumi
import pytest

from aks_kueue.preview.mocks import OfflineMocks
from aks_kueue.preview.recorder import RecordingMonitor
from tests.conftest import ROOT

DEPRECATED = re.compile(r"register_stack_transformation|ResourceTransformation(Args|Result)\b|transformations=")


def test_the_program_uses_the_current_transform_api():
    sources = [ROOT / "__main__.py", *sorted((ROOT / "components").rglob("*.py"))]
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sources
             for n, line in enumerate(path.read_text().splitlines(), 1) if DEPRECATED.search(line)]
    assert not found, f"the deprecated transformation API, where the program should register a transform: {found}"
    assert "pulumi.runtime.register_resource_transform(" in (ROOT / "__main__.py").read_text()


def _recorded(transform) -> RecordingMonitor:
    monitor = RecordingMonitor(OfflineMocks())
    pulumi.runtime.set_mocks(monitor.mocks, project="p", stack="s", preview=True, monitor=monitor)

    def program():
        pulumi.CustomResource("test:index:Before", "before", {"word": "plain"})
        pulumi.runtime.register_resource_transform(transform)
        pulumi.CustomResource("test:index:Thing", "thing", {"word": "plain", "nested": {"keep": "x", "word": "y"}})

    pulumi.runtime.test(program)()
    return monitor


def test_the_offline_monitor_runs_a_stack_transform_on_what_comes_after_it():
    def transform(args: pulumi.ResourceTransformArgs):
        if args.props.get("word") != "plain":
            return None
        return pulumi.ResourceTransformResult({**args.props, "word": pulumi.Output.secret("changed")}, args.opts)

    found = {r.name: r for r in _recorded(transform).registrations}
    assert found["before"].inputs == {"word": "plain"}
    assert found["thing"].inputs == {"word": "[secret]", "nested": {"keep": "x", "word": "y"}}
    assert found["thing"].secret_paths == ["word"]


def test_a_transform_that_changes_options_is_refused_offline():
    def transform(args: pulumi.ResourceTransformArgs):
        return pulumi.ResourceTransformResult(args.props, pulumi.ResourceOptions(protect=True))

    with pytest.raises(Exception, match="changed the options of thing"):
        _recorded(transform)
