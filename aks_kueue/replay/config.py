"""One configuration a trace is replayed against: the queue objects, the Kueue Configuration in
force, and (with a stack) the node pools.

The CLI builds it from a stack (queues, pools and the Configuration the stack installs), from Kueue
YAML (`--queues`: no nodes, admission bounded by quota alone) or from a generator file. Here it is
plain data: v1beta2 manifests, already validated and defaulted, and the capacity model's pools.

What the replay reads of Kueue's Configuration (`apis/config/v1beta2/defaults.go`, v0.19.2):
`waitForPodsReady` (on by default in v1beta2: timeout 30m, blockAdmission false, requeuing
timestamp Eviction, backoff 60 s doubling to 3,600 s, no limit on retries), `fairSharing` and
`admissionFairSharing` (the admission core's `SchedulerConfig`, which the engine decides with), and
the `PartialAdmission` feature gate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from aks_kueue.admission.configuration import KUEUE_DEFAULTS, SchedulerConfig
from aks_kueue.aks.nodes import GPU_PREFIXES, PoolCapacity
from aks_kueue.kueue.config_api import seconds
from aks_kueue.kueue.transformations import ResourceRules

DEFAULT_TIMEOUT = 1800.0
DEFAULT_BACKOFF_BASE = 60.0
DEFAULT_BACKOFF_MAX = 3600.0
# The cluster autoscaler's scale-down-unneeded-time default.
DEFAULT_SCALE_DOWN_DELAY = 600.0
# AKS documents no node provisioning time. These are stated assumptions, printed in every report:
# from the autoscaler's scale-up to a Ready node, a CPU node and a GPU node (its driver and device
# plugin come up before the GPUs are allocatable). Measure yours: see docs/replay.md.
DEFAULT_CPU_STARTUP = 240.0
DEFAULT_GPU_STARTUP = 480.0


@dataclass(frozen=True)
class PodsReady:
    """Kueue's waitForPodsReady, as the Configuration sets it (v1beta2 defaults otherwise)."""

    enabled: bool = True
    timeout: float = DEFAULT_TIMEOUT
    block_admission: bool = False
    timestamp: str = "Eviction"
    backoff_base: float = DEFAULT_BACKOFF_BASE
    backoff_max: float = DEFAULT_BACKOFF_MAX
    backoff_limit: Optional[int] = None

    def backoff(self, count: int) -> float:
        """The wait before the n-th requeue: base * 2^(n-1), at most the maximum, with no jitter
        (Kueue adds 0.01%; left out so that the output stays the same run after run)."""
        return min(self.backoff_base * 2 ** max(0, count - 1), self.backoff_max)


@dataclass
class ReplayConfig:
    name: str                                   # "stack prod", "config PATH", "queues", "generator FILE"
    objects: list[dict[str, Any]]               # v1beta2 Kueue objects and Namespaces
    kueue: Optional[Mapping[str, Any]] = None   # the effective Configuration (v1beta2, defaulted), if known
    pools: Optional[list[PoolCapacity]] = None  # None: no nodes, quota alone
    node_startup: dict[str, float] = field(default_factory=dict)   # per pool, given by the user
    default_startup: Optional[float] = None     # --node-startup DURATION, for every pool
    scale_down_delay: float = DEFAULT_SCALE_DOWN_DELAY
    notes: list[str] = field(default_factory=list)

    @property
    def pods_ready(self) -> PodsReady:
        if self.kueue is None:
            return PodsReady()
        wait = self.kueue.get("waitForPodsReady")
        if not isinstance(wait, Mapping):
            return PodsReady(enabled=False)
        strategy = wait.get("requeuingStrategy") if isinstance(wait.get("requeuingStrategy"), Mapping) else {}
        limit = strategy.get("backoffLimitCount")
        return PodsReady(
            enabled=True, timeout=float(seconds(wait.get("timeout"))) or DEFAULT_TIMEOUT,
            block_admission=wait.get("blockAdmission") is True,
            timestamp=strategy.get("timestamp") or "Eviction",
            backoff_base=float(strategy.get("backoffBaseSeconds") or DEFAULT_BACKOFF_BASE),
            backoff_max=float(strategy.get("backoffMaxSeconds") or DEFAULT_BACKOFF_MAX),
            backoff_limit=int(limit) if isinstance(limit, int) and not isinstance(limit, bool) else None)

    @property
    def resource_rules(self) -> ResourceRules:
        """What the Configuration excludes and transforms: a workload charges what Kueue would charge."""
        return ResourceRules.from_configuration(self.kueue)

    @property
    def scheduler(self) -> SchedulerConfig:
        """Fair sharing and admission fair sharing as the Configuration in force sets them."""
        source = KUEUE_DEFAULTS if self.kueue is None else f"the Kueue Configuration of {self.name}"
        return SchedulerConfig.from_configuration(self.kueue, source)

    @property
    def partial_admission(self) -> bool:
        gates = (self.kueue or {}).get("featureGates")
        return not (isinstance(gates, Mapping) and gates.get("PartialAdmission") is False)

    def startup(self, pool: PoolCapacity) -> tuple[float, str]:
        """Seconds from scale-up to Ready for a pool's new node, and where the figure comes from."""
        if pool.name in self.node_startup:
            return self.node_startup[pool.name], "given"
        if self.default_startup is not None:
            return self.default_startup, "given"
        if any(r.startswith(GPU_PREFIXES) for r in pool.node.amounts):
            return DEFAULT_GPU_STARTUP, "assumed for a GPU pool"
        return DEFAULT_CPU_STARTUP, "assumed for a CPU pool"

    def assumptions(self) -> list[str]:
        """What the replay assumes of this configuration, in sentences for every report."""
        lines = []
        if self.pools is None:
            lines.append("no node pools: admission is bounded by quota alone, and a workload starts when admitted")
        else:
            for pool in self.pools:
                startup, source = self.startup(pool)
                lines.append(f"pool {pool.name}: a new node is Ready {startup:g} s after the autoscaler adds it "
                             f"({source}); {pool.spec.min_count} to {pool.spec.max_count} nodes")
            lines.append(f"scale-down: an empty node is removed after {self.scale_down_delay:g} s, down to minCount")
        ready = self.pods_ready
        if ready.enabled and self.pools is not None:
            lines.append(f"waitForPodsReady: timeout {ready.timeout:g} s, requeue backoff {ready.backoff_base:g} s "
                         f"doubling to {ready.backoff_max:g} s, no jitter"
                         + (f", at most {ready.backoff_limit} requeues" if ready.backoff_limit is not None else "")
                         + (", blockAdmission" if ready.block_admission else ""))
        scheduler = self.scheduler
        if scheduler.fair_sharing is not None or scheduler.admission_fair_sharing is not None:
            lines.append(scheduler.describe())
        return lines + list(self.notes)
