"""`aks-kueue simulate`: pending Workloads, and the Workloads of the jobs teams submit,
run through the admission core in file order."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

import typer

from aks_kueue.admission.fair_sharing import INT64_MAX
from aks_kueue.cli.app import app
from aks_kueue.cli.fleet import fleet_objects, print_dispatch
from aks_kueue.cli.preview import STACK_OUTPUTS_OPTION, stack_outputs_files
from aks_kueue.cli.common import warn
from aks_kueue.cli.inputs import (INTEGRATIONS_OPTION, NAMESPACE_OPTION, PATHS_ARGUMENT, STACK_OPTION, Output,
                                  configuration_errors, read_command_inputs, skipped_entry, skipped_other)
from aks_kueue.cli.output import JSON, JSON_OPTION, OUTPUT_OPTION, RESULTS, print_document, register_document

MODES = ("Fit", "Preempt", "NoFit")
# A Preempt with nothing to preempt, in Kueue's words: it requeues it (PreemptionNoCandidates) with QuotaReserved
# False, reason Pending, the flavor assigner's message (v0.19.2 scheduler.go `processEntry`; with the
# UnadmittedWorkloadsObservability gate, off by default, the reason is WaitingForQuota, "waiting for sufficient
# unused quota", apis/kueue/v1beta2/workload_types.go).
WAITING = "Pending"
MODE_STYLES = {"Fit": "green", "Preempt": "yellow", "NoFit": "red", WAITING: "yellow"}


def _summary(decisions: list[dict], skipped: list[dict]) -> dict[str, int]:
    modes = Counter(d["mode"] for d in decisions)
    return {"workloads": len(decisions), **{m: modes.get(m, 0) for m in MODES}, "skipped": len(skipped)}


def _empty(_argv=()) -> dict[str, Any]:
    return {"workloads": [], "skipped": [], "summary": _summary([], [])}


register_document("simulate", _empty)


@dataclass
class _Read:
    """What simulate takes from the input documents: the manifests to decide over (Kueue objects as
    Kueue stores them, the Workloads of jobs, Namespaces), where each Workload came from, the objects
    Kueue would refuse and the documents left aside."""

    manifests: list[dict[str, Any]] = field(default_factory=list)
    origin: dict[tuple, dict[str, Any]] = field(default_factory=dict)
    invalid: list = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    seen: dict[tuple, str] = field(default_factory=dict)

    def reject(self, document, what: str, errors: list) -> None:
        from aks_kueue.k8s.loader import LoadError

        self.invalid.extend(LoadError(document.file, document.index, f"{what}: {e}") for e in errors)

    def once(self, key: tuple, document, what: str) -> list:
        """The API server refuses a second object of the same kind, namespace and name. A name made
        from generateName is a distinct stand-in (`generate_names`), so only real names are judged."""
        from aks_kueue.k8s import field as fe  # `field` is dataclasses' here

        if document.generated_name and key[-1] == document.name:
            return []
        if key in self.seen:
            return [fe.duplicate("metadata.name", document.name, f"{self.seen[key]} already defines {what}")]
        self.seen[key] = document.where
        return []

    def kueue_object(self, document) -> None:
        from aks_kueue.kueue.validate import load_object, validate_object
        from aks_kueue.kueue.workload_webhook import validate_workload_status

        obj = load_object(document.manifest, document.where)
        errors = validate_object(obj)
        if obj.kind == "Workload" and not errors:
            errors = validate_workload_status(obj.manifest)
        errors += self.once((obj.kind, obj.namespace, obj.name), document, obj.describe())
        self.reject(document, obj.describe(), errors)
        stored = dict(obj.defaulted or obj.manifest)
        if "status" in obj.manifest:
            # A create drops status, but here it says what is already admitted.
            stored["status"] = obj.manifest["status"]
        self.manifests.append(stored)
        if obj.kind == "Workload":
            self.origin[(obj.namespace, obj.name)] = {
                "source": {"apiVersion": document.api_version, "kind": "Workload", "name": obj.name},
                "file": document.file, "document": document.index}

    def job(self, document, result, warnings: list[str]) -> None:
        from aks_kueue.kueue.jobs import JobOutcome
        from aks_kueue.kueue.manifests import api_group

        what = result.source.describe()
        errors = result.errors + self.once((api_group(document.manifest), result.source.kind, result.source.namespace,
                                            result.source.name), document, what)
        warnings += [f"{document.where}: {note}" for note in result.notes]
        if errors:
            self.reject(document, what, errors)
            return
        if result.outcome is not JobOutcome.WORKLOAD or not result.workloads:
            self.skipped.append(skipped_entry(document, result.reason, result.outcome is JobOutcome.UNSUPPORTED))
            return
        for workload in result.workloads:
            metadata = workload["metadata"]
            self.reject(document, what, self.once(("Workload", metadata["namespace"], metadata["name"]), document,
                                                  f"Workload {metadata['namespace']}/{metadata['name']}"))
            self.manifests.append(workload)
            self.origin[(metadata["namespace"], metadata["name"])] = {
                "source": result.source.as_source(), "file": document.file, "document": document.index}


def _read(documents, inputs, warnings: list[str]) -> _Read:
    from aks_kueue.kueue.manifests import Category, category

    found = _Read()
    for document in documents:
        kind = category(document.manifest)
        if kind is Category.KUEUE:
            found.kueue_object(document)
        elif kind is Category.JOB:
            found.job(document, inputs.jobs[id(document.manifest)], warnings)
        elif kind is Category.CONFIGURATION:
            errors = configuration_errors(document, warnings)
            found.reject(document, "Configuration", errors)
            if not errors:
                found.skipped.append(skipped_entry(document, "Kueue's Configuration: not decided; its integrations, "
                                                             "fairSharing and admissionFairSharing say how Kueue "
                                                             "manages jobs and decides"))
        else:
            if kind is Category.CONTEXT and document.kind == "Namespace":
                found.manifests.append(document.manifest)  # namespaceSelectors match its labels
            found.skipped.append(skipped_other(document, inputs.options))
    return found


@app.command()
def simulate(
    paths: list[str] = PATHS_ARGUMENT,
    namespace: str = NAMESPACE_OPTION,
    integrations: Optional[str] = INTEGRATIONS_OPTION,
    stack: Optional[str] = STACK_OPTION,
    stack_outputs: list[str] = STACK_OUTPUTS_OPTION,
    as_json: bool = JSON_OPTION,
    output_format: Optional[str] = OUTPUT_OPTION,
) -> None:
    """Decide pending Workloads and jobs in file order, as Kueue's scheduler would; Fit ones are admitted.

    With --stack naming a MultiKueue manager, its queue objects come first, and each workload it
    reserves quota for is raced on the workers whose outputs --stack-outputs gives (AllAtOnce).
    """
    from aks_kueue.admission.configuration import SchedulerConfig
    from aks_kueue.admission.simulate import cluster_queue_shares
    from aks_kueue.admission.simulate import simulate as run_simulation
    from aks_kueue.admission.snapshot import Snapshot
    from aks_kueue.k8s.loader import LoadError
    from aks_kueue.kueue.manifests import Category, category

    output = Output("simulate", as_json or output_format == JSON, _empty())
    as_json = output.format(as_json, output_format) == JSON
    inputs = read_command_inputs(paths, namespace, integrations, stack, output)
    fleet = fleet_objects(stack, stack_outputs_files(stack_outputs, output), output) if stack else None
    if stack is None and stack_outputs:
        output.fail([LoadError("", None, "--stack-outputs needs --stack naming a MultiKueue manager")])
    documents, warnings = inputs.documents, inputs.warnings
    if fleet is not None:
        # The manager's objects as the fleet reads them (with its workers' outputs) stand for the stack's own.
        documents = [d for d in documents if d.file != inputs.stack_source]
    read = _read(documents, inputs, warnings)

    warn(warnings)
    output.document["skipped"] = read.skipped
    output.document["summary"] = _summary([], read.skipped)
    if read.invalid:
        output.fail(read.invalid, 1, header="Kueue would reject these objects; fix them first:")
    scheduler = SchedulerConfig.from_configuration(inputs.kueue, inputs.kueue_source)
    shares = None
    if fleet is None:
        snapshot = Snapshot.from_objects(read.manifests, inputs.options.resources, scheduler)
        raw = run_simulation(read.manifests, inputs.options.resources, snapshot=snapshot)
        shares = cluster_queue_shares(snapshot) if scheduler.fair_sharing is not None else None
    else:
        from aks_kueue.admission.dispatch import dispatch

        warn(f"worker {reason}" for reason in fleet.skipped)
        raw = dispatch([*fleet.manager, *read.manifests], fleet.workers, inputs.options.resources, scheduler)
    decisions = [_with_origin(d, read.origin) for d in raw]
    summary = _summary(decisions, read.skipped)
    if not decisions:
        anything = any(category(d.manifest) in (Category.KUEUE, Category.JOB) for d in documents)
        typer.echo("simulate: no pending Workloads or jobs in the given files; nothing to decide" if anything
                   else "simulate: no Kueue objects or jobs in the given files; nothing to decide", err=True)
    if as_json:
        document = {"workloads": decisions, "skipped": read.skipped, "summary": summary,
                    "admission": scheduler.as_json()}
        if shares is not None:
            document["clusterQueues"] = shares
        print_document({**document, "result": RESULTS[0]})
        return
    # The stack's own namespaces are read for their labels, as any other; they are not listed as skipped.
    shown = [s for s in read.skipped if inputs.stack_source is None or s["file"] != inputs.stack_source]
    # "none can be preempted" only when the admission core says whom it would preempt.
    _print_text(decisions, shown, {**summary, "skipped": len(shown)},
                targets_known=bool(raw) and "preemptionTargets" in raw[0], scheduler=scheduler, shares=shares)
    if fleet is not None and decisions:
        print_dispatch(decisions)


def _with_origin(decision: dict[str, Any], origin: dict[tuple, dict[str, Any]]) -> dict[str, Any]:
    """The contract's workload item: where it came from, and whom it would preempt."""
    came_from = origin.get((decision["namespace"], decision["name"]), {"source": None, "file": None, "document": None})
    out = dict(decision)
    out.setdefault("preemptionTargets", [])
    out.update(came_from)
    return out


def _print_text(decisions: list[dict], skipped: list[dict], summary: dict[str, int], targets_known: bool,
                scheduler=None, shares: Optional[list[dict]] = None) -> None:
    from rich.console import Console

    console = Console()  # the terminal's width; colour only on a terminal
    if decisions:
        console.print(_decision_table(decisions, targets_known, console.width))
        console.print(_per_queue_table(decisions))
    if shares:
        console.print(_share_table(shares))
    for item in skipped:
        console.print(f"skipped {item['apiVersion']} {item['kind']} {item['name'] or '(no name)'} "
                      f"({item['file']} document {item['document']}): {item['reason']}", markup=False,
                      highlight=False)
    if scheduler is not None:
        console.print(f"decided with {scheduler.describe()}", highlight=False, markup=False)
    console.print(f"{summary['workloads']} workloads: {summary['Fit']} Fit, {summary['Preempt']} Preempt, "
                  f"{summary['NoFit']} NoFit; {summary['skipped']} objects skipped", highlight=False)


def _decision_table(decisions: list[dict], targets_known: bool, width: int):
    """One row per decision. Every column gets its width here, so that no header is ever broken: names
    and modes keep theirs (a long name wraps within a quarter of the width), flavors and messages share
    the rest, 1 to 2."""
    from rich.table import Table
    from rich.text import Text

    queue_width = max(len("clusterQueue"), *(len(d["clusterQueue"] or "-") for d in decisions))
    name_width = max(len("workload"), *(len(f"{d['namespace']}/{d['name']}") for d in decisions))
    names, queues = min(name_width, max(12, width // 4)), min(queue_width, max(12, width // 8))
    fixed = names + queues + len("Preempt") + len("borrows")
    rest = max(2 * len("message"), width - fixed - 19)  # 19: the borders and padding of six columns
    flavors_width = max(len("flavors"), rest // 3)
    table = Table()
    table.add_column("workload", overflow="fold", width=names)
    table.add_column("clusterQueue", overflow="fold", width=queues)
    table.add_column("mode", no_wrap=True, width=len("Preempt"))
    table.add_column("borrows", no_wrap=True, width=len("borrows"))
    table.add_column("flavors", overflow="fold", width=flavors_width)
    table.add_column("message", overflow="fold", width=max(len("message"), rest - flavors_width))
    for d in decisions:
        label = WAITING if d["mode"] == "Preempt" and targets_known and not d["preemptionTargets"] else d["mode"]
        table.add_row(_workload_cell(d), d["clusterQueue"] or "-", Text(label, style=MODE_STYLES.get(label, "")),
                      "yes" if d["borrowing"] else "no", _flavors_cell(d), _message_cell(d, targets_known))
    return table


def _workload_cell(d: dict) -> str:
    source = d.get("source") or {}
    workload = f"{d['namespace']}/{d['name']}"
    if source.get("kind") not in (None, "Workload"):
        workload += f"\n(from {source['kind']} {source.get('name')})"
    return workload


def _flavors_cell(d: dict) -> str:
    return "; ".join(f"{ps['name']}×{ps['count']}: " + ", ".join(f"{r}={f}" for r, f in ps["flavors"].items())
                     for ps in d["podSets"])


def _message_cell(d: dict, targets_known: bool) -> str:
    message = d["message"] or ""
    if d["mode"] == "Preempt" and targets_known and d["preemptionTargets"]:
        # Without targets the core's message says already that nothing can be preempted.
        message += "; preempts " + ", ".join(f"{t['namespace']}/{t['name']}" for t in d["preemptionTargets"])
    checks = [c["name"] for c in d.get("admissionChecks") or []]
    if checks:
        message += (f"; quota reserved, admitted once {', '.join(checks)} "
                    f"{'is' if len(checks) == 1 else 'are'} Ready" if d["mode"] == "Fit"
                    else f"; admission checks {', '.join(checks)} (Pending)")
    return message.lstrip("; ")


def _per_queue_table(decisions: list[dict]):
    from rich.table import Table

    per_queue = Table("clusterQueue", *MODES, title="per ClusterQueue")
    counts = Counter((d["clusterQueue"] or "-", d["mode"]) for d in decisions)
    for queue in sorted({queue for queue, _ in counts}):
        per_queue.add_row(queue, *(str(counts[queue, m]) for m in MODES))
    return per_queue


def _share_table(shares: list[dict]):
    from rich.table import Table

    fair = Table("clusterQueue", "weight", "weightedShare", "dominant resource", "borrowing",
                 title="fair sharing: each ClusterQueue's share after these decisions (per mille of what its "
                       "cohort could lend, over its weight, as status.fairSharing.weightedShare)")
    for queue in shares:
        share = queue["weightedShare"]
        fair.add_row(queue["name"], f"{queue['weight']:g}", "∞" if share >= INT64_MAX else f"{share:,}",
                     queue["dominantResource"] or "-", "yes" if queue["borrowing"] else "no")
    return fair
