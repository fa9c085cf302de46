"""The offline run: what it leaves out of the program's registrations changes nothing it records."""

from __future__ import annotations

import pulumi
import pytest

from aks_kueue.preview import run as run_module
from aks_kueue.preview.run import _without_api_version_aliases
from tests.conftest import run_stack


def _record(run):
    return [(r.urn, r.type, r.parent, r.provider, r.depends_on, r.inputs, r.secret_paths, r.options)
            for r in run.registrations]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_leaving_out_api_version_aliases_changes_no_record(stack, monkeypatch):
    lean = run_stack(stack)
    monkeypatch.setattr(run_module, "_without_api_version_aliases", lambda args: None)
    full = run_stack(stack)
    assert _record(lean) == _record(full)
    assert lean.outputs == full.outputs


def test_only_the_provider_sdks_api_version_aliases_are_left_out():
    own = [pulumi.Alias(name="old-name"), "urn:pulumi:s::p::t::n",
           pulumi.Alias(type_="azure-native:containerservice/v20240102:AgentPool", name="renamed"),
           pulumi.Alias(type_="aksKueue:index:Cluster")]
    versioned = [pulumi.Alias(type_="azure-native:containerservice/v20190201:AgentPool"),
                 pulumi.Alias(type_="azure-native:containerservice/v20250801preview:AgentPool")]
    opts = pulumi.ResourceOptions(aliases=[versioned[0], *own, versioned[1]], protect=True)
    result = _without_api_version_aliases(pulumi.ResourceTransformationArgs(
        None, "azure-native:containerservice:AgentPool", "pool", {"a": 1}, opts))
    assert result.opts.aliases == own and result.opts.protect and result.props == {"a": 1}
    assert opts.aliases == [versioned[0], *own, versioned[1]]  # the program's options are not changed
    assert _without_api_version_aliases(pulumi.ResourceTransformationArgs(
        None, "t", "n", {}, pulumi.ResourceOptions(aliases=own))) is None
