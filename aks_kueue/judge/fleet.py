"""A MultiKueue fleet judged as one, before deploy: one manager stack and the worker stacks it lists.

The manager's model holds each worker's `fleet` output (its cluster, Kueue install, pools, queues,
namespaces) and what can be said of its kubeconfig; a worker's model holds the manager's teams.
Each check below is one function of the model, returning findings in the one Finding shape. The
facts are Kueue v0.19.2's (`aks_kueue/kueue/multikueue.py` has the sources).

Manager quota: Kueue's concepts page asks for manager quota equal to the workers' total ("significantly
higher ... may dispatch and monitor workloads that are unlikely to be admitted"), and KEP-9988
("Factors influencing desired manager quota") gives the reasons to book somewhat more: quota
fragmentation across workers (its example books 23 CPU over two workers of 10, 1.15x), workers that
borrow past their nominal quota, workloads admitted on the manager that no worker admits yet. So
up to OVERBOOKING_WARNING (1.5x the workers' sum, per resource, summed over every flavor) is quiet;
above it is a warning: a third or more of what the manager admits at full load has room on no
worker and waits there, copied to every worker (AllAtOnce), while the manager's preemption and fair
sharing, which act only when its quota runs short, decide nothing. Above OVERBOOKING_ERROR (2x), or
with quota for a resource no worker holds, it is an error: most of the admitted work can run nowhere.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Iterable, Mapping, Optional

from aks_kueue.aks.allocatable import DEFAULT_VM_OVERHEAD
from aks_kueue.judge import capacity, objects
from aks_kueue.judge.feasibility import WORKLOAD_KINDS, feasibility, is_manager
from aks_kueue.judge.objects import of_kind, valid_objects
from aks_kueue.judge.finding import ERROR, WARNING, Finding, amount, field_key, show
from aks_kueue.judge.rules import FLEET, VM_OVERHEAD, Judging, finding, rule
from aks_kueue.judge.stack import within
from aks_kueue.kueue import catalog, multikueue as mk
from aks_kueue.kueue.admission_checks import PROVISIONING_CONTROLLER
from aks_kueue.kueue.views import AdmissionCheck, ClusterQueue, LocalQueue, MultiKueueConfig, WorkloadPriorityClass
from aks_kueue.model.desired import Install, KueueItem, Model
from aks_kueue.model.fleet import FLEET_OUTPUT, Fleet, Worker
from aks_kueue.model.fleet_outputs import held_generation, worker_model
from aks_kueue.model.props import UnreadableValue

OVERBOOKING_WARNING = Fraction(3, 2)
OVERBOOKING_ERROR = Fraction(2)

WORKLOAD_UNRUNNABLE = "fleet-workload-unrunnable"
WORKLOAD_ONE_WORKER = "fleet-workload-one-worker"
QUOTA_OVERBOOKED = "fleet-quota-overbooked"
QUOTA_AUTOMATION = "fleet-quota-automation"
TEAM_MISSING = "fleet-team-missing"
INTEGRATION_MISSING = "fleet-integration-missing"
INTEGRATION_NOT_DISPATCHED = "fleet-integration-not-dispatched"
CRDS_MISSING = "fleet-crds-missing"
KUBECONFIG_REFUSED = "fleet-kubeconfig-refused"
KUBECONFIG_NOT_CHECKED = "fleet-kubeconfig-not-checked"
WORKER_UNREACHABLE = "fleet-worker-unreachable"
REACH_NOT_CHECKED = "fleet-reach-not-checked"
KUEUE_VERSIONS = "fleet-kueue-versions"
CHECKS_CONFLICT = "fleet-admission-checks-conflict"
CHECK_CONFIG_MISSING = "fleet-check-config-missing"
TOO_MANY_WORKERS = "fleet-too-many-workers"
WORKER_IS_MANAGER = "fleet-worker-is-manager"
WORKER_NOT_READY = "fleet-worker-not-ready"
WORKER_OUTPUTS = "fleet-worker-outputs"
MANAGER_NOT_READY = "fleet-manager-not-ready"
TOKEN_IN_USE = "fleet-token-in-use"
TOKEN_ROTATING = "fleet-token-rotating"
PRIORITY_VALUES = "fleet-priority-class-values"
INSTALL_KEY = "aks-kueue:kueue"
MK = "Kueue v0.19.2 MultiKueue (aks_kueue/kueue/multikueue.py cites the pages)"


def _managed(model: Model) -> Optional[Fleet]:
    """The fleet this stack manages; None on a worker or a stack of no fleet."""
    return model.fleet if model.fleet is not None and model.fleet.manages else None


def _mirroring(model: Model) -> Optional[Fleet]:
    """The fleet this stack is a worker of; None on a manager or a stack of no fleet."""
    return model.fleet if model.fleet is not None and not model.fleet.manages else None


def _workers(model: Model) -> tuple[Worker, ...]:
    """The manager's workers, leaving out an entry that names the manager's own stack (`worker_is_manager`)."""
    fleet = _managed(model)
    return tuple(w for w in fleet.workers if not _is_self(fleet, w)) if fleet is not None else ()


def _is_self(fleet: Fleet, worker: Worker) -> bool:
    return bool(fleet.stack) and same_stack(worker.stack, fleet.stack)


def _worker_models(model: Model) -> list[tuple[Worker, Model]]:
    """Each listed worker that has exported its `fleet` output, as a model of its own; read once per manager
    model, so that the rules that read them judge the same models (their checked objects read once too)."""
    reference, found = _last_workers.get("entry", (None, []))
    if reference is not None and reference() is model:
        return found
    found = []
    for worker in _workers(model):
        if worker.outputs is None:
            continue
        try:
            found.append((worker, worker_model(worker.outputs, worker.stack)))
        except UnreadableValue:
            continue  # worker_outputs() reports it
    _last_workers["entry"] = (weakref.ref(model), found)
    return found


# The workers' models of the last manager model, as one (manager reference, list) pair, replaced whole.
_last_workers: dict[str, Any] = {}


def _queues(model: Model) -> set[tuple[str, str]]:
    """(namespace, name) of each LocalQueue."""
    return {(q.view.namespace, q.view.name) for q in of_kind(valid_objects(model), LocalQueue)}


def _frameworks(install: Optional[Install]) -> tuple[str, ...]:
    """The integrations an install runs: the managed extension runs all it offers."""
    if install is None:
        return ()
    return install.frameworks if install.frameworks is not None else catalog.MANAGED_FRAMEWORKS


# ---- checks that stop the program (blocking) ---------------------------------------------------

@rule(TOO_MANY_WORKERS, "A MultiKueueConfig lists no more clusters than Kueue allows.",
      MK, "the fleet's workers", FLEET, blocking=True, severity=ERROR,
      explanation=f"Kueue's API refuses a MultiKueueConfig listing more than {mk.MAX_CLUSTERS} clusters, so the "
      "manager's config could not be created.")
def too_many_workers(model: Model) -> Iterable[Finding]:
    workers, fleet = _workers(model), _managed(model)
    if fleet is not None and len(workers) > mk.MAX_CLUSTERS:
        yield finding(TOO_MANY_WORKERS, object="MultiKueueConfig", key=f"{fleet.key}.workers",
                      message=f"{len(workers)} workers are listed, and a MultiKueueConfig holds at most "
                      f"{mk.MAX_CLUSTERS} clusters",
                      fix=f"remove {len(workers) - mk.MAX_CLUSTERS}, or split the fleet under a second manager",
                      numbers={"workers": len(workers), "limit": mk.MAX_CLUSTERS})


@rule(WORKER_IS_MANAGER, "A manager does not list its own stack among its workers.", MK, "the fleet's workers",
      FLEET, blocking=True, severity=ERROR,
      explanation="A manager cannot be its own MultiKueue worker: a worker is another stack, with its own cluster, "
      "whose aks-kueue:fleet has role: worker and names this manager. The entry is left out of every other fleet "
      "check.")
def worker_is_manager(model: Model) -> Iterable[Finding]:
    """Before the first deploy the entry has no outputs, after it the manager's own: either way it is no worker, and
    the other fleet checks leave it out (`_workers`), so this is the one thing said about it."""
    fleet = _managed(model)
    if fleet is None:
        return
    for i, worker in enumerate(fleet.workers):
        if _is_self(fleet, worker):
            yield finding(WORKER_IS_MANAGER, object=worker.label, key=worker.key or f"{fleet.key}.workers[{i}]",
                          message=f"worker {worker.name} names {worker.stack}, this manager's own stack",
                          fix="remove it from aks-kueue:fleet.workers; a worker is another stack, with its own "
                          f"cluster, whose aks-kueue:fleet has role: worker and manager: {fleet.stack}")


def _held(fleet: Fleet) -> Optional[int]:
    """On a worker, the token generation its manager holds (as the manager's output says)."""
    return held_generation(fleet.manager_outputs, _stack_in(fleet.manager_outputs, fleet.stack))


@rule(TOKEN_IN_USE, "A worker keeps the token generation its manager still connects with.",
      "aks-kueue's token rotation (docs/fleet.md)", "a worker's tokenGenerations", FLEET, blocking=True, severity=ERROR,
      explanation="A worker rotates the token its manager connects with in two updates: it exports the new "
      "generation beside the old, the manager's pulumi up takes the new one, then the worker drops the old. Deleting "
      "the generation the manager still holds cuts its MultiKueueCluster for this worker: nothing new is dispatched "
      "here, and what runs here is dispatched again elsewhere once Kueue's workerLostTimeout (15 minutes by default) "
      "has passed, while it runs on here. No allowReplacement entry lifts it: the manager's outputs say which token "
      "it holds.")
def token_in_use(model: Model) -> Iterable[Finding]:
    """A worker's rotation: the token the manager holds stays until the manager has taken the next."""
    fleet = _mirroring(model)
    held = _held(fleet) if fleet is not None else None
    if fleet is not None and held is not None and held not in fleet.token_generations:
        yield finding(TOKEN_IN_USE, object=f"Secret {mk.token_secret_name(held)}", key=f"{fleet.key}.tokenGenerations",
                      message=f"the manager ({fleet.manager}) still connects with the token of generation {held}, "
                      "which this update would delete",
                      fix=f"keep {held} listed until the manager's pulumi up has taken generation "
                      f"{fleet.token_generations[0]}, then remove it (no allowReplacement entry lifts this: the "
                      "manager's outputs say which token it holds)",
                      numbers={"held": held, "kept": list(fleet.token_generations)})


@rule(TOKEN_ROTATING, "A worker's manager has taken the token generation it exports.",
      "aks-kueue's token rotation (docs/fleet.md)", "a worker's tokenGenerations", FLEET, severity=WARNING,
      explanation="Mid-rotation the worker exports a generation its manager has not taken yet; the old one must stay "
      "until the manager's next pulumi up takes the new one, and can be removed after.")
def token_rotating(model: Model) -> Iterable[Finding]:
    fleet = _mirroring(model)
    held = _held(fleet) if fleet is not None else None
    if fleet is not None and held is not None and held in fleet.token_generations \
            and held != fleet.token_generations[0]:
        yield finding(TOKEN_ROTATING, object=f"Secret {mk.token_secret_name(fleet.token_generations[0])}",
                      key=f"{fleet.key}.tokenGenerations",
                      message=f"the manager ({fleet.manager}) holds the token of generation {held}, and this worker "
                      f"now exports generation {fleet.token_generations[0]}",
                      fix=f"run pulumi up on the manager, then remove {held} here",
                      numbers={"held": held, "exported": fleet.token_generations[0]})


# ---- the manager: what its workers can run ------------------------------------------------------

@rule(WORKLOAD_UNRUNNABLE, "Every expected workload can run on at least one worker.",
      MK, "expected workloads on a manager", FLEET, config=VM_OVERHEAD, severity=ERROR,
      explanation="A manager runs no jobs: MultiKueue copies each admitted workload to the workers and runs it on the "
      "first that admits it. Each expected workload is judged on each ready worker as that worker's own stack would "
      "judge it (its LocalQueue, ClusterQueue, quota and pools); one no worker can run waits on the manager forever. "
      "The message gives each worker's reason.")
@rule(WORKLOAD_ONE_WORKER, "Every expected workload can run on more than one worker.",
      MK, "expected workloads on a manager", FLEET, config=VM_OVERHEAD, severity=WARNING,
      explanation="A workload only one worker can run waits while that worker is down or full: the fleet gives it "
      "no failover.")
def workload_coverage(model: Model, vm_overhead: Fraction = DEFAULT_VM_OVERHEAD) -> Iterable[Finding]:
    """Each expected workload on each worker, as that worker's own stack would judge it (its LocalQueue,
    ClusterQueue, quota and pools): none that can run it is an error, only one a warning."""
    workers = [(w, m) for w, m in _worker_models(model) if w.ready]
    if not workers or not model.workloads:
        return
    reasons: dict[str, dict[str, str]] = defaultdict(dict)
    for worker, worker_view in workers:
        with_work = replace(worker_view, workloads=model.workloads)
        found = objects.workload_findings(with_work)
        found += [f for f in feasibility(with_work, vm_overhead).findings if f.kind in WORKLOAD_KINDS]
        for each in found:
            reasons[each.object].setdefault(worker.name, each.message)
    for workload in model.workloads:
        refused = reasons.get(workload.label, {})
        able = [w.name for w, _ in workers if w.name not in refused]
        numbers = {"workers": [w.name for w, _ in workers], "canRun": able}
        if not able:
            why = "; ".join(f"{name}: {message}" for name, message in refused.items())
            yield finding(WORKLOAD_UNRUNNABLE, object=workload.label, key=workload.key,
                          message=f"{workload.label} can run on none of the fleet's {len(workers)} workers ({why})",
                          fix="give a worker the quota and pools it needs (its ClusterQueue for this LocalQueue, a "
                          "flavor over a pool that fits its pods), or shrink the workload", numbers=numbers)
        elif len(able) == 1 and len(workers) > 1:
            yield finding(WORKLOAD_ONE_WORKER, object=workload.label, key=workload.key,
                          message=f"{workload.label} can run only on worker {able[0]}", fix="give a second worker the quota and pools it needs", numbers=numbers)


@dataclass(frozen=True)
class FleetQuota:
    """One resource of a manager's quota against its workers': what the manager's ClusterQueues book, and
    what the ClusterQueues and Cohorts of each worker whose outputs were read hold, summed over every flavor
    (manager and worker flavors are unrelated, KEP-9988)."""

    resource: str
    manager: int
    per_worker: Mapping[str, int] = field(default_factory=dict)
    workers_read: int = 0   # the ready workers whose quota is summed
    workers_listed: int = 0

    @property
    def workers(self) -> int:
        return sum(self.per_worker.values())

    @property
    def ratio(self) -> Optional[Fraction]:
        return Fraction(self.manager, self.workers) if self.workers else None


FLEET_QUOTA = "fleet-quota"  # the name the judgement's one computation is shared under


def fleet_quota(model: Model) -> Optional[list[FleetQuota]]:
    """A manager's quota per resource against its workers'; None for a stack that is no manager."""
    if not is_manager(model):
        return None
    workers = [(w, m) for w, m in _worker_models(model) if w.ready]
    per_worker: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for worker, worker_view in workers:
        for entry in capacity.quota_entries(valid_objects(worker_view)):
            per_worker[entry.resource][worker.name] += entry.nominal
    booked: dict[str, int] = defaultdict(int)
    for entry in capacity.quota_entries(valid_objects(model)):
        booked[entry.resource] += entry.nominal
    return [FleetQuota(resource, quota, dict(per_worker[resource]), len(workers), len(_workers(model)))
            for resource, quota in booked.items()]


@rule(QUOTA_OVERBOOKED, "The manager's quota is backed by its workers' (at most 1.5x their sum, per resource).",
      "Kueue concepts/multikueue; KEP-9988", "the manager's ClusterQueues", FLEET, severity=ERROR,
      graded="a warning from 1.5x to 2x the workers' sum, an error past 2x or for a resource no worker holds",
      explanation="The manager admits work on its own quota and copies it to every worker; what it admits beyond "
      "what the workers' ClusterQueues and Cohorts hold (summed over every flavor: manager and worker flavors are "
      "unrelated, KEP-9988) can run on no worker and waits there. Some overbooking is quiet, since workers free "
      "quota at different times: up to 1.5x the workers' sum, a warning up to 2x, an error beyond.")
def quota_overbooked(model: Model, judging: Optional[Judging] = None) -> Iterable[Finding]:
    """The manager's nominal quota per resource against what the workers' ClusterQueues and Cohorts
    hold for it (`fleet_quota`, computed once per judgement)."""
    rows = (judging.shared(FLEET_QUOTA, lambda: fleet_quota(model)) if judging else fleet_quota(model)) or []
    booked: dict[str, list[capacity.QuotaEntry]] = defaultdict(list)
    for entry in capacity.quota_entries(valid_objects(model)):
        booked[entry.resource].append(entry)
    for row in rows:
        resource, quota, total, ratio = row.resource, row.manager, row.workers, row.ratio
        if not row.workers_read or quota <= 0 or ratio is not None and ratio <= OVERBOOKING_WARNING:
            continue
        severity = ERROR if ratio is None or ratio > OVERBOOKING_ERROR else WARNING
        entry = max(booked[resource], key=lambda e: e.nominal)
        shown = "none" if ratio is None else f"{float(ratio):.2f}x"
        yield finding(
            QUOTA_OVERBOOKED, severity=severity, object=entry.owner.label,
            key=field_key(entry.owner.key, f"{entry.path}.nominalQuota"),
            message=f"the manager's ClusterQueues book {show(resource, quota)} of {resource}, and the "
            f"{row.workers_read} workers' ClusterQueues hold {show(resource, total)} ({shown}; quiet up to "
            f"{float(OVERBOOKING_WARNING):g}x, an error past {float(OVERBOOKING_ERROR):g}x)",
            fix=f"lower the manager's quota for {resource} toward {show(resource, total)} (up to "
            f"{show(resource, int(total * OVERBOOKING_WARNING))}), or add that much to the workers",
            numbers={"resource": resource, "manager": amount(resource, quota), "workers": amount(resource, total),
                     "ratio": None if ratio is None else round(float(ratio), 3),
                     "perWorker": {name: amount(resource, value) for name, value in row.per_worker.items()}})


@rule(QUOTA_AUTOMATION, "The manager's quota is not left to automation that does not see the workers.",
      "KEP-9988", "the manager's ClusterQueues", FLEET, severity=ERROR,
      explanation="quotaManagement Automated lets Kueue set a manager ClusterQueue's quota to the sum of its "
      "workers' (KEP-9988), which it does only for a ClusterQueue of exactly one ResourceFlavor; any other is left "
      "unmanaged.")
def quota_automation(model: Model) -> Iterable[Finding]:
    """`quotaManagement: Automated` sums the workers' quotas into a ClusterQueue of exactly one flavor."""
    fleet = _managed(model)
    if fleet is None or fleet.quota_management != mk.AUTOMATED:
        return
    for cq in of_kind(valid_objects(model), ClusterQueue):
        flavors = cq.view.flavor_names
        if len(flavors) != 1:
            yield finding(QUOTA_AUTOMATION, object=cq.item.label, key=field_key(cq.item.key, "spec.resourceGroups"),
                          message="quotaManagement Automated needs exactly one ResourceFlavor on a manager "
                          f"ClusterQueue, and {cq.view.name} has {len(flavors)}",
                          fix="give it one flavor covering every resource, or set "
                          "aks-kueue:fleet.quotaManagement: Manual",
                          numbers={"flavors": sorted(flavors)})


# ---- the manager: what its workers hold ---------------------------------------------------------

@rule(TEAM_MISSING, "Each worker has the manager's teams (namespaces and LocalQueues).",
      MK, "the fleet's workers", FLEET, severity=ERROR,
      graded="a team this update adds is a warning (the workers mirror it at their next pulumi up); one the manager "
             "exported before is an error",
      explanation="MultiKueue creates a dispatched job in the same namespace, LocalQueue and priority class on the "
      "worker, so each must exist there; a job whose namespace or queue is missing fails to be created and never "
      "runs on that worker. Workers mirror the manager's teams at their own pulumi up.")
def teams_missing(model: Model) -> Iterable[Finding]:
    """MultiKueue creates a job in the same namespace and LocalQueue on the worker; each must exist there.
    A team the manager's last deployment already exported is an error (the worker had it to mirror);
    one this update adds is a warning: its jobs wait until the workers' next pulumi up mirrors it."""
    fleet = _managed(model)
    if fleet is None:
        return
    wanted_queues = _queues(model)
    wanted_classes = {c.view.name for c in of_kind(valid_objects(model), WorkloadPriorityClass)}
    exported = set(fleet.exported_teams or ())
    for worker, view in _worker_models(model):
        namespaces = {ns for ns, _ in wanted_queues} - {n.name for n in view.namespaces}
        missing = [f"namespace {n}" for n in sorted(namespaces)]
        missing += [f"LocalQueue {ns}/{name}" for ns, name in sorted(wanted_queues - _queues(view))]
        missing += [f"WorkloadPriorityClass {n}" for n in sorted(
            wanted_classes - {c.view.name for c in of_kind(valid_objects(view), WorkloadPriorityClass)})]
        lost, new = [m for m in missing if m in exported], [m for m in missing if m not in exported]
        numbers = {"worker": worker.name, "missing": missing}
        if lost:
            yield finding(TEAM_MISSING, severity=ERROR, object=worker.label, key=worker.key,
                          message=f"worker {worker.name} ({worker.stack}) lacks {', '.join(lost)}, which this manager "
                          "exported at its last update", fix=f"run pulumi up on {worker.stack} (it mirrors this manager's teams), "
                          "then preview this stack with its new outputs", numbers=numbers)
        elif new:
            yield finding(TEAM_MISSING, severity=WARNING, object=worker.label, key=worker.key,
                          message=f"worker {worker.name} ({worker.stack}) does not have {', '.join(new)} yet, which "
                          "this update adds",
                          fix=f"after this pulumi up, run pulumi up on {worker.stack} (with a ClusterQueue of each "
                          "name their LocalQueues point to)", numbers=numbers)


@rule(PRIORITY_VALUES, "Each worker's WorkloadPriorityClasses have the manager's values.",
      "Kueue v0.19.2 WorkloadPriorityClass: value is mutable, and a change leaves existing Workloads' priority as "
      "it was (apis/kueue/v1beta2/workloadpriorityclass_types.go)", "the fleet's workers", FLEET, severity=WARNING,
      explanation="A worker mirrors the manager's WorkloadPriorityClasses at its own pulumi up: until then it ranks "
      "work by the old values, and Kueue does not change the priority of Workloads that exist when a value changes, "
      "so what is queued there keeps the old value even after.")
def priority_values(model: Model) -> Iterable[Finding]:
    """A worker mirrors the manager's classes at its own pulumi up: until then a class whose value this
    manager changed ranks work there by the old value, and what was queued there keeps it even after."""
    wanted = {c.view.name: c.view.value for c in of_kind(valid_objects(model), WorkloadPriorityClass)}
    for worker, worker_view in _worker_models(model):
        differ = [(c.view.name, wanted[c.view.name], c.view.value)
                  for c in of_kind(valid_objects(worker_view), WorkloadPriorityClass)
                  if c.view.name in wanted and c.view.value != wanted[c.view.name]]
        if not differ:
            continue
        yield finding(PRIORITY_VALUES, object=worker.label, key=worker.key,
                      message=f"worker {worker.name} ({worker.stack}) ranks work by other priorities than this "
                      "manager ("
                      + ", ".join(f"WorkloadPriorityClass {name} is {mine} here and {theirs} there"
                                  for name, mine, theirs in differ) + ")",
                      fix=f"run pulumi up on {worker.stack} (it mirrors this manager's classes), then resubmit what "
                      "waits there under the class if its rank matters",
                      numbers={"worker": worker.name, "classes": {name: {"manager": mine, "worker": theirs}
                                                          for name, mine, theirs in differ}})


@rule(INTEGRATION_NOT_DISPATCHED,
      "Every integration the manager runs is one MultiKueue dispatches and the worker role covers.",
      MK, "the manager's Kueue install", FLEET, severity=WARNING,
      explanation="MultiKueue dispatches only the integrations it has an adapter for, and creates their jobs on a "
      "worker with the access Kueue's documented worker role (create-multikueue-kubeconfig.sh, which the workers "
      "create as written) grants; jobs of any other integration submitted to the manager wait there.")
@rule(CRDS_MISSING, "The CRDs of every integration the manager dispatches are installed on the manager.",
      MK, "the manager's Kueue install", FLEET, severity=ERROR,
      explanation="MultiKueue creates every job on the manager first and copies it to a worker, so the manager needs "
      "each dispatched integration's CRDs, although it runs none of the jobs.")
@rule(INTEGRATION_MISSING, "Each worker runs every integration the manager dispatches.",
      MK, "the fleet's workers", FLEET, severity=ERROR,
      explanation="A job dispatched to a worker is managed there by the worker's Kueue, which must run the job's "
      "integration; otherwise the worker's Kueue ignores it.")
def integrations(model: Model) -> Iterable[Finding]:
    """Every integration the manager runs: one MultiKueue dispatches, that each worker runs, and whose
    jobs the documented worker role lets the manager create; its CRDs installed on the manager."""
    fleet = _managed(model)
    if fleet is None:
        return
    install = model.installs[0] if model.installs else None
    wanted = _frameworks(install)
    key = install.key if install else INSTALL_KEY
    for framework in wanted:
        if framework not in mk.DISPATCHABLE:
            yield finding(INTEGRATION_NOT_DISPATCHED, object=Install.subject, key=key,
                          message=f"MultiKueue has no adapter for {framework}", fix="submit them to a worker directly, or remove the integration from the "
                          "manager")
        elif not _role_covers(framework):
            yield finding(INTEGRATION_NOT_DISPATCHED, object=Install.subject, key=key,
                          message="Kueue's documented worker role (create-multikueue-kubeconfig.sh) grants no access "
                          f"to {framework}'s jobs",
                          fix="run those jobs elsewhere, or remove the integration from the manager")
    for framework in wanted:
        if mk.crd_urls(framework) and framework not in fleet.crds:
            yield finding(CRDS_MISSING, object=Install.subject, key=key,
                          message=f"the manager runs {framework}, but this stack installs none of its CRDs there",
                          fix="install them with this program (it does, unless the resources were changed by hand)",
                          numbers={"framework": framework, "crds": list(mk.crd_urls(framework))})
    for worker, view in _worker_models(model):
        theirs = set(_frameworks(view.installs[0] if view.installs else None))
        lacking = [f for f in wanted if f in mk.DISPATCHABLE and f not in theirs]
        if lacking:
            yield finding(INTEGRATION_MISSING, object=worker.label, key=worker.key,
                          message=f"worker {worker.name} does not run {', '.join(lacking)}, which the manager runs",
                          fix=f"add them to aks-kueue:kueue.integrations of {worker.stack}",
                          numbers={"missing": lacking})


def _role_covers(framework: str) -> bool:
    """Whether WORKER_RULES let the manager create this integration's jobs (Deployments go as pods)."""
    kind = catalog.FRAMEWORK_KINDS.get("pod" if framework == "deployment" else framework, "")
    version, _, name = kind.partition(", Kind=")
    group = version.rsplit("/", 1)[0] if "/" in version else ""
    resource = name.lower() + "s"
    return any(group in rule["apiGroups"] and resource in rule["resources"] and "create" in rule["verbs"]
               for rule in mk.WORKER_RULES)


@rule(KUBECONFIG_NOT_CHECKED, "The manager's kubeconfig for each worker could be checked.",
      MK, "the fleet's workers", FLEET, severity=WARNING,
      explanation="A worker's kubeconfig is a secret; an offline preview given outputs without secrets cannot read "
      "it, so Kueue's rules for it (no exec plugin, no tokenFile, no insecure TLS, no CA file) are not checked there. "
      "pulumi preview checks it.")
@rule(KUBECONFIG_REFUSED, "The manager's kubeconfig for each worker is one Kueue accepts.",
      MK, "the fleet's workers", FLEET, severity=ERROR,
      explanation="Kueue's MultiKueue controller refuses a kubeconfig with an exec plugin, a tokenFile, insecure TLS "
      "or a CA file (InsecureKubeConfig), and keeps that worker's MultiKueueCluster inactive: nothing is dispatched "
      "to it.")
def kubeconfigs(model: Model) -> Iterable[Finding]:
    """What Kueue's MultiKueue controller refuses in a kubeconfig (exec, tokenFile, insecure TLS, a CA
    file), where its content is known; a secret this run could not read is said to be not checked."""
    for worker in _workers(model):
        check = worker.kubeconfig
        if check is None:
            continue
        if not check.known:
            yield finding(KUBECONFIG_NOT_CHECKED, object=worker.label, key=worker.key,
                          message=f"the kubeconfig of worker {worker.name} is a secret this preview cannot read, so "
                          "it was not checked", fix="pulumi preview checks it; offline, give the file `pulumi stack output "
                          "--json --show-secrets` prints for the worker")
        elif check.problems:
            yield finding(KUBECONFIG_REFUSED, object=worker.label, key=worker.key,
                          message=f"Kueue would refuse the kubeconfig of worker {worker.name} (InsecureKubeConfig: "
                          f"{'; '.join(check.problems)})",
                          fix=f"let {worker.stack} export its service-account kubeconfig (this program's workers do)",
                          numbers={"problems": list(check.problems)})


@rule(REACH_NOT_CHECKED, "Whether the manager reaches each worker's API server could be checked.",
      "AKS api-server-authorized-ip-ranges", "the fleet's workers", FLEET, severity=WARNING,
      explanation="The manager's Kueue connects to each worker's API server. A private one is reached only over a "
      "network peered or linked with the worker's, which nothing offline can see; authorized IP ranges can be checked "
      "only against the manager's declared egress (aks-kueue:fleet.egressIpRanges).")
@rule(WORKER_UNREACHABLE, "The manager's egress is within each worker's authorized IP ranges.",
      "AKS api-server-authorized-ip-ranges", "the fleet's workers", FLEET, severity=ERROR,
      explanation="A worker whose authorized IP ranges leave out the manager's egress refuses the manager's "
      "connection, and Kueue keeps its MultiKueueCluster inactive: nothing is dispatched to it.")
def reachability(model: Model) -> Iterable[Finding]:
    """The manager's Kueue connects to each worker's API server: a private one, or authorized IP ranges
    that leave out the manager's egress, keep the MultiKueueCluster inactive."""
    fleet = _managed(model)
    if fleet is None:
        return
    egress = fleet.egress_ip_ranges
    for worker, view in _worker_models(model):
        if view.cluster is None:
            continue  # a worker's outputs always carry its cluster (`fleet_outputs.worker_model`)
        security = view.cluster.security
        if security.private_cluster:
            yield finding(REACH_NOT_CHECKED, object=worker.label, key=worker.key,
                          message=f"worker {worker.name}'s API server is private, so whether the manager reaches it "
                          "was not checked",
                          fix="peer the manager's network with the worker's and link its private DNS zone")
            continue
        if not security.authorized_ip_ranges:
            continue
        if egress is None:
            yield finding(REACH_NOT_CHECKED, object=worker.label, key=f"{fleet.key}.egressIpRanges",
                          message=f"worker {worker.name} accepts API calls only from "
                          f"{', '.join(security.authorized_ip_ranges)}, and the manager's egress is not declared, so "
                          "whether the manager can reach it was not checked",
                          fix="declare the manager's outbound addresses in aks-kueue:fleet.egressIpRanges")
            continue
        outside = [r for r in egress if not within(r, security.authorized_ip_ranges)]
        if outside:
            yield finding(WORKER_UNREACHABLE, object=worker.label, key=worker.key,
                          message=f"worker {worker.name} accepts API calls only from "
                          f"{', '.join(security.authorized_ip_ranges)}, which leaves out the manager's egress "
                          f"{', '.join(outside)}", fix="add "
                          f"{', '.join(outside)} to cluster.security.apiServerAuthorizedIpRanges of {worker.stack}",
                          numbers={"egress": outside, "authorized": list(security.authorized_ip_ranges)})


@rule(KUEUE_VERSIONS, "The manager and its workers run the same Kueue minor version.",
      MK, "the fleet's Kueue installs", FLEET, severity=WARNING,
      explanation="The manager and its workers exchange Workloads and jobs; MultiKueue is tested with one Kueue "
      "release across the fleet, and the Workload API and the job adapters change between minor releases.")
def kueue_versions(model: Model) -> Iterable[Finding]:
    """One Kueue minor release across the fleet: the manager and its workers exchange Workloads and jobs."""
    if not is_manager(model) or not model.installs:
        return
    own = model.installs[0]
    mine = mk.kueue_minor(own.mode, own.version)
    for worker, view in _worker_models(model):
        install = view.installs[0] if view.installs else None
        theirs = mk.kueue_minor(install.mode, install.version) if install else None
        if mine and theirs and mine != theirs:
            yield finding(KUEUE_VERSIONS, object=worker.label, key=worker.key,
                          message=f"worker {worker.name} runs Kueue {theirs} and the manager {mine}",
                          fix="upgrade them to one minor release, one cluster at a time",
                          numbers={"manager": mine, "worker": theirs})


# ---- the manager's MultiKueue objects, and its workers' state ---------------------------------

@rule(CHECKS_CONFLICT,
      "A manager's ClusterQueue has one MultiKueue admission check and no other that would keep it inactive.",
      MK, "the manager's ClusterQueues", FLEET, severity=ERROR,
      explanation="Kueue accepts these ClusterQueues but keeps them inactive, so they admit nothing "
      "(clusterqueue.go, inactiveReason): two MultiKueue checks, a MultiKueue check applied per flavor (onFlavors; "
      "Kueue cannot dispatch per flavor), or one beside a ProvisioningRequest check (provisioning belongs on the "
      "workers' ClusterQueues).")
def admission_checks(model: Model) -> Iterable[Finding]:
    """Kueue accepts these ClusterQueues and keeps them inactive (`clusterqueue.go` inactiveReason):
    two MultiKueue checks, a MultiKueue check per flavor, or one beside a ProvisioningRequest check
    (that one belongs on the workers' ClusterQueues)."""
    valid = valid_objects(model)
    controllers = {c.view.name: c.view.controller_name for c in of_kind(valid, AdmissionCheck)}
    for cq in of_kind(valid, ClusterQueue):
        rules = cq.view.admission_checks
        multikueue = [r for r in rules if controllers.get(r.name) == mk.CONTROLLER]
        provisioning = [r.name for r in rules if controllers.get(r.name) == PROVISIONING_CONTROLLER]
        where = field_key(cq.item.key, "spec.admissionChecksStrategy.admissionChecks")
        if len(multikueue) > 1:
            yield _inactive(cq.item, where, f"has {len(multikueue)} MultiKueue checks "
                            f"({', '.join(r.name for r in multikueue)})", "keep one")
        per_flavor = [r.name for r in multikueue if r.on_flavors]
        if per_flavor:
            yield _inactive(cq.item, where, f"applies the MultiKueue check {', '.join(per_flavor)} per flavor "
                            "(onFlavors)", "remove onFlavors from it")
        if multikueue and provisioning:
            yield _inactive(cq.item, where, f"has the MultiKueue check beside the ProvisioningRequest check "
                            f"{', '.join(map(str, provisioning))}",
                            "move clusterQueues[].provisioning to the workers' stacks")


def _inactive(cq: KueueItem, key: str, what: str, fix: str) -> Finding:
    return finding(CHECKS_CONFLICT, object=cq.label, key=key,
                   message=f"ClusterQueue {cq.name} {what}, so Kueue keeps it inactive", fix=fix)


@rule(CHECK_CONFIG_MISSING, "Every MultiKueue admission check has its MultiKueueConfig and its clusters.",
      MK, "the manager's admission checks", FLEET, severity=ERROR,
      graded="a warning while no worker is ready yet (a fleet's first deployment), or while only some of a config's "
             "clusters are missing",
      explanation="A MultiKueue admission check whose MultiKueueConfig does not exist is inactive, and its "
      "ClusterQueues admit nothing; a config's clusters that no MultiKueueCluster defines are skipped. On a fleet's "
      "first deployment no worker has exported its kubeconfig yet, so the config is missing until the workers' "
      "pulumi up, then the manager's.")
def check_config(model: Model) -> Iterable[Finding]:
    """The MultiKueue AdmissionCheck's MultiKueueConfig, and the MultiKueueClusters it lists, exist."""
    valid = valid_objects(model)
    configs = {c.view.name: c for c in of_kind(valid, MultiKueueConfig)}
    clusters = {o.name for o in model.of_kind("MultiKueueCluster")}
    fleet = _managed(model)
    bootstrapping = fleet is not None and not fleet.ready_workers
    for check in of_kind(valid, AdmissionCheck):
        if check.view.controller_name != mk.CONTROLLER:
            continue
        name = check.view.names("MultiKueueConfig")
        config = configs.get(name) if name else None
        if config is None:
            yield finding(CHECK_CONFIG_MISSING, severity=WARNING if bootstrapping else ERROR,
                          object=check.item.label, key=check.item.key,
                          message=f"the MultiKueue check names MultiKueueConfig {name}, which does not exist"
                          + (" until a worker has exported its kubeconfig" if bootstrapping else ""),
                          fix="run pulumi up on the workers, then on this manager" if bootstrapping else
                          "define the MultiKueueConfig or fix the name")
            continue
        listed = config.view.clusters
        absent = [c for c in listed if c not in clusters]
        if absent:
            yield finding(CHECK_CONFIG_MISSING, severity=ERROR if len(absent) == len(listed) else WARNING,
                          object=config.item.label, key=config.item.key,
                          message=f"MultiKueueConfig {config.view.name} lists {', '.join(absent)}, which no "
                          "MultiKueueCluster defines", fix="define them or remove them")


@rule(WORKER_NOT_READY, "Every listed worker is ready to receive work.",
      "aks-kueue's fleet (docs/fleet.md)", "the fleet's workers", FLEET, severity=WARNING,
      explanation="A worker that has not exported its outputs (or its kubeconfig) yet gets no MultiKueueCluster on "
      "the manager, so nothing is dispatched to it, and its queues and pools are not judged.")
def workers_ready(model: Model) -> Iterable[Finding]:
    """A worker that has not exported its outputs yet gets nothing dispatched, and is not judged."""
    for worker in _workers(model):
        if worker.outputs is None or not worker.ready:
            missing = "outputs" if worker.outputs is None else "kubeconfig"
            yield finding(WORKER_NOT_READY, object=worker.label, key=worker.key,
                          message=f"worker {worker.name} ({worker.stack}) has no {missing} yet", fix=f"run pulumi up on {worker.stack}, then on this manager (offline: "
                          f"--stack-outputs {worker.stack}=FILE)")


@rule(WORKER_OUTPUTS, "Every worker's fleet output can be read.",
      "aks-kueue's fleet (docs/fleet.md)", "the fleet's workers", FLEET, severity=ERROR,
      graded="outputs that cannot be read are an error; a worker mirroring another manager's teams is a warning",
      explanation="The manager reads each worker stack's fleet output (its queues, pools, kubeconfig and the manager "
      "it mirrors): a stack whose output is not a worker's of this program cannot be judged or connected, and a "
      "worker that mirrors another manager has that manager's namespaces and LocalQueues, not this one's.")
def worker_outputs(model: Model) -> Iterable[Finding]:
    """A listed stack's `fleet` output must be a worker's, and of this manager."""
    fleet = _managed(model)
    own = fleet.stack if fleet is not None else ""
    for worker in _workers(model):
        if worker.outputs is None:
            continue
        try:
            worker_model(worker.outputs, worker.stack)
        except UnreadableValue as error:
            yield finding(WORKER_OUTPUTS, severity=ERROR, object=worker.label, key=worker.key, message=error.message,
                          fix=(f"{error.fix}, or " if error.fix else "")
                          + "list only worker stacks of this program in aks-kueue:fleet.workers")
            continue
        theirs = worker.outputs.get("manager")
        if isinstance(theirs, str) and own and not same_stack(theirs, own):
            yield finding(WORKER_OUTPUTS, severity=WARNING, object=worker.label, key=worker.key,
                          message=f"worker {worker.name} mirrors the teams of {theirs}, not of this manager", fix="set aks-kueue:fleet.manager of "
                          f"{worker.stack} to this stack")


@rule(MANAGER_NOT_READY, "A worker's manager has deployed and lists it.",
      "aks-kueue's fleet (docs/fleet.md)", "a worker's manager", FLEET, severity=WARNING,
      explanation="A worker mirrors its manager's teams (namespaces, LocalQueues, priority classes) from the "
      "manager's fleet output: before the manager has deployed it mirrors none, and a manager that does not list the "
      "worker dispatches nothing to it.")
def manager_ready(model: Model) -> Iterable[Finding]:
    """A worker whose manager has no `fleet` output mirrors no team, and is listed nowhere."""
    fleet = _mirroring(model)
    if fleet is None:
        return
    if fleet.manager_outputs is None:
        yield finding(MANAGER_NOT_READY, object="fleet manager", key=f"{fleet.key}.manager",
                      message=f"the manager {fleet.manager} has no `{FLEET_OUTPUT}` output yet",
                      fix=f"run pulumi up on {fleet.manager} first (offline: --stack-outputs {fleet.manager}=FILE)")
    elif _stack_in(fleet.manager_outputs, fleet.stack) is None:
        yield finding(MANAGER_NOT_READY, object="fleet manager", key=f"{fleet.key}.manager",
                      message=f"the manager {fleet.manager} does not list this stack among its workers", fix=f"add this stack to aks-kueue:fleet.workers of {fleet.manager}")


def _stack_in(manager: Optional[Mapping[str, Any]], stack: str) -> Optional[str]:
    """The name the manager's output gives this worker stack (organization names aside)."""
    for entry in (manager or {}).get("workers") or []:
        if isinstance(entry, Mapping) and isinstance(entry.get("stack"), str) and same_stack(entry["stack"], stack):
            return entry["stack"]
    return None


def same_stack(a: str, b: str) -> bool:
    """Two fully qualified stack names of one stack. The organizations are not compared: an offline
    preview runs without one (`pulumi.get_organization()` is a placeholder there)."""
    return a == b or a.split("/", 1)[-1] == b.split("/", 1)[-1]
