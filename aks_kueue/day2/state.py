"""What one deployment leaves for the next one's guard: the `day2` stack output.

The program exports a `Record` after every update: for each resource users depend on, its
replace-forcing inputs (none secret unless the stack key they come from is), whether it was
protected, and the install mode; for each Kueue object of `QUEUE_KINDS`, the fields Kueue will
not change in place (`kueueObjects`); for a fleet member, its links (`fleet`): on a manager each
listed worker, its stack and whether the manager had a MultiKueueCluster for it (then it may hold
workloads), on a worker the manager its access is for. The next update reads it back through a
StackReference to its own stack and compares (`guard.py`).

`tracked` names the replace-forcing paths the writing program compared, per type: a path a newer
program compares that the last one did not record is unknown for one update (not a change), and
recorded from then on. A record without `tracked` was written before it existed, and compared
every path but those of `_ADDED_WITH_TRACKED`. A record without `kueueObjects` was written before
Kueue objects were guarded: for one update the guard then says it cannot compare them; one without
`fleet` the same for a fleet's links. `priorityClasses` holds each WorkloadPriorityClass's value and
`provisioningConfigs` each ProvisioningRequestConfig's spec, so that the guard can say what a change of one does to
the workloads that use it (a record without them compares none).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Mapping, Optional

from aks_kueue.day2.allow import Entry, Target, parse_entry
from aks_kueue.day2.replacement import AGENT_POOL, changes, facts as forcing

OUTPUT = "day2"
CLUSTER_ID_OUTPUT = "clusterId"   # the cluster's ARM id, exported beside the record
SCHEMA = 1
# Create-only inputs the program may choose itself where the stack writes none (host encryption, the
# OS disk). A pool the last deployment has keeps what it was created with, so a newer VM catalog or
# a newer baseline default never replaces a running pool; its vmSize decides anew.
DERIVED_CREATE_ONLY = ("enableEncryptionAtHost", "osDiskType", "osDiskSizeGB")
# The AgentPool paths the data file added after records carried `tracked`.
_ADDED_WITH_TRACKED = {AGENT_POOL: ("maxPods", "scaleSetPriority", "scaleSetEvictionPolicy")}


class SystemPoolOwner(str, Enum):
    """Who manages the system pool: the cluster's inline profile (the update that creates the
    cluster) or its own AgentPool resource (every update after that)."""

    CLUSTER = "cluster"
    AGENT_POOL = "agentPool"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Tracked:
    """One resource the guard watches."""

    entry: Entry
    type_token: str
    label: str                          # e.g. "AgentPool a100"
    facts: Mapping[str, Any]            # replace-forcing inputs, flat by path
    protected: bool
    retained: bool = False              # retainOnDelete (team namespaces)
    # Desired side only: the stack key each fact comes from, e.g. vmSize -> aks-kueue:nodePools[1].vmSize.
    keys: Mapping[str, str] = field(default_factory=dict)
    key: str = ""                       # the key of the whole resource, e.g. aks-kueue:nodePools[1]
    # Desired side only: the DERIVED_CREATE_ONLY facts the program chose (the stack wrote none).
    chosen: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Record:
    resources: Mapping[Entry, Tracked]
    kueue_install: str
    kubernetes_version: str
    upgrade_channel: str
    system_pool_owner: SystemPoolOwner
    cluster_id: Optional[str] = None
    # Read side: False when the record predates `kueueObjects` (it says nothing of Kueue objects).
    queues_tracked: bool = True
    # Read side: False when the record predates `fleet` (it says nothing of a fleet's links).
    fleet_tracked: bool = True
    # Read side: per type, the replace-forcing paths this program compares that the record lacks.
    untracked: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # Each WorkloadPriorityClass's value and each ProvisioningRequestConfig's spec, by name; None on the read side
    # when the record predates them.
    priority_classes: Optional[Mapping[str, Any]] = field(default_factory=dict)
    provisioning_configs: Optional[Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)

    def get(self, entry: Entry) -> Optional[Tracked]:
        return self.resources.get(entry)

    def skipped(self, type_token: str) -> frozenset[str]:
        return self.untracked.get(type_token, frozenset())


def tracked_now() -> dict[str, list[str]]:
    """The replace-forcing paths this program compares, per type (`tracked` in the output)."""
    return {token: sorted(entry.paths) for token, entry in sorted(forcing().resources.items())}


def to_output(record: Record) -> dict[str, Any]:
    """The JSON-friendly `day2` stack output (keys and indexes of the stack file are left out).

    Kueue objects and fleet links go under keys of their own, which programs from before them ignore."""
    items = sorted(record.resources.items())
    return {
        "schema": SCHEMA,
        "kueueInstall": record.kueue_install,
        "kubernetesVersion": record.kubernetes_version,
        "upgradeChannel": record.upgrade_channel,
        "systemPool": str(record.system_pool_owner),
        "tracked": tracked_now(),
        "resources": {
            str(entry): {"type": t.type_token, "label": t.label, "facts": dict(t.facts), "protected": t.protected,
                         **({"retainOnDelete": True} if t.retained else {})}
            for entry, t in items if entry.target not in (Target.QUEUES, Target.FLEET)
        },
        "kueueObjects": {
            entry.name: {"type": t.type_token, "facts": dict(t.facts)}
            for entry, t in items if entry.target is Target.QUEUES
        },
        "fleet": {
            entry.name: {"type": t.type_token, "label": t.label, "facts": dict(t.facts)}
            for entry, t in items if entry.target is Target.FLEET
        },
        "priorityClasses": dict(sorted((record.priority_classes or {}).items())),
        "provisioningConfigs": {name: dict(spec) for name, spec in sorted((record.provisioning_configs or {}).items())},
    }


@dataclass(frozen=True)
class Previous:
    """The last deployment as the guard sees it: its record, or why there is none."""

    record: Optional[Record]
    reason: str = ""


def from_outputs(outputs: Any) -> Previous:
    """Read the `day2` output out of a stack's outputs (what `pulumi stack output --json` prints)."""
    if not isinstance(outputs, Mapping) or not outputs:
        return Previous(None, "no previous outputs (a new stack, or a stack that never completed an update)")
    doc = outputs.get(OUTPUT)
    if doc is None:
        return Previous(None, f"no previous outputs: the last deployment exported no `{OUTPUT}` "
                              "(it ran a program from before the day-2 guard)")
    if doc == "[secret]":
        return Previous(None, f"the previous `{OUTPUT}` output is a secret; give the file "
                              "`pulumi stack output --json --show-secrets` prints")
    if not isinstance(doc, Mapping) or doc.get("schema") != SCHEMA:
        return Previous(None, f"the previous `{OUTPUT}` output is not schema {SCHEMA}, which this program reads")
    try:
        resources = {}
        for section, prefix in (("resources", ""), ("kueueObjects", f"{Target.QUEUES}."),
                                ("fleet", f"{Target.FLEET}.")):
            for name, item in (doc.get(section) or {}).items():
                entry = parse_entry(prefix + name)
                type_token = str(item["type"])
                label = (f"{entry.kind} {str(entry.name).split('/', 1)[1]}" if section == "kueueObjects"
                         else str(item.get("label") or (entry if prefix else name)))
                # Only the stack's own resources (no prefix) are protected or retained.
                resources[entry] = Tracked(entry, type_token, label, dict(item.get("facts") or {}),
                                           not prefix and bool(item.get("protected")),
                                           not prefix and bool(item.get("retainOnDelete")))
        objects, links = doc.get("kueueObjects"), doc.get("fleet")
        tracked = doc.get("tracked")
        known = ({str(t): set(paths) for t, paths in tracked.items()} if isinstance(tracked, Mapping) else
                 {t: set(paths) - set(_ADDED_WITH_TRACKED.get(t, ())) for t, paths in tracked_now().items()})
        untracked = {token: frozenset(set(paths) - known.get(token, set()))
                     for token, paths in tracked_now().items() if set(paths) - known.get(token, set())}
        cluster_id = outputs.get(CLUSTER_ID_OUTPUT)
        configs, classes = doc.get("provisioningConfigs"), doc.get("priorityClasses")
        record = Record(resources, str(doc["kueueInstall"]), str(doc["kubernetesVersion"]),
                        str(doc["upgradeChannel"]), SystemPoolOwner(doc["systemPool"]),
                        cluster_id if isinstance(cluster_id, str) and cluster_id.startswith("/") else None,
                        queues_tracked=isinstance(objects, Mapping), fleet_tracked=isinstance(links, Mapping),
                        untracked=untracked,
                        priority_classes=dict(classes) if isinstance(classes, Mapping) else None,
                        provisioning_configs={str(k): dict(v) for k, v in configs.items() if isinstance(v, Mapping)}
                        if isinstance(configs, Mapping) else None)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        return Previous(None, f"the previous `{OUTPUT}` output cannot be read ({error})")
    return Previous(record)


def settle(desired: Record, previous: Optional[Record]) -> Record:
    """The record this update leaves: who owns the system pool now, derived values kept."""
    owner = SystemPoolOwner.CLUSTER if previous is None else SystemPoolOwner.AGENT_POOL
    return stick(replace(desired, system_pool_owner=owner), previous)


def stick(desired: Record, previous: Optional[Record]) -> Record:
    """Keep the create-only inputs the program chose for pools the last deployment already has, as
    it had them: a value it did not send (a pool created before the program chose it) stays unsent."""
    if previous is None:
        return desired
    resources = dict(desired.resources)
    for entry, wanted in desired.resources.items():
        before = previous.get(entry)
        if (wanted.type_token != AGENT_POOL or before is None
                or before.facts.get("vmSize") != wanted.facts.get("vmSize")):
            continue
        facts = dict(wanted.facts)
        for path in DERIVED_CREATE_ONLY:
            if path not in wanted.chosen:
                continue
            if path in before.facts:
                facts[path] = before.facts[path]
            else:
                facts.pop(path, None)
        resources[entry] = replace(wanted, facts=facts)
    return replace(desired, resources=resources)


def kept_pools(settled: Record, previous: Optional[Record]) -> list[Entry]:
    """The pools the last deployment has that this update keeps: none of their replace-forcing
    inputs change, so they keep what they were created with."""
    if previous is None:
        return []
    return sorted(entry for entry, wanted in settled.resources.items()
                  if wanted.type_token == AGENT_POOL and (before := previous.get(entry)) is not None
                  and not changes(AGENT_POOL, before.facts, wanted.facts, previous.skipped(AGENT_POOL)))
