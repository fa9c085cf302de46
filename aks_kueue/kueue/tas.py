"""Kueue v0.19.2's Topology Aware Scheduling rules that decide whether a pod set may use a flavor,
and which topology domain its pods must share.

Sources (kubernetes-sigs/kueue at v0.19.2):
- `pkg/workload/workload.go` `IsExplicitlyRequestingTAS`: a pod set asks for TAS when its
  topologyRequest sets unconstrained, required, preferred or a slice field.
- `pkg/cache/scheduler/clusterqueue.go` `isTASOnly`: every flavor of the ClusterQueue is a TAS
  flavor (has `spec.topologyName`); then TAS is implied for pod sets that do not ask for it.
- `pkg/scheduler/flavorassigner/tas_flavorassigner.go` `checkPodSetAndFlavorMatchForTAS`: a pod
  set that asks for TAS cannot use a flavor without a topology (unless its resource group covers
  none of the pod's resources), nor one whose topology lacks the requested levels; a pod set that
  does not ask for it cannot use a TAS flavor unless the ClusterQueue is TAS-only.
- `pkg/cache/scheduler/tas_flavor_snapshot.go` `HasLevel`, `levelKey`; `pkg/util/tas/tas.go`
  `PodSetSliceRequiredTopologyConstraints`: the levels a request names.
- `pkg/cache/scheduler/tas_nodes_cache.go`: TAS places pods only on nodes that exist, are
  schedulable and Ready. With a ProvisioningRequest check on the flavor, the first scheduling pass
  reserves quota without a placement (`DelayedTopologyRequest` Pending) and the topology is
  assigned once the nodes are provisioned (`tas_flavorassigner.go` `podSetTopologyRequest`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

from aks_kueue.kueue.views import ClusterQueue

_EXPLICIT = ("unconstrained", "required", "preferred", "podSetSliceRequiredTopology", "podSetSliceSize",
             "podsetSliceRequiredTopologyConstraints")


def explicitly_requests(request: Mapping[str, Any]) -> bool:
    """Whether a pod set's topologyRequest asks for TAS."""
    return any(request.get(key) not in (None, []) for key in _EXPLICIT)


def slice_constraints(request: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(level, pods per slice) of each slice constraint, outermost first."""
    many = request.get("podsetSliceRequiredTopologyConstraints")
    if isinstance(many, list) and many:
        return [(c.get("topology", ""), int(c.get("size") or 0)) for c in many if isinstance(c, dict)]
    level = request.get("podSetSliceRequiredTopology")
    if not isinstance(level, str):
        return []
    return [(level, int(request.get("podSetSliceSize") or 0))]


def requested_levels(request: Mapping[str, Any], levels: Sequence[str]) -> list[Optional[str]]:
    """Every level a request names (`HasLevel`), given the flavor's topology levels."""
    if request.get("required") is not None:
        main = request["required"]
    elif request.get("preferred") is not None:
        main = request["preferred"]
    elif slice_constraints(request):
        main = levels[0] if levels else None
    elif request.get("unconstrained"):
        main = levels[-1] if levels else None
    else:
        main = None
    named = [main] + [level for level, _ in slice_constraints(request)]
    return [n for n in named if n is not None] if main is not None else [None]


def missing_levels(request: Mapping[str, Any], levels: Sequence[str]) -> list[Optional[str]]:
    """The levels a request names that the topology lacks ([None] when it names no level at all)."""
    return [level for level in requested_levels(request, levels) if level is None or level not in levels]


@dataclass(frozen=True)
class ClusterQueueTopology:
    """What TAS needs to know of one ClusterQueue: its flavors and which of them are TAS flavors."""

    flavors: tuple[str, ...]
    tas_flavors: Mapping[str, str]            # flavor -> topology name
    covered: Mapping[str, frozenset[str]]     # flavor -> resources of its resource group

    @classmethod
    def of(cls, queue: ClusterQueue, flavor_topologies: Mapping[str, Optional[str]]) -> "ClusterQueueTopology":
        flavors: list[str] = []
        covered: dict[str, frozenset[str]] = {}
        for group in queue.resource_groups:
            for name in group.flavor_names:
                flavors.append(name)
                covered.setdefault(name, frozenset(group.covered_resources))
        tas = {f: topology for f in flavors if (topology := flavor_topologies.get(f))}
        return cls(tuple(flavors), tas, covered)

    @property
    def tas_only(self) -> bool:
        return bool(self.flavors) and all(f in self.tas_flavors for f in self.flavors)

    def mismatch(self, request: Mapping[str, Any], flavor: str, levels: Mapping[str, Sequence[str]],
                 requested_resources: Iterable[str]) -> Optional[str]:
        """Kueue's reason a pod set of this topologyRequest cannot use the flavor under TAS, or None when it can.
        `levels` maps a topology name to its levels."""
        if explicitly_requests(request) or self.tas_only:
            if not explicitly_requests(request):
                return None  # implied: every flavor of a TAS-only ClusterQueue suits
            topology = self.tas_flavors.get(flavor)
            if topology is None:
                if not set(requested_resources) & self.covered.get(flavor, frozenset()):
                    return None
                return f'Flavor "{flavor}" does not support TopologyAwareScheduling'
            if missing_levels(request, levels.get(topology, [])):
                return f'Flavor "{flavor}" does not contain the requested level'
            return None
        if flavor in self.tas_flavors:
            return f'Flavor "{flavor}" supports only TopologyAwareScheduling'
        return None
