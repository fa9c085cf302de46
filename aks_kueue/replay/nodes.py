"""Node pools in the loop: where an admitted workload's pods land, the autoscaler, scale-down.

Pods and nodes come from the capacity model (`aks_kueue.aks`): a node offers what
`aks.nodes.node_resources` computes it can allocate, and a pod can land on a pool when
`aks.placement.pod_lands` says so (the pool's labels against the pod's node selector and
required affinity, its taints against the pod's tolerations). After admission Kueue injects the
assigned flavors' `nodeLabels` into the pods' node selector and their `tolerations`
(`pkg/podset`), so that is the pod that lands.

- Placement: a pod goes to the Ready node of its pools with room where it leaves the most free
  (kube-scheduler's default NodeResourcesFit scoring, LeastAllocated on cpu and memory); pods wait
  in the order their workloads were admitted. A workload starts when all its pods are placed.
- Autoscaler (cluster-autoscaler's scale-up, simplified): pods that fit no Ready node go first to
  nodes already on their way, then make new nodes in the first of their pools that has room under
  `maxCount` and whose empty node holds them; a new node is Ready after its pool's startup time.
- Scale-down: a node empty for the scale-down delay is removed, down to `minCount`. Only empty
  nodes go (pods are never moved).
- Spot pools (`replay.spot`): a node is evicted at the instant the spot model draws for it when it
  becomes Ready, unless scale-down removed it first. Its pods are lost and wait for room again, at
  the end of the line (they are new pods); the node is gone, and the autoscaler adds nodes for the
  pods as for any others. A pool evicted below `minCount` is not topped up on its own (the cluster
  autoscaler's `--enforce-node-group-min-size` is off by default).
- ProvisioningRequest checks (`aks.autoscaler`): the pods are booked at once, on room that exists
  and, for the atomic scale-up class, on new nodes of one pool; the check is Ready when every
  booked node is. The check-capacity class books only room that exists.
A pod that no pool can ever hold (no pool matches, or it is larger than any node) is reported
with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from typing import Any, Callable, ClassVar, Mapping, Optional

from aks_kueue.aks.nodes import GPU_PREFIXES, PoolCapacity, is_modelled
from aks_kueue.aks.placement import pod_lands
from aks_kueue.kueue.units import format_amount
from aks_kueue.replay.events import Event, EventKind
from aks_kueue.replay.spot import SpotModel

# Flavor combinations `NodeModel.never_placeable` tries one by one (a ClusterQueue's resource groups
# list a few flavors each); past this, it judges the pods' requests alone.
MAX_FLAVOR_CHOICES = 64


class Node:
    __slots__ = ("pool", "number", "free", "ready", "ready_at", "pods", "empty_since", "alive", "virtual", "used",
                 "groups")

    def __init__(self, pool: "PoolState", number: int, ready_at: float, ready: bool):
        self.pool = pool
        self.number = number
        self.free = dict(pool.allocatable)
        self.ready = ready
        self.ready_at = ready_at
        self.pods = 0
        self.empty_since: Optional[float] = ready_at if ready else None
        self.alive = True
        self.virtual: Optional[dict[str, int]] = None  # room the autoscaler's pass has promised away
        self.used = 0  # requests of its pods, the pool's main resource
        # On a spot pool, the pod groups of its pods (one entry a pod): what an eviction takes.
        self.groups: Optional[list[PodGroup]] = [] if pool.spot else None


class PoolState:
    def __init__(self, capacity: PoolCapacity, startup: float, index: int, by_queue: bool = False):
        self.capacity = capacity
        self.name = capacity.name
        self.index = index
        self.spot = capacity.spec.spot
        self.evictions = 0   # spot nodes Azure took back
        self.lost = 0        # pods they took with them
        self.min_count = capacity.spec.min_count
        self.max_count = capacity.spec.max_count
        self.startup = startup
        self.allocatable = {r: v for r, v in capacity.node.amounts.items() if is_modelled(r)}
        self.primary = next((r for r in sorted(self.allocatable) if r.startswith(GPU_PREFIXES)
                             and self.allocatable[r] > 0), "cpu")
        self.nodes: list[Node] = []
        self.ready = 0   # how many of `nodes` are Ready
        self.numbers = 0
        # Step-function integrals over virtual time.
        self.last = 0.0
        self.node_seconds = 0.0
        self.ready_capacity_seconds = 0.0   # allocatable of the primary resource, Ready nodes
        self.allocated_seconds = 0.0        # requests of placed pods, primary resource
        self.at_max_seconds = 0.0
        self.allocated = 0
        self.peak = 0
        self.series: list[tuple[float, int]] = [(0.0, 0)]
        # Per ClusterQueue, its pods' requests of the main resource over time (booked pods too), for
        # its share of the pool's cost: [requests now, since, integral]; None unless asked for.
        self.by_queue: Optional[dict[str, list[float]]] = {} if by_queue else None

    def advance(self, now: float) -> None:
        span = now - self.last
        if span > 0:
            alive = len(self.nodes)
            self.node_seconds += alive * span
            self.ready_capacity_seconds += self.ready * self.allocatable.get(self.primary, 0) * span
            self.allocated_seconds += self.allocated * span
            if alive >= self.max_count and self.max_count > 0:
                self.at_max_seconds += span
        self.last = now

    def charge(self, queue: str, used: int, now: float) -> None:
        """`used` more (or less) of the main resource held by `queue`'s pods from `now`."""
        assert self.by_queue is not None
        held = self.by_queue.get(queue)
        if held is None:
            held = self.by_queue[queue] = [0.0, now, 0.0]
        held[2] += held[0] * (now - held[1])
        held[0] += used
        held[1] = now

    def queue_seconds(self, now: float) -> dict[str, float]:
        """Per ClusterQueue, the main resource its pods held on the pool, integrated to `now`."""
        return {queue: held[2] + held[0] * max(0.0, now - held[1]) for queue, held in (self.by_queue or {}).items()}

    def record(self, now: float) -> None:
        count = len(self.nodes)
        self.peak = max(self.peak, count)
        if self.series[-1][0] == now:
            self.series[-1] = (now, count)
        elif self.series[-1][1] != count:
            self.series.append((now, count))

    def holds(self, requests: dict[str, int]) -> int:
        """How many pods asking `requests` (`pods` included) one empty node holds."""
        most: Optional[int] = None
        for resource, value in requests.items():
            if value > 0:
                fit = self.allocatable.get(resource, 0) // value
                most = fit if most is None else min(most, fit)
        return most if most is not None else 0

    def fits_empty(self, requests: dict[str, int]) -> Optional[str]:
        """Why an empty node of this pool cannot hold the pod, or None when it can."""
        for resource, value in requests.items():
            if value > self.allocatable.get(resource, 0):
                return (f"a node of pool {self.name} offers {resource} "
                        f"{format_amount(resource, self.allocatable.get(resource, 0))}, the pod asks "
                        f"{format_amount(resource, value)}")
        return None


@dataclass(eq=False, slots=True)
class PodGroup:
    """The pods of one pod set of one admitted workload, waiting for nodes or placed."""

    run: Any
    index: int
    remaining: int                  # pods not yet placed (the pod set's count at first)
    requests: dict[str, int]
    pools: list[PoolState]
    why: Optional[str]              # why no pool can hold its pods, when `pools` is empty
    placed: list[Node] = field(default_factory=list)   # one entry per placed pod
    signature: tuple = field(init=False)   # pods of groups with the same signature fit the same nodes

    def __post_init__(self) -> None:
        self.signature = (tuple(sorted(self.requests.items())), tuple(p.index for p in self.pools))


def _fits(free: dict[str, int], requests: dict[str, int]) -> bool:
    # A loop, not all(...): this runs for every node tried in scale-up, booking and packing.
    for resource, value in requests.items():
        if free.get(resource, 0) < value:
            return False
    return True


def _take(room: dict[str, int], requests: dict[str, int], sign: int = 1) -> None:
    """A pod's requests out of a node's room (back into it with `sign` -1), for what the node offers."""
    for resource, value in requests.items():
        if resource in room:
            room[resource] -= sign * value


def _count(node: Node, group: PodGroup, now: float, sign: int) -> None:
    """A pod of `group` on a node (`sign` 1) or off it (-1): the node's room and pods, the pool's allocated
    main resource, and what the group's ClusterQueue holds there (when the pool counts it)."""
    pool = node.pool
    pool.advance(now)
    requests = group.requests
    _take(node.free, requests, sign)
    node.pods += sign
    used = sign * requests.get(pool.primary, 0)
    node.used += used
    if node.ready:
        pool.allocated += used
    if pool.by_queue is not None:
        pool.charge(group.run.cq, used, now)
    if node.groups is not None:
        if sign > 0:
            node.groups.append(group)
        else:
            node.groups.remove(group)


@dataclass(frozen=True, slots=True)
class NodeReady:
    kind: ClassVar[EventKind] = EventKind.NODE_READY
    node: Node


@dataclass(frozen=True, slots=True)
class NodeEvicted:
    """Azure takes the spot node back (unless it is gone already)."""
    kind: ClassVar[EventKind] = EventKind.NODE_EVICTED
    node: Node


@dataclass(frozen=True, slots=True)
class ScaleDown:
    """The node has been empty since `since` for the scale-down delay (unless it was used since)."""
    kind: ClassVar[EventKind] = EventKind.SCALE_DOWN
    node: Node
    since: float


@dataclass(frozen=True, slots=True)
class BookedReady:
    """Every node booked for the run's pods (`groups`) is Ready: its ProvisioningRequest check is Ready."""
    kind: ClassVar[EventKind] = EventKind.BOOKED_READY
    run: Any
    groups: list[PodGroup]


class NodeModel:
    """The pools of one configuration over one replay. `schedule(time, event)` puts an event on the
    engine's queue; the engine hands the node events back here."""

    def __init__(self, pools: list[PoolCapacity], startups: list[float], scale_down_delay: float,
                 schedule: Callable[[float, Event], None], spot: Optional[SpotModel] = None, by_queue: bool = False):
        """`spot`: when spot nodes are evicted (None: never); `by_queue`: count what each ClusterQueue's
        pods hold on each pool (`PoolState.queue_seconds`, for cost shares)."""
        self.pools = [PoolState(p, startup, i, by_queue) for i, (p, startup) in enumerate(zip(pools, startups))]
        self.scale_down_delay = scale_down_delay
        self.schedule = schedule
        self.spot = spot
        self.waiting: list[PodGroup] = []      # unplaced pods, in admission order
        self.booking: list[tuple[Any, list[PodGroup], bool]] = []   # ProvisioningRequests not yet booked
        self._eligible: dict[tuple, tuple[list[PoolState], Optional[str]]] = {}
        self.changed = True                   # something may let waiting pods move
        for pool in self.pools:
            for _ in range(pool.min_count):
                self._launch(pool, 0.0, ready=True)
            pool.record(0.0)

    # Where pods can go ---------------------------------------------------------------------

    def eligible(self, pod_spec: Mapping[str, Any], placement: str, flavors: list, requests: dict[str, int]
                 ) -> tuple[list[PoolState], Optional[str]]:
        """The pools a pod can run on after Kueue injected its flavors, and why none when none."""
        key = (placement, tuple(f.name for f in flavors), tuple(sorted(requests.items())))
        known = self._eligible.get(key)
        if known is not None:
            return known
        selector = dict(pod_spec.get("nodeSelector") or {})
        tolerations = list(pod_spec.get("tolerations") or [])
        for flavor in flavors:
            selector.update(flavor.node_labels)
            tolerations += list(flavor.tolerations)
        spec = {"nodeSelector": selector, "tolerations": tolerations, "affinity": pod_spec.get("affinity") or {}}
        landing = [pool for pool in self.pools if pod_lands(spec, pool.capacity)]
        found, too_small = [], []
        for pool in landing:
            problem = pool.fits_empty(requests) or (None if pool.max_count > 0 else f"pool {pool.name} has maxCount 0")
            if problem is None:
                found.append(pool)
            else:
                too_small.append(problem)
        reason = None
        if not found:
            names = ", ".join(f.name for f in flavors) or "none"
            if not landing:
                reason = (f"no node pool carries the labels {selector or '{}'} and tolerates the taints for its pods "
                          f"(flavors {names}); its pods stay Pending")
            else:
                reason = "its pods fit no node: " + "; ".join(too_small)
        answer = self._eligible[key] = (found, reason)
        return answer

    def never_placeable(self, pod_spec: Mapping[str, Any], placement: str, choices: list[list], requests: dict[str, int],
                        count: int) -> Optional[str]:
        """Why `count` pods of this kind can never all be placed, whatever flavors their ClusterQueue
        gives them (one flavor of each list in `choices`, its resource groups) and however empty the
        pools are at maxCount; None when they might be. Past `MAX_FLAVOR_CHOICES` combinations only
        the pods' requests against each pool's empty node are judged (labels and taints aside)."""
        combinations = 1
        for flavors in choices:
            combinations *= max(1, len(flavors))
        if combinations > MAX_FLAVOR_CHOICES:
            if any(pool.max_count > 0 and pool.fits_empty(requests) is None for pool in self.pools):
                return None
            return "its pods fit no node of any pool: " + "; ".join(
                pool.fits_empty(requests) or f"pool {pool.name} has maxCount 0" for pool in self.pools)
        first: Optional[str] = None
        for combination in product(*choices):
            pools, why = self.eligible(pod_spec, placement, list(combination), requests)
            room = sum(pool.max_count * pool.holds(requests) for pool in pools)
            if pools and room >= count:
                return None
            if first is None:
                first = why if not pools else (
                    f"its {count} pods need more room than pools {', '.join(p.name for p in pools)} have at "
                    f"maxCount ({room} such pods)")
        if first is not None and combinations > 1:
            first += " (and so with every flavor its ClusterQueue can assign)"
        return first

    # Admitted workloads --------------------------------------------------------------------

    def add(self, groups: list[PodGroup]) -> None:
        """Pods created for an admitted workload: they wait for `settle`."""
        self.waiting.extend(groups)
        self.changed = True

    def release(self, groups: list[PodGroup], now: float) -> None:
        """A workload's pods are gone (it finished or was evicted): their room is free again."""
        for group in groups:
            for node in group.placed:
                self._unplace(node, group, now)
            group.placed = []
            group.remaining = 0
        self.waiting = [g for g in self.waiting if g.remaining > 0]
        self.booking = [b for b in self.booking if b[1] is not groups]
        self.changed = True

    def settle(self, now: float) -> list[Any]:
        """Place what waits where there is room, ask the autoscaler for the rest; the runs whose
        pods are now all placed."""
        if not self.changed:
            return []
        self.changed = False
        started = []
        failed: set = set()
        for group in self.waiting:
            if group.signature in failed:
                continue
            while group.remaining:
                node = self._best_node(group)
                if node is None:
                    failed.add(group.signature)
                    break
                self._place(node, group, now)
            if group.remaining == 0 and all(g.remaining == 0 for g in group.run.groups):
                started.append(group.run)
        self.waiting = [g for g in self.waiting if g.remaining > 0]
        self._book_waiting(now)
        self._scale_up(now)
        return list(dict.fromkeys(started))

    def provision(self, run: Any, groups: list[PodGroup], scale_up: bool) -> None:
        """A ProvisioningRequest for the workload's pods: booked now if it can be, else when room appears."""
        self.booking.append((run, groups, scale_up))
        self.changed = True

    # Events ---------------------------------------------------------------------------------

    def node_ready(self, node: Node, now: float) -> None:
        if node.alive and not node.ready:
            node.pool.advance(now)
            node.ready = True
            node.pool.ready += 1
            node.pool.allocated += node.used  # booked pods count once their node is there
            if node.pods == 0:
                self._empty(node, now)
            self._doom(node, now)
            self.changed = True

    def evict(self, node: Node, now: float) -> list[PodGroup]:
        """Azure takes a spot node back: it is gone, and its pods with it. The groups that lost pods
        (each once, in the order their pods were placed), whose lost pods wait again; none when the
        node was gone already (scale-down removed it first)."""
        if not node.alive or node.groups is None:
            return []
        pool = node.pool
        pool.lost += len(node.groups)
        lost = list(dict.fromkeys(node.groups))
        for group in lost:
            complete = group.remaining == 0
            kept = []
            for placed in group.placed:
                if placed is node:
                    _count(node, group, now, -1)
                    group.remaining += 1
                else:
                    kept.append(placed)
            group.placed = kept
            if complete:
                self.waiting.append(group)  # new pods, created now: behind the pods already waiting
        pool.advance(now)
        node.alive = False
        pool.nodes.remove(node)
        pool.ready -= 1
        pool.evictions += 1
        pool.record(now)
        self.changed = True
        return lost

    def scale_down(self, node: Node, since: float, now: float) -> None:
        pool = node.pool
        if node.alive and node.ready and node.pods == 0 and node.empty_since == since \
                and len(pool.nodes) > pool.min_count:
            pool.advance(now)
            node.alive = False
            pool.nodes.remove(node)
            pool.ready -= 1
            pool.record(now)
            self.changed = True

    def finish(self, now: float) -> None:
        for pool in self.pools:
            pool.advance(now)

    # Inside -----------------------------------------------------------------------------------

    def _launch(self, pool: PoolState, now: float, ready: bool = False) -> Node:
        pool.advance(now)
        pool.numbers += 1
        node = Node(pool, pool.numbers, now if ready else now + pool.startup, ready)
        pool.nodes.append(node)
        pool.ready += ready
        pool.record(now)
        if not ready:
            self.schedule(node.ready_at, NodeReady(node))
        else:
            self._doom(node, now)
        return node

    def _doom(self, node: Node, now: float) -> None:
        """A spot node just Ready: its eviction, when the spot model draws one."""
        if self.spot is not None and node.groups is not None:
            at = self.spot.eviction_at(node.pool.name, node.number, now)
            if at is not None:
                self.schedule(at, NodeEvicted(node))

    def _best_node(self, group: PodGroup) -> Optional[Node]:
        """kube-scheduler's LeastAllocated choice among Ready nodes with room: the most free cpu
        and memory after the pod, as a share of the node; the first such node on a tie."""
        requests = group.requests
        wanted = tuple(requests.items())
        cpu, memory = requests.get("cpu", 0), requests.get("memory", 0)
        best, best_score = None, -1.0
        for pool in group.pools:
            if not pool.ready:
                continue
            cpu_total = pool.allocatable.get("cpu", 0) or 1
            memory_total = pool.allocatable.get("memory", 0) or 1
            for node in pool.nodes:
                if not node.ready:
                    continue
                free = node.free
                for resource, value in wanted:  # does it fit? (inline: this is the hot loop)
                    if free.get(resource, 0) < value:
                        break
                else:
                    score = (free.get("cpu", 0) - cpu) / cpu_total + (free.get("memory", 0) - memory) / memory_total
                    if score > best_score:
                        best, best_score = node, score
        return best

    def _place(self, node: Node, group: PodGroup, now: float) -> None:
        _count(node, group, now, 1)
        node.empty_since = None
        group.placed.append(node)
        group.remaining -= 1

    def _unplace(self, node: Node, group: PodGroup, now: float) -> None:
        _count(node, group, now, -1)
        if node.pods == 0 and node.alive and node.ready:
            self._empty(node, now)

    def _empty(self, node: Node, now: float) -> None:
        node.empty_since = now
        self.schedule(now + self.scale_down_delay, ScaleDown(node, now))

    def _scale_up(self, now: float) -> None:
        """New nodes for the pods that fit no Ready node: first the room of nodes on their way, then
        new nodes in the first pool with room under maxCount. A pass promises room only for itself."""
        if not self.waiting:
            return
        upcoming: dict[int, list[Node]] = {}
        for pool in self.pools:
            if pool.ready < len(pool.nodes):
                upcoming[pool.index] = [n for n in pool.nodes if not n.ready]
                for node in upcoming[pool.index]:
                    node.virtual = dict(node.free)
        failed: set = set()
        for group in self.waiting:
            if group.signature in failed:
                continue
            for _ in range(group.remaining):
                found = next((n for pool in group.pools for n in upcoming.get(pool.index, ())
                              if n.virtual is not None and _fits(n.virtual, group.requests)), None)
                if found is None:
                    spare = next((p for p in group.pools if len(p.nodes) < p.max_count), None)
                    if spare is None:
                        failed.add(group.signature)
                        break
                    found = self._launch(spare, now)
                    found.virtual = dict(found.free)
                    upcoming.setdefault(spare.index, []).append(found)
                assert found.virtual is not None
                _take(found.virtual, group.requests)
        for nodes in upcoming.values():
            for node in nodes:
                node.virtual = None

    def _book_waiting(self, now: float) -> None:
        """ProvisioningRequests: book each one whole, in order, or leave it for the next change."""
        still = []
        for run, groups, scale_up in self.booking:
            if not self._book(run, groups, scale_up, now):
                still.append((run, groups, scale_up))
        self.booking = still

    def _book(self, run: Any, groups: list[PodGroup], scale_up: bool, now: float) -> bool:
        plan: list[tuple[PodGroup, Node]] = []
        trial = {}

        def room(node: Node) -> dict[str, int]:
            if id(node) not in trial:  # a node's room is copied once, when a group first tries it
                trial[id(node)] = dict(node.free)
            return trial[id(node)]

        rest: list[tuple[PodGroup, int]] = []   # pods no node holds yet: (their group, how many)
        for group in groups:
            for booked in range(group.remaining):
                node = next((n for pool in group.pools for n in pool.nodes
                             if (n.ready or scale_up) and _fits(room(n), group.requests)), None)
                if node is None:
                    # Its pods are alike and the room only shrinks: none of the others fits either.
                    rest.append((group, group.remaining - booked))
                    break
                plan.append((group, node))
                _take(trial[id(node)], group.requests)
        new_nodes: Optional[list[tuple[PoolState, list[tuple[PodGroup, int]]]]] = []
        if rest:  # pods no ready node holds: new nodes of one pool, or nothing
            new_nodes = self._one_pool(rest) if scale_up else None
            if new_nodes is None:
                return False
        for group, node in plan:
            self._place(node, group, now)
        for pool, packing in new_nodes or []:
            node = self._launch(pool, now)
            for group, count in packing:
                for _ in range(count):
                    self._place(node, group, now)
        ready_at = max([now] + [n.ready_at for g in groups for n in g.placed])
        self.schedule(ready_at, BookedReady(run, groups))
        return True

    @staticmethod
    def _one_pool(rest: list[tuple[PodGroup, int]]) -> Optional[list[tuple[PoolState, list[tuple[PodGroup, int]]]]]:
        """The new nodes of ONE pool (the first that can) that hold every pod left (`rest`: a group and
        how many of its pods): all or nothing. First fit, pod by pod: the pods of a group are alike, so
        they fill each node that has room for them in turn, then new ones."""
        if not rest:
            return []
        common = set.intersection(*({p.index for p in group.pools} for group, _ in rest))
        for pool in rest[0][0].pools:
            if pool.index not in common:
                continue
            packing: list[dict[str, int]] = []
            assigned: list[list[tuple[PodGroup, int]]] = []
            room_left = pool.max_count - len(pool.nodes)
            for group, count in rest:
                for free, into in zip(packing, assigned):
                    fit = min(count, _how_many(free, group.requests))
                    if fit:
                        _take(free, {r: v * fit for r, v in group.requests.items()})
                        into.append((group, fit))
                        count -= fit
                    if not count:
                        break
                per_node = _how_many(pool.allocatable, group.requests)
                while count and per_node and len(packing) <= room_left:
                    fit = min(count, per_node)
                    free = dict(pool.allocatable)
                    _take(free, {r: v * fit for r, v in group.requests.items()})
                    packing.append(free)
                    assigned.append([(group, fit)])
                    count -= fit
                if count:
                    break  # this pool cannot hold them all
            else:
                if len(packing) <= room_left:
                    return [(pool, a) for a in assigned]
        return None


def _how_many(free: dict[str, int], requests: dict[str, int]) -> int:
    """How many pods asking `requests` fit `free` (`_fits`, counted)."""
    return min((free.get(resource, 0) // value for resource, value in requests.items() if value > 0), default=0)


__all__ = ["NodeModel", "PodGroup", "PoolState", "Node", "NodeReady", "NodeEvicted", "ScaleDown", "BookedReady"]
