"""The admission core's parts: requests, flavor matching, units, preemption and partial admission."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest

from aks_kueue.admission import Snapshot, workload_info
from aks_kueue.admission.flavors import flavor_mismatch, selector_matches
from aks_kueue.k8s.scheduling import SelectorError
from aks_kueue.kueue.views import ResourceFlavor
from aks_kueue.admission.modes import FlavorAssignmentMode, PreemptionReason
from aks_kueue.kueue.units import format_amount
from aks_kueue.k8s.pods import pod_requests

V1B2 = "kueue.x-k8s.io/v1beta2"
FIT, PREEMPT, NO_FIT = FlavorAssignmentMode.FIT, FlavorAssignmentMode.PREEMPT, FlavorAssignmentMode.NO_FIT


def flavor(name, **spec):
    return {"apiVersion": V1B2, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def cluster_queue(name, quotas, cohort=None, **spec):
    """quotas: flavor -> {resource: nominal | (nominal, borrowingLimit, lendingLimit)}."""
    resources = sorted({r for per in quotas.values() for r in per})
    flavors = []
    for flavor_name, per in quotas.items():
        entries = []
        for resource in resources:
            nominal, borrowing, lending = (per[resource] + (None, None))[:3] if isinstance(per[resource], tuple) \
                else (per[resource], None, None)
            entry = {"name": resource, "nominalQuota": nominal}
            if borrowing is not None:
                entry["borrowingLimit"] = borrowing
            if lending is not None:
                entry["lendingLimit"] = lending
            entries.append(entry)
        flavors.append({"name": flavor_name, "resources": entries})
    body = {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": resources, "flavors": flavors}], **spec}
    if cohort:
        body["cohortName"] = cohort
    return {"apiVersion": V1B2, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


def local_queue(namespace, cq):
    return {"apiVersion": V1B2, "kind": "LocalQueue", "metadata": {"name": "lq", "namespace": namespace},
            "spec": {"clusterQueue": cq}}


def workload(name, namespace="ns", count=1, priority=None, admitted=None, min_count=None, **requests):
    spec = {"queueName": "lq", "podSets": [{"name": "main", "count": count, "template": {"spec": {
        "containers": [{"name": "c", "resources": {"requests": requests}}]}}}]}
    if min_count is not None:
        spec["podSets"][0]["minCount"] = min_count
    if priority is not None:
        spec["priority"] = priority
    manifest = {"apiVersion": V1B2, "kind": "Workload", "metadata": {"name": name, "namespace": namespace},
                "spec": spec}
    if admitted:
        cq, flavor_name = admitted
        manifest["status"] = {"admission": {"clusterQueue": cq, "podSetAssignments": [{
            "name": "main", "count": count, "flavors": {r: flavor_name for r in requests},
            "resourceUsage": {r: _times(q, count) for r, q in requests.items()}}]}}
    return manifest


def _times(quantity: str, count: int) -> str:
    return f"{int(quantity) * count}" if quantity.isdigit() else quantity


# What a pod asks for ---------------------------------------------------------------------------

def test_pod_requests_follow_kubernetes():
    spec = {
        "containers": [{"resources": {"requests": {"cpu": "500m"}, "limits": {"memory": "1Gi"}}},
                       {"resources": {"requests": {"cpu": "250m", "memory": "512Mi"}}}],
        "initContainers": [
            {"restartPolicy": "Always", "resources": {"requests": {"cpu": "100m"}}},   # a sidecar
            {"resources": {"requests": {"cpu": "2", "memory": "256Mi"}}},               # a plain init step
        ],
        "overhead": {"cpu": "10m"},
    }
    requests = pod_requests(spec)
    # containers 750m + sidecar 100m = 850m < init step 2 + sidecar 100m = 2100m; plus overhead
    assert requests["cpu"] == Fraction(2110, 1000)
    # a limit stands in for a missing request: 1Gi + 512Mi beats the init step's 256Mi
    assert requests["memory"] == 1536 * 2**20


def test_pod_level_requests_replace_the_container_sum():
    spec = {"resources": {"requests": {"cpu": "3"}}, "containers": [{"resources": {"requests": {"cpu": "1"}}}]}
    assert pod_requests(spec)["cpu"] == 3


def test_units_round_up_per_pod_and_multiply_by_count():
    info = workload_info(workload("w", count=3, cpu="1500m", memory="1.5", **{"example.com/gpu": "0.5"}))
    assert info.podsets[0].total() == {"cpu": 4500, "memory": 6, "example.com/gpu": 3}


@pytest.mark.parametrize("resource,value,text", [
    ("cpu", 1500, "1500m"), ("cpu", 2000, "2"), ("cpu", 0, "0"), ("memory", 5 * 2**20, "5Mi"),
    ("memory", 1500, "1500"), ("memory", 2_000_000, "2M"), ("nvidia.com/gpu", 8, "8"),
    ("nvidia.com/gpu", 3000, "3k"),
])
def test_amounts_print_as_kueue_prints_them(resource, value, text):
    assert format_amount(resource, value) == text


# Flavor matching -------------------------------------------------------------------------------

SPOT = ResourceFlavor("spot", {"pool": "spot"}, ({"key": "spot", "value": "true", "effect": "NoSchedule"},))


def test_taints_need_a_toleration_from_the_pod_or_the_flavor():
    assert flavor_mismatch("spot", SPOT, [{}]) == "untolerated taint {spot true NoSchedule <nil>} in flavor spot"
    assert flavor_mismatch("spot", SPOT, [{"tolerations": [{"key": "spot", "operator": "Exists"}]}]) is None
    assert flavor_mismatch("spot", replace(SPOT, tolerations=({"key": "spot", "value": "true"},)), [{}]) is None
    prefer = replace(SPOT, node_taints=({"key": "spot", "effect": "PreferNoSchedule"},))
    assert flavor_mismatch("spot", prefer, [{}]) is None


def test_selectors_only_count_keys_the_flavor_declares():
    labels = {"pool": "gpu", "sku": "a100"}
    assert selector_matches({"nodeSelector": {"pool": "gpu", "zone": "1"}}, labels)
    assert not selector_matches({"nodeSelector": {"pool": "cpu"}}, labels)
    term = {"matchExpressions": [{"key": "sku", "operator": "In", "values": ["h100"]}]}
    other = {"matchExpressions": [{"key": "unrelated", "operator": "Exists"}]}
    affinity = lambda *terms: {"affinity": {"nodeAffinity": {  # noqa: E731
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}}
    assert not selector_matches(affinity(term), labels)
    assert selector_matches(affinity(term, other), labels)  # the second term says nothing here
    assert flavor_mismatch("a100", ResourceFlavor("a100", labels), [affinity(term)]) == \
        "flavor a100 doesn't match node affinity"
    with pytest.raises(SelectorError):
        selector_matches(affinity({"matchExpressions": [{"key": "sku", "operator": "Gt", "values": ["x"]}]}), labels)


def test_missing_flavor_makes_the_queue_inactive():
    snapshot = Snapshot.from_objects([cluster_queue("cq", {"ghost": {"cpu": "4"}}), local_queue("ns", "cq")])
    decision = snapshot.assign(workload_info(workload("w", cpu="1")))
    assert (decision.mode, decision.message) == (NO_FIT, "ClusterQueue cq is inactive")


def test_namespace_selector_nil_matches_nothing_and_labels_come_from_namespaces():
    cq = cluster_queue("cq", {"f": {"cpu": "4"}})
    del cq["spec"]["namespaceSelector"]
    snapshot = Snapshot.from_objects([flavor("f"), cq, local_queue("ns", "cq")])
    assert snapshot.assign(workload_info(workload("w", cpu="1"))).message == \
        "workload namespace doesn't match ClusterQueue selector"
    cq["spec"]["namespaceSelector"] = {"matchLabels": {"team": "a"}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": {"team": "a"}}}
    assert Snapshot.from_objects([flavor("f"), cq, local_queue("ns", "cq"), namespace]).assign(
        workload_info(workload("w", cpu="1"))).mode is FIT


# Preempt judgement ------------------------------------------------------------------------------

def _preempt_case(policy: str, running_priority: int, incoming_priority: int):
    objects = [flavor("f"), cluster_queue("cq", {"f": {"cpu": "4"}}, preemption={"withinClusterQueue": policy}),
               local_queue("ns", "cq"),
               workload("running", count=4, priority=running_priority, admitted=("cq", "f"), cpu="1")]
    snapshot = Snapshot.from_objects(objects)
    return snapshot.assign(workload_info(workload("new", count=2, priority=incoming_priority, cpu="1")))


def test_lower_priority_workloads_can_be_preempted_within_the_queue():
    decision = _preempt_case("LowerPriority", 0, 100)
    assert decision.mode is PREEMPT
    assert [t.name for t in decision.targets] == ["running"]
    assert decision.message == ("couldn't assign flavors to pod set main: "
                                "insufficient unused quota for cpu in flavor f, 2 more needed. "
                                "Pending the preemption of 1 workload(s)")


def test_no_preemption_candidates_still_reads_preempt_but_has_no_targets():
    for policy, running, incoming in (("LowerPriority", 100, 100), ("Never", 0, 100)):
        decision = _preempt_case(policy, running, incoming)
        assert decision.mode is PREEMPT and decision.targets == []


def test_reclaim_from_a_borrowing_queue_in_the_cohort():
    objects = [flavor("f"),
               cluster_queue("lender", {"f": {"cpu": "4"}}, cohort="co",
                             preemption={"reclaimWithinCohort": "Any"}),
               cluster_queue("borrower", {"f": {"cpu": "0"}}, cohort="co"),
               local_queue("ns", "lender"),
               workload("borrowed", namespace="other", count=4, admitted=("borrower", "f"), cpu="1")]
    decision = Snapshot.from_objects(objects).assign(workload_info(workload("mine", count=3, cpu="1")))
    assert decision.mode is PREEMPT and [t.name for t in decision.targets] == ["borrowed"]
    without_policy = [o if o["metadata"]["name"] != "lender" else cluster_queue("lender", {"f": {"cpu": "4"}}, cohort="co")
                      for o in objects]
    assert Snapshot.from_objects(without_policy).assign(
        workload_info(workload("mine", count=3, cpu="1"))).targets == []


def test_preemption_keeps_the_minimal_set_and_evicts_nothing():
    objects = [flavor("f"), cluster_queue("cq", {"f": {"cpu": "6"}}, preemption={"withinClusterQueue": "LowerPriority"}),
               local_queue("ns", "cq")]
    objects += [workload(f"low-{i}", count=2, priority=i, admitted=("cq", "f"), cpu="1") for i in range(3)]
    snapshot = Snapshot.from_objects(objects)
    before = dict(snapshot.tree.cluster_queues["cq"].usage)
    decision = snapshot.assign(workload_info(workload("new", count=2, priority=10, cpu="1")))
    assert [t.name for t in decision.targets] == ["low-0"]
    assert snapshot.tree.cluster_queues["cq"].usage == before


# Partial admission and "can ever admit" ---------------------------------------------------------

def test_partial_admission_shrinks_towards_min_count():
    objects = [flavor("f"), cluster_queue("cq", {"f": {"cpu": "5"}}), local_queue("ns", "cq")]
    decision = Snapshot.from_objects(objects).assign(workload_info(workload("w", count=8, min_count=2, cpu="1")))
    assert decision.mode is FIT and decision.pod_sets[0].count == 5
    too_small = Snapshot.from_objects(objects).assign(workload_info(workload("w", count=8, min_count=6, cpu="1")))
    assert too_small.mode is NO_FIT and too_small.pod_sets == []


def test_can_ever_admit_ignores_current_usage_but_respects_borrowing_limits():
    objects = [flavor("f"),
               cluster_queue("a", {"f": {"cpu": ("4", "2")}}, cohort="co"),
               cluster_queue("b", {"f": {"cpu": "8"}}, cohort="co"),
               local_queue("ns", "a"),
               workload("busy", count=4, admitted=("a", "f"), cpu="1")]
    snapshot = Snapshot.from_objects(objects)
    assert snapshot.assign(workload_info(workload("w", count=6, cpu="1"))).mode is not FIT
    ever = snapshot.can_ever_admit("a", workload("w", count=6, cpu="1"))
    assert (ever.mode, ever.borrowing) == (FIT, True)
    never = snapshot.can_ever_admit("a", workload("w", count=7, cpu="1"))
    assert never.mode is NO_FIT and "maximum capacity (6)" in never.message
    assert snapshot.tree.cluster_queues["a"].usage == {("f", "cpu"): 4000}


def test_removing_a_workload_invalidates_remembered_decisions():
    objects = [flavor("f"), cluster_queue("cq", {"f": {"cpu": "2"}}, preemption={"withinClusterQueue": "LowerPriority"}),
               local_queue("ns", "cq"), workload("low", count=2, priority=0, admitted=("cq", "f"), cpu="1")]
    snapshot = Snapshot.from_objects(objects)
    high = workload_info(workload("high", priority=1, cpu="1"))
    assert snapshot.assign(high).mode is PREEMPT
    snapshot.remove_workload(snapshot.workloads_by_uid["ns/low"])
    assert snapshot.assign(high).mode is FIT


def test_a_remembered_fit_on_a_later_flavor_is_decided_again_when_an_earlier_one_frees():
    """A remembered Fit is kept through a tree change only while no earlier flavor could now be
    chosen (`_fit_checks`: its group has that one flavor). Here f1 is full, so the job fits f2;
    once f1 frees, the flavor assigner picks f1, though f2 still fits."""
    objects = [flavor("f1"), flavor("f2"), cluster_queue("cq", {"f1": {"cpu": "2"}, "f2": {"cpu": "2"}}),
               local_queue("ns", "cq"), workload("busy", count=2, admitted=("cq", "f1"), cpu="1")]
    snapshot = Snapshot.from_objects(objects)
    job = workload_info(workload("job", cpu="1"))
    assert [ps.flavors for ps in snapshot.assign(job).pod_sets] == [{"cpu": "f2"}]
    snapshot.remove_workload(snapshot.workloads_by_uid["ns/busy"])
    assert [ps.flavors for ps in snapshot.assign(job).pod_sets] == [{"cpu": "f1"}]


def test_a_remembered_fit_that_borrowed_is_decided_again_when_it_need_not_borrow():
    """A remembered Fit is kept through a tree change only while it borrows as far up the tree as
    before (`_fit_checks` keeps the height): once its own queue frees, the same flavor fits without
    borrowing, and the decision says so."""
    objects = [flavor("f"), cluster_queue("a", {"f": {"cpu": "2"}}, cohort="c"),
               cluster_queue("b", {"f": {"cpu": "2"}}, cohort="c"), local_queue("ns", "a"),
               workload("busy", count=2, admitted=("a", "f"), cpu="1")]
    snapshot = Snapshot.from_objects(objects)
    job = workload_info(workload("job", cpu="1"))
    assert (snapshot.assign(job).mode, snapshot.assign(job).borrowing) == (FIT, True)
    snapshot.remove_workload(snapshot.workloads_by_uid["ns/busy"])
    assert (snapshot.assign(job).mode, snapshot.assign(job).borrowing) == (FIT, False)


def test_after_its_preemptions_a_workload_may_move_to_another_flavor():
    """The example the property test found, decided as Kueue v0.19.2 decides it.

    cq2 may stop at a flavor that needs preemption but looks on past one it can only
    borrow on (whenCanBorrow: TryNextFlavor). Its 6-cpu, 2Gi job borrows cpu on f0 and
    needs its own w8's memory there: Preempt on f0, target w8 (the representative mode
    keeps the preemption and drops cpu's borrowing level, as upstream's does). With w8
    gone the job fits f0 only by borrowing, so the search goes on to f1 and stops there:
    for f1's memory alone, reclaiming what cq0 borrowed would do. But the whole job
    borrows cpu on f1 too, and without borrowWithinCohort a queue reclaims only while it
    does not borrow: Preempt with nothing to preempt, and the job waits. The first
    targets did make room, for the flavors it was first given."""
    preemption = {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "LowerPriority"}
    stop = {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "MayStopSearch"}
    objects = [flavor("f0"), flavor("f1"),
               cluster_queue("cq0", {"f0": {"cpu": "1", "memory": "0"}, "f1": {"cpu": "1", "memory": "0"}},
                             cohort="c0", preemption=preemption, flavorFungibility=stop),
               cluster_queue("cq1", {"f0": {"cpu": "0", "memory": "0"}}, cohort="c0", preemption=preemption,
                             flavorFungibility=stop),
               cluster_queue("cq2", {"f0": {"cpu": ("5", None, "0"), "memory": ("2Gi", None, "0")},
                                     "f1": {"cpu": "5", "memory": "2Gi"}}, cohort="c0", preemption=preemption,
                             flavorFungibility={"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"}),
               local_queue("ns0", "cq0"), local_queue("ns2", "cq2")]
    snapshot = Snapshot.from_objects(objects)
    first = []
    for order, (name, namespace, requests) in enumerate((("w7", "ns0", {"cpu": "0", "memory": "1Gi"}),
                                                          ("w8", "ns2", {"cpu": "0", "memory": "1Gi"}))):
        info = workload_info(workload(name, namespace, **requests), order=order)
        decision = snapshot.assign(info)
        assert decision.fits, decision
        snapshot.admit(info, decision)
        first.append(decision.pod_sets[0].flavors["memory"])
    assert first == ["f1", "f0"]  # cq0 borrows f1's memory from cq2; cq2 fills its own f0

    job = workload_info(workload("job", "ns2", count=2, priority=1, cpu="3", memory="1Gi"), order=2)
    decision = snapshot.assign(job)
    assert (decision.mode, decision.borrowing) == (PREEMPT, True)
    assert decision.pod_sets[0].flavors == {"cpu": "f0", "memory": "f0"}
    assert [(t.name, t.cluster_queue, t.reason) for t in decision.targets] == [
        ("w8", "cq2", PreemptionReason.IN_CLUSTER_QUEUE)]
    assert decision.message == ("couldn't assign flavors to pod set main: "
                                "insufficient unused quota for memory in flavor f0, 1Gi more needed. "
                                "Pending the preemption of 1 workload(s)")

    snapshot.remove_workload(decision.targets[0].workload)
    assert all(value <= snapshot.tree.available("cq2", fr) for fr, value in decision.assignment.usage.items())
    again = snapshot.assign(job)
    assert (again.mode, again.borrowing) == (PREEMPT, True)
    assert again.pod_sets[0].flavors == {"cpu": "f1", "memory": "f1"}
    assert again.targets == []
    assert again.message.endswith("Nothing can be preempted for it under ClusterQueue cq2's preemption policy "
                                  "(withinClusterQueue: LowerPriority, reclaimWithinCohort: LowerPriority), "
                                  "so it waits until quota is freed")


def test_modes_are_typed_with_kueues_names():
    assert [str(m) for m in FlavorAssignmentMode] == ["NoFit", "Preempt", "DeferredFit", "Fit"]
    assert f"{FIT}" == "Fit" and min(FIT, PREEMPT) is PREEMPT  # worst first, as upstream orders them
    with pytest.raises(TypeError, match="FlavorAssignmentMode.FIT"):
        assert FIT == "Fit"
    decision = Snapshot.from_objects([flavor("f"), cluster_queue("cq", {"f": {"cpu": "1"}}), local_queue("ns", "cq")]) \
        .assign(workload_info(workload("w", cpu="1")))
    assert decision.mode is FIT and decision.fits


def test_simulate_names_what_kueue_would_preempt_or_says_nothing_can_be():
    from aks_kueue.admission.simulate import simulate

    objects = [flavor("f"), cluster_queue("cq", {"f": {"cpu": "4"}}, preemption={"withinClusterQueue": "LowerPriority"}),
               local_queue("ns", "cq"),
               workload("running", count=4, priority=10, admitted=("cq", "f"), cpu="1"),
               workload("urgent", count=2, priority=100, cpu="1"),
               workload("peer", count=2, priority=10, cpu="1")]
    urgent, peer = simulate(objects)
    assert (urgent["mode"], urgent["preemptionTargets"]) == (
        "Preempt", [{"namespace": "ns", "name": "running", "clusterQueue": "cq"}])
    assert urgent["message"].endswith("2 more needed. Pending the preemption of 1 workload(s)")
    assert (peer["mode"], peer["preemptionTargets"]) == ("Preempt", [])
    assert peer["message"] == ("couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor "
                               "f, 2 more needed. Nothing can be preempted for it under ClusterQueue cq's preemption "
                               "policy (withinClusterQueue: LowerPriority), so it waits until quota is freed")


def test_reclaim_targets_say_why_and_the_policy_is_spelled_out():
    objects = [flavor("f"),
               cluster_queue("lender", {"f": {"cpu": "4"}}, cohort="co",
                             preemption={"reclaimWithinCohort": "Any",
                                         "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 5}}),
               cluster_queue("borrower", {"f": {"cpu": "0"}}, cohort="co"),
               local_queue("ns", "lender"),
               workload("borrowed", namespace="other", count=4, admitted=("borrower", "f"), cpu="1")]
    snapshot = Snapshot.from_objects(objects)
    decision = snapshot.assign(workload_info(workload("mine", count=3, cpu="1")))
    assert [(t.namespace, t.name, t.cluster_queue, t.reason) for t in decision.targets] == [
        ("other", "borrowed", "borrower", PreemptionReason.IN_COHORT_RECLAMATION)]
    stuck = Snapshot.from_objects(objects[:-1] + [workload("borrowed", namespace="other", count=4, priority=9,
                                                           admitted=("lender", "f"), cpu="1")])
    decision = stuck.assign(workload_info(workload("mine", count=3, cpu="1")))
    assert decision.mode is PREEMPT and decision.targets == []
    assert decision.message.endswith("(withinClusterQueue: Never, reclaimWithinCohort: Any, borrowWithinCohort: "
                                     "LowerPriority up to priority 5), so it waits until quota is freed")


def test_simulate_makes_no_reference_cycles_and_restores_the_collector(monkeypatch):
    """simulate pauses the cyclic collector; that frees nothing later only because the
    loop makes no cycles: a collection in the middle of a run must find no garbage."""
    import gc

    from aks_kueue.admission import simulate as module

    objects = [flavor("f"), cluster_queue("cq", {"f": {"cpu": "4"}}, preemption={"withinClusterQueue": "LowerPriority"}),
               local_queue("ns", "cq")]
    objects += [workload(f"w{i}", count=1 + i % 3, priority=i % 4, cpu="1") for i in range(60)]
    found = []
    assign = module.Snapshot.assign

    def assign_and_collect(self, *args, **kwargs):
        decision = assign(self, *args, **kwargs)
        found.append(gc.collect())
        return decision

    module.simulate(objects)  # once before: a first run's lazy imports leave garbage that is not the loop's
    gc.collect()
    monkeypatch.setattr(module.Snapshot, "assign", assign_and_collect)
    modes = {d["mode"] for d in module.simulate(objects)}
    assert modes == {"Fit", "Preempt"} and len(found) == 60
    assert sum(found) == 0, found
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()  # a caller that turned it off keeps it off
    try:
        module.simulate(objects[:4])
        assert not gc.isenabled()
    finally:
        gc.enable()
