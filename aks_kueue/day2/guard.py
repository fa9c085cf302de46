"""The guard: this update against the last deployment, before anything protected changes.

`judge` compares the desired `Record` with the previous one and returns refusals (errors: the
program stops, `aks-kueue preview` exits 1) and notices (warnings: what this update destroys or
changes that users should know before it runs). Findings are the project's one `Finding` shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from aks_kueue.day2.allow import Allowances, Entry, Target
from aks_kueue.day2.replacement import Change, changes, facts
from aks_kueue.day2.state import OUTPUT, Previous, Record, Tracked
from aks_kueue.judge.finding import ERROR, WARNING, Finding

CHANNELS_OWNING_VERSION = ("stable", "rapid")
_LOST = {
    Target.RESOURCE_GROUP: "the resource group and everything in it: the cluster, its node resource group and "
                           "every disk behind a PersistentVolume",
    Target.CLUSTER: "the whole cluster: every pool, node, pod and Job, Kueue with every ClusterQueue, LocalQueue "
                    "and Workload, and the node resource group with every disk behind a PersistentVolume",
    Target.SYSTEM_POOL: "the system pool's nodes and the system pods on them (AKS never deletes a cluster's last "
                        "System pool, so the update fails unless another System pool exists)",
    Target.NODE_POOL: "its nodes and every pod running on them; Kueue workloads admitted there are evicted",
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
INSTALL_KEY = "aks-kueue:kueue.install"
VERSION_KEY = "aks-kueue:cluster.kubernetesVersion"
ALLOW_KEY = "aks-kueue:allowReplacement"


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


def lost(entry: Entry) -> str:
    return _LOST[entry.target]


def show(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def _why(tracked: Tracked, change: Change) -> str:
    entry = facts().resources.get(tracked.type_token)
    if entry is not None and change.path in entry.aks_create_only:
        return f"AKS cannot change {change.path} in place, so the program replaces"
    return f"pulumi-azure-native {facts().azure_native_version} replaces on {change.path}"


def judge(previous: Previous, desired: Record, allow: Allowances) -> Report:
    report = Report()
    if previous.record is None:
        report.guarded = False
        report.notices.append(Finding(
            "day2-unguarded", WARNING, "stack", OUTPUT,
            f"unguarded: {previous.reason}; this update is not compared with the last deployment, so a "
            "replacement, a deletion or an install switch is not refused here (protect still stops the engine)",
            "after the next pulumi up the stack exports `day2` and later updates are guarded; offline, give "
            "--previous-outputs FILE with what `pulumi stack output --json` prints"))
        for entry in allow:
            report.notices.append(_unused(entry, desired, None))
        return report
    before = previous.record
    used: set[Entry] = set()
    for entry, wanted in desired.resources.items():
        old = before.get(entry)
        if entry.target is Target.KUEUE or old is None:
            continue
        diff = changes(wanted.type_token, old.facts, wanted.facts)
        if diff:
            used.add(entry)
            _replacement(report, entry, old, wanted, diff, before, allow)
    for entry, old in before.resources.items():
        if entry.target is Target.KUEUE or entry in desired.resources:
            continue
        used.add(entry)
        _removal(report, entry, old, allow)
    if _install(report, before, desired):
        used.add(Entry(Target.KUEUE))
    _kubernetes_version(report, before, desired)
    for entry in allow:
        if entry not in used:
            report.notices.append(_unused(entry, desired, before))
    return report


def _replacement(report: Report, entry: Entry, old: Tracked, wanted: Tracked, diff: list[Change],
                 before: Record, allow: Allowances) -> None:
    if wanted.protected:
        for change in diff:
            report.refusals.append(Finding(
                "day2-replace-refused", ERROR, wanted.label, wanted.keys.get(change.path, wanted.key or str(entry)),
                f"{show(change.old)} -> {show(change.new)} replaces {wanted.label} ({_why(wanted, change)}); "
                f"it is protected, and the replacement would destroy {lost(entry)}",
                f"keep {show(change.old)}, or to replace it on purpose add `{entry}` to {ALLOW_KEY} for this update",
                {"old": change.old, "new": change.new}))
        return
    chained = [t for t in before.resources.values() if t.entry.target in _CHAIN.get(entry.target, ()) and t.protected]
    paths = ", ".join(f"{c.path} {show(c.old)} -> {show(c.new)}" for c in diff)
    if entry in allow and chained:
        names = ", ".join(t.label for t in chained)
        report.refusals.append(Finding(
            "day2-replace-chain-refused", ERROR, wanted.label, wanted.keys.get(diff[0].path, wanted.key or str(entry)),
            f"{paths} replaces {wanted.label}, and with it {names}, which the last deployment left protected; "
            "Pulumi checks the dependents of a replacement against the protection already in the state "
            "(pulumi/pulumi#15776), so this update would stop halfway",
            f"first run one update that lists {', '.join(f'`{e}`' for e in [entry, *(t.entry for t in chained)])} "
            f"in {ALLOW_KEY} with the old values (it only unprotects them), then make this change",
            {"old": diff[0].old, "new": diff[0].new}))
        return
    why = "listed in allowReplacement" if entry in allow else "protection is off for this stack (aks-kueue:protect)"
    report.notices.append(Finding(
        "day2-replace", WARNING, wanted.label, wanted.keys.get(diff[0].path, wanted.key or str(entry)),
        f"{paths}: pulumi up replaces {wanted.label} ({why}), destroying {lost(entry)}",
        f"remove `{entry}` from {ALLOW_KEY} after this update" if entry in allow
        else "turn aks-kueue:protect on to have such a change refused",
        {"old": diff[0].old, "new": diff[0].new}))


def _removal(report: Report, entry: Entry, old: Tracked, allow: Allowances) -> None:
    key = _REMOVAL_KEYS[entry.target]
    if entry.target is Target.NAMESPACE:
        if old.retained:
            report.notices.append(Finding(
                "day2-namespace-released", WARNING, old.label, key,
                f"no LocalQueue uses namespace {entry.name} any more: the stack stops managing it, but it stays in "
                "the cluster with everything in it (retainOnDelete)",
                f"delete it with `kubectl delete namespace {entry.name}` if that is what you mean"))
        else:
            report.notices.append(Finding(
                "day2-delete", WARNING, old.label, key,
                f"no LocalQueue uses namespace {entry.name} any more, and it is not retained: pulumi up deletes "
                f"{lost(entry)}", "keep a LocalQueue there to keep it"))
        return
    if old.protected:
        report.refusals.append(Finding(
            "day2-delete-refused", ERROR, old.label, key,
            f"{old.label} is no longer in the stack, so pulumi up would delete it: {lost(entry)}. It is protected "
            "in the state, and Pulumi deletes a protected resource only after an earlier update unprotected it",
            f"keep it for one more update with `{entry}` in {ALLOW_KEY} (that unprotects it), then remove it"
            if entry not in allow else
            f"put it back for this update (`{entry}` in {ALLOW_KEY} then unprotects it), and remove it in the next"))
    else:
        report.notices.append(Finding(
            "day2-delete", WARNING, old.label, key,
            f"{old.label} is no longer in the stack: pulumi up deletes it, destroying {lost(entry)}",
            "put it back to keep it"))


def _install(report: Report, before: Record, desired: Record) -> bool:
    old, new = before.kueue_install, desired.kueue_install
    if old == new:
        return False
    installer = before.get(Entry(Target.KUEUE))
    if "none" not in (old, new):
        report.refusals.append(Finding(
            "day2-install-switch-refused", ERROR, "Kueue installer", INSTALL_KEY,
            f"{old} -> {new} switches Kueue directly: Pulumi would create the new installer while the old one "
            "still owns Kueue's CRDs and webhooks (two controllers at once), then delete the old one, whose "
            f"uninstall removes {lost(Entry(Target.KUEUE))}",
            f"switch in three updates: 1. add `kueue` to {ALLOW_KEY}; 2. set install: none (queue objects, "
            f"expected workloads and queue manifests removed too); 3. set install: {new}",
            {"old": old, "new": new}))
        return True
    if new == "none":
        if installer is not None and installer.protected:
            report.refusals.append(Finding(
                "day2-install-switch-refused", ERROR, "Kueue installer", INSTALL_KEY,
                f"{old} -> none uninstalls Kueue, but the installer is protected in the state (Pulumi deletes a "
                "protected resource only after an earlier update unprotected it)",
                f"first run one update with `kueue` in {ALLOW_KEY} and install: {old}, then set install: none",
                {"old": old, "new": new}))
        else:
            report.notices.append(Finding(
                "day2-kueue-removed", WARNING, "Kueue installer", INSTALL_KEY,
                f"{old} -> none: pulumi up deletes every queue object first, then uninstalls Kueue, which removes "
                f"{lost(Entry(Target.KUEUE))}", "the next update may set the new mode", {"old": old, "new": new}))
    return True


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def _kubernetes_version(report: Report, before: Record, desired: Record) -> None:
    old, new = before.kubernetes_version, desired.kubernetes_version
    if old == new:
        return
    if desired.upgrade_channel in CHANNELS_OWNING_VERSION:
        report.notices.append(Finding(
            "day2-kubernetes-version-ignored", WARNING, "ManagedCluster", VERSION_KEY,
            f"{old} -> {new} changes nothing: with upgradeChannel {desired.upgrade_channel} the program sets "
            "kubernetesVersion only when it creates the cluster, and the channel moves it after that",
            "use upgradeChannel patch (or none) to choose the minor version yourself",
            {"old": old, "new": new}))
        return
    if _version(new)[:2] < _version(old)[:2]:
        report.refusals.append(Finding(
            "day2-kubernetes-downgrade-refused", ERROR, "ManagedCluster", VERSION_KEY,
            f"{old} -> {new} is a downgrade, which AKS refuses", f"keep {old} or move forward",
            {"old": old, "new": new}))
        return
    report.notices.append(Finding(
        "day2-kubernetes-upgrade", WARNING, "ManagedCluster", VERSION_KEY,
        f"{old} -> {new}: pulumi up upgrades the control plane at once, outside any maintenance window (those "
        "schedule AKS's own upgrades only), and then drains and upgrades every pool under its upgradeSettings",
        "run this update when the pools may be drained", {"old": old, "new": new}))


def _unused(entry: Entry, desired: Record, before: Optional[Record]) -> Finding:
    exists = entry in desired.resources or (before is not None and entry in before.resources)
    if entry.target is Target.KUEUE and before is None:
        exists = desired.kueue_install != "none"
    if not exists:
        return Finding("day2-allowance-unmatched", WARNING, str(entry), ALLOW_KEY,
                       f"`{entry}` matches no resource of this stack", "remove it")
    what = desired.resources.get(entry) or (before.resources.get(entry) if before else None)
    label = what.label if what else str(entry)
    return Finding("day2-allowance-unused", WARNING, label, ALLOW_KEY,
                   f"`{entry}` is listed, but this update neither replaces nor deletes {label}: it only unprotects "
                   "it, which is the first of two updates when you mean to replace or remove it",
                   f"remove `{entry}` once the change it prepares is done, so {label} is protected again")
