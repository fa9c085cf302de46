"""Replay: a trace of workloads through the admission core and the node pools, in virtual time.

Capacity planning from history (`../shared/contract/replay.md`): what teams submitted, when and
for how long it ran, replayed against one queue configuration or two, and what each team would
have waited and what the pools would have done. `formats` reads the four trace formats into a
`trace.Trace`; `config` is what it is replayed against; `engine` replays it (Kueue v0.19.2's
scheduler over the admission core, the one judge of "fits", with `nodes` in the loop); `report`
writes the contract's document.

Pure core side: it reads the admission core, the AKS capacity model, Kueue's API and the
Kubernetes rules, and nothing of settings, the judge or the CLI.
"""

from aks_kueue.replay.config import ReplayConfig
from aks_kueue.replay.engine import ReplayOptions, replay
from aks_kueue.replay.formats import read_trace
from aks_kueue.replay.trace import Trace, TraceError, TraceWorkload

__all__ = ["ReplayConfig", "ReplayOptions", "replay", "read_trace", "Trace", "TraceError", "TraceWorkload"]
