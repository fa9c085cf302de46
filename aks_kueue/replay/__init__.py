"""Replay: a trace of workloads through the admission core and the node pools, in virtual time.

Capacity planning from history (`../shared/contract/replay.md`): what teams submitted, when and
for how long it ran, replayed against one queue configuration or two, and what each team would
have waited and what the pools would have done.

- `trace`: one trace workload, and the trace (what the readers return);
- `formats`: the four trace formats (Workload exports, JSON Lines, CSV, Kueue's scheduler
  performance generator, `generator`), detected from content, read with bounded memory;
- `config`: one configuration to replay against (queues, the Kueue Configuration, node pools);
- `engine`: the discrete-event simulation, Kueue v0.19.2's scheduler and queue manager over
  the admission core (`aks_kueue.admission`), the one judge of "fits";
- `nodes`: node pools in the loop: placement, the cluster autoscaler, scale-down;
- `report`: the contract's JSON document and the figures tables and charts are drawn from.

Pure core side: it reads the admission core, the AKS capacity model, Kueue's API and the
Kubernetes rules, and nothing of settings, the judge or the CLI.
"""

from aks_kueue.replay.config import ReplayConfig
from aks_kueue.replay.engine import ReplayOptions, replay
from aks_kueue.replay.formats import read_trace
from aks_kueue.replay.trace import Trace, TraceError, TraceWorkload

__all__ = ["ReplayConfig", "ReplayOptions", "replay", "read_trace", "Trace", "TraceError", "TraceWorkload"]
