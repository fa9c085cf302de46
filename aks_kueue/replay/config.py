"""One configuration a trace is replayed against: the queue objects, the Kueue Configuration in
force, and (with a stack) the node pools.

The CLI builds it from a stack (queues, pools and the Configuration the stack installs), from Kueue
YAML (`--queues`: no nodes, admission bounded by quota alone) or from a generator file. Here it is
plain data: v1beta2 manifests, already validated and defaulted, and the capacity model's pools.

What the replay reads of Kueue's Configuration (`apis/config/v1beta2/defaults.go`, v0.19.2):
`waitForPodsReady` (on by default in v1beta2: timeout 30m, recoveryTimeout the timeout's value,
blockAdmission false, requeuing timestamp Eviction, backoff 60 s doubling to 3,600 s, no limit on
retries), `fairSharing` and `admissionFairSharing` (the admission core's `SchedulerConfig`, which the
engine decides with), and the `PartialAdmission` feature gate. Beside the Configuration: the spot
eviction rates and seed (`spot`), and the pools' prices (`prices`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from aks_kueue.admission.configuration import KUEUE_DEFAULTS, SchedulerConfig
from aks_kueue.aks.nodes import GPU_PREFIXES, PoolCapacity
from aks_kueue.aks.prices import PoolPrices
from aks_kueue.kueue.config_api import seconds
from aks_kueue.kueue.transformations import ResourceRules
from aks_kueue.replay.pace import UNPACED, CycleTime
from aks_kueue.replay.spot import SpotModel, SpotRates

DEFAULT_TIMEOUT = 1800.0
DEFAULT_BACKOFF_BASE = 60.0
DEFAULT_BACKOFF_MAX = 3600.0
# Kueue's backoff cap when backoffMaxSeconds is 0: time.Duration(math.MaxInt64 / 2), in seconds.
UNCAPPED_BACKOFF = (2**63 - 1) // 2 / 1e9
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
    # How long a workload that was running may wait for lost pods to be Ready again (a spot node
    # evicted under it) before it is evicted and requeued as at the timeout; 0: never.
    # Kueue: "measured since the last transition to the PodsReady=false condition after a Workload
    # is Admitted and running ... Defaults to the value of timeout. Setting to "0s" disables".
    recovery_timeout: float = DEFAULT_TIMEOUT
    block_admission: bool = False
    timestamp: str = "Eviction"
    backoff_base: float = DEFAULT_BACKOFF_BASE
    backoff_max: float = DEFAULT_BACKOFF_MAX   # 0: no maximum (Kueue's cap is then MaxInt64/2 ns)
    backoff_limit: Optional[int] = None

    @property
    def backoff_cap(self) -> float:
        """The longest backoff: `backoffMaxSeconds`, or Kueue's own cap when that is 0
        (`pkg/util/wait.NewBackoff`: math.MaxInt64 / 2 nanoseconds, about 146 years)."""
        return self.backoff_max if self.backoff_max > 0 else UNCAPPED_BACKOFF

    def backoff(self, count: int) -> float:
        """The wait before the n-th requeue, as Kueue's `workload.UpdateRequeueState` computes it
        (apimachinery's `wait.Backoff` with factor 2): the base for the first, then the base doubled
        each time, saturating at the cap; no jitter (Kueue adds 0.01%; left out so that the output
        stays the same run after run). The doubling stops at the cap, so no count overflows."""
        if count <= 1 or self.backoff_base <= 0:
            return self.backoff_base
        cap = self.backoff_cap
        wait = self.backoff_base
        for _ in range(count - 1):  # at most 63 doublings reach any cap from a base of 1 s
            wait *= 2
            if wait >= cap:
                return cap
        return wait


@dataclass
class ReplayConfig:
    name: str                                   # "stack prod", "config PATH", "queues", "generator FILE"
    objects: list[dict[str, Any]]               # v1beta2 Kueue objects and Namespaces
    kueue: Optional[Mapping[str, Any]] = None   # the effective Configuration (v1beta2, defaulted), if known
    pools: Optional[list[PoolCapacity]] = None  # None: no nodes, quota alone
    node_startup: dict[str, float] = field(default_factory=dict)   # per pool, given by the user
    default_startup: Optional[float] = None     # --node-startup DURATION, for every pool
    scale_down_delay: float = DEFAULT_SCALE_DOWN_DELAY
    cycle: CycleTime = UNPACED                  # how long a scheduling cycle takes (`pace`)
    notes: list[str] = field(default_factory=list)
    spot_rates: SpotRates = field(default_factory=SpotRates)   # --spot-eviction (default: the stated rate)
    seed: int = 0                               # --seed: the spot eviction draws
    region: Optional[str] = None                # the stack's azure-native:location, for prices
    prices: Optional[PoolPrices] = None         # --prices: each pool's hourly price; None: no cost anywhere

    @property
    def spot(self) -> Optional[SpotModel]:
        """When the spot pools' nodes are evicted; None without spot pools."""
        pools = [p.spec for p in self.pools or [] if p.spec.spot]
        return self.spot_rates.model(pools, self.seed) if pools else None

    @property
    def pods_ready(self) -> PodsReady:
        if self.kueue is None:
            return PodsReady()
        wait = self.kueue.get("waitForPodsReady")
        if not isinstance(wait, Mapping):
            return PodsReady(enabled=False)
        given = wait.get("requeuingStrategy")
        strategy: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        limit = strategy.get("backoffLimitCount")
        timeout = float(seconds(wait.get("timeout"))) or DEFAULT_TIMEOUT
        recovery = wait.get("recoveryTimeout")
        # Kueue defaults a backoff that is not set (`cmp.Or` on the pointer): one set to 0 stays 0.
        return PodsReady(
            enabled=True, timeout=timeout,
            recovery_timeout=timeout if recovery is None else float(seconds(recovery)),
            block_admission=wait.get("blockAdmission") is True,
            timestamp=strategy.get("timestamp") or "Eviction",
            backoff_base=_whole(strategy.get("backoffBaseSeconds"), DEFAULT_BACKOFF_BASE),
            backoff_max=_whole(strategy.get("backoffMaxSeconds"), DEFAULT_BACKOFF_MAX),
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
        lines = [self.cycle.assumption()]
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
            cap = f"to {ready.backoff_max:g} s" if ready.backoff_max > 0 else "without a maximum (backoffMaxSeconds 0)"
            lines.append(f"waitForPodsReady: timeout {ready.timeout:g} s, requeue backoff {ready.backoff_base:g} s "
                         f"doubling {cap}, no jitter"
                         + (f", at most {ready.backoff_limit} requeues" if ready.backoff_limit is not None else "")
                         + (", blockAdmission" if ready.block_admission else ""))
        scheduler = self.scheduler
        if scheduler.fair_sharing is not None or scheduler.admission_fair_sharing is not None:
            lines.append(scheduler.describe())
        return lines + self._spot_assumptions() + (self.prices.describe() if self.prices is not None else []) \
            + list(self.notes)

    def _spot_assumptions(self) -> list[str]:
        spot = self.spot
        if spot is None:
            return []
        ready = self.pods_ready
        recovery = (f"waitForPodsReady's recoveryTimeout ({ready.recovery_timeout:g} s) evicts and requeues a "
                    "workload whose lost pods are not all placed again in time" if ready.enabled
                    and ready.recovery_timeout > 0 else "no recoveryTimeout: a workload waits for its lost pods "
                    "as long as it takes")
        return spot.assumptions() + [recovery]


def _whole(value: Any, default: float) -> float:
    """A Configuration's seconds field (int32): its value when set, else the default."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default
