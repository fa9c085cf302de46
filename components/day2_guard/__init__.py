"""The day-2 guard: this update against the stack's own last deployment.

A StackReference to the same stack reads the `day2` output the last update left. In Python a
StackReference yields Outputs only, so the guard's verdict is an Output too: `gate`. Every
protected resource and the Kueue installer depend on it, so a refused update fails before any of
them is registered, and nothing protected changes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Protocol

import pulumi

from aks_kueue.day2.allow import Allowances, Entry
from aks_kueue.day2.guard import Refusal, Report, judge_update
from aks_kueue.day2.state import Previous, Record, from_outputs, kept_pools, settle, to_output
from aks_kueue.model.carrier import existing_pools_text
from aks_kueue.secrets import Secrets
from components import Component


class Gated(Protocol):
    """What a component needs from the guard (a Day2Guard, or a stand-in in tests)."""

    gate: pulumi.Output[pulumi.Resource]
    previous: pulumi.Output[Previous]

    def fact(self, entry: Entry, path: str, default: Any) -> pulumi.Output[Any]: ...


class GuardRefused(Refusal, pulumi.RunError):
    """A refusal the Pulumi CLI prints as an error without a traceback (it is a RunError)."""


@dataclass(frozen=True)
class Day2GuardArgs:
    desired: Record                 # what this update would leave, before the last deployment is known
    allowances: Allowances
    stack: str                      # this stack's fully qualified name, org/project/stack
    secret: bool = False            # the record derives from a secret stack key: export it as a secret
    # The secret config values: no refusal or notice shows one (`aks_kueue.secrets`).
    hidden: Secrets = field(default_factory=Secrets)


class Day2Guard(Component, kind="Day2Guard"):
    previous: pulumi.Output[Previous]
    desired: pulumi.Output[Record]
    report: pulumi.Output[Report]
    gate: pulumi.Output[pulumi.Resource]

    def __init__(self, name: str, args: Day2GuardArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        self._args = args
        reference = pulumi.StackReference(f"{name}-previous", stack_name=args.stack, opts=self.child())
        self.previous = reference.outputs.apply(from_outputs)
        self.desired = self.previous.apply(lambda previous: settle(args.desired, previous.record))
        self.report = pulumi.Output.all(self.previous, self.desired).apply(
            lambda both: _judged(both[0], both[1], args.allowances, args.hidden))

        def verdict(report: Report) -> pulumi.Resource:
            if report.refusals:
                raise GuardRefused(report.refusals)
            return reference

        self.gate = self.report.apply(verdict)
        _quiet_refusals()
        self.register_outputs({
            "guarded": self.report.apply(lambda r: r.guarded),
            "findings": self.report.apply(lambda r: [f.to_json() for f in r.refusals + r.notices]),
        })

    def fact(self, entry: Entry, path: str, default: Any) -> pulumi.Output[Any]:
        """One desired fact after the last deployment is known (a pool's create-only values stick)."""
        return self.desired.apply(lambda record: (record.resources[entry].facts.get(path, default)
                                                  if entry in record.resources else default))

    def kept_pools(self) -> pulumi.Output[str]:
        """The pools the last deployment has and this update keeps, as the model carrier's
        `existingPools.json`: what they were created with stays, so the pack only advises it."""
        return pulumi.Output.all(self.desired, self.previous).apply(
            lambda both: existing_pools_text(str(e) for e in kept_pools(both[0], both[1].record)))

    def record(self) -> pulumi.Output[dict]:
        """The `day2` stack output the next update's guard reads."""
        exported = self.desired.apply(to_output)
        return pulumi.Output.secret(exported) if self._args.secret else exported


def _quiet_refusals() -> None:
    """A refusal fails every registration waiting on the gate; asyncio would then print a
    traceback for each of their unawaited futures. The refusal is reported once, as an error."""
    loop = asyncio.get_event_loop()
    before = loop.get_exception_handler()
    if getattr(before, "quiets_refusals", False):
        return

    def handler(loop, context):
        if isinstance(context.get("exception"), GuardRefused):
            return
        if before is not None:
            before(loop, context)
        else:
            loop.default_exception_handler(context)

    handler.quiets_refusals = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)


def _judged(previous: Previous, desired: Record, allowances: Allowances, hidden: Secrets) -> Report:
    report = judge_update(previous, desired, allowances)
    report = replace(report, refusals=hidden.value(report.refusals), notices=hidden.value(report.notices))
    for finding in report.notices:
        pulumi.log.warn(str(finding))
    return report
