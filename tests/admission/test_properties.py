"""Property tests of the admission core on random Kueue organisations.

Hypothesis builds random v1beta2 manifests: ResourceFlavors, Cohorts (flat, implicit
or hierarchical, some with quota of their own), ClusterQueues with borrowing and
lending limits where a cohort allows them, one LocalQueue per ClusterQueue, and
Workloads. The admission core is then checked against quota facts that follow from
the reference (sections 3 and 4 of kueue-admission.md), computed here straight from
the generated quotas and not through `aks_kueue.admission.quota`:

- on an empty cluster a Fit never asks for more than PotentialAvailable, and a
  workload is Fit exactly when some matching flavor holds it within that bound;
- fewer pods never turn a Fit into a NoFit;
- a ClusterQueue without a cohort never borrows and never passes its nominal quota;
- lendingLimit caps what the other queues of a cohort can take;
- `simulate` never admits beyond quota, keeps the tree's usage bookkeeping exact,
  and is deterministic;
- partial admission takes the most pods that fit, and a Preempt's targets are allowed
  by the queue's policies and make room for the flavors it was given.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cache
from itertools import permutations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from aks_kueue.admission import Snapshot, workload_info
from aks_kueue.admission.checks import with_admission_checks
from aks_kueue.admission.modes import FlavorAssignmentMode
from aks_kueue.admission.simulate import simulate
from aks_kueue.kueue.validate import KueueObject, validate_object

API = "kueue.x-k8s.io/v1beta2"
FIT, PREEMPT, NO_FIT = FlavorAssignmentMode.FIT, FlavorAssignmentMode.PREEMPT, FlavorAssignmentMode.NO_FIT
CPU, MEMORY = "cpu", "memory"
RESOURCES = (CPU, MEMORY)
GI = 2**30
LOCAL_QUEUE = "lq"

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEWER = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def units(resource: str, n: int) -> int:
    """Kueue's integer units for `n` cores or `n` GiB."""
    return n * 1000 if resource == CPU else n * GI


def quantity(resource: str, n: int) -> str:
    return str(n) if resource == CPU else f"{n}Gi"


# The organisation, as generated ---------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """One flavor-resource quota, in whole cores or GiB as written in the manifest."""

    nominal: int
    borrowing: int | None = None
    lending: int | None = None


@dataclass
class NodeSpec:
    name: str
    is_cohort: bool
    parent: str | None
    flavors: list[str]
    quotas: dict[tuple[str, str], Limits]
    explicit: bool = True
    extra: dict = field(default_factory=dict)

    def nominal(self, fr) -> int:
        limits = self.quotas.get(fr)
        return 0 if limits is None else units(fr[1], limits.nominal)

    def limit(self, fr, which: str) -> int | None:
        limits = self.quotas.get(fr)
        value = None if limits is None else getattr(limits, which)
        return None if value is None else units(fr[1], value)


@dataclass
class Org:
    flavors: dict[str, dict]
    cohorts: dict[str, NodeSpec]
    queues: dict[str, NodeSpec]

    def node(self, name: str, is_cohort: bool) -> NodeSpec:
        return self.cohorts[name] if is_cohort else self.queues[name]

    def children(self, cohort: str) -> list[NodeSpec]:
        return [n for n in list(self.cohorts.values()) + list(self.queues.values()) if n.parent == cohort]

    def default_fungibility(self, cq: str) -> bool:
        fungibility = self.queues[cq].extra.get("flavorFungibility") or {}
        return fungibility.get("whenCanBorrow", "MayStopSearch") == "MayStopSearch"

    def manifests(self) -> list[dict]:
        objects = []
        for name, spec in self.flavors.items():
            objects.append({"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": name},
                            "spec": spec})
        for cohort in self.cohorts.values():
            if not cohort.explicit:
                continue
            spec = _quota_spec(cohort)
            if cohort.parent:
                spec["parentName"] = cohort.parent
            objects.append({"apiVersion": API, "kind": "Cohort", "metadata": {"name": cohort.name}, "spec": spec})
        for cq in self.queues.values():
            spec = {"namespaceSelector": {}, **_quota_spec(cq), **cq.extra}
            if cq.parent:
                spec["cohortName"] = cq.parent
            objects.append({"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": cq.name}, "spec": spec})
        for cq in self.queues:
            objects.append({"apiVersion": API, "kind": "LocalQueue",
                            "metadata": {"name": LOCAL_QUEUE, "namespace": f"ns-{cq}"},
                            "spec": {"clusterQueue": cq}})
        return objects


def _quota_spec(node: NodeSpec) -> dict:
    if not node.flavors:
        return {}
    flavors = []
    for flavor in node.flavors:
        resources = []
        for resource in RESOURCES:
            limits = node.quotas[(flavor, resource)]
            entry = {"name": resource, "nominalQuota": quantity(resource, limits.nominal)}
            if limits.borrowing is not None:
                entry["borrowingLimit"] = quantity(resource, limits.borrowing)
            if limits.lending is not None:
                entry["lendingLimit"] = quantity(resource, limits.lending)
            resources.append(entry)
        flavors.append({"name": flavor, "resources": resources})
    return {"resourceGroups": [{"coveredResources": list(RESOURCES), "flavors": flavors}]}


@dataclass
class Shape:
    """One podset's request: `count` pods of `cpu` cores and `memory` GiB each."""

    count: int
    cpu: int
    memory: int
    pool: str | None = None
    min_count: int | None = None
    priority: int | None = None

    def total(self, resource: str, count: int | None = None) -> int:
        n = self.count if count is None else count
        return n * units(resource, self.cpu if resource == CPU else self.memory)

    def manifest(self, name: str, cq: str, count: int | None = None) -> dict:
        pod: dict = {"containers": [{"name": "c", "resources": {"requests": {
            CPU: quantity(CPU, self.cpu), MEMORY: quantity(MEMORY, self.memory)}}}]}
        if self.pool is not None:
            pod["nodeSelector"] = {"pool": self.pool}
        podset = {"name": "main", "count": self.count if count is None else count, "template": {"spec": pod}}
        if self.min_count is not None:
            podset["minCount"] = self.min_count
        spec: dict = {"queueName": LOCAL_QUEUE, "podSets": [podset]}
        if self.priority is not None:
            spec["priority"] = self.priority
        return {"apiVersion": API, "kind": "Workload", "metadata": {"name": name, "namespace": f"ns-{cq}"},
                "spec": spec}


# Strategies -------------------------------------------------------------------------------


@cache
def choice(options: tuple):
    """`st.sampled_from`, built once per tuple of options: building strategies inside
    every draw is what makes generation slow."""
    return st.sampled_from(options)


def _by_simplicity(quotas) -> tuple:
    return tuple(sorted(quotas, key=lambda q: (q.borrowing is not None, q.lending is not None, q.nominal)))


_NO_LIMITS = tuple(Limits(n) for n in range(7))
_CQ_LIMITS = _by_simplicity(Limits(n, b, lend) for n in range(7) for b in (None, *range(5))
                            for lend in (None, *range(n + 1)))
_COHORT_LIMITS = _by_simplicity(Limits(n, b, lend) for n in range(7) for b in (None, *range(5))
                                for lend in (None, *range(7)))
_LENDER_LIMITS = tuple(q for q in _CQ_LIMITS if q.lending is not None)
_PREEMPTION = tuple({"withinClusterQueue": within, "reclaimWithinCohort": reclaim,
                     **({"borrowWithinCohort": {"policy": "LowerPriority"}} if borrow else {})}
                    for within in ("Never", "LowerPriority", "LowerOrNewerEqualPriority")
                    for reclaim in ("Never", "LowerPriority", "Any")
                    for borrow in (False, True) if reclaim != "Never" or not borrow)
_FUNGIBILITY = tuple({"whenCanBorrow": borrow, "whenCanPreempt": preempt}
                     for borrow in ("MayStopSearch", "TryNextFlavor") for preempt in ("MayStopSearch", "TryNextFlavor"))


_QUOTAS_WITHOUT_PARENT = st.sampled_from(_NO_LIMITS)
_CQ_QUOTAS = st.sampled_from(_CQ_LIMITS)
_COHORT_QUOTAS = st.sampled_from(_COHORT_LIMITS)
_LENDER_QUOTAS = st.sampled_from(_LENDER_LIMITS)


def _draw_quotas(draw, flavors, has_parent: bool, is_cohort: bool = False, force_lending: bool = False):
    """One draw per flavor-resource. Limits only under a parent (Kueue's webhook); a
    ClusterQueue's lendingLimit is at most its nominal quota, a Cohort's is not capped."""
    if not has_parent:
        choices = _QUOTAS_WITHOUT_PARENT
    elif force_lending:
        choices = _LENDER_QUOTAS
    else:
        choices = _COHORT_QUOTAS if is_cohort else _CQ_QUOTAS
    return {(flavor, resource): draw(choices) for flavor in flavors for resource in RESOURCES}


_FLAVOR_ORDERS = {n: st.sampled_from(sorted({order[:k] for order in permutations([f"f{i}" for i in range(n)])
                                             for k in range(1, n + 1)}, key=lambda o: (len(o), o)))
                  for n in (1, 2, 3)}


def _draw_flavor_order(draw, flavors: list[str]) -> list[str]:
    """A non-empty, ordered selection of the flavors."""
    return list(draw(_FLAVOR_ORDERS[len(flavors)]))


def _draw_extra(draw, has_cohort: bool, preempting: bool = False) -> dict:
    """Optional preemption policies (reclaim only in a cohort; with `preempting`, always
    some preemption allowed) and flavorFungibility."""
    extra = {}
    allowed = [p for p in _PREEMPTION if has_cohort or p["reclaimWithinCohort"] == "Never"]
    if preempting:
        allowed = [p for p in allowed if p["withinClusterQueue"] != "Never"
                   and (p["reclaimWithinCohort"] != "Never" or not has_cohort)]
    index = draw(st.integers(0 if preempting else -1, len(allowed) - 1))
    if index >= 0:
        extra["preemption"] = copy.deepcopy(allowed[index])
    index = draw(st.integers(-1, len(_FUNGIBILITY) - 1))
    if index >= 0:
        extra["flavorFungibility"] = dict(_FUNGIBILITY[index])
    return extra


@st.composite
def organisations(draw, shape: str | None = None, lender: bool = False, preempting: bool = False) -> Org:
    """`shape`: None (anything: no cohort, implicit, flat or hierarchical cohorts) or "flat"
    (every ClusterQueue in cohort c0); `lender`: in a flat cohort, cq0 has a lendingLimit
    on every flavor-resource; `preempting`: every queue may preempt."""
    flavor_names = [f"f{i}" for i in range(draw(st.integers(1, 3)))]
    flavors = {name: ({"nodeLabels": {"pool": name}} if draw(st.booleans()) else {}) for name in flavor_names}

    cohorts: dict[str, NodeSpec] = {}
    count = 1 if shape == "flat" else draw(st.integers(0, 3))
    for i in range(count):
        name = f"c{i}"
        explicit = draw(st.booleans())
        parent = None
        if explicit and i > 0 and shape != "flat":
            parent = draw(choice((None, *sorted(cohorts))))
        own = _draw_flavor_order(draw, flavor_names) if explicit and draw(st.booleans()) else []
        quotas = _draw_quotas(draw, own, has_parent=parent is not None, is_cohort=True)
        cohorts[name] = NodeSpec(name, True, parent, own, quotas, explicit=explicit)

    queues: dict[str, NodeSpec] = {}
    for i in range(draw(st.integers(2 if lender else 1, 6))):
        name = f"cq{i}"
        cohort = "c0" if shape == "flat" else draw(choice((None, *sorted(cohorts))))
        own = _draw_flavor_order(draw, flavor_names)
        quotas = _draw_quotas(draw, own, has_parent=cohort is not None, force_lending=lender and i == 0)
        queues[name] = NodeSpec(name, False, cohort, own, quotas, extra=_draw_extra(draw, cohort is not None, preempting))
    return Org(flavors, cohorts, queues)


_REQUESTS = tuple((cpu, memory) for cpu in range(4) for memory in range(4))
_POOLS = (None, "f0", "f1", "f2")
_PRIORITIES = (None, 0, 1, 2, 3)


@st.composite
def _shapes(draw, partial: bool, priority: bool) -> Shape:
    count = draw(st.integers(1, 5))
    cpu, memory = draw(choice(_REQUESTS))
    return Shape(count, cpu, memory, pool=draw(choice(_POOLS)),
                 min_count=draw(choice((None, *range(1, count + 1)))) if partial else None,
                 priority=draw(choice(_PRIORITIES)) if priority else None)


def shapes():
    """One podset; its pods may select a flavor's `pool` label."""
    return _shapes(False, False)


_JOB_SHAPES = _shapes(True, True)  # with minCount (partial admission) and priorities


@st.composite
def scenarios(draw, shape: str | None = None, lender: bool = False, preempting: bool = False):
    """An organisation and a list of (ClusterQueue, Shape) to submit in order; with
    `lender`, nothing is submitted to cq0; with `preempting`, every queue may preempt
    and the workloads arrive in rising priority, so later ones look for victims."""
    org = draw(organisations(shape=shape, lender=lender, preempting=preempting))
    targets = tuple(sorted(org.queues)[1:] if lender else sorted(org.queues))
    jobs = draw(st.lists(st.tuples(choice(targets), _JOB_SHAPES), min_size=6 if preempting else 0, max_size=14))
    if preempting:
        jobs.sort(key=lambda job: job[1].priority or 0)
    return org, jobs


def workload_manifests(jobs) -> list[dict]:
    return [shape.manifest(f"w{i}", cq) for i, (cq, shape) in enumerate(jobs)]


# Quota facts computed from the generated organisation (reference section 3) ------------


def subtree_quota(org: Org, node: NodeSpec, fr) -> int:
    if not node.is_cohort:
        return node.nominal(fr)
    return node.nominal(fr) + sum(subtree_quota(org, child, fr) - local_quota(org, child, fr)
                                  for child in org.children(node.name))


def local_quota(org: Org, node: NodeSpec, fr) -> int:
    lending = node.limit(fr, "lending")
    return 0 if lending is None else max(0, subtree_quota(org, node, fr) - lending)


def potential(org: Org, node: NodeSpec, fr) -> int:
    if node.parent is None:
        return subtree_quota(org, node, fr)
    value = local_quota(org, node, fr) + potential(org, org.cohorts[node.parent], fr)
    borrowing = node.limit(fr, "borrowing")
    if borrowing is not None:
        value = min(subtree_quota(org, node, fr) + borrowing, value)
    return value


def flat_potential(org: Org, cq: str, fr) -> int:
    """The closed form for a ClusterQueue with no cohort or in a flat cohort."""
    node = org.queues[cq]
    if node.parent is None:
        return node.nominal(fr)
    others = sum(min(o.nominal(fr), o.limit(fr, "lending") if o.limit(fr, "lending") is not None
                     else o.nominal(fr))
                 for o in org.children(node.parent) if o.name != cq)
    value = node.nominal(fr) + others + org.cohorts[node.parent].nominal(fr)
    borrowing = node.limit(fr, "borrowing")
    return value if borrowing is None else min(node.nominal(fr) + borrowing, value)


def is_flat(org: Org, cq: str) -> bool:
    parent = org.queues[cq].parent
    return parent is None or (org.cohorts[parent].parent is None
                              and not any(c.is_cohort for c in org.children(parent)))


def flavor_matches(org: Org, flavor: str, shape: Shape) -> bool:
    labels = org.flavors[flavor].get("nodeLabels") or {}
    return shape.pool is None or "pool" not in labels or labels["pool"] == shape.pool


def all_frs(org: Org):
    return [(f, r) for f in org.flavors for r in RESOURCES]


# Replaying simulate with the snapshot in hand ---------------------------------------------


@dataclass
class Step:
    cluster_queue: str
    decision: object
    before: dict
    after_assign: dict
    after: dict


def usage_state(snapshot: Snapshot) -> dict:
    tree = snapshot.tree
    nodes = [("cq", n, node) for n, node in tree.cluster_queues.items()]
    nodes += [("cohort", n, node) for n, node in tree.cohorts.items()]
    return {(kind, name): {fr: v for fr, v in node.usage.items() if v != 0} for kind, name, node in nodes}


def replay(manifests: list[dict]) -> tuple[Snapshot, list[Step], list[dict]]:
    """What `simulate` does, step by step, keeping the snapshot and its usage per step."""
    snapshot = Snapshot.from_objects(manifests)
    steps, rows = [], []
    for order, manifest in enumerate(m for m in manifests if m.get("kind") == "Workload"):
        workload = workload_info(manifest, snapshot.priority_classes, order)
        before = usage_state(snapshot)
        decision = snapshot.assign(workload)
        after_assign = usage_state(snapshot)
        if decision.fits:
            snapshot.admit(workload, decision)
        steps.append(Step(decision.cluster_queue, decision, before, after_assign, usage_state(snapshot)))
        rows.append({"namespace": workload.namespace, "name": workload.name,
                     "clusterQueue": decision.cluster_queue, "mode": str(decision.mode),
                     "borrowing": decision.borrowing,
                     "podSets": [{"name": ps.name, "count": ps.count, "flavors": ps.flavors}
                                 for ps in decision.pod_sets],
                     "message": decision.message,
                     "preemptionTargets": [{"namespace": t.namespace, "name": t.name, "clusterQueue": t.cluster_queue}
                                           for t in decision.targets]})
    return snapshot, steps, with_admission_checks(manifests, rows)


def quota_violations(org: Org, snapshot: Snapshot) -> list[str]:
    """Every way the snapshot's usage breaks the organisation's quota."""
    tree, problems = snapshot.tree, []
    for name, spec in org.queues.items():
        node = tree.cluster_queues[name]
        for fr, used in node.usage.items():
            if fr not in spec.quotas and used:
                problems.append(f"{name} uses {fr} it has no quota for")
        for fr in spec.quotas:
            used = node.usage.get(fr, 0)
            if used < 0:
                problems.append(f"{name} {fr}: negative usage {used}")
            if used > tree.potential_available(name, fr) or used > potential(org, spec, fr):
                problems.append(f"{name} {fr}: usage {used} > potential {potential(org, spec, fr)}")
            if spec.parent is None and used > spec.nominal(fr):
                problems.append(f"{name} {fr}: no cohort, usage {used} > nominal {spec.nominal(fr)}")
            borrowing = spec.limit(fr, "borrowing")
            if borrowing is not None and used > spec.nominal(fr) + borrowing:
                problems.append(f"{name} {fr}: usage {used} > nominal + borrowingLimit")
    for name, cohort in tree.cohorts.items():
        spec = org.cohorts[name]
        for fr in all_frs(org):
            passed_up = sum(max(0, child.usage.get(fr, 0) - local_quota(org, org.node(child.name, child.is_cohort), fr))
                            for child in cohort.children)
            if cohort.usage.get(fr, 0) != passed_up:
                problems.append(f"cohort {name} {fr}: usage {cohort.usage.get(fr, 0)} != "
                                f"its children's usage beyond local quota {passed_up}")
            borrowing = spec.limit(fr, "borrowing")
            if borrowing is not None and cohort.usage.get(fr, 0) > subtree_quota(org, spec, fr) + borrowing:
                problems.append(f"cohort {name} {fr}: usage > subtree quota + borrowingLimit")
            if cohort.parent is None:
                quota = subtree_quota(org, spec, fr)
                if cohort.subtree_quota.get(fr, 0) != quota:
                    problems.append(f"cohort {name} {fr}: subtree quota {cohort.subtree_quota.get(fr, 0)} != {quota}")
                if cohort.usage.get(fr, 0) > quota:
                    problems.append(f"root {name} {fr}: usage {cohort.usage.get(fr, 0)} > subtree quota {quota}")
                members = _subtree_nodes(org, spec)
                total_usage = sum(tree.cluster_queues[n.name].usage.get(fr, 0) for n in members if not n.is_cohort)
                total_nominal = sum(n.nominal(fr) for n in members)
                kept = sum(local_quota(org, n, fr) for n in members if n is not spec)
                if total_usage > quota + kept or total_usage > total_nominal:
                    problems.append(f"root {name} {fr}: queues use {total_usage}, subtree quota {quota} "
                                    f"+ local quotas {kept}, all nominal {total_nominal}")
    return problems


def _subtree_nodes(org: Org, node: NodeSpec) -> list[NodeSpec]:
    found = [node]
    for child in org.children(node.name):
        found += _subtree_nodes(org, child) if child.is_cohort else [child]
    return found


# The generator itself ------------------------------------------------------------------------


@FEW
@given(scenarios())
def test_generated_objects_are_accepted_by_kueue(scenario):
    """Every generated object passes Kueue's schema and webhooks, and the tree has the
    cohorts the objects name (implicit ones included)."""
    org, jobs = scenario
    for manifest in org.manifests() + workload_manifests(jobs):
        assert validate_object(KueueObject(copy.deepcopy(manifest))) == [], manifest
    tree = Snapshot.from_objects(org.manifests()).tree
    referenced = {n.parent for n in list(org.cohorts.values()) + list(org.queues.values()) if n.parent}
    assert set(tree.cohorts) == {c.name for c in org.cohorts.values() if c.explicit} | referenced


# 1. Fit never exceeds PotentialAvailable ----------------------------------------------------


@SETTINGS
@given(organisations())
def test_potential_available_matches_the_quota_formulas(org):
    """PotentialAvailable is the reference's recursion (and its closed form for no or a
    flat cohort); on an empty cluster Available equals it."""
    tree = Snapshot.from_objects(org.manifests()).tree
    for name, spec in org.queues.items():
        for fr in spec.quotas:
            assert tree.potential_available(name, fr) == potential(org, spec, fr), (name, fr)
            assert tree.available(name, fr) == potential(org, spec, fr), (name, fr)
            if is_flat(org, name):
                assert tree.potential_available(name, fr) == flat_potential(org, name, fr), (name, fr)


@SETTINGS
@given(organisations(), shapes())
def test_fit_on_empty_cluster_never_exceeds_potential_available(org, shape):
    """can_ever_admit is Fit iff some matching flavor holds the whole request within
    PotentialAvailable; the usage it assigns is within it; with the default
    flavorFungibility the first such flavor wins."""
    snapshot = Snapshot.from_objects(org.manifests())
    for name, spec in org.queues.items():
        decision = snapshot.can_ever_admit(name, shape.manifest("probe", name))
        assert decision.mode in (FIT, NO_FIT), decision  # nothing to preempt on an empty cluster
        fitting = [f for f in spec.flavors if flavor_matches(org, f, shape)
                   and all(shape.total(r) <= potential(org, spec, (f, r)) for r in RESOURCES)]
        assert decision.fits == bool(fitting), (name, decision, fitting)
        if not decision.fits:
            continue
        for fr, used in decision.assignment.usage.items():
            assert used <= snapshot.tree.potential_available(name, fr), (name, fr)
            assert used == shape.total(fr[1]), (name, fr)
        [podset] = decision.pod_sets
        assert podset.count == shape.count
        chosen = podset.flavors[CPU]
        assert podset.flavors == {CPU: chosen, MEMORY: chosen}
        assert chosen in fitting
        if org.default_fungibility(name):
            assert chosen == fitting[0], (name, fitting)


@SETTINGS
@given(organisations(), shapes())
def test_fewer_pods_never_turn_fit_into_no_fit(org, shape):
    """On an empty cluster, Fit at n pods means Fit at every smaller count."""
    snapshot = Snapshot.from_objects(org.manifests())
    for name in org.queues:
        fits = [snapshot.can_ever_admit(name, shape.manifest("probe", name, count=n)).fits
                for n in range(1, shape.count + 1)]
        assert fits == sorted(fits, reverse=True), (name, fits)


# 2. A ClusterQueue without a cohort never borrows -------------------------------------------


@SETTINGS
@given(scenarios())
def test_cluster_queue_without_cohort_never_borrows(scenario):
    """No decision on a cohort-less queue says borrowing, and its usage stays within
    its nominal quota after every step."""
    org, jobs = scenario
    _, steps, _ = replay(org.manifests() + workload_manifests(jobs))
    for step in steps:
        spec = org.queues[step.cluster_queue]
        if spec.parent is not None:
            continue
        assert not step.decision.borrowing, step.decision
        for fr, used in step.after[("cq", spec.name)].items():
            assert used <= spec.nominal(fr), (spec.name, fr, used)


@SETTINGS
@given(scenarios())
def test_borrowing_flag_means_usage_above_nominal(scenario):
    """A Fit borrows exactly when, once admitted, its queue is above nominal quota on
    one of the flavor-resources it was assigned (borrowing level 0 otherwise)."""
    org, jobs = scenario
    _, steps, _ = replay(org.manifests() + workload_manifests(jobs))
    for step in steps:
        if not step.decision.fits:
            continue
        spec = org.queues[step.cluster_queue]
        after = step.after[("cq", spec.name)]
        above = any(after.get(fr, 0) > spec.nominal(fr) for fr in step.decision.assignment.usage)
        assert step.decision.borrowing == (above and spec.parent is not None), (step.decision, after)


# 3. lendingLimit caps what the other queues can take ----------------------------------------


@SETTINGS
@given(scenarios(shape="flat", lender=True))
def test_lending_limit_caps_what_other_queues_borrow(scenario):
    """Flat cohort; workloads go to every queue but cq0, which has lendingLimits.
    After every step, what queues above nominal borrow is at most the cohort's own
    quota plus what the others still have unused of their lendable quota
    (min(nominal, lendingLimit)). At the end cq0 can still take its unlent quota,
    nominal - lendingLimit, on its first flavor without borrowing."""
    org, jobs = scenario
    snapshot, steps, _ = replay(org.manifests() + workload_manifests(jobs))
    cohort = org.cohorts["c0"]
    for step in steps:
        for fr in all_frs(org):
            borrowed, spare = 0, cohort.nominal(fr)
            for name, spec in org.queues.items():
                used = step.after[("cq", name)].get(fr, 0)
                nominal = spec.nominal(fr)
                if used > nominal:
                    borrowed += used - nominal
                else:
                    lending = spec.limit(fr, "lending")
                    lendable = nominal if lending is None else min(nominal, lending)
                    spare += min(lendable, nominal - used)
            assert borrowed <= spare, (fr, step.after)
    lender = org.queues["cq0"]
    assert not any(snapshot.tree.cluster_queues["cq0"].usage.values())
    for fr in lender.quotas:
        kept = lender.nominal(fr) - min(lender.nominal(fr), lender.limit(fr, "lending"))
        assert snapshot.tree.available("cq0", fr) >= kept, fr
    first = lender.flavors[0]
    kept = {r: lender.quotas[(first, r)].nominal - lender.quotas[(first, r)].lending for r in RESOURCES}
    probe = Shape(1, kept[CPU], kept[MEMORY])
    decision = snapshot.assign(workload_info(probe.manifest("reclaim", "cq0")))
    assert decision.fits and not decision.borrowing, decision
    assert decision.pod_sets[0].flavors == {CPU: first, MEMORY: first}


# 4. simulate never admits beyond quota -------------------------------------------------------


@SETTINGS
@given(scenarios())
def test_simulate_never_admits_beyond_quota(scenario):
    """simulate's loop, checking `quota_violations` after every admission: usage within
    PotentialAvailable, nominal without a cohort, borrowingLimits; every cohort's usage
    equals what its children use beyond their local quota; a root cohort's usage within
    its subtree quota, and its queues' total within that plus the local quotas."""
    org, jobs = scenario
    snapshot = Snapshot.from_objects(org.manifests())
    assert quota_violations(org, snapshot) == []
    for order, manifest in enumerate(workload_manifests(jobs)):
        workload = workload_info(manifest, snapshot.priority_classes, order)
        decision = snapshot.assign(workload)
        if decision.fits:
            for fr, value in decision.assignment.usage.items():
                assert value <= snapshot.tree.available(decision.cluster_queue, fr), (fr, decision)
            snapshot.admit(workload, decision)
        assert quota_violations(org, snapshot) == [], decision


@SETTINGS
@given(scenarios())
def test_assign_without_admit_leaves_usage_unchanged(scenario):
    """Deciding (including the preemption simulation) changes no usage anywhere in
    the tree; only admitting a Fit does."""
    org, jobs = scenario
    _, steps, _ = replay(org.manifests() + workload_manifests(jobs))
    for step in steps:
        assert step.after_assign == step.before, step.decision
        if not step.decision.fits:
            assert step.after == step.before, step.decision


# Partial admission, preemption targets and can_ever_admit -----------------------------------


def _policy_allows(policy: str, preemptor, target) -> bool:
    """Kueue's preemption policies, for a target admitted before the preemptor arrived."""
    if policy == "Any":
        return True
    lower = target.priority < preemptor.priority
    if policy == "LowerOrNewerEqualPriority":
        return lower or (target.priority == preemptor.priority and target.created > preemptor.created)
    return policy == "LowerPriority" and lower


def _assert_reclaimable(org: Org, snapshot: Snapshot, roots: dict, cq: str, preemptor, target, frs) -> None:
    """A target in another queue: of the same cohort tree, allowed by reclaimWithinCohort, and its
    queue above nominal on a contested flavor-resource."""
    owner = target.admission.cluster_queue
    assert roots[owner] == roots[cq]
    policies = org.queues[cq].extra.get("preemption") or {}
    assert _policy_allows(policies.get("reclaimWithinCohort", "Never"), preemptor, target)
    usage = snapshot.tree.cluster_queues[owner].usage
    assert any(usage.get(fr, 0) > org.queues[owner].nominal(fr) for fr in frs), (owner, frs)


def _remove_targets_and_check_room(snapshot: Snapshot, cq: str, decision) -> None:
    """Without its targets, the workload's usage fits the flavors it was given (they stay removed)."""
    for target in decision.targets:
        snapshot.remove_workload(target.workload)
    for fr, value in decision.assignment.usage.items():
        assert value <= snapshot.tree.available(cq, fr), (fr, decision)


def _moves_to_another_flavor() -> tuple[Org, list]:
    """Found by this property (and kept as an explicit example): cq2 borrows cpu on f0 and
    preempts its own w8 for f0's memory; once w8 is gone, f0 fits only by borrowing, so
    with `whenCanBorrow: TryNextFlavor` Kueue looks on and stops at f1, where it would
    reclaim cq0's borrowed memory. Kueue v0.19.2 decides the same (flavorassigner.go
    findFlavorForPodSets: the representative mode keeps the preemption mode and loses
    cpu's borrowing level; scheduler.go markPreemptionOutcome restarts at flavor 0),
    so "Fit once the targets are gone" only holds for the flavors it was given."""
    stop = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}
    preemption = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "LowerPriority"}
    one = {("f0", CPU): Limits(1), ("f0", MEMORY): Limits(0), ("f1", CPU): Limits(1), ("f1", MEMORY): Limits(0)}
    queues = {
        "cq0": NodeSpec("cq0", False, "c0", ["f0", "f1"], one,
                        extra={"preemption": dict(preemption), "flavorFungibility": dict(stop)}),
        "cq1": NodeSpec("cq1", False, "c0", ["f0"], {("f0", CPU): Limits(0), ("f0", MEMORY): Limits(0)},
                        extra={"preemption": dict(preemption), "flavorFungibility": dict(stop)}),
        "cq2": NodeSpec("cq2", False, "c0", ["f0", "f1"],
                        {("f0", CPU): Limits(5, None, 0), ("f0", MEMORY): Limits(2, None, 0),
                         ("f1", CPU): Limits(5), ("f1", MEMORY): Limits(2)},
                        extra={"preemption": dict(preemption),
                               "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"}}),
    }
    org = Org({"f0": {}, "f1": {}}, {"c0": NodeSpec("c0", True, None, [], {}, explicit=False)}, queues)
    jobs = [("cq0", Shape(1, 0, 0))] * 7 + [("cq0", Shape(1, 0, 1)), ("cq2", Shape(1, 0, 1)),
                                            ("cq2", Shape(2, 3, 1, priority=1))]
    return org, jobs


@SETTINGS
@given(scenarios(preempting=True) | scenarios(shape="flat", preempting=True))
@example(_moves_to_another_flavor())
def test_partial_admission_and_preemption_targets(scenario):
    """Along simulate's loop: a partial Fit admits between minCount and count pods, and
    one pod more would not be Fit; a Preempt's targets are admitted workloads its
    ClusterQueue's policies allow (its own queue by withinClusterQueue, another queue
    of the same cohort tree by reclaimWithinCohort, and only if that queue is above
    nominal on a flavor-resource in question); without them the workload's usage fits
    the flavors it was given (what Kueue's preemptor guarantees), and deciding again is
    Fit when the queue stops at a flavor it can borrow on (`whenCanBorrow:
    MayStopSearch`, the default). With `TryNextFlavor` it may look past that flavor,
    and preempt elsewhere: see `_moves_to_another_flavor`."""
    org, jobs = scenario
    snapshot = Snapshot.from_objects(org.manifests())
    roots = {name: snapshot.tree.cluster_queues[name].root().name for name in org.queues}
    for order, ((cq, shape), manifest) in enumerate(zip(jobs, workload_manifests(jobs))):
        workload = workload_info(manifest, snapshot.priority_classes, order)
        before = usage_state(snapshot)
        decision = snapshot.assign(workload)
        assert usage_state(snapshot) == before, decision  # the preemption search undoes its removals
        counts = [ps.count for ps in decision.pod_sets]
        if decision.mode in (FIT, PREEMPT):
            assert len(counts) == 1 and (shape.min_count or shape.count) <= counts[0] <= shape.count, decision
        if decision.fits and counts[0] < shape.count:
            bigger = Shape(counts[0] + 1, shape.cpu, shape.memory, shape.pool, None, shape.priority)
            assert not snapshot.assign(workload_info(bigger.manifest(workload.name, cq),
                                                     snapshot.priority_classes, order)).fits, decision
        if decision.mode is PREEMPT and decision.targets:
            policies = org.queues[cq].extra.get("preemption") or {}
            frs = decision.assignment.frs_needing_preemption()
            for target in (t.workload for t in decision.targets):
                owner = target.admission.cluster_queue
                assert target.key in {w.key for w in snapshot.admitted(owner)}
                if owner == cq:
                    assert _policy_allows(policies.get("withinClusterQueue", "Never"), workload, target)
                else:
                    assert owner != roots[owner]
                    _assert_reclaimable(org, snapshot, roots, cq, workload, target, frs)
            _remove_targets_and_check_room(snapshot, cq, decision)
            smaller = Shape(counts[0], shape.cpu, shape.memory, shape.pool, None, shape.priority)
            again = snapshot.assign(workload_info(smaller.manifest(workload.name, cq), snapshot.priority_classes, order))
            if org.default_fungibility(cq):
                assert again.fits, (decision, again)
            for target in decision.targets:
                snapshot.add_workload(target.workload)
        if decision.fits:
            snapshot.admit(workload, decision)


@FEWER
@given(scenarios(preempting=True) | scenarios(shape="flat", preempting=True))
def test_fair_sharing_targets_are_allowed_and_make_room(scenario):
    """With fair sharing on, along simulate's loop: deciding changes no usage; a Preempt's targets
    are admitted workloads of the preemptor's queue (withinClusterQueue) or of a queue of its tree that
    borrows on a contested flavor-resource (reclaimWithinCohort), each with the reason fair sharing
    gives; without them the workload's usage fits the flavors it was given."""
    from aks_kueue.admission.configuration import SchedulerConfig
    from aks_kueue.admission.fair_sharing import FairSharing
    from aks_kueue.admission.modes import PreemptionReason

    org, jobs = scenario
    snapshot = Snapshot.from_objects(org.manifests(), scheduler=SchedulerConfig(fair_sharing=FairSharing()))
    roots = {name: snapshot.tree.cluster_queues[name].root().name for name in org.queues}
    for order, ((cq, _), manifest) in enumerate(zip(jobs, workload_manifests(jobs))):
        workload = workload_info(manifest, snapshot.priority_classes, order)
        before = usage_state(snapshot)
        decision = snapshot.assign(workload)
        assert usage_state(snapshot) == before, decision
        if decision.mode is PREEMPT and decision.targets:
            policies = org.queues[cq].extra.get("preemption") or {}
            frs = decision.assignment.frs_needing_preemption()
            for target in decision.targets:
                owner = target.cluster_queue
                if owner == cq:
                    assert target.reason is PreemptionReason.IN_CLUSTER_QUEUE
                    assert _policy_allows(policies.get("withinClusterQueue", "Never"), workload, target.workload)
                else:
                    assert target.reason in (PreemptionReason.IN_COHORT_RECLAMATION,
                                             PreemptionReason.IN_COHORT_FAIR_SHARING), target.reason
                    _assert_reclaimable(org, snapshot, roots, cq, workload, target.workload, frs)
            _remove_targets_and_check_room(snapshot, cq, decision)
            for target in decision.targets:
                snapshot.add_workload(target.workload)
        if decision.fits:
            snapshot.admit(workload, decision)


def _verdict(decision) -> tuple:
    return (decision.cluster_queue, decision.mode, decision.borrowing, decision.message,
            [(ps.name, ps.count, ps.flavors) for ps in decision.pod_sets],
            [(t.workload.uid, t.reason) for t in decision.targets])


@FEWER
@given(st.booleans(), scenarios(preempting=True) | scenarios(shape="flat", preempting=True))
def test_a_remembered_decision_is_the_decision_made_again(fair, scenario):
    """The core keeps a decision while what it read of the cohort tree is unchanged (`_still_fits`,
    `_unchanged`: with fair sharing, no candidate anywhere in the tree that borrows). Along simulate's
    loop, with each job submitted twice in a row (the second asks what the first's admission may have
    changed), a Preempt's targets removed and the preemptor admitted, and every third step the oldest
    admitted workload finishing, every decision equals the one a snapshot that remembers nothing
    makes, with fair sharing off and on."""
    from aks_kueue.admission.configuration import CLASSICAL, SchedulerConfig
    from aks_kueue.admission.fair_sharing import FairSharing

    org, jobs = scenario
    scheduler = SchedulerConfig(fair_sharing=FairSharing()) if fair else CLASSICAL
    snapshots = [Snapshot.from_objects(org.manifests(), scheduler=scheduler) for _ in range(2)]
    admitted: list[list] = [[], []]
    twice = [job for job in jobs for _ in range(2)]
    for order, manifest in enumerate(workload_manifests(twice)):
        snapshots[1]._decisions.clear()  # the one that remembers nothing
        workloads = [workload_info(manifest, snapshot.priority_classes, order) for snapshot in snapshots]
        decisions = [snapshot.assign(workload) for snapshot, workload in zip(snapshots, workloads)]
        assert _verdict(decisions[0]) == _verdict(decisions[1]), order
        for snapshot, workload, decision, held in zip(snapshots, workloads, decisions, admitted):
            if decision.mode is PREEMPT and decision.targets:
                for target in decision.targets:
                    snapshot.remove_workload(target.workload)
                    held.remove(target.workload.uid)
                decision = snapshot.assign(workload)
            if decision.fits:
                snapshot.admit(workload, decision)
                held.append(workload.uid)
            if order % 3 == 2 and held:
                snapshot.remove_workload(snapshot.workloads_by_uid[held.pop(0)])


@FEW
@given(scenarios(), shapes())
def test_can_ever_admit_ignores_admitted_workloads(scenario, shape):
    """After a simulation, can_ever_admit still answers as on the empty cluster."""
    org, jobs = scenario
    busy, _, _ = replay(org.manifests() + workload_manifests(jobs))
    empty = Snapshot.from_objects(org.manifests())
    for name in org.queues:
        probe = shape.manifest("probe", name)
        got, want = busy.can_ever_admit(name, probe), empty.can_ever_admit(name, probe)
        assert (got.mode, got.borrowing, got.pod_sets, got.message) == \
            (want.mode, want.borrowing, want.pod_sets, want.message), name


# Determinism ---------------------------------------------------------------------------------


@FEWER
@given(scenarios(), st.randoms(use_true_random=False))
def test_simulate_is_deterministic(scenario, random):
    """Same input, same output; the input is not modified; the step-by-step replay
    agrees; and the order of the non-Workload objects does not matter."""
    org, jobs = scenario
    manifests = org.manifests() + workload_manifests(jobs)
    pristine = copy.deepcopy(manifests)
    first = simulate(manifests)
    assert manifests == pristine  # simulate does not touch its input
    assert simulate(manifests) == first
    assert replay(copy.deepcopy(manifests))[2] == first
    others = [m for m in manifests if m["kind"] != "Workload"]
    random.shuffle(others)
    assert simulate(others + [m for m in manifests if m["kind"] == "Workload"]) == first
