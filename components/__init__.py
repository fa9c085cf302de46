"""Pulumi components: each registers the resources of one concern from validated settings."""

from __future__ import annotations

from typing import Optional

import pulumi

COMPONENT_PACKAGE = "aksKueue"


def token(kind: str) -> str:
    return f"{COMPONENT_PACKAGE}:index:{kind}"


class Component(pulumi.ComponentResource):
    """A component of this package: typed `aksKueue:index:<kind>`, no inputs of its own.

    The type is in the URN of the component and, through the parent chain, of every resource it
    registers, so each class writes its kind out (`class NodePools(Component, kind="NodePools")`):
    renaming a class must not replace a live stack's resources."""

    kind: str

    def __init_subclass__(cls, kind: str, **more) -> None:
        super().__init_subclass__(**more)
        cls.kind = kind

    def __init__(self, name: str, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(token(self.kind), name, None, opts)

    def child(self, **options) -> pulumi.ResourceOptions:
        """The options of a resource this component registers: its parent is the component."""
        return pulumi.ResourceOptions(parent=self, **options)
