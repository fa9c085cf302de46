"""The guard: this update against the last deployment, before anything users depend on changes.

`judge_update` compares the desired `Record` with the previous one and returns refusals (errors: the
program stops, `aks-kueue preview` exits 1) and notices (warnings: what this update destroys or
changes that users should know before it runs). Findings are the project's one `Finding` shape.

Protection is judged against the state: what the last deployment left protected decides, whatever
this update's `protect`, `environment` or `allowReplacement` say. That is stricter than Pulumi's
engine, and the words below say where. Read in pulumi/pulumi (the installed SDK is 3.272.0; the
source read was the newest the mirror holds, tag v3.259.0 and main at 1b59498 of 2026-08-21,
identical in these places):

- pkg/resource/deploy/step_generator.go, `continueStepsFromDiff`: a replacement is refused only
  when `new.Protect && old.Protect`, so an update that unprotects a resource (protect: false,
  environment: development, or an allowReplacement entry) and replaces it at once goes through.
  The guard refuses that: the acknowledgement must be deployed (the state unprotected) first.
- the same function, delete-before-replace: every dependent the replacement takes down is checked
  with `dependentResource.Protect`, the state's flag, and the update stops (BailErrorf) when one
  is protected.
- pkg/resource/deploy/step.go, `DeleteStep.Apply`: a delete (not part of a replacement) of a
  resource the state protects fails (`!s.replacing && s.old.Protect`) with "cannot be deleted
  because it is protected"; a delete of one the state marks retainOnDelete removes it from the
  state only.
Neither the engine nor the guard is moved by `pulumi up --ignore-protect` (the engine then skips
both checks; the guard still decides from the record).

Turning protection off is not an acknowledgement to destroy: replacing or deleting the cluster,
the resource group, a pool, the Kueue installer, a team namespace or a Kueue object of
`QUEUE_KINDS` needs its allowReplacement entry in the update that does it, protected or not.

A fleet's links are judged the same way (`_fleet`): a manager that stops connecting to a worker it
connected to (the worker left `aks-kueue:fleet.workers`, or its stack no longer exports a kubeconfig)
deletes that worker's MultiKueueCluster while it may still run workloads, and a worker that leaves
its fleet deletes the access its manager connects with; each needs its `fleet.` entry. On a worker,
the namespaces and LocalQueues mirrored from the manager are judged as the stack's own, in words
that name the manager.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, Callable, Iterable, Mapping, Optional

from aks_kueue.aks import kubernetes_versions
from aks_kueue.day2.allow import ACKNOWLEDGED_ONLY, ALLOW_KEY, MANAGER_ENTRY, Allowances, Entry, Target
from aks_kueue.day2.names import DELETE_TIMEOUT, FINALIZER_WAITS_FOR, immutable_paths, spec_of
from aks_kueue.day2.replacement import Change, changes, facts
from aks_kueue.day2.state import OUTPUT, Previous, Record, Tracked
from aks_kueue.day2.upgrades import MOVES_MINOR
from aks_kueue.judge.finding import ERROR, WARNING, Finding
from aks_kueue.kueue import multikueue as mk

_LOST = {
    Target.RESOURCE_GROUP: "the resource group and everything in it: the cluster, its node resource group and "
                           "every disk behind a PersistentVolume",
    Target.CLUSTER: "the whole cluster: every pool, node, pod and Job, Kueue with every ClusterQueue, LocalQueue "
                    "and Workload, and the node resource group with every disk behind a PersistentVolume",
    Target.SYSTEM_POOL: "the system pool's nodes and the system pods on them (AKS never deletes a cluster's last "
                        "System pool, so the update fails unless another System pool exists)",
    Target.NODE_POOL: "its nodes and every pod running on them, evicting the Kueue workloads admitted there",
    Target.KUEUE: "Kueue's CRDs and with them every ClusterQueue, LocalQueue and Workload",
    Target.NAMESPACE: "the namespace with every Job, pod, Secret and PersistentVolumeClaim in it",
}
# What a replacement of one resource also takes down: dependents replaced in the same chain.
_CHAIN = {
    Target.RESOURCE_GROUP: (Target.CLUSTER, Target.SYSTEM_POOL, Target.NODE_POOL, Target.KUEUE),
    Target.CLUSTER: (Target.SYSTEM_POOL, Target.NODE_POOL, Target.KUEUE),
}
# The key whose edit removed a resource from the stack.
_REMOVAL_KEYS = {
    Target.RESOURCE_GROUP: "aks-kueue:resourceGroupName", Target.CLUSTER: "aks-kueue:cluster",
    Target.SYSTEM_POOL: "aks-kueue:cluster.systemPool", Target.NODE_POOL: "aks-kueue:nodePools",
    Target.KUEUE: "aks-kueue:kueue.install", Target.NAMESPACE: "aks-kueue:queues.localQueues",
}
# The queue key each guarded Kueue kind is written under (queueManifests may hold any of them).
_QUEUE_KEYS = {
    "ClusterQueue": "aks-kueue:queues.clusterQueues", "Cohort": "aks-kueue:queues.cohorts",
    "ResourceFlavor": "aks-kueue:queues.resourceFlavors", "LocalQueue": "aks-kueue:queues.localQueues",
    "Topology": "aks-kueue:queues.topologies", "AdmissionCheck": "aks-kueue:queues.clusterQueues",
}
PRIORITY_KEY = "aks-kueue:queues.workloadPriorityClasses"
MAX_INVERSIONS = 20  # priority inversions said one by one; past that, the last says how many more
# What Kueue v0.19.2 does with a WorkloadPriorityClass's value and with its removal
# (pkg/controller/core/workloadpriorityclass_controller.go: a value change is set on every Workload that names the
# class, pending or admitted; a delete is ignored; pkg/util/priority/priority.go: a job naming a missing class gets
# no Workload, "not found").
PRIORITY_REMOVED = ("the workloads that name it keep the priority they have, admitted or pending (Kueue ignores "
                    "the delete), but a job that names it from then on gets no Workload (its class is not found) and "
                    "stays suspended")
PRIORITY_VALUE = ("Kueue sets the new value on every Workload that names the class, admitted or pending "
                  "(workloadpriorityclass_controller.go): pending ones move in their ClusterQueues' order at once, and "
                  "admitted ones are weighed by it the next time a workload looks for something to preempt")
# What a changed ProvisioningRequestConfig does (kueue v0.19.2 pkg/controller/admissionchecks/provisioning/
# controller.go: `activeOrLastPRForChecks` keeps only requests in step with the config,
# `deleteUnusedProvisioningRequests` deletes the rest, `syncOwnedProvisionRequest` creates new ones for checks that
# are not Ready yet).
PROVISIONING_CHANGE = ("Kueue deletes every ProvisioningRequest made with the old settings: workloads still waiting "
                       "for that check get a new one and wait for capacity again from the start, and admitted "
                       "workloads keep running, their requests deleted")
INSTALL_KEY = "aks-kueue:kueue.install"
FLEET_KEY = "aks-kueue:fleet"
WORKERS_KEY = f"{FLEET_KEY}.workers"
MANAGER_KEY = f"{FLEET_KEY}.manager"
# What happens to what a worker runs for the manager once the manager no longer knows the worker (kueue
# v0.19.2, pkg/controller/admissionchecks/multikueue: workload.go `remoteClientsForAC` and the reconcile's
# step 6a, multikueuecluster.go `Reconcile` and `runGC`).
LOST_TO_MANAGER = ("workloads the manager dispatched there and that still run are lost to it: Kueue no longer finds "
                   "their worker in the MultiKueueConfig and sets their MultiKueue check to Retry at once (\"Admitting "
                   "remote no longer exists\", pkg/controller/admissionchecks/multikueue/workload.go), so they are "
                   "evicted, requeued and dispatched again, while their jobs on the worker run on with nothing "
                   "syncing or deleting them (the manager's garbage collector visits connected workers only): the "
                   "work runs twice")
LOST_AFTER_TIMEOUT = ("workloads it dispatched here are lost to it once the connection has been down for Kueue's "
                      "workerLostTimeout (15 minutes by default): their MultiKueue check turns Retry (\"Admitting "
                      "remote lost\"), they are dispatched again elsewhere, and their jobs here run on unwatched")
# What is left on a worker the manager no longer knows: the copies MultiKueue created there carry its origin label.
ORIGIN_CLEANUP = f"kubectl delete workloads -A -l {mk.ORIGIN_LABEL}={mk.DEFAULT_ORIGIN}"
VERSION_KEY = "aks-kueue:cluster.kubernetesVersion"
ENGINE_REPLACE = ("Pulumi's engine refuses a replacement only while both the state and the update protect the "
                  "resource (pkg/resource/deploy/step_generator.go, continueStepsFromDiff: `new.Protect && "
                  "old.Protect`), so unprotecting it in the same update would let it through; the guard decides "
                  "from the state")
ENGINE_DELETE = ("Pulumi deletes nothing the state protects (pkg/resource/deploy/step.go, DeleteStep.Apply: "
                 "\"cannot be deleted because it is protected\"), and a resource that left the program can no "
                 "longer be unprotected by it")
ENGINE_CHAIN = ("Pulumi deletes the dependents of a delete-before-replace first and stops when the state protects "
                "one of them (pkg/resource/deploy/step_generator.go, continueStepsFromDiff: "
                "`dependentResource.Protect`), so this update would stop halfway")
# The rule of one minor at a time, as the pinned SDK describes ManagedCluster.kubernetesVersion
# (pulumi-azure-native 3.29.0, API 2025-09-01) and learn.microsoft.com/azure/aks/upgrade-aks-cluster.
MINOR_RULE = ("When you upgrade a supported AKS cluster, Kubernetes minor versions cannot be skipped. All "
              "upgrades must be performed sequentially by major version number.")
# learn.microsoft.com/azure/aks/supported-kubernetes-versions: "When upgrading by alias minor version,
# only a higher minor version is supported." AKS offers no downgrade (`az aks upgrade` lists only
# higher versions, `az aks get-upgrades`).
NO_DOWNGRADE = "AKS upgrades only forward: it has no downgrade, of the minor or of the patch"


# Where the guard's kinds are explained: the generated policy list, one anchor per kind (`EXPLANATIONS`).
DOCUMENTATION = "docs/reference/policies.md"
_QUEUE_DELETE = (
    "Kueue stops admitting through an object as soon as it is deleted. Its resource-in-use finalizer keeps "
    + ", ".join(f"a {kind} until {what}" for kind, what in FINALIZER_WAITS_FOR.items())
    + f", so until then the delete waits {DELETE_TIMEOUT} and fails, leaving the update half-applied and the object "
    "Terminating. A terminating ClusterQueue admits nothing (\"Can't admit new workloads; clusterQueue is "
    "terminating\") and the pending workloads of its LocalQueues wait forever; without its LocalQueue, the workloads "
    "submitted through it are not admitted and jobs that name it (kueue.x-k8s.io/queue-name) are suspended; a "
    "Cohort's ClusterQueues lose the quota it shares and its place in the tree; ClusterQueues or Cohorts that still "
    "name a ResourceFlavor become inactive (FlavorNotFound), those naming an AdmissionCheck admit nothing, and "
    "ResourceFlavors naming a Topology cannot place topology-aware workloads. A Kueue field its CRD makes immutable "
    "is changed by deleting and creating the object again (deleteBeforeReplace), with the same effects. On a fleet "
    "worker, the LocalQueues are the manager's teams: the manager's own guard asks for them to be held and drained "
    "first.")
_ACKNOWLEDGE = (" Turning protection off is not an acknowledgement to destroy: the change needs its allowReplacement "
                "entry in the update that makes it, protected or not.")
# Why the guard says what it says, kind by kind: each finding's message states the change in one sentence.
EXPLANATIONS: dict[str, str] = {
    "day2-unguarded": "The guard compares an update with the record the last deployment exported (its `day2` "
    "output). Without it, a replacement, a deletion or an install switch is not refused by the guard (Pulumi's "
    "protect still stops the engine from deleting a resource the state protects). After the next pulumi up the "
    "stack exports `day2`; offline, --previous-outputs gives the outputs.",
    "day2-replace-refused": "The last deployment left the resource protected, and replacing it destroys what it "
    f"holds. {ENGINE_REPLACE[0].upper()}{ENGINE_REPLACE[1:]}, so replacing it on purpose takes two updates: one that "
    "lists it in allowReplacement and changes nothing else (it only unprotects), then the change.",
    "day2-replace-unacknowledged": "Replacing the resource destroys what it holds, and the update does not list it "
    "in allowReplacement." + _ACKNOWLEDGE,
    "day2-replace-chain-refused": "Replacing the resource takes down, with it, resources that the last deployment "
    f"left protected. {ENGINE_CHAIN[0].upper()}{ENGINE_CHAIN[1:]}: unprotect them first, in an update of their own.",
    "day2-replace": "The update replaces a resource that allowReplacement lists (or that goes with one it lists), "
    "destroying what it holds; remove the entry after the update so that a later replacement is refused again.",
    "day2-delete-refused": "The last deployment left the resource protected and the update removes it. "
    f"{ENGINE_DELETE[0].upper()}{ENGINE_DELETE[1:]}: put it back with its allowReplacement entry (that update only "
    "unprotects it), then remove it with the entry still listed.",
    "day2-delete-unacknowledged": "The update removes a resource, destroying what it holds (a team namespace with "
    "everything in it, unless the state retains it), and does not list it in allowReplacement." + _ACKNOWLEDGE,
    "day2-delete": "The update deletes a resource that allowReplacement lists (or that goes with one it lists), "
    "destroying what it holds; remove the entry after the update.",
    "day2-namespace-released": "A team namespace the state marks retainOnDelete is only forgotten by Pulumi when the "
    "stack stops managing it: it stays in the cluster with everything in it, and kubectl deletes it if that is meant.",
    "day2-install-switch-refused": "Switching the install mode directly makes Pulumi create the new installer while "
    "the old one still owns Kueue's CRDs and webhooks (two controllers at once), then delete the old one, whose "
    "uninstall removes Kueue's CRDs and with them every ClusterQueue, LocalQueue and Workload. An uninstall needs "
    f"`kueue` in allowReplacement, and where the state protects the installer, {ENGINE_DELETE}. The runbook "
    "switches in three updates (docs/day2.md).",
    "day2-kueue-removed": "With install: none and `kueue` listed, pulumi up deletes every queue object first, then "
    "uninstalls Kueue, which removes its CRDs and with them every ClusterQueue, LocalQueue and Workload.",
    "day2-kueue-delete-refused": _QUEUE_DELETE + " So the guard refuses it unless allowReplacement lists the object, "
    "and its fix is the safe order: hold, drain, then remove.",
    "day2-kueue-replace-refused": _QUEUE_DELETE + " So the guard refuses it unless allowReplacement lists the object.",
    "day2-kueue-delete": _QUEUE_DELETE,
    "day2-kueue-replace": _QUEUE_DELETE,
    "day2-kueue-immutable-refused": "Kueue's ResourceFlavor CRD refuses to drop spec.topologyName once set "
    "(\"topologyName is immutable when topologyName is set\"), so the update would fail at the API server.",
    "day2-kueue-objects-unrecorded": "A record written by an older program names no Kueue objects, so this update "
    "cannot tell which it removes or replaces; it records them, and later updates refuse such a change unless "
    "allowReplacement lists it.",
    "day2-facts-unrecorded": "A record written by an older program does not hold some properties, so this update "
    "cannot tell whether it changes them on the resources it keeps; it records them, and later updates refuse a "
    "change of them as a replacement.",
    "day2-priority-removed": f"Kueue ignores the delete of a WorkloadPriorityClass: {PRIORITY_REMOVED}.",
    "day2-priority-changed": f"{PRIORITY_VALUE[0].upper()}{PRIORITY_VALUE[1:]}.",
    "day2-priority-inversion": "When two classes swap order, admitted workloads of the class that ranked higher become "
    "ones the other's may preempt, and pending workloads of the other go ahead of them.",
    "day2-provisioning-config-changed": f"{PROVISIONING_CHANGE[0].upper()}{PROVISIONING_CHANGE[1:]}.",
    "day2-kubernetes-version-ignored": "With an upgrade channel that moves the minor version, the program sets "
    "kubernetesVersion only when it creates the cluster, and the channel moves it after that.",
    "day2-kubernetes-downgrade-refused": f"{NO_DOWNGRADE[0].upper()}{NO_DOWNGRADE[1:]}.",
    "day2-kubernetes-version-same-minor": "AKS keeps the patch the cluster runs when the version names only the same "
    "minor (\"Updating the cluster with the same <major.minor> once it has been created (e.g. 1.14.x -> 1.14) will "
    "not trigger an upgrade\").",
    "day2-kubernetes-patch-pinned": "A cluster created or last upgraded with a minor version alone runs the patch AKS "
    f"chose then; pinning an older patch is a downgrade, which AKS refuses ({NO_DOWNGRADE}).",
    "day2-kubernetes-minor-skip-refused": f"AKS refuses to skip a minor version: \"{MINOR_RULE}\"",
    "day2-kubernetes-minor-skip": "AKS lets an upgrade skip minor versions only from a version out of support back "
    "into a supported one.",
    "day2-kubernetes-upgrade": "pulumi up upgrades the control plane at once, outside any maintenance window (those "
    "schedule AKS's own upgrades only), and then drains and upgrades every pool under its upgradeSettings.",
    "day2-allowance-unmatched": "An allowReplacement entry that names no resource of the stack acknowledges nothing; "
    "it is most likely a misspelling.",
    "day2-allowance-unused": "An allowReplacement entry the update does not use still unprotects its resource; left "
    "listed, a later replacement or removal of it is not refused.",
    "day2-fleet-unrecorded": "A record written by an older program names no fleet links, so this update cannot tell "
    "whether it disconnects a worker the manager dispatches to, or takes its manager's access from a worker; it "
    "records them, and later updates refuse such a change unless allowReplacement lists it.",
    "day2-fleet-worker-refused": f"When the manager stops connecting to a worker, {LOST_TO_MANAGER}. Drain the "
    "worker first (docs/fleet.md, \"Removing a worker\").",
    "day2-fleet-worker-removed": f"When the manager stops connecting to a worker that was not drained, "
    f"{LOST_TO_MANAGER}. What the manager left on the worker carries its origin label.",
    "day2-fleet-manager-changed": "A worker mirrors the new manager's teams from then on, but the old manager still "
    "holds its kubeconfig and dispatches to it until the worker leaves its aks-kueue:fleet.workers.",
    "day2-fleet-access-refused": "A worker that leaves its fleet deletes the service account, role and token Secrets "
    f"its manager connects with: the manager's MultiKueueCluster for it loses its connection, and {LOST_AFTER_TIMEOUT}.",
    "day2-fleet-access-removed": "A worker that leaves its fleet deletes the service account, role and token Secrets "
    f"its manager connects with: the manager's MultiKueueCluster for it loses its connection, and {LOST_AFTER_TIMEOUT}.",
}


def documentation(kind: str) -> str:
    """Where a kind of the guard is explained."""
    return f"{DOCUMENTATION}#{kind}" if kind in EXPLANATIONS else ""


class Refusal(Exception):
    """The guard refused this update; `findings` say why, one per refused change."""

    def __init__(self, findings: list[Finding]):
        self.findings = findings
        super().__init__("the day-2 guard refused this update:\n" + "\n".join(
            str(f) for f in findings))


@dataclass
class Report:
    refusals: list[Finding] = field(default_factory=list)
    notices: list[Finding] = field(default_factory=list)
    guarded: bool = True

    def refuse(self, kind: str, subject: str, key: str, *, message: str, fix: str = "",
               numbers: Optional[Mapping[str, Any]] = None) -> None:
        """An error: the update must not go through as it is."""
        self.refusals.append(Finding(kind=kind, severity=ERROR, object=subject, key=key, message=message, fix=fix,
                                     numbers=dict(numbers or {}), documentation=documentation(kind)))

    def notice(self, kind: str, subject: str, key: str, *, message: str, fix: str = "",
               numbers: Optional[Mapping[str, Any]] = None) -> None:
        """A warning: what the update does, said before it does it."""
        self.notices.append(Finding(kind=kind, severity=WARNING, object=subject, key=key, message=message, fix=fix,
                                    numbers=dict(numbers or {}), documentation=documentation(kind)))


def _change(subject: str, key: str, old: Any, new: Any) -> Callable[..., None]:
    """`say(report.refuse or report.notice, kind, message=..., fix=...)` for findings on one change of a value:
    the message goes on from `OLD -> NEW`, and the finding's numbers are both."""
    def say(finding: Callable[..., None], kind: str, *, message: str, fix: str) -> None:
        finding(kind, subject, key, message=f"{old} -> {new}{message}", fix=fix, numbers={"old": old, "new": new})
    return say


def lost(entry: Entry) -> str:
    return _LOST[entry.target]


def show(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # stack outputs carry every number as a float (protobuf's Value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show(v) if isinstance(v, (list, tuple)) else str(v) for v in value) + "]"
    return str(value)


def _why(tracked: Tracked, change: Change) -> str:
    entry = facts().resources.get(tracked.type_token)
    if entry is not None and change.path in entry.aks_create_only:
        return f"AKS cannot change {change.path} in place, so the program replaces"
    return f"pulumi-azure-native {facts().azure_native_version} replaces on {change.path}"


def _listed(entries: Iterable[Entry]) -> str:
    return ", ".join(f"`{e}`" for e in entries)


def judge_update(previous: Previous, desired: Record, allow: Allowances, on: Optional[date] = None) -> Report:
    report = Report()
    if previous.record is None:
        report.guarded = False
        report.notice("day2-unguarded", "stack", OUTPUT,
                      message=f"unguarded: {previous.reason}",
                      fix="after the next pulumi up the stack exports `day2` and later updates are guarded; offline, "
                      "give --previous-outputs FILE with what `pulumi stack output --json` prints")
        for entry in allow:
            report.notices.append(_unused(entry, desired, None))
        return report
    before = previous.record
    used: set[Entry] = set()
    replaced: dict[Entry, tuple[Tracked, Tracked, list[Change]]] = {}
    for entry, wanted in desired.resources.items():
        old = before.get(entry)
        if entry.target in (Target.KUEUE, Target.QUEUES, Target.FLEET) or old is None:
            continue
        diff = changes(wanted.type_token, old.facts, wanted.facts, before.skipped(wanted.type_token))
        if diff:
            replaced[entry] = (old, wanted, diff)
    for entry, (old, wanted, diff) in replaced.items():
        used.add(entry)
        # A pool replaced because its cluster (or a cluster because its group) is: the listed parent covers it.
        parent = next((p for p in replaced if p in allow and entry.target in _CHAIN.get(p.target, ())), None)
        _replacement(report, entry, old, wanted, diff, before, allow, parent)
    mirrored = mirrored_from(before)
    for entry, old in before.resources.items():
        if entry.target in (Target.KUEUE, Target.QUEUES, Target.FLEET) or entry in desired.resources:
            continue
        used.add(entry)
        parent = next((p for p in replaced if p in allow and entry.target in _CHAIN.get(p.target, ())), None)
        _removal(report, entry, old, allow, parent, mirrored)
    if _install(report, before, desired, allow):
        used.add(Entry(Target.KUEUE))
    # Replacing the cluster or its resource group takes every Kueue object with it: that entry covers them.
    cluster_goes = any(e.target in _CHAIN for e in replaced)
    used |= _queue_objects(report, before, desired, allow, covered=cluster_goes)
    _priority_classes(report, before, desired)
    _provisioning_configs(report, before, desired)
    used |= _fleet(report, before, desired, allow)
    _untracked(report, before, desired)
    _kubernetes_version(report, before, desired, on)
    for entry in allow:
        if entry not in used:
            report.notices.append(_unused(entry, desired, before))
    return report


def _replacement(report: Report, entry: Entry, old: Tracked, wanted: Tracked, diff: list[Change],
                 before: Record, allow: Allowances, parent: Optional[Entry] = None) -> None:
    chained = [t for t in before.resources.values()
               if t.entry.target in _CHAIN.get(entry.target, ()) and t.protected and t.entry != entry]
    key = wanted.keys.get(diff[0].path, wanted.key or str(entry))
    numbers = {"old": diff[0].old, "new": diff[0].new}
    if old.protected:
        step1 = [entry, *(t.entry for t in chained)]
        for change in diff:
            report.refuse("day2-replace-refused", wanted.label, wanted.keys.get(change.path, wanted.key or str(entry)),
                          message=f"{show(change.old)} -> {show(change.new)} replaces {wanted.label} "
                          f"({_why(wanted, change)}), which the last deployment left protected, destroying "
                          f"{lost(entry)}",
                          fix=f"keep {show(change.old)}; to replace it on purpose take two updates: 1. list "
                          f"{_listed(step1)} in {ALLOW_KEY} and change nothing else (that update only unprotects); 2. "
                          f"make this change with `{entry}` still listed",
                          numbers={"old": change.old, "new": change.new})
        return
    paths = ", ".join(f"{c.path} {show(c.old)} -> {show(c.new)}" for c in diff)
    if parent is not None and entry not in allow:
        report.notice("day2-replace", wanted.label, key,
                      message=f"{paths}: pulumi up replaces {wanted.label} with {before.resources[parent].label} "
                      f"(`{parent}` is listed in allowReplacement), destroying {lost(entry)}",
                      fix=f"remove `{parent}` from {ALLOW_KEY} after this update", numbers=numbers)
        return
    if entry not in allow:
        report.refuse("day2-replace-unacknowledged", wanted.label, key,
                      message=f"{paths} replaces {wanted.label} ({_why(wanted, diff[0])}), destroying {lost(entry)}, "
                      "and allowReplacement does not list it",
                      fix=f"keep {show(diff[0].old)}, or to replace it on purpose add `{entry}` to {ALLOW_KEY} for "
                      "this update", numbers=numbers)
        return
    if chained:
        names = ", ".join(t.label for t in chained)
        report.refuse("day2-replace-chain-refused", wanted.label, key,
                      message=f"{paths} replaces {wanted.label}, and with it {names}, which the last deployment left "
                      "protected",
                      fix=f"first run one update that lists {_listed([entry, *(t.entry for t in chained)])} in "
                      f"{ALLOW_KEY} with the old values (it only unprotects them), then make this change",
                      numbers=numbers)
        return
    report.notice("day2-replace", wanted.label, key,
                  message=f"{paths}: pulumi up replaces {wanted.label} (listed in allowReplacement), destroying "
                  f"{lost(entry)}",
                  fix=f"remove `{entry}` from {ALLOW_KEY} after this update", numbers=numbers)


def _removal(report: Report, entry: Entry, old: Tracked, allow: Allowances, parent: Optional[Entry] = None,
             mirrored: Optional[str] = None) -> None:
    key = _REMOVAL_KEYS[entry.target]
    if entry.target is Target.NAMESPACE:
        # On a fleet worker every team namespace is the manager's: it goes when the manager's team does.
        gone = (f"the manager {mirrored} has no team in namespace {entry.name} any more (no LocalQueue there in its "
                f"`fleet` output, or that output could not be read)" if mirrored else
                f"no LocalQueue uses namespace {entry.name} any more")
        key = MANAGER_KEY if mirrored else key
        keep = f"keep the team on {mirrored}" if mirrored else "keep a LocalQueue there"
        if old.retained:
            report.notice("day2-namespace-released", old.label, key,
                          message=f"{gone}: the stack stops managing it, but it stays in the cluster with everything "
                          "in it (the state marks it retainOnDelete, so Pulumi only forgets it)",
                          fix=f"delete it with `kubectl delete namespace {entry.name}` if that is what you mean")
        elif entry in allow:
            report.notice("day2-delete", old.label, key,
                          message=f"{gone}, and the state does not retain it: pulumi up deletes {lost(entry)}",
                          fix=f"remove `{entry}` from {ALLOW_KEY} after this update")
        else:
            report.refuse("day2-delete-unacknowledged", old.label, key,
                          message=f"{gone}, and the state does not retain it (an earlier update listed it): pulumi up "
                          f"would delete {lost(entry)}",
                          fix=f"{keep} to keep it, or add `{entry}` to {ALLOW_KEY} to delete it on purpose")
        return
    if old.protected:
        report.refuse("day2-delete-refused", old.label, key,
                      message=f"{old.label} is no longer in the stack, so pulumi up would delete it ({lost(entry)}), "
                      "and the last deployment left it protected",
                      fix=f"take two updates: 1. put it back, with `{entry}` in {ALLOW_KEY}: that update only "
                      "unprotects it (the rest of this change may go with it, each removal listed as now); 2. remove "
                      f"it with `{entry}` still listed")
    elif entry not in allow and parent is not None:
        report.notice("day2-delete", old.label, key,
                      message=f"{old.label} is no longer in the stack, and goes with {parent} anyway (`{parent}` is "
                      f"listed in allowReplacement): pulumi up deletes it, destroying {lost(entry)}",
                      fix=f"remove `{parent}` from {ALLOW_KEY} after this update")
    elif entry not in allow:
        report.refuse("day2-delete-unacknowledged", old.label, key,
                      message=f"{old.label} is no longer in the stack, so pulumi up would delete it, destroying "
                      f"{lost(entry)}, and allowReplacement does not list it",
                      fix=f"put it back to keep it, or add `{entry}` to {ALLOW_KEY} to delete it on purpose")
    else:
        report.notice("day2-delete", old.label, key,
                      message=f"{old.label} is no longer in the stack: pulumi up deletes it, destroying {lost(entry)}",
                      fix=f"remove `{entry}` from {ALLOW_KEY} after this update")


def _install(report: Report, before: Record, desired: Record, allow: Allowances) -> bool:
    old, new = before.kueue_install, desired.kueue_install
    if old == new:
        return False
    entry = Entry(Target.KUEUE)
    installer = before.get(entry)
    say = _change("Kueue installer", INSTALL_KEY, old, new)
    if "none" not in (old, new):
        say(report.refuse, "day2-install-switch-refused", message=" switches Kueue directly, and uninstalling the old "
            f"installer removes {lost(entry)}", fix="switch in three updates: 1. add `kueue` "
            f"to {ALLOW_KEY}; 2. set install: none (queue objects, expected workloads and queue manifests removed too) "
            f"with `kueue` still listed; 3. set install: {new}")
    elif new == "none" and installer is not None and installer.protected:
        say(report.refuse, "day2-install-switch-refused", message=f" uninstalls Kueue, which removes {lost(entry)}, "
            "but the last deployment left the installer protected", fix="first run one update with "
            f"`kueue` in {ALLOW_KEY} and install: {old}, then set install: none with `kueue` still listed")
    elif new == "none" and entry not in allow:
        say(report.refuse, "day2-install-switch-refused", message=f" uninstalls Kueue, which removes {lost(entry)}, "
            "and allowReplacement does not list `kueue`", fix=f"add `kueue` to {ALLOW_KEY} for this update to uninstall it on purpose")
    elif new == "none":
        say(report.notice, "day2-kueue-removed", message=": pulumi up deletes every queue object first, then "
            f"uninstalls Kueue, which removes {lost(entry)}", fix="the next update may set the new mode")
    return True


# ---- Kueue objects ----

def _queue_objects(report: Report, before: Record, desired: Record, allow: Allowances, covered: bool) -> set[Entry]:
    """Removed or replaced Kueue objects of QUEUE_KINDS; returns the entries this update uses."""
    olds = {e: t for e, t in before.resources.items() if e.target is Target.QUEUES}
    if not before.queues_tracked:
        if any(e.target is Target.QUEUES for e in desired.resources):
            report.notice("day2-kueue-objects-unrecorded", "Kueue objects", "aks-kueue:queues",
                          message="the last deployment's record names no Kueue objects (an older program wrote it), so "
                          "this update cannot tell which ClusterQueues, LocalQueues, flavors, checks, Cohorts or "
                          "Topologies it removes or replaces",
                          fix="compare `pulumi preview --diff` with the cluster before this update")
        return set()
    if covered or before.kueue_install != desired.kueue_install:
        # The cluster's replacement, or the installer's removal, decides (and names) what goes with it.
        return {e for e in allow if e.target is Target.QUEUES and e in olds}
    used: set[Entry] = set()
    mirrored = mirrored_from(before)
    for entry, old in sorted(olds.items()):
        new = desired.get(entry)
        kind = str(entry.kind)
        # A worker's LocalQueues are the manager's teams, mirrored.
        source = mirrored if kind in MIRRORED_KINDS else None
        if new is None:
            used.add(entry)
            _queue_change(report, entry, old, None, [], allow, source)
            continue
        paths = immutable_paths(kind, spec_of(new.facts))
        diff = [Change(p, old.facts.get(p), new.facts.get(p)) for p in paths if old.facts.get(p) != new.facts.get(p)]
        if diff:
            used.add(entry)
            _queue_change(report, entry, old, new, diff, allow, source)
        elif kind == "ResourceFlavor" and "spec.topologyName" in old.facts and "spec.topologyName" not in new.facts:
            report.refuse("day2-kueue-immutable-refused", new.label, new.keys.get("spec.topologyName", new.key),
                          message=f"{new.label} drops spec.topologyName {old.facts['spec.topologyName']}: Kueue "
                          "refuses it (\"topologyName is immutable when topologyName is set\", its ResourceFlavor CRD "
                          "rule), so the update would fail at the API server",
                          fix=f"keep topologyName: {old.facts['spec.topologyName']}, or create a flavor under a new "
                          "name without it, move the ClusterQueues to it, and then remove this one")
    return used


def _queue_change(report: Report, entry: Entry, old: Tracked, new: Optional[Tracked], diff: list[Change],
                  allow: Allowances, mirrored: Optional[str] = None) -> None:
    kind = str(entry.kind)
    label = old.label
    gone = (f"{label} is no longer among the teams of the manager {mirrored} (its `fleet` output), so pulumi up "
            "deletes it on this worker" if mirrored else f"{label} is no longer in the stack, so pulumi up deletes it")
    what = (gone if new is None else
            ", ".join(f"{c.path} {show(c.old)} -> {show(c.new)}" for c in diff)
            + f" replaces {label}: Kueue's CRD makes {diff[0].path} immutable, so the program deletes it and "
              "creates it again (deleteBeforeReplace)")
    removal_key = MANAGER_KEY if mirrored else (FLEET_KEY if _is_multikueue_check(entry, old) else _QUEUE_KEYS[kind])
    key = removal_key if new is None else new.keys.get(diff[0].path, new.key or removal_key)
    numbers = {"old": diff[0].old, "new": diff[0].new} if diff else {}
    if entry in allow:
        report.notice("day2-kueue-delete" if new is None else "day2-kueue-replace", label, key,
                      message=f"{what} (listed in allowReplacement)",
                      fix=f"remove `{entry}` from {ALLOW_KEY} after this update", numbers=numbers)
        return
    report.refuse("day2-kueue-delete-refused" if new is None else "day2-kueue-replace-refused", label, key,
                  message=f"{what}, and allowReplacement does not list it",
                  fix=_queue_safe_path(entry, new is None, mirrored), numbers=numbers)


def _queue_safe_path(entry: Entry, deleted: bool, mirrored: Optional[str] = None) -> str:
    kind, name = str(entry.kind), str(entry.name).split("/", 1)[1]
    acknowledge = f"`{entry}` in {ALLOW_KEY}"
    if kind == "LocalQueue" and mirrored:
        namespace, local = name.split("/", 1)
        return (f"it is the manager's team: {mirrored}'s own guard asked for it to be held and drained before it "
                f"{'removed' if deleted else 'changed'} it there; once `kubectl get workloads -n {namespace}` on this "
                f"worker shows none of {local}'s reserved, {'remove' if deleted else 'change'} it here with "
                f"{acknowledge} of this worker (if the manager's outputs could not be read, run pulumi up on "
                f"{mirrored} first)")
    if kind == "ClusterQueue":
        return (f"1. set spec.stopPolicy: Hold on ClusterQueue {name} in one update (admitted workloads run to "
                "completion; HoldAndDrain would evict them); 2. once `kubectl get clusterqueue "
                f"{name} -o jsonpath='{{.status.reservingWorkloads}}'` prints 0 (`kubectl get workloads -A` shows "
                f"none reserved in it), {'remove' if deleted else 'change'} it with {acknowledge}, its LocalQueues "
                "listed too")
    if kind == "LocalQueue":
        namespace, local = name.split("/", 1)
        return (f"1. set spec.stopPolicy: Hold on LocalQueue {name} in one update (admitted workloads run to "
                f"completion); 2. once `kubectl get workloads -n {namespace}` shows none of {local}'s reserved, "
                f"{'remove' if deleted else 'change'} it with {acknowledge}")
    if kind == "Cohort":
        return f"move the ClusterQueues out of it first (their cohortName), then list {acknowledge}"
    users = {"ResourceFlavor": "ClusterQueues and Cohorts", "AdmissionCheck": "ClusterQueues",
             "Topology": "ResourceFlavors"}[kind]
    if deleted:
        return (f"first remove it from every one of the {users} that name it (the same update may), then list "
                f"{acknowledge}")
    return (f"Kueue holds it while {users} name it, so it cannot be replaced in place while in use: create the new "
            f"one under another name, move the {users} to it, then remove this one with {acknowledge}")


def _priority_classes(report: Report, before: Record, desired: Record) -> None:
    """A class removed or given another value, each said with what Kueue does to the workloads of the class; classes
    that swap order, said once per pair (a priority inversion: what was preempted may now preempt). A class that an
    expected workload still names cannot be removed: the program refuses that (expected-workload-invalid)."""
    old, new = before.priority_classes, desired.priority_classes or {}
    if old is None:
        return  # a record from before they were recorded
    for name in sorted(set(old) - set(new)):
        report.notice("day2-priority-removed", f"WorkloadPriorityClass {name}", PRIORITY_KEY,
                      message=f"{name} (value {show(old[name])}) is no longer in the stack, so pulumi up deletes it",
                      fix=f"first move the jobs that name it (label kueue.x-k8s.io/priority-class: {name}) to another "
                      "class; `kubectl get workloads -A -o custom-columns=NAME:.metadata.name,CLASS:"
                      ".spec.priorityClassRef.name` lists the workloads that name it")
    kept = sorted(name for name in set(old) & set(new) if _number(old[name]) and _number(new[name]))
    for name in kept:
        if old[name] != new[name]:
            report.notice("day2-priority-changed", f"WorkloadPriorityClass {name}", PRIORITY_KEY,
                          message=f"{name}: value {show(old[name])} -> {show(new[name])}, which Kueue sets on every "
                          "Workload that names the class",
                          fix="make the change when the queues may be reordered; to keep what runs safe from it, give "
                          "the new value to a new class and move the jobs to it",
                          numbers={"old": old[name], "new": new[name]})
    # Only pairs with a changed class can swap; each is said once, the first MAX_INVERSIONS of them.
    changed = [name for name in kept if old[name] != new[name]]
    pairs = sorted({tuple(sorted((a, b))) for a in changed for b in kept if a != b})
    inversions = [(a, b) for a, b in pairs
                  if (old[a] > old[b]) != (new[a] > new[b]) and old[a] != old[b] and new[a] != new[b]]
    for a, b in inversions[:MAX_INVERSIONS]:
        high, low = (a, b) if old[a] > old[b] else (b, a)
        report.notice("day2-priority-inversion", f"WorkloadPriorityClass {low}", PRIORITY_KEY,
                      message=f"{low} ({show(old[low])} -> {show(new[low])}) now ranks above {high} "
                      f"({show(old[high])} -> {show(new[high])}), a priority inversion",
                      fix=f"if that is not meant, keep {high} above {low}"
                      + (f" ({len(inversions) - MAX_INVERSIONS} more pairs swap too)"
                         if len(inversions) > MAX_INVERSIONS and (a, b) == inversions[MAX_INVERSIONS - 1] else ""),
                      numbers={"classes": [high, low]})


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _provisioning_configs(report: Report, before: Record, desired: Record) -> None:
    if before.provisioning_configs is None:
        return  # a record from before they were recorded
    for name, spec in sorted((desired.provisioning_configs or {}).items()):
        was = before.provisioning_configs.get(name)
        if was is not None and dict(was) != dict(spec):
            changed = sorted(k for k in set(was) | set(spec) if was.get(k) != spec.get(k))
            report.notice("day2-provisioning-config-changed", f"ProvisioningRequestConfig {name}",
                          "aks-kueue:queues.clusterQueues", message=f"spec {', '.join(changed)} changes, and Kueue "
                          "deletes every ProvisioningRequest made with the old settings",
                          fix="make the change when no workload waits for capacity (`kubectl get provisioningrequests "
                          "-A` lists what is pending)", numbers={"changed": changed})


def _untracked(report: Report, before: Record, desired: Record) -> None:
    """Paths the last deployment did not record: say once that this update cannot compare them."""
    paths = sorted({p for t in desired.resources.values() for p in before.skipped(t.type_token)
                    if before.get(t.entry) is not None})
    if paths:
        report.notice("day2-facts-unrecorded", "stack", OUTPUT,
                      message=f"the last deployment's record does not hold {', '.join(paths)} (an older program wrote "
                      "it), so this update cannot tell whether it changes them on the resources it keeps",
                      fix="change none of them in this update")


# ---- the Kubernetes version ----

def _kubernetes_version(report: Report, before: Record, desired: Record, on: Optional[date]) -> None:
    old, new = before.kubernetes_version, desired.kubernetes_version
    if old == new:
        return
    say = _change("ManagedCluster", VERSION_KEY, old, new)
    if desired.upgrade_channel in MOVES_MINOR:
        say(report.notice, "day2-kubernetes-version-ignored", message=" changes nothing: with upgradeChannel "
            f"{desired.upgrade_channel} the program sets kubernetesVersion only when it creates the cluster, and the "
            "channel moves it after that",
            fix="use upgradeChannel patch (or none) to choose the minor version yourself")
        return
    was, wanted = kubernetes_versions.parse(old.strip()), kubernetes_versions.parse(new.strip())
    if was is None or wanted is None:
        return  # the settings check the version's form; an unreadable old record compares nothing
    patches = (was[2], wanted[2])
    if wanted[:2] < was[:2] or (wanted[:2] == was[:2] and patches[0] is not None and patches[1] is not None
                                and patches[1] < patches[0]):
        say(report.refuse, "day2-kubernetes-downgrade-refused", message=f" is a downgrade: {NO_DOWNGRADE}",
            fix=f"keep {old} or move forward")
        return
    if wanted[:2] == was[:2]:
        if wanted[2] is None:
            say(report.notice, "day2-kubernetes-version-same-minor", message=" does not upgrade: AKS keeps the patch "
                "the cluster runs (\"Updating the cluster with the same <major.minor> once it has been created (e.g. "
                "1.14.x -> 1.14) will not trigger an upgrade\")", fix=f"write {new}.<patch> to move to a newer patch")
            return
        if was[2] is None:
            say(report.notice, "day2-kubernetes-patch-pinned", message=" pins a patch, which AKS refuses if the patch "
                f"it chose for {old} when the cluster was created or last upgraded is newer than {new}", fix="`az aks show -g RG -n CLUSTER --query currentKubernetesVersion` shows "
                "it; pin that one or a newer one")
            return
    elif wanted[0] != was[0] or wanted[1] > was[1] + 1:
        # A minor AKS no longer supports at all is the one case AKS lets an upgrade skip minors.
        release = kubernetes_versions.load().release(was[1])
        if release is None or release.stage(on or kubernetes_versions.today()) is not kubernetes_versions.Stage.RETIRED:
            say(report.refuse, "day2-kubernetes-minor-skip-refused", message=" skips a minor version, which AKS "
                f"refuses: \"{MINOR_RULE}\" (pulumi-azure-native {facts().azure_native_version}, ManagedCluster "
                "kubernetesVersion)", fix=f"upgrade one minor at a time: set {was[0]}.{was[1] + 1} in one update, and "
                "move on once it is done")
            return
        say(report.notice, "day2-kubernetes-minor-skip", message=" skips minor versions: AKS allows that only from a "
            f"version out of support back into a supported one, as 1.{was[1]} is ({kubernetes_versions.DATA_FILE})",
            fix="check `az aks get-upgrades -g RG -n CLUSTER` lists it")
    say(report.notice, "day2-kubernetes-upgrade", message=": pulumi up upgrades the control plane at once, outside any "
        "maintenance window (those schedule AKS's own upgrades only), and then drains and upgrades every pool under "
        "its upgradeSettings", fix="run this update when the pools may be drained")


UNUSED_DOC = documentation("day2-allowance-unused")


def _unused(entry: Entry, desired: Record, before: Optional[Record]) -> Finding:
    exists = entry in desired.resources or (before is not None and entry in before.resources)
    if entry.target is Target.KUEUE and before is None:
        exists = desired.kueue_install != "none"
    if not exists:
        return Finding(kind="day2-allowance-unmatched", severity=WARNING, object=str(entry), key=ALLOW_KEY,
                       message=f"`{entry}` matches no resource of this stack", fix="remove it",
                       documentation=documentation("day2-allowance-unmatched"))
    what = desired.resources.get(entry) or (before.resources.get(entry) if before else None)
    label = what.label if what else str(entry)
    if entry.target is Target.FLEET:
        return Finding(kind="day2-allowance-unused", severity=WARNING, object=label, key=ALLOW_KEY,
                       message=f"`{entry}` is listed, but this update neither removes nor disconnects {label}",
                       fix=f"remove `{entry}`, so a later removal of {label} is refused again", documentation=UNUSED_DOC)
    if entry.target in ACKNOWLEDGED_ONLY:
        return Finding(kind="day2-allowance-unused", severity=WARNING, object=label, key=ALLOW_KEY,
                       message=f"`{entry}` is listed, but this update neither replaces nor deletes {label}",
                       fix=f"remove `{entry}`, so a later removal or replacement of {label} is refused again",
                       documentation=UNUSED_DOC)
    return Finding(kind="day2-allowance-unused", severity=WARNING, object=label, key=ALLOW_KEY,
                   message=f"`{entry}` is listed, but this update neither replaces nor deletes {label}: it only "
                   "unprotects it, which is the first of two updates when you mean to replace or remove it",
                   fix=f"remove `{entry}` once the change it prepares is done, so {label} is protected again",
                   documentation=UNUSED_DOC)



# ---- a fleet's links ----

MIRRORED_KINDS = ("LocalQueue",)


def mirrored_from(record: Record) -> Optional[str]:
    """The manager a fleet worker's record says it mirrored its teams from (its LocalQueues and namespaces)."""
    link = record.get(MANAGER_ENTRY)
    return str(link.facts.get("stack")) if link is not None else None


def _is_multikueue_check(entry: Entry, tracked: Tracked) -> bool:
    return entry.kind == "AdmissionCheck" and tracked.facts.get("spec.controllerName") == mk.CONTROLLER


def _fleet(report: Report, before: Record, desired: Record, allow: Allowances) -> set[Entry]:
    """A manager's workers it stops connecting to, a worker's manager losing its access; the entries used."""
    olds = {e: t for e, t in before.resources.items() if e.target is Target.FLEET}
    news = {e: t for e, t in desired.resources.items() if e.target is Target.FLEET}
    if not before.fleet_tracked:
        was_manager = any(_is_multikueue_check(e, t) for e, t in before.resources.items() if e.target is Target.QUEUES)
        if news or was_manager:
            report.notice("day2-fleet-unrecorded", "fleet", FLEET_KEY,
                          message="the last deployment's record names no fleet links (an older program wrote it), so "
                          "this update cannot tell whether it disconnects a worker the manager dispatches to, or takes "
                          "its manager's access from a worker",
                          fix="check that `pulumi preview --diff` deletes no MultiKueueCluster, kubeconfig Secret or "
                          "multikueue-sa object before this update")
        return set()
    used: set[Entry] = set()
    still_connected = any(t.facts.get("connected") for e, t in news.items() if e != MANAGER_ENTRY)
    for entry, old in sorted(olds.items()):
        new = news.get(entry)
        if entry == MANAGER_ENTRY:
            used |= _manager_access(report, old, new, allow)
        else:
            used |= _worker(report, entry, old, new, allow, last=not still_connected)
    return used


def _worker(report: Report, entry: Entry, old: Tracked, new: Optional[Tracked], allow: Allowances,
            last: bool) -> set[Entry]:
    """A worker the last deployment connected to (it had a MultiKueueCluster) that this one does not."""
    name, stack = str(entry.name).split("/", 1)[1], old.facts.get("stack")
    if not old.facts.get("connected"):
        # No MultiKueueCluster: nothing was ever dispatched there, so it goes freely.
        return {entry} if new is None and entry in allow else set()
    if new is None:
        key = WORKERS_KEY
        what = f"worker {name} ({stack}) is no longer in {WORKERS_KEY}"
    elif not new.facts.get("connected"):
        key = new.key or WORKERS_KEY
        what = (f"worker {name} is still listed ({key}), but its stack {new.facts.get('stack')} exports no "
                f"`multikueueKubeconfig` now (it was destroyed or left the fleet, or its outputs could not be read)")
    elif new.facts.get("stack") != stack:
        key = f"{new.key}.stack" if new.key else WORKERS_KEY
        what = f"worker {name} now names stack {new.facts.get('stack')} instead of {stack}"
    else:
        return set()
    moved = new is not None and new.facts.get("connected")
    action = ("so pulumi up points its MultiKueueCluster at another cluster (its kubeconfig Secret now holds the new "
              "stack's)" if moved else
              "so pulumi up takes it out of MultiKueueConfig multikueue and deletes its MultiKueueCluster and "
              "kubeconfig Secret")
    if last and not moved:
        action += (", and with the last worker the MultiKueueConfig too: the MultiKueue check goes inactive and the "
                   "manager's ClusterQueues admit nothing until a worker is connected again")
    numbers = {"old": stack, "new": new.facts.get("stack") if new is not None else None}
    if entry in allow:
        report.notice("day2-fleet-worker-removed", old.label, key,
                      message=f"{what}, {action} (listed in allowReplacement)",
                      fix=f"remove `{entry}` from {ALLOW_KEY} after this update; then delete what the manager left on "
                      f"{'the old cluster' if moved else name}: `{ORIGIN_CLEANUP}` (the label's default value: the "
                      "manager's Kueue Configuration may set another in multiKueue.origin)", numbers=numbers)
        return {entry}
    drain = ("drain it first (docs/fleet.md, \"Removing a worker\"): 1. set spec.stopPolicy: Hold on the ClusterQueues "
             f"of {stack} and pulumi up that stack (what it admitted runs to completion; the other workers take new "
             f"work); 2. wait until `kubectl get workloads -A -l {mk.ORIGIN_LABEL}` on {name} shows none admitted, "
             f"while `kubectl get multikueuecluster {name}` on the manager stays Active; 3. make this change with "
             f"`{entry}` in {ALLOW_KEY}")
    if new is not None and not new.facts.get("connected"):
        fix = (f"run pulumi up on {new.facts.get('stack')} so that it exports its kubeconfig again (offline: "
               f"--stack-outputs {new.facts.get('stack')}=FILE); to remove {name} on purpose, {drain}")
    elif moved:
        fix = f"keep {stack}; to move {name} to another cluster on purpose, {drain}"
    else:
        fix = f"put it back to keep it; to remove it on purpose, {drain}"
    report.refuse("day2-fleet-worker-refused", old.label, key, message=f"{what}, {action}", fix=fix, numbers=numbers)
    return set()


def _manager_access(report: Report, old: Tracked, new: Optional[Tracked], allow: Allowances) -> set[Entry]:
    """A worker that stops being one deletes what its manager connects with."""
    manager = old.facts.get("stack")
    if new is not None:
        if new.facts.get("stack") != manager:
            report.notice("day2-fleet-manager-changed", new.label, MANAGER_KEY,
                          message=f"this worker's manager changes from {manager} to {new.facts.get('stack')}: it "
                          f"mirrors the new manager's teams from now on, but {manager} still holds its kubeconfig and "
                          "dispatches here until this worker leaves its aks-kueue:fleet.workers",
                          fix=f"remove this worker from {manager}'s aks-kueue:fleet.workers (drain it first: "
                          "docs/fleet.md, \"Removing a worker\")",
                          numbers={"old": manager, "new": new.facts.get("stack")})
        return set()
    what = (f"this stack is no longer a worker of {manager}, so pulumi up deletes the {mk.SERVICE_ACCOUNT} service "
            f"account, its ClusterRole and binding and its token Secrets, which {manager}'s MultiKueueCluster for this "
            "worker connects with")
    if MANAGER_ENTRY in allow:
        report.notice("day2-fleet-access-removed", old.label, FLEET_KEY, message=f"{what} (listed in allowReplacement)",
                      fix=f"remove `{MANAGER_ENTRY}` from {ALLOW_KEY} after this update")
        return {MANAGER_ENTRY}
    report.refuse("day2-fleet-access-refused", old.label, FLEET_KEY, message=what,
                  fix=f"first remove this worker from {manager}'s aks-kueue:fleet.workers (drain it: docs/fleet.md, "
                  f"\"Removing a worker\") and pulumi up {manager}; then make this change with `{MANAGER_ENTRY}` in "
                  f"{ALLOW_KEY}")
    return set()
