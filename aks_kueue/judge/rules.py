"""The rule registry: every check of the judge in one place, with what the pack, the CLI and the docs need.

A rule is one function decorated with `@rule`: its id (the kind of the findings it yields), a title
(what holds when it passes), its source, what it applies to, the policy of the pack that reports it,
the severity of its findings, whether they block the program, and where they apply whether it belongs
to the AKS security baseline, which config properties its policy takes and which of its findings that
config waives. A function that finds several kinds in one pass (the feasibility pass, a fleet check)
carries one `@rule` per kind.

A check builds its findings with `finding(KIND, object=..., key=..., message=..., fix=...)`: the severity
comes from the rule. A rule whose findings are of two severities says why in `graded` (a baseline rule is
graded by the stack's environment), and a finding of it that is not of the rule's severity names its own.

The check reads the model: `check(model)`, with `vm_overhead`, `today` or `judging` (the
`Judging` of this run, for passes several rules share) as keyword arguments when it names them.
`run` calls each function once, in registration order, which is the judge's order.

Which policy reports a finding (`policy_for`): an error goes to its rule's policy, a warning to
`aks-kueue-warnings` unless its rule's policy reports warnings itself. A baseline rule is its own
policy: an error in production stacks, a warning (so `aks-kueue-warnings`) in development ones.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from datetime import date
from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping, Optional

from aks_kueue.aks.allocatable import DEFAULT_VM_OVERHEAD
from aks_kueue.judge.finding import ERROR, WARNING, Finding, Severity

MANDATORY, ADVISORY = "mandatory", "advisory"
BASELINE_NOTE = " Mandatory in production stacks; in development stacks it is a warning of aks-kueue-warnings."
BASELINE_GRADED = ("an error in production stacks and a warning in development ones; what was not checked, or a "
                   "pool the last deployment has and this update keeps, is a warning everywhere")
# Where the rules are documented: the policy list generated from this registry, one anchor per rule.
DOCUMENTATION = "docs/reference/policies.md"


@dataclass(frozen=True)
class Policy:
    """A policy of the pack: what users name in a policy config."""

    name: str
    description: str
    level: str = MANDATORY
    reports_warnings: bool = False  # its rules' warnings are its own, not aks-kueue-warnings'
    after_baseline: bool = False    # listed after the baseline's policies


@dataclass(frozen=True, kw_only=True)
class Rule:
    id: str
    title: str
    source: str
    applies_to: str
    policy: str
    check: Callable[..., Iterable[Finding]] = field(repr=False)
    severity: Severity  # of every finding; for a graded rule, of the worst
    # Why its findings are of two severities (each then names its own); empty: all are `severity`.
    graded: str = ""
    arguments: tuple[str, ...] = ()  # what the check takes beside the model (`vm_overhead`, `today`, `judging`)
    baseline: bool = False
    blocking: bool = False  # the program stops on its findings (`judge.blocking_findings`)
    config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # Whether its policy's config (defaults filled) waives a finding.
    waived: Optional[Callable[[Finding, Mapping[str, Any]], bool]] = field(default=None, repr=False)
    # Why the rule holds and what breaks when it does not (Kueue's or AKS's behaviour, its sources): a
    # finding's message states the fact in one sentence, the explanation is here, in the rule's
    # documentation (`documentation`).
    explanation: str = ""

    @property
    def documentation(self) -> str:
        """Where the rule is documented: its row of the generated policy list."""
        return f"{DOCUMENTATION}#{self.id}"

    def finding(self, *, object: str, key: str, message: str, fix: str = "",
                numbers: Optional[Mapping[str, Any]] = None, severity: Optional[Severity] = None) -> Finding:
        """A finding of this rule, with the rule's severity; only a graded rule's may name a lesser one."""
        if severity is not None and severity != self.severity and not self.graded:
            raise ValueError(f"rule {self.id}: its findings are all {self.severity}s (it declares no `graded`)")
        return Finding(kind=self.id, severity=severity or self.severity, object=object, key=key, message=message,
                       fix=fix, numbers=dict(numbers or {}), documentation=self.documentation)


RULES: dict[str, Rule] = {}
_POLICIES: dict[str, Policy] = {}


def policy(name: str, description: str, level: str = MANDATORY, reports_warnings: bool = False,
           after_baseline: bool = False) -> str:
    """Declare a policy that rules report under; its name, for the rules to name."""
    _POLICIES[name] = Policy(name, description, level, reports_warnings, after_baseline)
    return name


def rule(id: str, title: str, source: str, applies_to: str, policy: Optional[str] = None, *,
         severity: Optional[Severity] = None, explanation: str = "", graded: str = "", baseline: bool = False,
         blocking: bool = False,
         config: Optional[Mapping[str, Mapping[str, Any]]] = None,
         waived: Optional[Callable[[Finding, Mapping[str, Any]], bool]] = None) -> Callable:
    """Register the decorated check as the rule `id`; the function itself is returned unchanged.

    `severity` is that of its findings (`graded`: why they have two, the worst being `severity`);
    `explanation` (required) says why the rule holds and what breaks when it does not, which its findings'
    one-sentence messages leave to the documentation. A baseline rule is its own policy (named `id`, its
    title the description), graded by the environment; any other names the policy its errors go to
    (`aks-kueue-warnings` when it only warns)."""
    if id in RULES:
        raise ValueError(f"rule {id!r} is registered twice")
    if baseline:
        policy, severity, graded = id, ERROR, BASELINE_GRADED
        _POLICIES[id] = Policy(id, title + BASELINE_NOTE)
    if severity is None:
        raise TypeError(f"rule {id!r} declares no severity")
    if not explanation.strip():
        raise TypeError(f"rule {id!r} declares no explanation (why it holds, for its documentation)")

    def register(check: Callable[..., Iterable[Finding]]) -> Callable[..., Iterable[Finding]]:
        RULES[id] = Rule(id=id, title=title, source=source, applies_to=applies_to, policy=policy or WARNINGS,
                         check=check, severity=severity, graded=graded, arguments=_arguments(check),
                         baseline=baseline, blocking=blocking, config=dict(config or {}), waived=waived,
                         explanation=" ".join(explanation.split()))
        return check
    return register


def finding(kind: str, *, object: str, key: str, message: str, fix: str = "",
            numbers: Optional[Mapping[str, Any]] = None, severity: Optional[Severity] = None) -> Finding:
    """A finding of the registered rule `kind` (`Rule.finding`): what it is about, the key to edit, what is
    wrong and what to do; its severity is the rule's."""
    return RULES[kind].finding(object=object, key=key, message=message, fix=fix, numbers=numbers, severity=severity)


class Judging:
    """One run of the rules on one model: what several rules read is computed here once."""

    def __init__(self, model, vm_overhead: Fraction = DEFAULT_VM_OVERHEAD, today: Optional[date] = None) -> None:
        self.model, self.vm_overhead, self.today = model, vm_overhead, today
        self._shared: dict[str, Any] = {}

    def shared(self, name: str, compute: Callable[[], Any]) -> Any:
        """What `compute` returns, computed once in this run (a pass several rules read)."""
        if name not in self._shared:
            self._shared[name] = compute()
        return self._shared[name]


_ARGUMENTS = ("vm_overhead", "today", "judging")


def _arguments(check: Callable) -> tuple[str, ...]:
    return tuple(name for name in inspect.signature(check).parameters if name in _ARGUMENTS)


def run(judging: Judging, keep: Callable[[Rule], bool] = lambda r: True) -> list[Finding]:
    """The findings of every rule `keep` keeps, each check function called once, in registration order."""
    found: list[Finding] = []
    called: set[Callable] = set()
    for each in RULES.values():
        if each.check in called or not keep(each):
            continue
        called.add(each.check)
        given = {name: getattr(judging, name) if name != "judging" else judging for name in each.arguments}
        found += each.check(judging.model, **given)
    return found


def policies() -> list[Policy]:
    """Every policy of the pack, in the order it reports them: the baseline's after Kueue's."""
    def rank(each: Policy) -> int:
        return 2 if each.after_baseline else 1 if each.name in RULES and RULES[each.name].baseline else 0
    return sorted(_POLICIES.values(), key=rank)


def policy_config(name: str) -> dict[str, dict[str, Any]]:
    """A policy's config properties: those its rules take, in rule order."""
    merged: dict[str, dict[str, Any]] = {}
    for each in RULES.values():
        if each.policy == name:
            merged.update({key: dict(schema) for key, schema in each.config.items()})
    return merged


def policy_for(finding: Finding) -> str:
    """The policy that reports this finding; one no rule registers is a warning's."""
    each = RULES.get(finding.kind)
    name = each.policy if each is not None else WARNINGS
    if finding.severity == WARNING and not _POLICIES[name].reports_warnings:
        return WARNINGS
    return name


def waived(finding: Finding, config: Mapping[str, Any]) -> bool:
    each = RULES.get(finding.kind)
    return each is not None and each.waived is not None and each.waived(finding, config)


def registry_markdown() -> str:
    """The registry as Markdown: one table of policies (level, description, config), one of rules."""
    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = ["| Policy | Level | Description | Config |", "| --- | --- | --- | --- |"]
    for each in policies():
        config = "; ".join(f"`{key}` ({schema.get('type', 'any')}, default `{schema.get('default')}`): "
                           f"{schema.get('description', '')}" for key, schema in policy_config(each.name).items())
        lines.append(f"| `{each.name}` | {each.level} | {cell(each.description)} | {cell(config) or '-'} |")
    lines += ["", "| Rule (finding kind) | Policy | Level | Severity | Title | Applies to | Source |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for one in RULES.values():
        level = _POLICIES[one.policy].level + (" in production, a warning in development" if one.baseline else "")
        severity = f"{one.severity} or warning: {one.graded}" if one.graded else str(one.severity)
        lines.append(f"| [`{one.id}`](#{one.id}) | `{one.policy}` | {level} | {cell(severity)} | "
                     f"{cell(one.title)} | {cell(one.applies_to)} | {cell(one.source)} |")
    lines += ["", "## What each rule checks, and why", "",
              "A finding's message states what is wrong in one sentence; why the rule holds, and what breaks when "
              "it does not, is said once, here."]
    for one in RULES.values():
        # The heading's id is the anchor `Rule.documentation` points at.
        lines += ["", f"### `{one.id}` {{#{one.id}}}", "", f"**{one.title}** {one.explanation}".rstrip(), "",
                  f"Source: {one.source}."]
    return "\n".join(lines) + "\n"


# The policies Kueue's rules report under (each baseline rule is a policy of its own).
READABLE = policy(
    "aks-kueue-resources-readable",
    "Every node pool, cluster, Kueue installer, Kueue object and the program's model ConfigMap has the shape "
    "the pack reads; one it cannot read is left out of the other checks, so it is reported here.")
OBJECTS_VALID = policy(
    "kueue-objects-valid",
    "Every Kueue object passes Kueue v0.19's CRD schema, CEL rules and webhooks; references between them "
    "resolve; every LocalQueue's namespace is created or declared existing, and its ClusterQueue's "
    "namespaceSelector selects it.")
SINGLE_INSTALLER = policy(
    "kueue-single-installer",
    "Kueue is installed exactly once: the AKS managed extension or the Helm chart, never both, and never "
    "missing while Kueue objects exist.")
INSTALL_MODE = policy(
    "kueue-install-mode",
    "Every Kueue object depends on the installer; a Helm install pins the chart series whose API the objects "
    "use and names only known integrations; a pinned extension version has auto-upgrade off.")
PREVIEW_TRAIN = policy(
    "kueue-no-preview-train-in-prod",
    "A production stack does not let the managed Kueue extension auto-upgrade on the preview release train "
    "unless it opts in with allowPreviewReleaseTrain.")
QUOTA_FITS = policy(
    "kueue-quota-fits-capacity",
    "Kueue quota (nominal, and what a ClusterQueue can borrow) stays within what the node pools its flavors "
    "select can allocate at their autoscaler maximum.")
FLAVORS_MATCH = policy(
    "kueue-flavors-match-pools",
    "Every ResourceFlavor lands on a node pool, its quota names resources those nodes have, and every pool "
    "taint is declared or tolerated by the flavors landing there; a Topology Aware Scheduling flavor has nodes "
    "that exist to place on (a ProvisioningRequest check, or a minCount floor).")
WORKLOADS_FIT = policy(
    "kueue-expected-workloads-fit",
    "Every expected workload is a valid Kueue Workload on an existing queue, is admitted by its ClusterQueue "
    "alone on an empty cluster, its pods fit the nodes of the pools its flavors select, a ProvisioningRequest "
    "check can provision them, and its topology request can be placed.")
PROVISIONING = policy(
    "kueue-provisioning-request-supported",
    "Every ProvisioningRequest admission check a ClusterQueue uses can pass on AKS: its ProvisioningRequestConfig "
    "exists and names a class AKS's cluster autoscaler provides, and the cluster runs the cluster autoscaler (not "
    "node auto-provisioning) on Kubernetes 1.33 or later.")
MANAGED_LIMITS = policy(
    "kueue-managed-extension-limits",
    "The AKS managed Kueue extension runs on AKS 1.34 or later, with the cluster autoscaler (no node "
    "auto-provisioning).")
MANAGED_REGION = policy(
    "kueue-managed-extension-region",
    "The AKS managed Kueue extension is documented only in some regions. Advisory like every warning: make it "
    "mandatory in the policy config, or list a region in additionalRegions if you know the extension is offered"
    " there.", level=ADVISORY, reports_warnings=True)
PLACEHOLDERS = policy(
    "aks-kueue-no-placeholders",
    "No value a shipped example puts in for you to replace (an all-zero or nearly all-zero Entra object ID, a "
    "documentation IP range of RFC 5737 or RFC 3849) is left in a production stack: a copied example must not pass "
    "the gate. In development stacks each is a warning of aks-kueue-warnings.", after_baseline=True)
WARNINGS = policy(
    "aks-kueue-warnings",
    "Every warning of the judge that no other policy reports: placeholders left in a development stack, "
    "single-member cohorts, facts nothing offline can verify, and the security baseline in development stacks.",
    level=ADVISORY, after_baseline=True)
FLEET = policy(
    "kueue-multikueue-fleet",
    "A MultiKueue fleet works as one: every expected workload runs on a worker, the manager's quota is backed by "
    "the workers', each worker has the manager's teams and integrations, and the manager can connect to it with a "
    "kubeconfig Kueue accepts.", after_baseline=True)

# The capacity model's one setting, taken by every policy whose rules size nodes.
VM_OVERHEAD = {"vmOverheadPercent": {
    "type": "number", "minimum": 0, "maximum": 50, "default": float(DEFAULT_VM_OVERHEAD * 100),
    "description": "share of a VM's memory kubelet does not report, in percent (AKS node auto-provisioning "
                   "assumes 7.5)"}}
