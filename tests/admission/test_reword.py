"""A decision re-worded from an earlier assignment is the one the flavor assigner makes afresh (issue 27's speed).

`FlavorAssigner.reword` takes an earlier full assignment of the same workload shape in the same
ClusterQueue and the questions the assigner asked to find it (each flavor-resource's fit, the
preemption oracle's answers), asks them again and, when every answer's mode and borrowing level is
the same, gives that assignment again with its reasons in today's words. Checked against the
assigner itself on random organisations (one to three flavors, flat, implicit and hierarchical
cohorts, lending and borrowing limits, flavorFungibility, partial admission, fair sharing off and
on): every waiting workload is decided again after each change of the cohort tree, once from its
templates and once afresh, and the two decisions must be the same, words included.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given
from hypothesis import strategies as st

from aks_kueue.admission import Snapshot, workload_info
from aks_kueue.admission import assigner
from aks_kueue.admission.assigner import FlavorAssigner
from aks_kueue.admission.configuration import CLASSICAL, SchedulerConfig
from aks_kueue.admission.fair_sharing import FairSharing
from aks_kueue.admission.modes import FlavorAssignmentMode
from aks_kueue.admission.preemption import Preemptor
from aks_kueue.admission.quota import borrowing_height
from aks_kueue.kueue.units import format_amount
from tests.admission.test_preemption_shortcuts import _job, _queue, _verdict
from tests.admission.test_properties import FEWER, scenarios, workload_manifests

PREEMPT = FlavorAssignmentMode.PREEMPT


class Counted:
    """`FlavorAssigner.reword`, counting the decisions it re-worded."""

    def __init__(self):
        self.reworded = 0
        self.original = FlavorAssigner.reword

    def __call__(self, assigner, templates):
        found = self.original(assigner, templates)
        self.reworded += found is not None
        return found


def _checked_borrowing_after(original):
    """`Preemptor.borrowing_after`, checking the height the assigner passes (the one its fit read) is
    the height now."""

    def borrowing_after(preemptor, cq, workload, fr, quantity, height=None):
        assert height is None or height == borrowing_height(cq.node, fr, quantity)[0], (fr, quantity, height)
        return original(preemptor, cq, workload, fr, quantity, height)

    return borrowing_after


def _replay(snapshot: Snapshot, manifests: list[dict]) -> int:
    """Submit the workloads in order; after each, decide every waiting one from its templates and
    afresh (the same, or the test fails), admit what fits and carry out preemptions. Returns how many
    decisions were re-worded."""
    counted = Counted()
    templates: dict[tuple, tuple] = {}  # per queue and shape (the snapshot keeps them per priority too)
    waiting = []
    with mock.patch.object(FlavorAssigner, "reword", lambda assigner, kept: counted(assigner, kept)), \
            mock.patch.object(Preemptor, "borrowing_after", _checked_borrowing_after(Preemptor.borrowing_after)):
        for order, manifest in enumerate(manifests):
            waiting.append(workload_info(manifest, snapshot.priority_classes, order))
            for workload in list(waiting):
                name = snapshot.cluster_queue_for(workload.namespace, workload.queue_name)
                cq = snapshot.cluster_queues.get(name) if name is not None else None
                if cq is None or snapshot.assign(workload).cluster_queue is None:
                    waiting.remove(workload)
                    continue
                fresh, _ = snapshot._decide(cq, workload, ())
                key = (cq.name, workload.shape)
                decision, templates[key] = snapshot._decide(cq, workload, templates.get(key, ()))
                assert _verdict(decision) == _verdict(fresh), (order, workload.name)
                assert decision.assignment is not None and fresh.assignment is not None
                assert decision.assignment.usage == fresh.assignment.usage
                if decision.mode is PREEMPT and decision.targets:
                    for target in decision.targets:
                        snapshot.remove_workload(target.workload)
                elif decision.fits:
                    snapshot.admit(workload, decision)
                    waiting.remove(workload)
    return counted.reworded


@FEWER
@given(st.booleans(), scenarios(preempting=True) | scenarios(shape="flat", preempting=True) | scenarios())
def test_a_reworded_decision_is_the_fresh_one(fair, scenario):
    org, jobs = scenario
    scheduler = SchedulerConfig(fair_sharing=FairSharing()) if fair else CLASSICAL
    _replay(Snapshot.from_objects(org.manifests(), scheduler=scheduler), workload_manifests(jobs))
    for ((flavor, resource), short), words in assigner._SHORT.items():  # the words kept are the words told
        assert words == f"insufficient unused quota for {resource} in flavor {flavor}, " \
                        f"{format_amount(resource, short)} more needed"


def test_a_waiting_head_is_reworded_as_the_cohort_fills():
    """Three queues of 4 cores in a cohort; cq1 fills its 4 a core at a time and borrows a fifth (a Fit
    like the others but borrowing: not re-worded from theirs), then cq0's 9-core job waits (it can only
    borrow, and 7 are free) while cq2 fills its 4 a core at a time: its decision (NoFit, so many cores
    more needed) is the same but for its amount each time, and is re-worded, the amount included."""
    manifests = [{"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "f0"},
                  "spec": {}}]
    for name in ("cq0", "cq1", "cq2"):
        manifests += [_queue(name, 4), {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
                                        "metadata": {"name": "lq", "namespace": name}, "spec": {"clusterQueue": name}}]
    snapshot = Snapshot.from_objects(manifests)
    jobs = ([_job(f"a{i}", "cq1", 1) for i in range(5)] + [_job("big", "cq0", 9)]
            + [_job(f"b{i}", "cq2", 1) for i in range(4)])
    assert _replay(snapshot, jobs) >= 4  # big's, and the 1-core jobs' after the first
    decision = snapshot.assign(workload_info(_job("big", "cq0", 9), snapshot.priority_classes, 0))
    assert decision.message == "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor f0, 6 more needed"
