"""How the pack's policies are built: config defaults, the world, and failures kept as violations.

The engine fills a policy's config defaults before it calls the pack; a unit test that
builds `StackValidationArgs` itself does not. Every policy here therefore merges the
schema defaults with what it is given, so both paths judge alike.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional

from pulumi_policy import (EnforcementLevel, PolicyConfigSchema, ResourceValidationPolicy, StackValidationPolicy)
from pulumi_policy.policy import _NotApplicableError
from pulumi_policy.proxy import UnknownValueError

from aks_kueue.policies.world import World, world_of

# Marks a violation that reports a failure of the pack itself; the tests require there are none.
INTERNAL_FAILURE = "the policy pack could not judge these resources"
PROD_STACKS = {"type": "array", "items": {"type": "string"}, "default": ["prod", "production"],
               "description": "stack names treated as production"}

Violation = tuple[str, Optional[str]]  # (message, URN or None)


def settings(schema: Optional[PolicyConfigSchema], given: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    defaults = {k: v["default"] for k, v in (schema.properties if schema else {}).items() if "default" in v}
    return {**defaults, **dict(given or {})}


def _guarded(judge: Callable[[Any], Iterable[Violation]], report) -> None:
    """Unknown values and not-applicable are the runtime's to handle; anything else becomes a
    violation naming the failure, so a preview is never stopped by a traceback from the pack."""
    try:
        found = list(judge())
    except (UnknownValueError, _NotApplicableError):
        raise
    except Exception as error:  # noqa: BLE001 - reported, with its type, as a violation
        found = [(f"{INTERNAL_FAILURE} ({type(error).__name__}: {error}); please report it", None)]
    for message, urn in found:
        report(message, urn)


def stack_policy(name: str, description: str, check: Callable[[World, dict], Iterable[Violation]],
                 level: EnforcementLevel = EnforcementLevel.MANDATORY,
                 schema: Optional[PolicyConfigSchema] = None) -> StackValidationPolicy:
    """A policy over the whole stack, judging the world rebuilt from its resources."""
    return resources_policy(name, description, lambda resources, config: check(world_of(resources), config),
                            level, schema)


def resources_policy(name: str, description: str, check: Callable[[list, dict], Iterable[Violation]],
                     level: EnforcementLevel = EnforcementLevel.MANDATORY,
                     schema: Optional[PolicyConfigSchema] = None) -> StackValidationPolicy:
    """A policy over the stack's resources as handed over (their options, their URNs)."""
    def validate(args, report_violation):
        _guarded(lambda: check(list(args.resources), settings(schema, args.get_config())), report_violation)

    return StackValidationPolicy(name=name, description=description, validate=validate,
                                 enforcement_level=level, config_schema=schema)


def resource_policy(name: str, description: str, applies: Callable[[str], bool],
                    check: Callable[[Any, dict], Iterable[str]],
                    level: EnforcementLevel = EnforcementLevel.ADVISORY,
                    schema: Optional[PolicyConfigSchema] = None) -> ResourceValidationPolicy:
    """A policy over one resource's inputs, before it is created or updated."""
    def validate(args, report_violation):
        if not applies(args.resource_type):
            return
        config = settings(schema, args.get_config())
        _guarded(lambda: [(message, None) for message in check(args.props, config)], report_violation)

    return ResourceValidationPolicy(name=name, description=description, validate=validate,
                                    enforcement_level=level, config_schema=schema)
