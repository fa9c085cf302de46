"""Spot evictions in replay: when Azure takes a spot pool's node back.

The model. Every node of a spot pool (`spot: true`) is evicted at a constant rate, `λ` evictions
per node-hour: its time from Ready to eviction is exponential with mean `1/λ`, drawn for that
node alone. AKS spot pools evict with the Delete policy (this program sets
`scaleSetEvictionPolicy: Delete`), so an evicted node is gone, its pods with it; the autoscaler
may add another. A node is evicted at most once; one that scale-down removes first is not.

The clock starts when the node is Ready, not when the VM is created: the startup minutes (4 to 8
by the replay's defaults) are under 1% of a node's mean life at the default rate (about 19.5 h),
and a node evicted before it holds pods loses no work.

Azure's figure. Azure publishes a spot size's eviction rate per region as a band of the chance
of eviction within the next hour: "Eviction rates are quoted per hour. For example, an eviction
rate of 10% means a VM has a 10% chance of being evicted within the next hour, based on
historical eviction data of the last 7 days" (learn.microsoft.com/azure/virtual-machines/spot-vms,
"Pricing and eviction history"; the portal's pricing history, and Azure Resource Graph's
`SpotResources` table, `microsoft.compute/skuspotevictionrate/location`, `properties.evictionRate`,
for the last 28 days). The bands are 0-5%, 5-10%, 10-15%, 15-20% and 20+% (as the portal and
Resource Graph show them, e.g. `"0-5"`; described so in techbrainblog.com/2025/11/30/key-points-
about-azure-spot-vms-and-its-eviction: "ranging from 0–5% to 20+%"). With a constant rate, the
chance of eviction within an hour is `p = 1 - exp(-λ)`, so a band's `p` is `λ = -ln(1 - p)` per
node-hour.

The default is a stated assumption, printed in every report: the top of the lowest band, 5% an
hour, `λ = -ln(0.95) = 0.0513` evictions per node-hour (a node lives 19.5 h on average). It is the
most favourable band's worst case: a size in a higher band (H100s often are; look yours up) must
be given with `--spot-eviction`, as a rate (`0.22`) or as the band's hourly percent (`20%`).

Determinism. A node's draw is a hash of (`--seed`, the pool, the node's number in its pool),
not the next number of one pseudo-random stream. So it does not depend on the order in which
the engine handles events, or on how many nodes other pools made before; and the two
configurations of `--compare` draw the same lives for the same nodes (common random numbers),
so their difference is the configuration's, not the dice's. BLAKE2b is the same on every
platform and Python version.

Not modelled (said in every report with spot pools): evictions of many nodes at once (Azure
reclaims capacity in bulk; independent evictions interrupt a many-node workload more often, each
time fewer of its nodes), a region with no spot capacity left (a new node comes after the pool's
startup time), price-based eviction (`spotMaxPrice: -1`, which this program sets, evicts for
capacity only), and the 30-second notice.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

from aks_kueue.k8s.loader import LoadError

FLAG = "--spot-eviction"
# Azure's lowest published eviction band, 0-5% an hour, at its top.
DEFAULT_HOURLY_CHANCE = 0.05
# Once a minute on every node: more is no spot pool anyone runs, and a bound on the events a
# replay makes (each eviction ends one node's life; a new node waits its startup time).
MAX_RATE = 60.0


def rate_from_hourly_chance(chance: float) -> float:
    """Evictions per node-hour for a chance of eviction within an hour (Azure's bands): with a
    constant rate λ, that chance is 1 - exp(-λ), so λ = -ln(1 - chance)."""
    if not 0 <= chance < 1:
        raise ValueError(f"an hourly chance of eviction is from 0 up to (not including) 1, not {chance!r}")
    return -math.log1p(-chance)


DEFAULT_RATE = rate_from_hourly_chance(DEFAULT_HOURLY_CHANCE)
DEFAULT_SOURCE = (f"assumed: the top of Azure's lowest published eviction band, 0-5% an hour; "
                  f"-ln(1 - 0.05) = {DEFAULT_RATE:.4f} (learn.microsoft.com/azure/virtual-machines/spot-vms)")


@dataclass(frozen=True)
class SpotRate:
    """A spot pool's evictions per node-hour, and where the figure comes from."""

    per_node_hour: float
    source: str                 # "given", "given as 5% an hour", or DEFAULT_SOURCE

    @property
    def mean_hours(self) -> Optional[float]:
        """A node's mean life in hours, None when it is never evicted."""
        return 1 / self.per_node_hour if self.per_node_hour > 0 else None


DEFAULT = SpotRate(DEFAULT_RATE, DEFAULT_SOURCE)


@dataclass(frozen=True)
class SpotRates:
    """What `--spot-eviction` said: a rate for every spot pool, rates per pool, or neither."""

    everywhere: Optional[SpotRate] = None
    per_pool: Mapping[str, SpotRate] = field(default_factory=dict)

    def check(self, pools: Iterable[Any]) -> None:
        """Refuse a pool the flag names that is not a spot pool of any configuration replayed
        (`pools`: every configuration's pools, anything with `name` and `spot`); a rate where
        there is no spot pool at all is refused too (it would do nothing)."""
        pools = list(pools)
        spot = sorted({p.name for p in pools if p.spot})
        regular = {p.name for p in pools if not p.spot}
        for name in self.per_pool:
            if name in spot:
                continue
            why = ("is not a spot pool (spot: false): its nodes are never evicted" if name in regular
                   else "names no pool of the configurations replayed")
            raise LoadError("", None, f"{FLAG} {name}=...: {name} {why}"
                                      + (f"; spot pools: {', '.join(spot)}" if spot else "; they have no spot pool"))
        if self.everywhere is not None and not spot:
            raise LoadError("", None, f"{FLAG}: the configurations replayed have no spot pool (spot: true), so no "
                                      "node is ever evicted; leave the flag out")

    def model(self, pools: Iterable[Any], seed: int = 0) -> "SpotModel":
        """The eviction model of one configuration: a rate for each of its spot pools."""
        rates = {p.name: self.per_pool.get(p.name, self.everywhere or DEFAULT) for p in pools if p.spot}
        return SpotModel(seed, rates)


def parse_spot_eviction(values: Sequence[str]) -> SpotRates:
    """`--spot-eviction RATE | POOL=RATE`, repeatable: RATE in evictions per node-hour (`0.05`), or
    the chance of eviction within an hour as Azure's bands give it (`5%`, turned into a rate).
    A bad value is a LoadError about the flag (no file), as the CLI prints them."""
    everywhere: Optional[SpotRate] = None
    per_pool: dict[str, SpotRate] = {}
    for value in values:
        pool, sep, text = value.rpartition("=")
        if sep and not pool:
            raise LoadError("", None, f"{FLAG} {value!r}: name the pool before '=' (POOL=RATE), or give RATE alone")
        rate = _rate(text.strip(), value)
        if not sep:
            if everywhere is not None:
                raise LoadError("", None, f"{FLAG} {value!r}: a rate for every spot pool is given twice; give one, "
                                          "and POOL=RATE for the pools that differ")
            everywhere = rate
        elif pool in per_pool:
            raise LoadError("", None, f"{FLAG} {value!r}: pool {pool} is given twice; give one rate a pool")
        else:
            per_pool[pool] = rate
    return SpotRates(everywhere, per_pool)


def _rate(text: str, value: str) -> SpotRate:
    percent = text.endswith("%")
    number = text[:-1].strip() if percent else text
    try:
        figure = float(number)
    except ValueError:
        figure = math.nan
    if not math.isfinite(figure):
        raise LoadError("", None, f"{FLAG} {value!r}: {text!r} is not a rate; give evictions per node-hour "
                                  "(0.05) or Azure's hourly eviction chance (5%)")
    if figure < 0:
        raise LoadError("", None, f"{FLAG} {value!r}: a rate is 0 (never evicted) or more")
    if percent:
        if figure >= 100:
            raise LoadError("", None, f"{FLAG} {value!r}: a chance of eviction within an hour is under 100%")
        rate = SpotRate(rate_from_hourly_chance(figure / 100), f"given as {number}% an hour")
    else:
        rate = SpotRate(figure, "given")
    if rate.per_node_hour > MAX_RATE:
        raise LoadError("", None, f"{FLAG} {value!r}: {rate.per_node_hour:.4g} evictions per node-hour is more "
                                  f"than {MAX_RATE:g} (one a minute), the most the replay takes")
    return rate


@dataclass(frozen=True)
class SpotModel:
    """When each node of a configuration's spot pools is evicted. Pure: the same seed, pool and
    node number give the same instant, whatever else happens."""

    seed: int
    rates: Mapping[str, SpotRate]       # the configuration's spot pools, by name

    def eviction_at(self, pool: str, node: int, ready_at: float) -> Optional[float]:
        """The instant (seconds, on the replay's clock) the `node`-th node of `pool` is evicted,
        given the instant it became Ready; None when the pool is not spot or its rate is 0.
        The engine schedules a node-evicted event there and drops it if the node is gone first."""
        rate = self.rates.get(pool)
        if rate is None or rate.per_node_hour <= 0:
            return None
        return ready_at + 3600.0 * -math.log(self._uniform(pool, node)) / rate.per_node_hour

    def evictions(self, pool: str, node: int, up: float, down: float) -> list[float]:
        """The eviction instants within a node's life from Ready at `up` to its removal at `down`:
        at most one, since an evicted node is deleted."""
        at = self.eviction_at(pool, node, up)
        return [at] if at is not None and at < down else []

    def assumptions(self) -> list[str]:
        """Sentences for every report of a configuration with spot pools."""
        if not self.rates:
            return []
        lines = [f"pool {name}: spot, a node is evicted at {rate.per_node_hour:.4g} a node-hour"
                 + (f" (on average after {rate.mean_hours:.1f} h Ready)" if rate.mean_hours else " (never)")
                 + f", {rate.source}" for name, rate in self.rates.items()]
        lines.append(f"spot evictions: each node on its own, its time from Ready to eviction exponential, drawn from "
                     f"--seed {self.seed} by pool and node number; an evicted node's pods are lost, its workloads stay "
                     "admitted and run again from the start once all their pods are placed; not modelled: many "
                     "nodes evicted at once, no spot capacity after an eviction, the 30-second notice")
        return lines

    def _uniform(self, pool: str, node: int) -> float:
        """A number in (0, 1), uniform, from (seed, pool, node) alone."""
        digest = hashlib.blake2b(f"{self.seed}\0{pool}\0{node}".encode(), digest_size=8).digest()
        return (int.from_bytes(digest, "big") + 0.5) / 2.0 ** 64
