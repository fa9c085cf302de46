"""One judge: every rule about queues, namespaces, pools, the install, security and
feasibility, run on the model (`aks_kueue.model`), returning structured findings.

Who enforces what: the program calls `blocking_findings` on the model of its settings and
stops (nothing registered) on any of them, because the config cannot be used as written.
Everything else, feasibility and the security baseline included, is enforced by the
policy pack on the model of the resources, so that a policy config can still relax it. The
offline preview calls `judge` once and renders its findings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from datetime import date
from typing import Optional

from aks_kueue.aks.allocatable import DEFAULT_VM_OVERHEAD
from aks_kueue.aks.nodes import PoolCapacity
from aks_kueue.aks.placement import FlavorPlacement
from aks_kueue.judge.finding import ERROR, WARNING, Amount, Finding, Severity
from aks_kueue.judge.rules import READABLE, Judging, finding, rule, run
from aks_kueue.model.desired import Model

RESOURCE_UNREADABLE = "resource-unreadable"


@rule(RESOURCE_UNREADABLE, "Every resource the pack reads has the shape it reads.", "aks-kueue's model of the "
      "resources (aks_kueue/model/from_resources.py)", "every resource the pack reads", READABLE, severity=ERROR,
      explanation="The pack rebuilds the model from the resources it is handed; a resource of a shape it cannot read "
      "(a property of the wrong type, a VM size the catalog does not know) is left out of every other check, so "
      "leaving it unreported would pass what was never judged.")
def unreadable(model: Model) -> list[Finding]:
    return [finding(RESOURCE_UNREADABLE, object=u.subject, key=u.subject, message=u.message,
                    fix="give the resource the shape the pack reads, or remove it") for u in model.unreadable]


# Imported after the first rule: the registry's order, which is the judge's, is the order of import.
from aks_kueue.judge import capacity, objects, install, feasibility, security, stack, fleet  # noqa: E402,F401
from aks_kueue.judge.feasibility import generated_stubs  # noqa: E402


@dataclass
class Judgement:
    findings: list[Finding]
    pools: list[PoolCapacity] = field(default_factory=list)
    flavors: dict[str, FlavorPlacement] = field(default_factory=dict)
    capacity: list[capacity.CapacityRow] = field(default_factory=list)
    # A MultiKueue manager runs no jobs: its quota is set against its workers' instead (None: not a manager).
    fleet_quota: Optional[list[fleet.FleetQuota]] = None

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == ERROR]


def blocking_findings(model: Model) -> list[Finding]:
    """What makes the config unusable as written: objects Kueue or the API server refuse, broken
    references and namespaces, expected workloads Kueue would not create."""
    return run(Judging(model), keep=lambda each: each.blocking)


def judge(model: Model, vm_overhead: Fraction = DEFAULT_VM_OVERHEAD, today: Optional[date] = None) -> Judgement:
    """Every rule. `today` is the day dated facts (the AKS release calendar) are judged on."""
    judging = Judging(model, vm_overhead, today)
    judgement = Judgement(run(judging))
    found = feasibility.judged(judging)
    if found is not None:
        judgement.pools, judgement.flavors, judgement.capacity = found.pools, found.placements, found.rows
    judgement.fleet_quota = judging.shared(fleet.FLEET_QUOTA, lambda: fleet.fleet_quota(model))
    return judgement


__all__ = ["Judgement", "Finding", "Severity", "Amount", "ERROR", "WARNING", "RESOURCE_UNREADABLE", "judge",
           "generated_stubs", "blocking_findings"]
