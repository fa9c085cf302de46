"""A pod set of count 0 (Kueue's CRD minimum) is admitted, charged nothing and places no pods."""

from __future__ import annotations

from tests.replay.builders import one_queue, pool, run, workload


def test_count_zero_pod_sets_are_admitted_and_place_nothing(tmp_path):
    rows = [workload("mixed", 0, cpu=2, runtime=60, count=1, requests={}),
            workload("empty", 0, cpu=64, runtime=60, count=0)]
    # "mixed" gets a second pod set of count 0 asking for more than any node has.
    rows[0]["podSets"].append({"name": "idle", "count": 0, "requests": {"cpu": "64"}})
    outcome, runs = run(tmp_path, one_queue(cpu=4), rows, pools=[pool("cpu", cpu=4, max_count=1)])
    mixed, empty = runs["mixed"], runs["empty"]
    assert mixed.counts == {"main": 1, "idle": 0} and mixed.finished is not None and mixed.reason is None
    # Nothing to place: admitted and started at once, 64 cores of requests times 0 pods.
    assert (empty.admitted, empty.started, empty.finished) == (0.0, 0.0, 60.0)
    assert outcome.meters["team-a"][("default", "cpu")].used <= 2000 * mixed.finished
