"""The capacity model and the feasibility analysis: can the pools hold what Kueue admits?

`analyse(FeasibilityInputs)` is pure; `adapter.inputs_from_settings` builds its inputs
from a stack's settings, and `report` turns the result into a table and JSON.
"""

from aks_kueue.feasibility.analysis import Analysis, analyse
from aks_kueue.feasibility.findings import ERROR, WARNING, Finding
from aks_kueue.feasibility.inputs import (ExplicitNode, FeasibilityInputs, InstallFacts, PlacedDaemonSet,
                                          PoolSpec)

__all__ = ["Analysis", "analyse", "ERROR", "WARNING", "Finding", "ExplicitNode", "FeasibilityInputs",
           "InstallFacts", "PlacedDaemonSet", "PoolSpec"]
