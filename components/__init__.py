"""Pulumi components: each registers the resources of one concern from validated settings."""

COMPONENT_PACKAGE = "aksKueue"


def token(kind: str) -> str:
    return f"{COMPONENT_PACKAGE}:index:{kind}"
