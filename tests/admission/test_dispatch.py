"""MultiKueue's AllAtOnce dispatch over the admission core: reserved on the manager, raced on every
worker, the first worker of the config's order that admits a workload taken to run it."""

from __future__ import annotations

from aks_kueue.admission.dispatch import dispatch

V1 = "kueue.x-k8s.io/v1beta2"


def queues(flavor: str, gpus: str, check: bool = False) -> list[dict]:
    spec = {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"], "flavors": [
        {"name": flavor, "resources": [{"name": "nvidia.com/gpu", "nominalQuota": gpus}]}]}]}
    objects = [{"apiVersion": V1, "kind": "ResourceFlavor", "metadata": {"name": flavor}, "spec": {}},
               {"apiVersion": V1, "kind": "ClusterQueue", "metadata": {"name": "team"}, "spec": spec},
               {"apiVersion": V1, "kind": "LocalQueue", "metadata": {"name": "q", "namespace": "ns"},
                "spec": {"clusterQueue": "team"}},
               {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}}]
    if check:
        spec["admissionChecksStrategy"] = {"admissionChecks": [{"name": "multikueue"}]}
        objects.append({"apiVersion": V1, "kind": "AdmissionCheck", "metadata": {"name": "multikueue"},
                        "spec": {"controllerName": "kueue.x-k8s.io/multikueue"}})
    return objects


def workload(name: str, gpus: int) -> dict:
    return {"apiVersion": V1, "kind": "Workload", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"queueName": "q", "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [
                {"name": "c", "resources": {"requests": {"nvidia.com/gpu": str(gpus)}}}]}}}]}}


def test_each_workload_is_raced_on_every_worker_and_the_first_to_admit_keeps_it():
    manager = queues("fleet", "8", check=True) + [workload("a", 2), workload("b", 2), workload("c", 2)]
    workers = [("west", queues("a100", "2")), ("sweden", queues("h100", "4"))]
    decisions = dispatch(manager, workers)
    assert [d["mode"] for d in decisions] == ["Fit", "Fit", "Fit"]
    assert [d["dispatchedTo"] for d in decisions] == ["west", "sweden", "sweden"]
    first = decisions[0]
    assert [(w["name"], w["mode"]) for w in first["workers"]] == [("west", "Fit"), ("sweden", "Fit")]
    assert first["workers"][1]["podSets"] == [{"name": "main", "count": 1, "flavors": {"nvidia.com/gpu": "h100"}}]
    # b no longer fits west, where a runs (Kueue would preempt there only for a higher priority); sweden admits it.
    assert [(w["name"], w["mode"]) for w in decisions[1]["workers"]] == [("west", "Preempt"), ("sweden", "Fit")]
    assert first["admissionChecks"] == [{"name": "multikueue", "state": "Pending"}]
    assert all(d["dispatch"] == "AllAtOnce" for d in decisions)


def test_a_workload_the_manager_does_not_reserve_is_dispatched_nowhere():
    manager = queues("fleet", "2", check=True) + [workload("a", 2), workload("b", 1)]
    decisions = dispatch(manager, [("west", queues("a100", "4"))])
    assert [d["mode"] for d in decisions] == ["Fit", "Preempt"]
    assert decisions[1]["workers"] == [] and decisions[1]["dispatchedTo"] is None


def test_a_workload_no_worker_admits_stays_dispatched_to_none():
    decisions = dispatch(queues("fleet", "8") + [workload("a", 3)], [("west", queues("a100", "2"))])
    assert decisions[0]["mode"] == "Fit" and decisions[0]["dispatchedTo"] is None
    assert decisions[0]["workers"][0]["mode"] == "NoFit"


def test_the_managers_objects_are_read_before_the_workers():
    def bad_priority(value: str) -> dict:
        return {"apiVersion": V1, "kind": "WorkloadPriorityClass", "metadata": {"name": "p"}, "value": value}

    manager = queues("fleet", "8", check=True) + [bad_priority("manager-high")]
    workers = [("west", queues("a100", "2") + [bad_priority("worker-high")])]
    try:
        dispatch(manager, workers)
    except ValueError as error:
        assert "manager-high" in str(error) and "worker-high" not in str(error)
    else:
        raise AssertionError("a WorkloadPriorityClass whose value is not a number was read")
