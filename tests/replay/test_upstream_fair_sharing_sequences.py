"""Upstream's fair-sharing integration sequences (`test/integration/singlecluster/scheduler/fairsharing/
fair_sharing_test.go`, v0.19.2) as replay traces: fixtures/upstream/FairSharingIntegration.yaml.

Each upstream step (create workloads, finish some, complete evictions) becomes an instant of the trace;
the replay's evictions are immediate, so "finish the eviction" steps have no instant of their own.
At each checkpoint the state after the last instant at or before it is compared with what upstream
asserts there: workloads holding quota per ClusterQueue (`reserving_active_workloads`), pending ones,
total admissions, weighted shares of ClusterQueues and Cohorts (the metric's precise value), preemption
counts, and LocalQueues' consumed resources for admission fair sharing."""

from __future__ import annotations

import bisect
import copy
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from aks_kueue.admission.fair_sharing import dominant_resource_share
from aks_kueue.replay import ReplayConfig, ReplayOptions, read_trace, replay
from tests.admission.upstream_objects import V1BETA2, cluster_queue, cohort, flavors
from tests.replay.builders import validated, write_trace

FIXTURE = yaml.safe_load((Path(__file__).parents[1] / "fixtures" / "upstream" / "FairSharingIntegration.yaml")
                         .read_text())
CASES = [c for c in FIXTURE["cases"] if not c.get("notExpressible")]
NAMESPACE = "ns"


def objects_of(case: dict) -> list[dict]:
    found = flavors(case.get("flavors") or ["default", "flavor1", "flavor2"])
    found.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    found += [cohort(name, short) for name, short in (case.get("cohorts") or {}).items()]
    found += [cluster_queue(name, short) for name, short in case["clusterQueues"].items()]
    queues = case.get("localQueues") or [[name, name, None] for name in case["clusterQueues"]]
    for name, cq, weight in queues:
        spec: dict[str, Any] = {"clusterQueue": cq}
        if weight is not None:
            spec["fairSharing"] = {"weight": str(weight)}
        found.append({"apiVersion": V1BETA2, "kind": "LocalQueue", "metadata": {"name": name, "namespace": NAMESPACE},
                      "spec": spec})
    return validated(found)


def k8s(name: str) -> str:
    """Upstream's Go tests name workloads freely ("wlA1"); a trace holds names to Kubernetes' RFC 1123
    rules, so they are written in lower case (no two of a case differ only by case)."""
    return name.lower()


def rows_of(case: dict) -> list[dict]:
    rows = []
    special = case.get("traceRequests") or {}
    for name, submitted, queue, cpu, priority, runtime in case["trace"]:
        requests = special.get(name) or {"cpu": str(cpu)}
        row = {"submitted": submitted, "namespace": NAMESPACE, "queue": queue, "name": k8s(name), "priority": priority,
               "podSets": [{"name": "main", "count": 1, "requests": requests}]}
        if runtime is not None:
            row["runtime"] = runtime
        rows.append(row)
    return rows


class Observer:
    """The state after each instant: who holds quota, the shares, the LocalQueues' ledger."""

    def __init__(self):
        self.times: list[float] = []
        self.states: list[dict] = []
        self.admissions: set[tuple[str, float]] = set()

    def __call__(self, now: float, snapshot, nodes) -> None:
        holding = {name: sorted(w.name for w in snapshot.admitted(name)) for name in snapshot.cluster_queues}
        for name in snapshot.cluster_queues:
            self.admissions.update((w.uid, w.reserved) for w in snapshot.admitted(name))
        shares = {name: dominant_resource_share(node).precise_weighted_share()
                  for name, node in {**snapshot.tree.cohorts, **snapshot.tree.cluster_queues}.items()}
        # The ledger as it stands; a checkpoint later than this instant advances a copy to its time
        # (the LocalQueue controller samples between events too).
        state = {"holding": holding, "shares": shares, "admissions": set(self.admissions),
                 "afs": copy.deepcopy(snapshot.afs)}
        if self.times and self.times[-1] == now:
            self.states[-1] = state
        else:
            self.times.append(now)
            self.states.append(state)

    def at(self, t: float) -> dict:
        state = dict(self.states[bisect.bisect_right(self.times, t) - 1])
        ledger, afs = {}, state["afs"]
        if afs is not None:
            afs = copy.deepcopy(afs)
            afs.advance(t)
            ledger = {lq[1]: (dict(e.resources), {k: dict(v) for k, v in e.penalties.items()})
                      for lq, e in afs.entries.items()}
        state["ledger"] = ledger
        return state


def run_case(case: dict, tmp_path: Path):
    trace = read_trace([str(write_trace(tmp_path / "trace.jsonl", rows_of(case)))])
    kueue = {"fairSharing": {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]},
             **(case.get("configuration") or {})}
    if kueue.get("fairSharing") is None:
        del kueue["fairSharing"]
    observer = Observer()
    outcome = replay(ReplayConfig("test", objects_of(case), kueue=kueue), trace,
                     ReplayOptions(until=case.get("until"), observe=observer))
    return outcome, observer


@pytest.mark.parametrize("case", CASES, ids=[c["upstream"] for c in CASES])
def test_fair_sharing_sequence(case, tmp_path):
    outcome, observer = run_case(case, tmp_path)
    runs = {r.trace.name: r for r in outcome.runs}
    runs.update({name: runs[k8s(name)] for name, *_ in case["trace"]})  # read by upstream's names too
    for check in case["expect"]:
        at = Checkpoint(check, observer.at(check["at"]), outcome, runs)
        at.workloads()
        at.shares_and_admissions()
        at.ledger()
    for name, flavor in (case.get("flavorsAtEnd") or {}).items():
        assert runs[name].flavors == {"main": {"cpu": flavor}}, (name, runs[name].flavors)
    if case.get("oneOf"):
        held = {n for names in observer.at(case["oneOf"]["at"])["holding"].values() for n in names}
        assert len(held & {k8s(n) for n in case["oneOf"]["admitted"]}) == case["oneOf"]["count"], held
    for name, summary in (case.get("shareSummary") or {}).items():
        got = outcome.shares.summary(name, outcome.end)
        assert {k: got["weightedShare"][k] for k in summary} == summary, (name, got)


class Checkpoint:
    """One of upstream's checkpoints (`check`) against the state after the last instant at or before it."""

    def __init__(self, check: dict, state: dict, outcome, runs: dict):
        self.check, self.state, self.outcome, self.runs = check, state, outcome, runs
        self.t = check["at"]
        self.where = f"at {self.t}"

    def workloads(self) -> None:
        """Who holds quota, who waits, who was preempted and why."""
        check, where, holding, runs = self.check, self.where, self.state["holding"], self.runs
        for cq, count in (check.get("running") or {}).items():
            assert len(holding[cq]) == count, (where, cq, holding[cq])
        for cq, count in (check.get("pending") or {}).items():
            waiting = [r.trace.name for r in self.outcome.runs if r.cq == cq and r.trace.submitted <= self.t
                       and r.trace.name not in holding[cq] and (r.finished is None or r.finished > self.t)]
            assert len(waiting) == count, (where, cq, waiting)
        held = {n for names in holding.values() for n in names}
        for name in check.get("admitted") or []:
            assert k8s(name) in held, (where, name)
        for name in check.get("notAdmitted") or []:
            assert k8s(name) not in held, (where, name)
        for name, count in (check.get("preemptions") or {}).items():
            assert runs[name].preemptions == count, (where, name, runs[name].preemptions)
        for name, text in (check.get("reason") or {}).items():
            assert text in (runs[name].reason or ""), (where, name, runs[name].reason)

    def shares_and_admissions(self) -> None:
        check, where = self.check, self.where
        for name, value in (check.get("share") or {}).items():
            got = self.state["shares"][name]
            assert (math.isinf(got) and value == "inf") or math.isclose(got, value, abs_tol=0.01), (where, name, got)
        uids = {f"{r.trace.order:012d}": r.trace.name for r in self.outcome.runs}  # the engine's uid: trace order
        for cq, count in (check.get("admissions") or {}).items():
            seen = [uids[uid] for uid, _ in self.state["admissions"] if self.runs[uids[uid]].cq == cq]
            assert len(seen) == count, (where, cq, sorted(seen))

    def ledger(self) -> None:
        """Admission fair sharing: the LocalQueues' consumed resources and pending penalties."""
        check, where, ledger = self.check, self.where, self.state["ledger"]
        for lq, bound in (check.get("consumedAbove") or {}).items():
            assert ledger[lq][0].get("cpu", 0.0) * 1000 > bound, (where, lq, ledger.get(lq))
        for lq, value in (check.get("consumedEquals") or {}).items():
            assert ledger.get(lq, ({}, {}))[0].get("cpu", 0.0) * 1000 == value, (where, lq)
        for lq in check.get("noPendingPenalty") or []:
            assert not ledger[lq][1], (where, lq, ledger[lq][1])
        if "ledger" in check:
            assert (ledger == {}) is (check["ledger"] == "none"), (where, ledger)


def test_fixture_counts():
    sequences = [c for c in FIXTURE["cases"] if c.get("kind") == "fair sharing"]
    afs = [c for c in FIXTURE["cases"] if c.get("kind") == "admission fair sharing"]
    assert (len(sequences), len(afs)) == (19, 13)
    assert all(c.get("expect") or c.get("notExpressible") for c in FIXTURE["cases"])
