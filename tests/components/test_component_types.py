"""A component's type is in its URN and, through the parent chain, in every child's: the types of
live stacks are pinned here, so that no refactoring (a class renamed, a subclass) replaces them."""

from __future__ import annotations

import importlib

import pytest

from components import Component, token

# Every component of the program, by the type its resources were registered under.
TYPES = {
    "components.cluster": ["aksKueue:index:AksCluster"],
    "components.day2_guard": ["aksKueue:index:Day2Guard"],
    "components.gpu_device_plugin": ["aksKueue:index:GpuDevicePlugin"],
    "components.kueue_install": ["aksKueue:index:KueueInstall"],
    "components.kueue_queues": ["aksKueue:index:KueueQueues"],
    "components.model_carrier": ["aksKueue:index:ModelCarrier"],
    "components.monitoring": ["aksKueue:index:Monitoring"],
    "components.monitoring.workspaces": ["aksKueue:index:MonitoringWorkspaces"],
    "components.multikueue": ["aksKueue:index:MultiKueueWorker", "aksKueue:index:MultiKueueManager"],
    "components.node_pools": ["aksKueue:index:NodePools"],
    "components.team_access": ["aksKueue:index:TeamAccess"],
}


@pytest.mark.parametrize("module", sorted(TYPES))
def test_each_component_keeps_the_type_of_live_stacks(module):
    loaded = importlib.import_module(module)
    found = [token(c.kind) for c in vars(loaded).values()
             if isinstance(c, type) and issubclass(c, Component) and c is not Component and c.__module__ == module]
    assert found == TYPES[module]


def test_the_type_is_the_written_kind_not_the_class_name():
    class Renamed(Component, kind="NodePools"):
        pass

    assert token(Renamed.kind) == "aksKueue:index:NodePools"
    with pytest.raises(TypeError):
        type("NoKind", (Component,), {})  # a component must say its kind
