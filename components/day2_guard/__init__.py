"""The day-2 guard: this update against the stack's own last deployment.

A StackReference to the same stack reads the `day2` output the last update left, once, when the
guard is built: the first component, before anything it protects is registered
(`components/stack_outputs.py`). The verdict is plain, and so is what the other components take
from it (the last record, the create-only values that stick): a refused update stops the program
there, and nothing protected is registered. Every protected resource and the Kueue installer
still depend on the reference (`gate`), so the engine reads the last deployment before it changes
any of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Optional, Protocol

import pulumi

from aks_kueue.day2.allow import Allowances, Entry
from aks_kueue.day2.guard import Refusal, Report, judge_update
from aks_kueue.day2.state import OUTPUT, Previous, Record, from_outputs, kept_pools, settle, to_output
from aks_kueue.model.carrier import existing_pools_text
from aks_kueue.secrets import Secrets
from components import Component
from components.secret import NO_SECRET_KEYS, SecretKeys
from components.stack_outputs import read_stacks


# The stack keys the `day2` record derives from (a fleet member's links come from `fleet`).
RECORDED_KEYS = ("cluster", "nodePools", "resourceGroupName", "queues", "queueManifests", "fleet")


class Gated(Protocol):
    """What a component needs from the guard (a Day2Guard, or a stand-in in tests)."""

    gate: pulumi.Resource
    previous: Previous

    def fact(self, entry: Entry, path: str, default: Any) -> pulumi.Input[Any]: ...


class GuardRefused(Refusal, pulumi.RunError):
    """A refusal the Pulumi CLI prints as an error without a traceback (it is a RunError)."""


class PreviousUnknown(pulumi.RunError):
    """The engine returned this stack's outputs as unknown: the guard cannot judge the update."""


@dataclass(frozen=True)
class Day2GuardArgs:
    desired: Record                 # what this update would leave, before the last deployment is known
    allowances: Allowances
    stack: str                      # this stack's fully qualified name, org/project/stack
    # The secret keys: the record is exported as a secret where a key it derives from is one.
    secret: SecretKeys = NO_SECRET_KEYS
    # The secret config values: no refusal or notice shows one (`aks_kueue.secrets`).
    hidden: Secrets = field(default_factory=Secrets)


class Day2Guard(Component, kind="Day2Guard"):
    previous: Previous
    desired: Record
    report: Report
    gate: pulumi.Resource

    def __init__(self, name: str, args: Day2GuardArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        self._args = args
        reference = pulumi.StackReference(f"{name}-previous", stack_name=args.stack, opts=self.child())
        read = read_stacks({args.stack: reference})[args.stack]
        if read is None:
            raise PreviousUnknown(f"the day-2 guard cannot read the last outputs of stack {args.stack} (the engine "
                                  "returned them as unknown), so it cannot tell what this update would replace; "
                                  "run the preview again")
        # A secret `day2` record (it derived from a secret stack key then) keeps what comes of it secret.
        self._previous_secret = OUTPUT in read.secret
        self.previous = from_outputs(read.values)
        self.desired = settle(args.desired, self.previous.record)
        self.report = _judged(self.previous, self.desired, args.allowances, args.hidden)
        self.gate = reference
        self.register_outputs({
            "guarded": self.report.guarded,
            "findings": [f.to_json() for f in self.report.refusals + self.report.notices],
        })
        if self.report.refusals:
            raise GuardRefused(self.report.refusals)

    def _kept_secret(self, value: Any) -> Any:
        return pulumi.Output.secret(value) if self._previous_secret else value

    def fact(self, entry: Entry, path: str, default: Any) -> pulumi.Input[Any]:
        """One desired fact after the last deployment is known (a pool's create-only values stick)."""
        resource = self.desired.resources.get(entry)
        return self._kept_secret(resource.facts.get(path, default) if resource is not None else default)

    def kept_pools(self) -> pulumi.Input[str]:
        """The pools the last deployment has and this update keeps, as the model carrier's
        `existingPools.json`: what they were created with stays, so the pack only advises it."""
        return self._kept_secret(existing_pools_text(str(e) for e in kept_pools(self.desired, self.previous.record)))

    def record(self) -> pulumi.Input[dict]:
        """The `day2` stack output the next update's guard reads."""
        exported = to_output(self.desired)
        keys = self._args.secret
        secret = keys.fleet_outputs or keys.any(*RECORDED_KEYS) or self._previous_secret
        return pulumi.Output.secret(exported) if secret else exported


def _judged(previous: Previous, desired: Record, allowances: Allowances, hidden: Secrets) -> Report:
    report = judge_update(previous, desired, allowances)
    report = replace(report, refusals=hidden.value(report.refusals), notices=hidden.value(report.notices))
    for finding in report.notices:
        pulumi.log.warn(str(finding))
    return report
