"""The preemption search's shortcuts give the answers of the search they spare (issue 27's speed).

On random organisations (`test_properties`' strategies: flat, implicit and hierarchical cohorts,
borrowing and lending limits, every queue preempting, workloads in rising priority), along a loop
that admits Fits and carries out Preempts, each decision is compared with a reference that takes
no shortcut:
- `Preemptor.borrowing_after` (the level a lone flavor records, told without the search) is, whenever
  it answers, the level `simulate_preemption` answers, for every flavor-resource of the queue and a
  range of quantities;
- a snapshot whose oracle is always searched (`borrowing_after` answers nothing), whose search
  never leaves a queue it has reclaimed back within its quota and is never skipped for a shortfall
  nothing could cover (`_cannot_make_room`) makes the same decision, with the same borrowing level
  per flavor.
A cohort where the search closes one queue and must go on with another's candidates is checked
on its own (random organisations rarely make one).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from aks_kueue.admission import Snapshot, workload_info
from aks_kueue.admission.configuration import CLASSICAL, SchedulerConfig
from aks_kueue.admission.fair_sharing import FairSharing
from aks_kueue.admission.modes import FlavorAssignmentMode
from aks_kueue.admission.preemption import Preemptor, _any_over_quota, _subtrees
from tests.admission.test_properties import FEWER, scenarios, workload_manifests

PREEMPT = FlavorAssignmentMode.PREEMPT


class SearchingPreemptor(Preemptor):
    """The oracle without its shortcuts: always searched, and every candidate walked."""

    def borrowing_after(self, cq, workload, fr, quantity, height=None):
        return None

    def _in_order(self, groups, cq, preemptor, without_reclaim, closed):
        return super()._in_order(groups, cq, preemptor, without_reclaim, set())

    def _cannot_make_room(self, cq, workload, frs, requests):
        return False


def _verdict(decision) -> tuple:
    assignment = decision.assignment
    borrows = None if assignment is None else [
        sorted((r, f.name, f.mode, f.borrow) for r, f in ps.flavors.items()) for ps in assignment.podsets]
    return (decision.cluster_queue, decision.mode, decision.borrowing, decision.message, borrows,
            [(ps.name, ps.count, ps.flavors) for ps in decision.pod_sets],
            [(t.workload.uid, t.reason) for t in decision.targets])


def _check_borrowing_after(snapshot: Snapshot, workload) -> None:
    preemptor, cq = snapshot.preemptor, snapshot.cluster_queues[workload_cq(snapshot, workload)]
    for fr in cq.node.quotas:
        for quantity in (1, 1000, 2000, 3500, 2**30, 3 * 2**30):
            told = preemptor.borrowing_after(cq, workload, fr, quantity)
            if told is not None:
                assert told == preemptor.simulate_preemption(cq, workload, fr, quantity)[1], (fr, quantity)


def _check_nothing_in_cohort(snapshot: Snapshot) -> None:
    """The over-quota queues found once per tree for the queues under its root give each of them the
    answer of its own walk."""
    preemptor = snapshot.preemptor
    for cq in snapshot.cluster_queues.values():
        walked = cq.node.parent is None or cq.reclaim_within_cohort == "Never" or not any(
            _any_over_quota(subtree, skip, cq.node) for subtree, skip in _subtrees(cq.node))
        assert preemptor._nothing_in_cohort(cq, snapshot.generation(cq)) == walked, cq.name


def workload_cq(snapshot: Snapshot, workload) -> str:
    name = snapshot.cluster_queue_for(workload.namespace, workload.queue_name)
    assert name is not None
    return name


@FEWER
@given(st.booleans(), scenarios(preempting=True) | scenarios(shape="flat", preempting=True))
def test_shortcuts_give_the_searched_answers(fair, scenario):
    org, jobs = scenario
    scheduler = SchedulerConfig(fair_sharing=FairSharing()) if fair else CLASSICAL
    snapshots = [Snapshot.from_objects(org.manifests(), scheduler=scheduler) for _ in range(2)]
    snapshots[1].preemptor = SearchingPreemptor(snapshots[1])
    for order, manifest in enumerate(workload_manifests(jobs)):
        for snapshot in snapshots:
            snapshot._decisions.clear()  # decided afresh, so that the searches run
        workloads = [workload_info(manifest, snapshot.priority_classes, order) for snapshot in snapshots]
        _check_borrowing_after(snapshots[0], workloads[0])
        _check_nothing_in_cohort(snapshots[0])
        decisions = [snapshot.assign(workload) for snapshot, workload in zip(snapshots, workloads)]
        assert _verdict(decisions[0]) == _verdict(decisions[1]), order
        for snapshot, workload, decision in zip(snapshots, workloads, decisions):
            if decision.mode is PREEMPT and decision.targets:
                for target in decision.targets:
                    snapshot.remove_workload(target.workload)
                decision = snapshot.assign(workload)
            if decision.fits:
                snapshot.admit(workload, decision)


def _queue(name: str, cores: int) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": name},
            "spec": {"namespaceSelector": {}, "cohortName": "c0",
                     "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
                     "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                         {"name": "f0", "resources": [{"name": "cpu", "nominalQuota": str(cores)}]}]}]}}


def _job(name: str, queue: str, cores: int) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload", "metadata": {"name": name, "namespace": queue},
            "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [
                {"name": "c", "resources": {"requests": {"cpu": str(cores)}}}]}}}]}}


def test_a_queue_reclaimed_within_its_quota_is_left_for_the_next_queue():
    """cq1 borrows 1 core and cq2 3 (the cohort is full); cq0's 4-core workload reclaims them, taking
    the most recent reservations first: three of cq1's, then cq2's. After cq1's first candidate cq1 is
    within its quota: its next candidates are refused, and the search goes on with cq2's until 4 cores
    are free (one from cq1, three from cq2)."""
    manifests = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "f0"},
                  "spec": {}}]
    for name in ("cq0", "cq1", "cq2"):
        manifests += [_queue(name, 4), {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                                        "metadata": {"name": "lq", "namespace": name}, "spec": {"clusterQueue": name}}]
    decisions = []
    for searching in (False, True):
        snapshot = Snapshot.from_objects(manifests)
        if searching:
            snapshot.preemptor = SearchingPreemptor(snapshot)
        order = ["cq1"] * 2 + ["cq2"] * 7 + ["cq1"] * 3  # cq1: 5 cores, cq2: 7
        for index, queue in enumerate(order):
            workload = workload_info(_job(f"w{index}", queue, 1), snapshot.priority_classes, index)
            decision = snapshot.assign(workload)
            assert decision.fits, decision.message
            snapshot.admit(workload, decision)
        preemptor = workload_info(_job("big", "cq0", 4), snapshot.priority_classes, len(order))
        decisions.append(snapshot.assign(preemptor))
    assert _verdict(decisions[0]) == _verdict(decisions[1])
    assert sorted(t.cluster_queue for t in decisions[0].targets) == ["cq1", "cq2", "cq2", "cq2"]
