"""Day-2 edits of prod, each with what it destroys: the property tests' and the benchmark's catalogue.

An edit changes prod's stack config in place and names the allowReplacement entries of what it
replaces or deletes (from how AKS, azure-native and Kueue treat the change, written here by hand,
not asked of the guard). `expected_refused` is the promise: an edit that replaces or deletes a
resource protected in the state, a kept pool, a team namespace or a Kueue queue object is refused
unless acknowledged, where acknowledged means listed in allowReplacement with the state
unprotected (an entry in the same update as the change does not count for what the state protects).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Mapping, Optional

from aks_kueue.day2.allow import Protection
from aks_kueue.day2.guard import judge_update
from aks_kueue.day2.state import from_outputs, settle
from aks_kueue.model.from_settings import from_settings
from aks_kueue.model.record import desired_record
from aks_kueue.settings import SettingsError, parse_settings
from tests.conftest import ROOT, filled_doc, flat

Config = dict[str, Any]


@dataclass(frozen=True)
class Edit:
    name: str
    apply: Callable[[Config], None]
    destroys: frozenset[str] = frozenset()   # allowReplacement entries of what it replaces or deletes


def _pool(c: Config, name: str) -> dict:
    return next(p for p in c["aks-kueue:nodePools"] if p["name"] == name)


def _remove_team_b(c: Config) -> None:
    queues = c["aks-kueue:queues"]
    queues["clusterQueues"] = [q for q in queues["clusterQueues"] if q["name"] != "team-b"]
    queues["localQueues"] = [q for q in queues["localQueues"] if q["spec"]["clusterQueue"] != "team-b"]
    c["aks-kueue:expectedWorkloads"] = [w for w in c["aks-kueue:expectedWorkloads"] if w["queue"] != "team-b/default"]


def _remove_h100(c: Config) -> None:
    c["aks-kueue:nodePools"] = [p for p in c["aks-kueue:nodePools"] if p["name"] != "h100"]
    queues = c["aks-kueue:queues"]
    queues["resourceFlavors"] = [f for f in queues["resourceFlavors"] if f["name"] != "h100"]
    queues["clusterQueues"] = [q for q in queues["clusterQueues"] if q["name"] != "training"]
    queues["localQueues"] = [q for q in queues["localQueues"] if q["spec"]["clusterQueue"] != "training"]
    queues["topologies"] = []
    c["aks-kueue:expectedWorkloads"] = [w for w in c["aks-kueue:expectedWorkloads"]
                                        if not w["queue"].endswith("/training")]


def _remove_cohort(c: Config) -> None:
    queues = c["aks-kueue:queues"]
    queues["cohorts"] = []
    for q in queues["clusterQueues"]:
        q["spec"].pop("cohortName", None)
        q["spec"]["preemption"].pop("reclaimWithinCohort", None)
        for group in q["spec"]["resourceGroups"]:
            for flavor in group["flavors"]:
                for resource in flavor["resources"]:
                    resource.pop("lendingLimit", None)
                    resource.pop("borrowingLimit", None)


def _uninstall(c: Config) -> None:
    c["aks-kueue:kueue"] = {"install": "none"}
    for key in ("aks-kueue:queues", "aks-kueue:expectedWorkloads", "aks-kueue:queueManifests"):
        c.pop(key, None)


def _move_training_queue(c: Config) -> None:
    lq = next(q for q in c["aks-kueue:queues"]["localQueues"] if q["namespace"] == "team-a" and q["name"] == "training")
    lq["spec"]["clusterQueue"] = "team-a"
    c["aks-kueue:expectedWorkloads"] = [w for w in c["aks-kueue:expectedWorkloads"] if w["queue"] != "team-a/training"]


def _new_pool(c: Config) -> None:
    c["aks-kueue:nodePools"].append({"name": "cpu2", "vmSize": "Standard_D8s_v5", "minCount": 0, "maxCount": 3})


def _new_queue(c: Config) -> None:
    c["aks-kueue:queues"]["localQueues"].append({"name": "batch", "namespace": "team-a",
                                                  "spec": {"clusterQueue": "team-a"}})


def _quota(c: Config) -> None:
    c["aks-kueue:queues"]["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0][
        "nominalQuota"] = "48"


def _hold(c: Config) -> None:
    c["aks-kueue:queues"]["clusterQueues"][1]["spec"]["stopPolicy"] = "Hold"


EDITS: tuple[Edit, ...] = (
    # What replaces or deletes (azure-native's forcing inputs, the create-only pool fields, Kueue's immutable fields).
    Edit("cpu vmSize", lambda c: _pool(c, "cpu").update(vmSize="Standard_D32s_v5"), frozenset({"nodePools.cpu"})),
    Edit("a100 vmSize", lambda c: _pool(c, "a100").update(vmSize="Standard_NC48ads_A100_v4"),
         frozenset({"nodePools.a100"})),
    Edit("cpu zones", lambda c: _pool(c, "cpu").update(zones=["1", "2"]), frozenset({"nodePools.cpu"})),
    Edit("cpu maxPods", lambda c: _pool(c, "cpu").update(maxPods=60), frozenset({"nodePools.cpu"})),
    Edit("h100 maxPods", lambda c: _pool(c, "h100").update(maxPods=90), frozenset({"nodePools.h100"})),
    Edit("a100 MIG", lambda c: _pool(c, "a100").update(gpuInstanceProfile="MIG1g"), frozenset({"nodePools.a100"})),
    Edit("system vmSize", lambda c: c["aks-kueue:cluster"]["systemPool"].update(vmSize="Standard_D8s_v5"),
         frozenset({"systemPool"})),
    Edit("cluster rename", lambda c: c["aks-kueue:cluster"].update(name="aks-batch-prod2"), frozenset({"cluster"})),
    Edit("resource group", lambda c: c.update({"aks-kueue:resourceGroupName": "rg-batch-prod2"}),
         frozenset({"resourceGroup"})),
    Edit("dataplane", lambda c: c["aks-kueue:cluster"]["network"].update(dataplane="azure", policy="azure"),
         frozenset({"cluster"})),
    Edit("remove h100", _remove_h100, frozenset({
        "nodePools.h100", "queues.ResourceFlavor/h100", "queues.ClusterQueue/training",
        "queues.LocalQueue/team-a/training", "queues.LocalQueue/team-b/training",
        "queues.AdmissionCheck/training-provisioning", "queues.Topology/zone-host"})),
    Edit("remove team-b queue", _remove_team_b, frozenset({
        "queues.ClusterQueue/team-b", "queues.LocalQueue/team-b/default",
        "queues.AdmissionCheck/team-b-provisioning"})),
    Edit("move a LocalQueue", _move_training_queue, frozenset({"queues.LocalQueue/team-a/training"})),
    Edit("topology levels", lambda c: c["aks-kueue:queues"]["topologies"][0].update(fromAks=["hostname"]),
         frozenset({"queues.Topology/zone-host"})),
    Edit("remove cohort", _remove_cohort, frozenset({"queues.Cohort/research"})),
    Edit("uninstall Kueue", _uninstall, frozenset({"kueue"})),
    # What changes in place.
    Edit("cpu maxCount", lambda c: _pool(c, "cpu").update(maxCount=12)),
    Edit("a100 minCount", lambda c: _pool(c, "a100").update(minCount=1)),
    Edit("new pool", _new_pool),
    Edit("new LocalQueue", _new_queue),
    Edit("quota", _quota),
    Edit("hold a ClusterQueue", _hold),
    Edit("log retention", lambda c: c["aks-kueue:monitoring"].update(logRetentionDays=60)),
)
# Entries the random acknowledgements draw from: every entry an edit names, and some that match nothing.
ENTRIES = tuple(sorted({e for edit in EDITS for e in edit.destroys} | {"nodePools.gone", "queues.Cohort/other"}))
# Entries whose replacement or removal takes every Kueue object with it (their finding covers them).
COVERS_KUEUE = {"cluster", "resourceGroup", "kueue"}


def protected_in_state(previous: Mapping[str, Any]) -> set[str]:
    return {name for name, item in previous["day2"]["resources"].items() if item.get("protected")}


def expected_refused(destroyed: set[str], allow: set[str], state_protected: set[str]) -> bool:
    """The promise, written without the guard: refused unless every destroyed thing is acknowledged.

    (The states used protect everything or nothing, so the cluster's protected dependents, which
    Pulumi's chain check adds, are protected exactly when the cluster is.)"""
    if destroyed & COVERS_KUEUE:
        destroyed = {e for e in destroyed if not e.startswith("queues.")}
    # What goes with the cluster (or its group) anyway is covered by that entry.
    if "resourceGroup" in destroyed:
        destroyed = {e for e in destroyed if e not in ("cluster", "systemPool") and not e.startswith("nodePools.")}
    if "cluster" in destroyed:
        destroyed = {e for e in destroyed if e != "systemPool" and not e.startswith("nodePools.")}
    return any(entry in state_protected or entry not in allow for entry in destroyed)


@dataclass(frozen=True)
class Verdict:
    edits: tuple[str, ...]
    allow: tuple[str, ...]
    destroyed: frozenset[str]
    refused: bool
    findings: tuple[str, ...]


@lru_cache(maxsize=1)
def _prod() -> Config:
    return filled_doc("prod")  # filled in: as shipped its placeholders reject it (issue 28)


def apply_edits(edits: tuple[Edit, ...], allow: tuple[str, ...], protect: Optional[bool]) -> Optional[Config]:
    """prod with the edits made, or None where one edit undoes what another needs (a pool removed, then edited)."""
    config = copy.deepcopy(_prod())
    for edit in edits:
        try:
            edit.apply(config)
        except (StopIteration, KeyError, IndexError):
            return None
    if allow:
        config["aks-kueue:allowReplacement"] = list(allow)
    if protect is not None:
        config["aks-kueue:protect"] = protect
    return config


@lru_cache(maxsize=4)
def _previous(text: str):
    return from_outputs(json.loads(text))


def guard_verdict(config: Config, previous: Mapping[str, Any]) -> Optional[tuple[bool, list[str]]]:
    """What the program's guard decides for this config after `previous` (None: the settings refuse
    it before the guard). The judge's blocking findings are not asked: a config they refuse is
    refused before the guard runs, which only adds refusals, and they cost most of the time."""
    try:
        settings = parse_settings(flat(config))
        model = from_settings(settings, ROOT, "prod")
    except SettingsError:
        return None
    prior = _previous(json.dumps(previous, sort_keys=True))
    desired = settle(desired_record(model, Protection(settings.effective_protect, settings.allowances)), prior.record)
    report = judge_update(prior, desired, settings.allowances)
    return bool(report.refusals), [f"{f.kind} {f.object}" for f in report.refusals]


def check(edits: tuple[Edit, ...], allow: tuple[str, ...], protect: Optional[bool],
          previous: Mapping[str, Any]) -> Optional[Verdict]:
    config = apply_edits(edits, allow, protect)
    found = guard_verdict(config, previous) if config is not None else None
    if found is None:
        return None
    destroyed = frozenset().union(*(e.destroys for e in edits)) if edits else frozenset()
    return Verdict(tuple(e.name for e in edits), allow, destroyed, found[0], tuple(found[1]))



def acknowledgement(destroyed: set[str], how: str, stray, rnd) -> tuple[str, ...]:
    """allowReplacement for one example: none, some (by `rnd`) or all of what it destroys, plus `stray`."""
    some = {e for e in sorted(destroyed) if rnd.random() < 0.5}
    return tuple(sorted({"none": set(), "all": destroyed, "some": some}[how] | set(stray)))


def try_one(edits: tuple[Edit, ...], allow: tuple[str, ...], protect: Optional[bool], previous: Mapping[str, Any],
            tally, wrong: list) -> Optional[Verdict]:
    """Judge one example, count it in `tally` and keep it in `wrong` when the guard breaks the promise."""
    verdict = check(edits, allow, protect, previous)
    if verdict is None:
        tally["invalid"] += 1
        return None
    tally["tried"] += 1
    tally["destructive"] += bool(verdict.destroyed)
    tally["refused" if verdict.refused else "accepted"] += 1
    if verdict.refused != expected_refused(set(verdict.destroyed), set(allow), protected_in_state(previous)):
        wrong.append(verdict)
    return verdict
