"""Kueue's flavor assignment modes, typed (v0.19.2, `pkg/scheduler/flavorassigner/flavorassigner.go`
and `pkg/scheduler/preemption/common/types.go`).

- `FlavorAssignmentMode` is what a decision says: NoFit, Preempt, DeferredFit, Fit, ordered
  from the least to the most preferred, so the representative mode of an assignment is the
  smallest of its parts. `str()` gives Kueue's String() names, which the contract uses.
- `PreemptionMode` is the finer mode inside the flavor assigner (upstream's unexported
  `preemptionMode`): a Preempt is split into "no candidates", "preempt" (a target in the
  queue itself) and "reclaim" (every target in other queues of the cohort).
- `GranularMode` pairs it with the borrowing level (a named tuple); `is_preferred` and
  `should_try_next_flavor` are upstream's flavorFungibility rules over it.
- `PreemptionReason` is why a target is preempted (the `reason` of Kueue's Preempted condition).
"""

from __future__ import annotations

from enum import IntEnum, StrEnum
from typing import NamedTuple, Optional


class FlavorAssignmentMode(IntEnum):
    NO_FIT = 0
    PREEMPT = 1
    DEFERRED_FIT = 2  # set by Kueue's scheduler when preemptions overlap; a static decision never is
    FIT = 3

    def __str__(self) -> str:
        return _KUEUE_NAMES[self]

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            # "Fit" == FlavorAssignmentMode.FIT would be silently False: refuse the mix-up.
            raise TypeError(f"compare a FlavorAssignmentMode with FlavorAssignmentMode.{self.name}, "
                            f"not with the string {other!r} (str(mode) gives Kueue's name)")
        return int.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = int.__hash__


_KUEUE_NAMES = {FlavorAssignmentMode.NO_FIT: "NoFit", FlavorAssignmentMode.PREEMPT: "Preempt",
                FlavorAssignmentMode.DEFERRED_FIT: "DeferredFit", FlavorAssignmentMode.FIT: "Fit"}


class PreemptionMode(IntEnum):
    """Worst first. NO_CANDIDATES, PREEMPT and RECLAIM all read as Preempt in a decision."""

    NO_FIT = 0
    NO_CANDIDATES = 1
    PREEMPT = 2
    RECLAIM = 3
    FIT = 4

    @property
    def assignment_mode(self) -> FlavorAssignmentMode:
        return _ASSIGNMENT_MODES[self]


_ASSIGNMENT_MODES = {PreemptionMode.NO_FIT: FlavorAssignmentMode.NO_FIT,
                     PreemptionMode.NO_CANDIDATES: FlavorAssignmentMode.PREEMPT,
                     PreemptionMode.PREEMPT: FlavorAssignmentMode.PREEMPT,
                     PreemptionMode.RECLAIM: FlavorAssignmentMode.PREEMPT,
                     PreemptionMode.FIT: FlavorAssignmentMode.FIT}


class GranularMode(NamedTuple):
    """A flavor's mode and how far up the cohort tree its quota comes from (upstream's
    granularMode; borrowing level 0: no borrowing). The flavor assigner builds one per
    flavor-resource it judges, so it stays a named tuple, read by field."""

    preemption_mode: PreemptionMode
    borrowing_level: int


WORST = GranularMode(PreemptionMode.NO_FIT, 1 << 62)
BEST = GranularMode(PreemptionMode.FIT, 0)

PREEMPTION_OVER_BORROWING = "PreemptionOverBorrowing"
TRY_NEXT_FLAVOR = "TryNextFlavor"


# The modes the rules below compare with, read once (an enum member read through its class costs
# a lookup on every call, and the flavor assigner calls these for every flavor-resource it judges).
_NO_FIT, _NO_CANDIDATES = PreemptionMode.NO_FIT, PreemptionMode.NO_CANDIDATES
_PREEMPT, _RECLAIM = PreemptionMode.PREEMPT, PreemptionMode.RECLAIM


def is_preferred(a: GranularMode, b: GranularMode, preference: Optional[str]) -> bool:
    """Is `a` better than `b`? NoFit never is; a mode without candidates ranks below any
    viable one; then the `preference` (BorrowingOverPreemption by default)."""
    a_mode, a_level = a
    b_mode, b_level = b
    if a_mode == _NO_FIT:
        return False
    if b_mode == _NO_FIT:
        return True
    a_none, b_none = a_mode == _NO_CANDIDATES, b_mode == _NO_CANDIDATES
    if a_none != b_none:
        return not a_none
    if preference == PREEMPTION_OVER_BORROWING:
        if a_level != b_level:
            return a_level < b_level
        return a_mode > b_mode
    if a_mode != b_mode:
        return a_mode > b_mode
    return a_level < b_level


def should_try_next_flavor(mode: GranularMode, when_can_preempt: str, when_can_borrow: str) -> bool:
    preemption_mode, borrowing_level = mode
    if preemption_mode <= _NO_CANDIDATES:
        return True
    if (preemption_mode == _PREEMPT or preemption_mode == _RECLAIM) and when_can_preempt == TRY_NEXT_FLAVOR:
        return True
    return borrowing_level != 0 and when_can_borrow == TRY_NEXT_FLAVOR


class PreemptionReason(StrEnum):
    IN_CLUSTER_QUEUE = "InClusterQueue"
    IN_COHORT_RECLAMATION = "InCohortReclamation"
    IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
    IN_COHORT_FAIR_SHARING = "InCohortFairSharing"  # fair sharing's strategies chose it
