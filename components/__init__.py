"""Pulumi components: each registers the resources of one concern from validated settings."""

from __future__ import annotations

from typing import Optional

import pulumi

COMPONENT_PACKAGE = "aksKueue"


def token(kind: str) -> str:
    return f"{COMPONENT_PACKAGE}:index:{kind}"


class Component(pulumi.ComponentResource):
    """A component of this package: typed `aksKueue:index:<its class name>`, no inputs of its own."""

    def __init__(self, name: str, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(token(type(self).__name__), name, None, opts)

    def child(self, **options) -> pulumi.ResourceOptions:
        """The options of a resource this component registers: its parent is the component."""
        return pulumi.ResourceOptions(parent=self, **options)
