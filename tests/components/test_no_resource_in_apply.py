"""No resource is created inside `Output.apply`: what `pulumi preview` shows, and what the policy pack
judges, is then the whole program, known or not. A resource made in a callback appears only once
the value it waits for is known, and never where it stays unknown.

Measured on the whole program (dev and prod, a first deployment and the update after it): while
an apply callback runs, constructing a resource is recorded.
"""

from __future__ import annotations

import json

import pulumi
import pytest

from aks_kueue.preview.run import run_program
from aks_kueue.preview.stackfile import StackConfig
from tests.conftest import ROOT, flat, stack_doc


@pytest.fixture
def made_in_apply(monkeypatch):
    """The (type, name) of each resource constructed while an apply callback runs."""
    made: list[tuple[str, str]] = []
    depth = [0]
    apply, init = pulumi.Output.apply, pulumi.Resource.__init__

    def watched_apply(self, func, *args, **kwargs):
        def inside(value):
            depth[0] += 1
            try:
                return func(value)
            finally:
                depth[0] -= 1
        return apply(self, inside, *args, **kwargs)

    def watched_init(self, t, name, *args, **kwargs):
        if depth[0]:
            made.append((t, name))
        init(self, t, name, *args, **kwargs)

    monkeypatch.setattr(pulumi.Output, "apply", watched_apply)
    monkeypatch.setattr(pulumi.Resource, "__init__", watched_init)
    return made


def _run(stack: str, previous=None, preview: bool = True):
    return run_program(StackConfig("aks-kueue", stack, flat(stack_doc(stack))), ROOT, preview,
                       previous_outputs=previous)


def test_the_watch_sees_a_resource_made_in_an_apply(made_in_apply):
    def program():
        pulumi.Output.from_input("x").apply(lambda v: pulumi.ComponentResource("test:index:Made", v))

    pulumi.runtime.set_mocks(_NoCloud(), project="p", stack="s", preview=True)
    pulumi.runtime.test(program)()
    assert made_in_apply == [("test:index:Made", "x")]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_no_resource_is_made_in_an_apply(made_in_apply, stack):
    first = _run(stack, preview=False)
    assert made_in_apply == [], "made at the first deployment"
    _run(stack, previous=json.loads(json.dumps(first.outputs)))
    assert made_in_apply == [], "made at the update after it"


class _NoCloud(pulumi.runtime.Mocks):
    def new_resource(self, args):
        return args.name, dict(args.inputs)

    def call(self, args):
        return {}, None
