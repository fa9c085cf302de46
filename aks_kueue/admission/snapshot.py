"""A snapshot of Kueue's state, and the questions the rest of the product asks of it.

Build one from v1beta2 manifests (`Snapshot.from_objects`, with the Kueue Configuration's
resource exclusions and transformations when it has any); `assign` is what Kueue's scheduler
would decide for a pending workload now (partial admission included), `can_ever_admit` the same
on an empty cluster, which is what feasibility checks need. Usage changes only through `admit`,
`add_workload` and `remove_workload`: they tell the decision memo that the cohort tree changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional

from aks_kueue.admission.admission_fair_sharing import (USAGE_BASED, AfsUsageLedger, as_quantities,
                                                        should_apply_entry_penalty)
from aks_kueue.admission.admitted import AdmittedWorkloads
from aks_kueue.admission.assigner import Assignment, FlavorAssigner, Trail
from aks_kueue.admission.configuration import CLASSICAL, SchedulerConfig
from aks_kueue.admission.fair_sharing import DRS, FairSharing, dominant_resource_share
from aks_kueue.admission.flavors import FlavorMatches
from aks_kueue.admission.models import ClusterQueueInfo
from aks_kueue.admission.modes import FlavorAssignmentMode
from aks_kueue.admission.partial import reduce_counts
from aks_kueue.admission.preemption import PreemptionTarget, Preemptor
from aks_kueue.admission.quota import QuotaNode, QuotaTree, available, borrowing_height, cohorts_in_cycles
from aks_kueue.admission.workloads import (Admission, PodSetInfo, WorkloadInfo, holds_quota, podset_info,
                                           workload_info)
from aks_kueue.k8s.quantity import QuantityError, parse_quantity
from aks_kueue.k8s.scheduling import label_selector_matches
from aks_kueue.kueue.transformations import NO_RULES, ResourceRules
from aks_kueue.kueue.units import PODS
from aks_kueue.kueue.views import ClusterQueue, Cohort, LocalQueue, PodSet, ResourceFlavor, WorkloadPriorityClass

FIT, PREEMPT, NO_FIT = FlavorAssignmentMode.FIT, FlavorAssignmentMode.PREEMPT, FlavorAssignmentMode.NO_FIT

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# Decisions and preemption answers remembered at most; past that the memo starts over.
MEMO_LIMIT = 4096
TEMPLATES = 4  # full assignments kept per decision key to be re-worded (`Snapshot._decide`)


@dataclass
class PodSetDecision:
    name: str
    count: int
    flavors: dict[str, str]


@dataclass
class Decision:
    """Kueue's verdict for one workload, in the contract's terms. `targets` are the
    admitted workloads Kueue would preempt for a Preempt; a Preempt without targets
    is one nothing can be preempted for (the workload waits)."""

    cluster_queue: Optional[str]
    mode: FlavorAssignmentMode
    borrowing: bool
    pod_sets: list[PodSetDecision]
    message: str = ""
    assignment: Optional[Assignment] = field(default=None, repr=False)
    targets: list[PreemptionTarget] = field(default_factory=list, repr=False)

    @property
    def fits(self) -> bool:
        return self.mode is FIT


class Snapshot:
    def __init__(self):
        self.flavors: dict[str, ResourceFlavor] = {}
        self.cluster_queues: dict[str, ClusterQueueInfo] = {}
        self.tree = QuotaTree()
        self.local_queues: dict[tuple[str, str], LocalQueue] = {}
        self.priority_classes: dict[str, int] = {}
        self.namespace_labels: dict[str, dict[str, str]] = {}
        self._admitted: dict[str, AdmittedWorkloads] = {}
        self.workloads_by_uid: dict[str, WorkloadInfo] = {}
        self._latest_reservation = 0.0
        self.flavor_matches = FlavorMatches(self.flavors)
        self._namespace_answers: dict[tuple[str, str], bool] = {}  # selectors and labels never change
        self.preemptor = Preemptor(self)
        # The Configuration's fairSharing and admissionFairSharing (`configuration`).
        self.scheduler: SchedulerConfig = CLASSICAL
        self.fair_sharing: Optional[FairSharing] = None
        # Per LocalQueue usage for admission fair sharing, when it is on.
        self.afs: Optional[AfsUsageLedger] = None
        # The Configuration's resources.excludeResourcePrefixes and transformations.
        self.resource_rules: ResourceRules = NO_RULES
        # Decisions are a pure function of the workload's shape and priority and of the
        # admitted state of its queue's cohort tree, so they are remembered per tree
        # until something is admitted to or removed from that tree.
        self._generation: dict[QuotaNode, int] = {}
        # Per key: the cohort tree's generation, the decision, what it read (`_state`), and the last
        # few full assignments with the assigner's questions, the latest first (one is re-worded when
        # a fresh decision would find it again, `FlavorAssigner.reword`), and what `_still_fits` asks.
        self._decisions: dict[tuple, tuple[int, Decision, Optional[tuple], Templates, Optional[FitChecks]]] = {}
        self._single_flavor: dict[tuple, Optional[frozenset]] = {}
        self._reads: dict[tuple, tuple] = {}  # `_usage_along`'s usage dicts, per queue and flavor-resources
        self._admission_flavors: dict[int, tuple[Assignment, list[dict[str, str]]]] = {}   # `_flavors_of`

    @classmethod
    def from_objects(cls, manifests: Iterable[dict], resource_rules: ResourceRules = NO_RULES,
                     scheduler: SchedulerConfig = CLASSICAL) -> "Snapshot":
        """Kueue v1beta2 manifests: flavors, cohorts, queues, priority classes, Namespaces
        (for their labels) and Workloads; an admitted Workload's usage is counted.
        `resource_rules`: what the Kueue Configuration in force excludes and transforms;
        `scheduler`: whether it turns fair sharing and admission fair sharing on."""
        snapshot = cls()
        snapshot.resource_rules = resource_rules
        snapshot.scheduler, snapshot.fair_sharing = scheduler, scheduler.fair_sharing
        by_kind: dict[str, list[dict]] = {}
        for manifest in manifests:
            by_kind.setdefault(manifest.get("kind", ""), []).append(manifest)
        for flavor in map(ResourceFlavor.of, by_kind.get("ResourceFlavor", [])):
            snapshot.flavors[flavor.name] = flavor
        for wpc in map(WorkloadPriorityClass.of, by_kind.get("WorkloadPriorityClass", [])):
            snapshot.priority_classes[wpc.name] = wpc.value
        for namespace in by_kind.get("Namespace", []):
            # A Namespace is not Kueue's, nor validated here: read as Kubernetes would default it.
            metadata = namespace.get("metadata") or {}
            snapshot.namespace_labels[metadata.get("name", "")] = dict(metadata.get("labels") or {})
        cohorts = [Cohort.of(m) for m in by_kind.get("Cohort", [])]
        looping = cohorts_in_cycles(cohorts)
        # Kueue disables every queue under a cohort cycle; the tree is built with the loop cut.
        cohorts = [replace(c, parent=None) if c.name in looping else c for c in cohorts]
        queues = [ClusterQueue.of(m) for m in by_kind.get("ClusterQueue", [])]
        snapshot.tree = QuotaTree.from_views([*cohorts, *queues])
        if scheduler.fair_sharing is not None:
            snapshot.tree.count_usage_changes()  # shares are kept while usage stays
        for queue in queues:
            cq = ClusterQueueInfo.of(queue, snapshot.tree.cluster_queues[queue.name], set(snapshot.flavors))
            cq.in_cohort_cycle = any(node.name in looping for node in cq.node.ancestors())
            snapshot.cluster_queues[queue.name] = cq
        local_queues = [LocalQueue.of(m) for m in by_kind.get("LocalQueue", [])]
        for lq in local_queues:
            snapshot.local_queues[(lq.namespace, lq.name)] = lq
        if scheduler.admission_fair_sharing is not None:
            snapshot.afs = AfsUsageLedger(scheduler.admission_fair_sharing,
                                          {key: lq.fair_weight for key, lq in snapshot.local_queues.items()})
            for lq, manifest in zip(local_queues, by_kind.get("LocalQueue", [])):
                consumed = _consumed_resources(manifest)
                if consumed:  # the usage Kueue persisted in the LocalQueue's status seeds its ledger
                    snapshot.afs.seed((lq.namespace, lq.name), consumed, 0.0)
        for order, manifest in enumerate(by_kind.get("Workload", [])):
            if not holds_quota(manifest):
                continue  # pending: the caller decides it
            info = snapshot.workload_info(manifest, order)
            if info.admission is not None and info.admission.cluster_queue in snapshot.cluster_queues:
                snapshot.add_workload(info)
        return snapshot

    # Lookups -----------------------------------------------------------------------------

    def workload_info(self, manifest: dict, order: float = 0.0) -> WorkloadInfo:
        """A Workload manifest with this snapshot's priority classes and resource rules."""
        return workload_info(manifest, self.priority_classes, order, self.resource_rules)

    def podset_infos(self, pod_sets: Iterable[PodSet]) -> list[PodSetInfo]:
        """Pod sets with this snapshot's resource rules."""
        return [podset_info(pod_set, 0, self.resource_rules) for pod_set in pod_sets]

    def cluster_queue_for(self, namespace: str, local_queue: str) -> Optional[str]:
        lq = self.local_queues.get((namespace, local_queue))
        return None if lq is None else lq.cluster_queue

    def admitted(self, cluster_queue: str) -> Iterable[WorkloadInfo]:
        return iter(self.admitted_index(cluster_queue))

    def admitted_index(self, cluster_queue: str) -> AdmittedWorkloads:
        index = self._admitted.get(cluster_queue)
        if index is None:
            index = self._admitted[cluster_queue] = AdmittedWorkloads()
        return index

    # Usage ---------------------------------------------------------------------------------

    def add_workload(self, workload: WorkloadInfo) -> None:
        admission = workload.admission
        assert admission is not None  # an admitted workload's
        cluster_queue = admission.cluster_queue
        self.admitted_index(cluster_queue).add(workload)
        self.workloads_by_uid[workload.uid] = workload
        self._latest_reservation = max(self._latest_reservation, workload.reserved)
        self.tree.add_usage(cluster_queue, admission.usage)  # `restore_usage`, one call less a workload
        self._changed(cluster_queue)

    def remove_workload(self, workload: WorkloadInfo) -> None:
        admission = workload.admission
        assert admission is not None  # an admitted workload's
        cluster_queue = admission.cluster_queue
        self._admitted[cluster_queue].remove(workload)
        del self.workloads_by_uid[workload.uid]
        self.tree.remove_usage(cluster_queue, admission.usage)  # `lift_usage`, one call less a workload
        self._changed(cluster_queue)

    def generation(self, cq: ClusterQueueInfo):
        """How many times admitted work in the queue's cohort tree has changed (with admission
        fair sharing, and LocalQueue usages: they order preemption candidates)."""
        generation = self._generation.get(cq.node.root(), 0)
        return generation if self.afs is None else (generation, self.afs.version)

    def uses_admission_fair_sharing(self, cluster_queue: str) -> bool:
        """Does admission fair sharing order this ClusterQueue's LocalQueues?"""
        cq = self.cluster_queues.get(cluster_queue)
        return self.afs is not None and cq is not None and cq.admission_mode == USAGE_BASED

    def local_queue_usage(self, workload: WorkloadInfo) -> Optional[float]:
        """The usage of the workload's LocalQueue, as admission fair sharing weighs it; None when
        its ClusterQueue does not use admission fair sharing."""
        cluster_queue = workload.admission.cluster_queue if workload.admission is not None else None
        if self.afs is None or cluster_queue is None or not self.uses_admission_fair_sharing(cluster_queue):
            return None
        return self.afs.usage((workload.namespace, workload.queue_name))

    # Admission fair sharing's workload events, in the caller's (virtual) time ----------------

    def reserved_by(self, workload: WorkloadInfo, now: float) -> None:
        """The workload reserved quota: its LocalQueue's entry penalty (shouldApplyEntryPenalty)."""
        if self.afs is None:
            return  # (asked for every reservation; only admission fair sharing has an entry penalty)
        admission = workload.admission
        cq = self.cluster_queues.get(admission.cluster_queue) if admission is not None else None
        if self.afs is not None and admission is not None and cq is not None and should_apply_entry_penalty(
                self.afs.config, cq.admission_mode, holds_reservation=False):
            self.afs.reserved((workload.namespace, workload.queue_name), workload.uid,
                              as_quantities(admission.usage), now)

    def admitted_at(self, workload: WorkloadInfo, now: float) -> None:
        """The workload is admitted (its checks Ready): its usage counts and its penalty settles."""
        admission = workload.admission
        if self.afs is not None and admission is not None and self.uses_admission_fair_sharing(admission.cluster_queue):
            self.afs.admitted((workload.namespace, workload.queue_name), workload.uid,
                              as_quantities(admission.usage), now)

    def released_at(self, workload: WorkloadInfo, now: float, was_admitted: bool, finished: bool) -> None:
        """The workload gives its quota back (call before `remove_workload`)."""
        admission = workload.admission
        if self.afs is not None and admission is not None and self.uses_admission_fair_sharing(admission.cluster_queue):
            self.afs.released((workload.namespace, workload.queue_name), workload.uid,
                              as_quantities(admission.usage) if was_admitted else None, now, finished)

    def dominant_resource_share(self, name: str) -> DRS:
        """The share of a ClusterQueue, or of a Cohort when no ClusterQueue has the name."""
        node = self.tree.cluster_queues.get(name) or self.tree.cohorts[name]
        return dominant_resource_share(node)

    def _changed(self, cluster_queue: str) -> None:
        root = self.tree.cluster_queues[cluster_queue].root()
        self._generation[root] = self._generation.get(root, 0) + 1

    def lift_usage(self, workload: WorkloadInfo, usage: Optional[dict] = None) -> None:
        """Take an admitted workload's usage (or the part of it given) out of the tree for a
        moment, as the preemption search does. Remembered decisions stay, so it must be
        undone by `restore_usage` before the next decision; to really remove a workload,
        use `remove_workload`."""
        admission = workload.admission
        assert admission is not None  # an admitted workload's
        self.tree.remove_usage(admission.cluster_queue, admission.usage if usage is None else usage)

    def restore_usage(self, workload: WorkloadInfo, usage: Optional[dict] = None) -> None:
        """Put back what `lift_usage` took (also how `add_workload` counts a workload)."""
        admission = workload.admission
        assert admission is not None  # an admitted workload's
        self.tree.add_usage(admission.cluster_queue, admission.usage if usage is None else usage)

    def admit(self, workload: WorkloadInfo, decision: Decision) -> None:
        """Count a Fit decision's usage, as Kueue does when it reserves quota."""
        assignment = decision.assignment
        assert assignment is not None and decision.cluster_queue is not None  # a Fit has both
        workload.admission = Admission(decision.cluster_queue, dict(assignment.usage), self._flavors_of(assignment))
        workload.reserved = self._latest_reservation + 1  # the most recent reservation so far
        self.add_workload(workload)

    def _flavors_of(self, assignment: Assignment) -> list[dict[str, str]]:
        """Each pod set's flavor per resource, as an admission records them: made once per assignment (a
        remembered decision's serves many workloads) and shared, as no admission's is ever changed."""
        known = self._admission_flavors.get(id(assignment))
        if known is not None and known[0] is assignment:
            return known[1]
        if len(self._admission_flavors) >= MEMO_LIMIT:
            self._admission_flavors.clear()
        found = [{r: f.name for r, f in ps.flavors.items()} for ps in assignment.podsets]
        self._admission_flavors[id(assignment)] = (assignment, found)  # the assignment kept: its id stays its own
        return found

    def fits(self, cluster_queue: str, usage: dict, without: Iterable[WorkloadInfo] = ()) -> bool:
        """Kueue's ClusterQueueSnapshot.Fits: every flavor-resource of `usage` within what the queue
        could take now, with the usage of `without` (admitted workloads about to be preempted)
        taken out for the answer, as the scheduler's `fits` does."""
        node = self.tree.cluster_queues[cluster_queue]
        if not without:  # nothing to take out (most admissions): no try, no list (a generator is truthy)
            for fr, value in usage.items():
                if value > available(node, fr):
                    return False
            return True
        lifted = list(without)
        for workload in lifted:
            self.lift_usage(workload)
        try:
            for fr, value in usage.items():  # a loop, not all() over a generator: asked for every admission
                if value > available(node, fr):
                    return False
            return True
        finally:
            for workload in lifted:
                self.restore_usage(workload)

    def reserve(self, cluster_queue: str, usage: dict) -> None:
        """Hold quota for the rest of a scheduling cycle (a preemptor's, or what a Preempt without
        candidates keeps from others, as Kueue adds it to the cycle's snapshot). Remembered
        decisions stay: `unreserve` must give it back before the next decision."""
        self.tree.add_usage(cluster_queue, usage)

    def unreserve(self, cluster_queue: str, usage: dict) -> None:
        self.tree.remove_usage(cluster_queue, usage)

    def namespace_matches(self, cluster_queue: str, namespace: str) -> bool:
        """Does the ClusterQueue's namespaceSelector admit workloads of this namespace?"""
        return self._namespace_matches(self.cluster_queues[cluster_queue], namespace)

    # Decisions -------------------------------------------------------------------------------

    def assign(self, workload: WorkloadInfo, cluster_queue: Optional[str] = None) -> Decision:
        """Kueue's decision for a pending workload against the current usage."""
        name = cluster_queue
        if name is None and not workload.queue_name:
            return _refused(None, "spec.queueName is not set: no LocalQueue sends this workload to Kueue")
        if name is None:
            lq = self.local_queues.get((workload.namespace, workload.queue_name))
            if lq is None:
                return _refused(None, f"LocalQueue {workload.queue_name} doesn't exist")
            if lq.stopped:
                return _refused(lq.cluster_queue, f"LocalQueue {workload.queue_name} is inactive")
            name = lq.cluster_queue
        cq = self.cluster_queues.get(name)
        if cq is None:
            return _refused(name, f"ClusterQueue {name} doesn't exist")
        if cq.stopped or cq.missing_flavors or cq.in_cohort_cycle:
            return _refused(name, f"ClusterQueue {name} is inactive")
        if not self._namespace_matches(cq, workload.namespace):
            return _refused(name, "workload namespace doesn't match ClusterQueue selector")
        generation = self.generation(cq)
        key = (name, workload.shape, workload.priority, workload.created if cq.compares_age else None)
        remembered = self._decisions.get(key)
        templates: Templates = ()
        if remembered is not None:
            known_generation, decision, state, templates, checks = remembered
            if known_generation == generation or _still_fits(cq, checks) or (
                    state is not None and self._unchanged(cq, workload, decision, state)):
                self._decisions[key] = (generation, decision, state, templates, checks)
                return decision
        decision, templates = self._decide(cq, workload, templates)
        if len(self._decisions) >= MEMO_LIMIT:
            self._decisions.clear()  # bounded memory; the next decisions fill it again
        self._decisions[key] = (generation, decision, self._state(cq, workload, decision), templates,
                                _fit_checks(cq, workload, decision))
        return decision

    # A decision the cohort tree's changes since cannot have changed -----------------------------
    #
    # With one flavor in each resource group a workload needs, the flavor assigner's answer is a pure
    # function of the usage on its flavor-resources along the ClusterQueue's path up the cohort tree
    # (what `available` and `borrowing_height` read; quotas are fixed) and of the preemption oracle's.
    # When no admitted workload at all is a preemption candidate for those flavor-resources, every
    # preemption search stops at its first step with nothing, so the oracle's answer is "no candidates"
    # whatever else changed. So a decision made in that state is the decision again while that usage
    # is the same and there are still no candidates: a replay re-decides its waiting heads after every
    # change in their cohort tree, and most of those changes leave them exactly where they were.

    def _state(self, cq: ClusterQueueInfo, workload: WorkloadInfo, decision: Decision) -> Optional[tuple]:
        """What `decision` read of the tree, with the flavor-resources it read it on (fixed with the
        decision's key, its queue and shape); None when it may have read more, so it is not kept."""
        if decision.targets:
            return None  # targets are candidates: `no_candidates` would say no
        frs = self._flavor_resources(cq, workload)
        if frs is None or (self._asks_oracle(workload, decision) and not self.preemptor.no_candidates(
                cq, workload, frs)):
            return None
        return frs, self._usage_along(cq, frs)

    def _unchanged(self, cq: ClusterQueueInfo, workload: WorkloadInfo, decision: Decision, state: tuple) -> bool:
        frs, usage = state
        return self._usage_along(cq, frs) == usage and (
            not self._asks_oracle(workload, decision) or self.preemptor.no_candidates(cq, workload, frs))

    @staticmethod
    def _asks_oracle(workload: WorkloadInfo, decision: Decision) -> bool:
        """A NoFit of a workload that cannot be partially admitted asked the preemption oracle nothing (with
        one flavor, a flavor-resource past what can ever be had, or short with nothing to preempt in
        principle, ends the search before the oracle is asked)."""
        return decision.mode is not NO_FIT or workload.can_be_partially_admitted()

    def _flavor_resources(self, cq: ClusterQueueInfo, workload: WorkloadInfo) -> Optional[frozenset]:
        """The flavor-resources the workload can use in the ClusterQueue, when each resource group it needs
        has one flavor; else None."""
        key = (cq.name, workload.shape)
        if key not in self._single_flavor:
            frs: set = set()
            single = True
            requested = {r for ps in workload.podsets for r in ps.per_pod} | ({PODS} if cq.covers_pods else set())
            for resource in requested:
                group = cq.group_of.get(resource)
                if group is None:
                    continue  # unavailable in the ClusterQueue: a reason that never changes
                if len(group.flavors) != 1:
                    single = False
                    break
                frs.add((group.flavors[0], resource))
            if len(self._single_flavor) >= MEMO_LIMIT:
                self._single_flavor.clear()
            self._single_flavor[key] = frozenset(frs) if single else None
        return self._single_flavor[key]

    def _usage_along(self, cq: ClusterQueueInfo, frs: frozenset) -> tuple:
        # The usage dicts to read are fixed with the tree: found once per queue and flavor-resources.
        key = (cq.name, frs)
        reads = self._reads.get(key)
        if reads is None:
            if len(self._reads) >= MEMO_LIMIT:
                self._reads.clear()
            reads = self._reads[key] = tuple((usage, fr) for fr in sorted(frs) for usage, *_ in cq.node.chain(fr))
        return tuple([usage.get(fr, 0) for usage, fr in reads])

    def _decide(self, cq: ClusterQueueInfo, workload: WorkloadInfo, templates: Templates
                ) -> tuple[Decision, Templates]:
        """The decision afresh, and `templates` with the full assignment it came from put first. One
        of `templates` is re-worded instead of assigned again when every question it asked gets the
        same answer now: a waiting head asked again after each change in its cohort tree mostly gets
        one of a few decisions again, only the free amounts its message quotes moved."""
        assigner = FlavorAssigner(cq, workload, self.flavor_matches, self.preemptor, self.fair_sharing is not None)
        reworded = assigner.reword(templates) if templates else None
        if reworded is None:
            full = assigner.assign()
            templates = ((full, assigner.trail), *templates[:TEMPLATES - 1])
        else:
            index, full = reworded
            templates = ((full, assigner.trail), *templates[:index], *templates[index + 1:])
        found = self._viable(cq, workload, full)
        if found is None and workload.can_be_partially_admitted():
            # The largest reduced counts that are Fit, or Preempt with something to preempt.
            def attempt(counts: list[int]) -> tuple[Optional[Decision], bool]:
                reduced = self._viable(cq, workload, assigner.assign(counts))
                return reduced, reduced is not None

            reduced, ok = reduce_counts([ps.count for ps in workload.podsets],
                                        [ps.min_count for ps in workload.podsets], attempt)
            found = reduced if ok else None
        return (_decision(cq, full) if found is None else found), templates

    def _viable(self, cq: ClusterQueueInfo, workload: WorkloadInfo, assignment: Assignment) -> Optional[Decision]:
        """The decision for an assignment that is Fit, or Preempt with something to preempt; else None."""
        if assignment.mode is FIT:
            return _decision(cq, assignment)
        if assignment.mode is PREEMPT:
            targets = self.preemptor.get_targets(cq, workload, assignment.frs_needing_preemption(), assignment.usage)
            if targets:
                return _decision(cq, assignment, targets)
        return None

    def can_ever_admit(self, cluster_queue: str, workload: WorkloadInfo | dict) -> Decision:
        """The decision for `workload` alone on an empty cluster, borrowing as allowed."""
        if isinstance(workload, dict):
            workload = self.workload_info(workload)
        return self.empty().assign(workload, cluster_queue)

    def empty(self) -> "Snapshot":
        """The same objects with nothing admitted."""
        if not any(len(index) for index in self._admitted.values()):
            return self
        clone = Snapshot()
        clone.flavors, clone.priority_classes = self.flavors, self.priority_classes
        clone.resource_rules = self.resource_rules
        clone.scheduler, clone.fair_sharing = self.scheduler, self.fair_sharing
        clone.namespace_labels, clone.local_queues = self.namespace_labels, self.local_queues
        clone.flavor_matches = self.flavor_matches
        clone._namespace_answers = self._namespace_answers
        clone.tree = self.tree.without_usage()
        if self.tree.counts_usage_changes:
            clone.tree.count_usage_changes()
        clone.cluster_queues = {name: replace(cq, node=clone.tree.cluster_queues[name])
                                for name, cq in self.cluster_queues.items()}
        return clone

    def _namespace_matches(self, cq: ClusterQueueInfo, namespace: str) -> bool:
        key = (cq.name, namespace)
        known = self._namespace_answers.get(key)
        if known is None:
            selector = cq.namespace_selector
            if selector is None:
                known = False  # Kueue: a nil selector matches no namespace
            else:
                labels = {NAMESPACE_NAME_LABEL: namespace, **self.namespace_labels.get(namespace, {})}
                known = label_selector_matches(selector, labels)
            self._namespace_answers[key] = known
        return known


# Full assignments of one decision key with the questions the assigner asked for each, the latest first.
Templates = tuple[tuple[Assignment, Trail], ...]
# A Fit decision's flavor-resources, each with its value and the height it borrowed to (`_fit_checks`).
FitChecks = tuple[tuple[tuple[str, str], int, int], ...]


def _consumed_resources(local_queue: dict) -> dict[str, float]:
    """`status.fairSharing.admissionFairSharingStatus.consumedResources`, as the ledger keeps them."""
    found: Any = local_queue
    for key in ("status", "fairSharing", "admissionFairSharingStatus", "consumedResources"):
        found = found.get(key) if isinstance(found, dict) else None
    consumed: dict = found if isinstance(found, dict) else {}
    resources: dict[str, float] = {}
    for resource, quantity in consumed.items():
        try:
            resources[str(resource)] = float(parse_quantity(quantity))
        except QuantityError:
            continue  # the API server would not have stored it; nothing to seed from
    return resources


def _fit_checks(cq: ClusterQueueInfo, workload: WorkloadInfo, decision: Decision) -> Optional[FitChecks]:
    """What `_still_fits` asks of a later cohort tree for a Fit decision: each flavor-resource it took,
    how much, and how far up the tree it borrowed; None when a changed tree must decide it again. The
    decision must be whole (not reduced by partial admission), and each resource group it took a flavor
    from must have only that flavor (so no earlier flavor could be chosen instead), and one borrowing must
    be of one pod set (pod sets were judged on top of each other). All of this is fixed with the decision's
    key (the queue, the shape with its counts), so it is found once per decision, not for every head."""
    assignment = decision.assignment
    if decision.mode is not FIT or assignment is None or (assignment.borrowing and len(assignment.podsets) != 1):
        return None
    groups = cq.group_of
    for podset, assigned in zip(workload.podsets, decision.pod_sets):
        if assigned.count != podset.count or any(len(groups[r].flavors) != 1 for r in assigned.flavors):
            return None
    flavors = assignment.podsets[0].flavors if assignment.borrowing else {}
    return tuple((fr, value, flavors[fr[1]].borrow if assignment.borrowing else 0)
                 for fr, value in assignment.usage.items())


def _still_fits(cq: ClusterQueueInfo, checks: Optional[FitChecks]) -> bool:
    """Whether a Fit decision made before the cohort tree changed is still the decision (`_fit_checks`):
    every flavor-resource still fits, borrowing as far up the tree as before. Then the flavor assigner
    would find the same flavors, the same Fit, the same borrowing: a few lookups instead of the flavor
    assigner (a replay asks for every workload right after the previous one was admitted, so the cohort
    tree's generation always moved)."""
    if checks is None:
        return False
    node = cq.node
    for fr, value, borrowed in checks:
        if value > available(node, fr) or borrowing_height(node, fr, value)[0] != borrowed:
            return False
    return True


def _refused(cluster_queue: Optional[str], message: str) -> Decision:
    return Decision(cluster_queue, NO_FIT, False, [], message)


def _decision(cq: ClusterQueueInfo, assignment: Assignment,
              targets: Optional[list[PreemptionTarget]] = None) -> Decision:
    mode = assignment.mode
    pod_sets = [] if mode is NO_FIT else [
        PodSetDecision(ps.name, ps.count, {r: f.name for r, f in sorted(ps.flavors.items())})
        for ps in assignment.podsets]
    message = "" if mode is FIT else assignment.message()
    if mode is PREEMPT and targets:
        message += f". Pending the preemption of {len(targets)} workload(s)"  # Kueue's words once it preempts
    elif mode is PREEMPT:
        message += (f". Nothing can be preempted for it under ClusterQueue {cq.name}'s preemption policy "
                    f"({preemption_policy(cq)}), so it waits until quota is freed")
    return Decision(cq.name, mode, assignment.borrowing > 0, pod_sets, message, assignment, targets or [])


def preemption_policy(cq: ClusterQueueInfo) -> str:
    """The ClusterQueue's preemption settings as its spec writes them."""
    policy = f"withinClusterQueue: {cq.within_cluster_queue}"
    if cq.node.parent is not None:
        policy += f", reclaimWithinCohort: {cq.reclaim_within_cohort}"
        if cq.borrow_within_cohort not in (None, "Never"):
            policy += f", borrowWithinCohort: {cq.borrow_within_cohort}"
            if cq.max_priority_threshold is not None:
                policy += f" up to priority {cq.max_priority_threshold}"
    return policy
