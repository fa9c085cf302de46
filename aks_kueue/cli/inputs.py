"""What `validate` and `simulate` share: their options, reading the input, and failing with
one JSON document on stdout as well as sentences on stderr."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional

import typer

from aks_kueue.k8s.objects import map_at
from aks_kueue.cli.output import Output
from aks_kueue.k8s.loader import LoadError
from aks_kueue.kueue.manifests import Document
from aks_kueue.k8s.field import FieldError

__all__ = ["Output", "Inputs", "read_command_inputs"]

NAMESPACE_OPTION = typer.Option("default", "-n", "--namespace", metavar="NS",
                                help="Namespace for namespaced objects that name none (as kubectl's -n).")
INTEGRATIONS_OPTION = typer.Option(
    None, "--integrations", metavar="LIST",
    help="Kueue integrations in force, comma-separated (e.g. batch/job,pod); default: a Configuration in the "
         "input, else the Helm chart's default list.")
STACK_OPTION = typer.Option(
    None, "--stack", "-s", metavar="NAME",
    help="Take the Kueue configuration (integrations, feature gates, resource transformations) and the queue objects (flavors, cohorts, "
         "ClusterQueues, LocalQueues, priority classes, their namespaces) of stack NAME (stacks/Pulumi.NAME.yaml), "
         "as if they were given as files before the others.")
PATHS_ARGUMENT = typer.Argument(..., metavar="PATH...",
                                help="Files, directories (read recursively: *.yaml, *.yml, *.json) or - for "
                                     "standard input.")


@dataclass
class Inputs:
    """What `validate` and `simulate` read: the documents, the warnings about them, and each
    job's Workloads under the integrations in force."""

    documents: list[Document]
    warnings: list[str]
    jobs: dict[int, Any]
    # The pseudo-file the stack's own objects are read from (`--stack`), e.g. "stack prod".
    stack_source: Optional[str] = None
    # The Kueue configuration in force (`aks_kueue.kueue.jobs.JobOptions`): its `resources` are
    # what simulate charges workloads with.
    options: Any = None
    # The effective Kueue Configuration (with every feature gate's value) and where it comes from:
    # None for Kueue's defaults. Simulate decides with its fairSharing and admissionFairSharing.
    kueue: Optional[dict[str, Any]] = None
    kueue_source: str = "Kueue v0.19.2's defaults (no Configuration given)"


def read_command_inputs(paths: list[str], namespace: str, integrations: Optional[str], stack: Optional[str],
                        output: Output) -> Inputs:
    """The documents of `paths` (namespaced ones without a namespace placed in `namespace`) and
    their jobs' results, under --integrations, --stack, a Kueue Configuration in the input, or the
    chart's defaults, in that order; exit 2 through `output` when the input cannot be read."""
    from aks_kueue.kueue.jobs import JobOptions
    from aks_kueue.kueue.manifests import complete, read_inputs

    options, settings, stack_config = job_options(integrations, stack, output)
    try:
        documents = read_inputs(paths)
    except LoadError as error:
        output.fail([error])
    source = f"stack {stack}" if settings is not None else None
    own = stack_documents(settings, stack_config, f"stack {stack}", output) \
        if settings is not None and stack_config is not None else []
    documents = own + documents
    warnings = complete(documents, namespace)
    found, where = options_from_configuration(documents)
    config_source = f"the Kueue Configuration in {where}"
    if stack is not None:
        config_source = f"--stack {stack}"
        if found is not None and found.resources:
            warnings.append(f"the resources section of the Kueue Configuration in {where} is not used: --stack {stack} "
                            "gives the Configuration in force")
    elif options is None:
        options = found
        if where:
            warnings.append(f"jobs are taken with the integrations of the Kueue Configuration in {where}")
    elif found is not None and found.resources:
        # --integrations replaces the integration list only; the document still says what Kueue charges.
        options = replace(options, resources=found.resources)
    options = options or JobOptions()
    if options.resources:
        warnings.append(f"workloads are charged as the resources section of {config_source} says: "
                        + "; ".join(options.resources.describe()))
    kueue, kueue_source = configuration_in_force(settings, stack, documents)
    return Inputs(documents, warnings, job_results(documents, options), source, options, kueue,
                  kueue_source or Inputs.kueue_source)


def configuration_in_force(settings, stack: Optional[str], documents: list[Document]):
    """The effective Kueue Configuration and its source: the stack's (the Helm chart's document with the
    stack's overrides; the managed extension's is not the stack's to set, so Kueue's defaults), else a
    Configuration document of the input, else None (Kueue's defaults)."""
    from aks_kueue.kueue.configuration import helm_configuration, judge_configuration
    from aks_kueue.kueue.manifests import Category, category

    if settings is not None:
        kueue = settings.kueue
        if kueue.install != "helm":
            return None, f"Kueue v0.19.2's defaults (--stack {stack} installs Kueue as {kueue.install}, whose " \
                         "Configuration is not the stack's to set)"
        report = helm_configuration(kueue.frameworks, kueue.manager_configuration_overrides,
                                    kueue.command_line_gates)
        return report.in_force(), f"the Kueue Configuration --stack {stack} installs"
    configs = [d for d in documents if category(d.manifest) is Category.CONFIGURATION]
    if len(configs) == 1:
        return judge_configuration(configs[0].manifest).in_force(), f"the Kueue Configuration in {configs[0].where}"
    return None, None


def stack_documents(settings, stack_config, source: str, output: Output) -> list[Document]:
    """The stack's namespaces and queue objects as the program creates them, as documents of `source`."""
    from aks_kueue.model.from_settings import from_settings
    from aks_kueue.preview.stackfile import project_root
    from aks_kueue.settings.errors import SettingsError

    try:
        model = from_settings(settings, project_root(), stack_config.stack)
    except SettingsError as error:  # each at its stack key, in the stack file
        output.fail(stack_config.errors(error.problems))
    manifests = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n.name, "labels": dict(n.labels)}}
                 for n in model.namespaces]
    manifests += [dict(o.manifest) for o in model.objects]
    return [Document(source, index, manifest) for index, manifest in enumerate(manifests)]


def job_options(integrations: Optional[str], stack: Optional[str], output: Output):
    """The Kueue configuration in force from --integrations or --stack (None when neither is given), and the
    stack's settings and config (`StackConfig`; both None without --stack)."""
    from aks_kueue.k8s.spelling import suggest
    from aks_kueue.kueue.catalog import FRAMEWORKS
    from aks_kueue.kueue.jobs import JobOptions

    if integrations is not None and stack is not None:
        output.fail([LoadError("", None, "give either --integrations or --stack, not both")])
    if integrations is not None:
        names = [n.strip() for n in integrations.split(",") if n.strip()]
        unknown = [n for n in names if n not in FRAMEWORKS]
        if unknown:
            output.fail([LoadError("", None, f"--integrations: {n!r} is not a Kueue integration"
                                             f"{suggest(n, FRAMEWORKS)} (known: {', '.join(FRAMEWORKS)})")
                         for n in unknown])
        return JobOptions.from_config(frameworks=names), None, None
    if stack is None:
        return None, None, None
    from aks_kueue.kueue.configuration import parse_configuration

    settings, stack_config = stack_settings(stack, output)
    kueue = settings.kueue
    overrides = kueue.manager_configuration_overrides
    manage_all, external = False, ()
    if overrides is not None:
        manage_all = parse_configuration(overrides).get("manageJobsWithoutQueueName") is True
        external = map_at(overrides, "integrations").get("externalFrameworks") or ()
    return JobOptions.from_config(frameworks=kueue.frameworks, feature_gates=kueue.feature_gates,
                                  manage_jobs_without_queue_name=manage_all, resources=kueue.resource_rules,
                                  external_frameworks=external), settings, stack_config


def stack_settings(stack: str, output: Output):
    """The settings of stack NAME and its config (`StackConfig`, whose `path` names the stack file); exit 2
    through `output` when they cannot be read, each problem at its stack key in the stack file."""
    from aks_kueue.cli.common import load_stack_config
    from aks_kueue.settings.errors import SettingsError

    try:
        stack_config, _ = load_stack_config(stack, None)
    except LoadError as error:  # the stack file, named in it
        output.fail([error])
    try:
        return stack_config.settings(), stack_config
    except SettingsError as error:
        output.fail(stack_config.errors(error.problems))


def options_from_configuration(documents: list[Document]):
    """The integrations, feature gates and `manageJobsWithoutQueueName` of a Kueue Configuration
    in the input, as Kueue reads it (converted from v1beta1 and defaulted: an empty framework
    list means batch/job alone), when the input holds exactly one that Kueue would start with."""
    from aks_kueue.kueue.configuration import judge_configuration
    from aks_kueue.kueue.jobs import JobOptions
    from aks_kueue.kueue.manifests import Category, category
    from aks_kueue.kueue.transformations import ResourceRules

    configs = [d for d in documents if category(d.manifest) is Category.CONFIGURATION]
    if len(configs) != 1:
        return None, None
    report = judge_configuration(configs[0].manifest)
    if report.errors or report.effective is None:
        return None, None
    effective = report.effective
    frameworks = (effective.get("integrations") or {}).get("frameworks") or ["batch/job"]
    options = JobOptions.from_config(frameworks=frameworks, feature_gates=report.gates,
                                     manage_jobs_without_queue_name=effective.get("manageJobsWithoutQueueName") is True,
                                     resources=ResourceRules.from_configuration(effective),
                                     external_frameworks=(effective.get("integrations") or {}).get("externalFrameworks")
                                     or ())
    return options, configs[0].where


def job_results(documents: list[Document], options) -> dict[int, Any]:
    """The jobs' results (`aks_kueue.kueue.jobs`), by the identity of each job's manifest."""
    from aks_kueue.kueue.jobs import derive_workloads, is_job

    jobs = [d.manifest for d in documents if is_job(d.manifest)]
    if not jobs:
        return {}
    # derive_workloads returns one result per job, in input order.
    return {id(m): r for m, r in zip(jobs, derive_workloads([d.manifest for d in documents], options), strict=True)}


def configuration_errors(document: Document, warnings: list[str]) -> list[FieldError]:
    """Kueue's Configuration as Kueue v0.19.2 reads it at startup (`judge_configuration` of
    `aks_kueue.kueue.configuration`): what would stop the manager; what it accepts but probably not as
    meant (v1beta1 semantics) goes to `warnings`."""
    from aks_kueue.kueue.configuration import judge_configuration

    report = judge_configuration(document.manifest)
    warnings += [f"{document.where}: Configuration: {note}" for note in report.warnings]
    return report.errors


NOT_MODELLED_EXTERNAL = ("Kueue leaves it to an external framework (integrations.externalFrameworks): that "
                         "framework's own controller builds its Workload, which cannot be derived offline; it is not "
                         "simulated")
# Objects read for what they say of others, by kind.
CONTEXT_REASONS = {"Namespace": "not a Kueue object; simulate reads its labels for namespaceSelectors",
                   "PriorityClass": "not a Kueue object; read for the priority of the jobs that name it"}


def skipped_other(document: Document, options: Any) -> dict[str, Any]:
    """The `skipped` entry of an object neither Kueue's nor a job: what it is read for, or why it is not
    judged."""
    from aks_kueue.kueue.manifests import Category, category

    if category(document.manifest) is Category.CONTEXT:
        reason = CONTEXT_REASONS.get(document.kind, "not a Kueue object; read for the TrainJobs that use this runtime")
    elif document.api_version == "batch/v1" and document.kind == "CronJob":
        reason = ("not a Kueue object; Kueue manages the Jobs it creates (give one of them, its jobTemplate as a "
                  "Job, to simulate it)")
    elif options.external(document.api_version, document.kind):
        return skipped_entry(document, NOT_MODELLED_EXTERNAL, True)
    elif _carries_queue_label(document.manifest):
        reason = ("not a Kueue object; it asks for a LocalQueue (kueue.x-k8s.io/queue-name), so Kueue manages the "
                  "pods its controller creates, through the pod integration; give those pods to simulate them")
    else:
        reason = "not a Kueue object"
    return skipped_entry(document, reason)


def _carries_queue_label(value: Any, depth: int = 0) -> bool:
    """A `labels` map holding the queue label anywhere in the object (its own, a pod template's)."""
    from aks_kueue.kueue.jobs import QUEUE_LABEL

    if depth > 20:
        return False
    if isinstance(value, dict):
        labels = value.get("labels")
        if isinstance(labels, dict) and QUEUE_LABEL in labels:
            return True
        return any(_carries_queue_label(v, depth + 1) for v in value.values() if isinstance(v, (dict, list)))
    if isinstance(value, list):
        return any(_carries_queue_label(v, depth + 1) for v in value)
    return False


def skipped_entry(document: Document, reason: str, not_modelled: bool = False) -> dict[str, Any]:
    """An object not judged, and why; `notModelled` marks one Kueue manages in a way this tool
    cannot reproduce offline (the contract's items plus that key, only when true)."""
    entry = {"file": document.file, "document": document.index, "apiVersion": document.api_version,
             "kind": document.kind, "name": document.name, "reason": reason}
    if not_modelled:
        entry["notModelled"] = True
    return entry
