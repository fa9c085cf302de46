"""One offline preview, start to finish: the program run, the pack's verdicts, the judge's findings.

The pack's policies read the model from the recorded resources and run the judge once
(`policies/base.read_and_judge` remembers both by content); the preview asks for the same
reading of the same resources and so gets that very judgement, rather than analysing the
stack again. Each finding is shown with the policy that reports it and that policy's level
after the policy config, so what people read and the exit code agree with the pack.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from aks_kueue.judge import Judgement
from aks_kueue.judge.finding import WARNING, Finding
from aks_kueue.k8s.loader import LoadError
from aks_kueue.preview.errors import InputError
from aks_kueue.preview.pack import MANDATORY, Violation, evaluate, judged_view, levels, load_policy_config, properties
from aks_kueue.preview.run import (ProgramError, ProgramRefused, ProgramRun, is_guard, read_previous_outputs,
                                   run_program)
from aks_kueue.preview.stackfile import StackConfig
from aks_kueue.secrets import Secrets

OK, REJECTED, INVALID = "ok", "rejected", "invalid"
DISABLED = "disabled"


@dataclass(frozen=True)
class Verdict:
    """A finding, the policy that reports it, and that policy's enforcement level."""

    finding: Finding
    policy: str
    level: str


@dataclass
class Outcome:
    project: str
    stack: str
    run: Optional[ProgramRun] = None
    violations: list[Violation] = field(default_factory=list)
    judgement: Optional[Judgement] = None
    # The findings; on an invalid stack, the program's reasons for refusing it.
    findings: list[Finding] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    # Violations that are not a finding: the policy runtime's own ("can't run ... during preview").
    other_violations: list[Violation] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    errors_header: str = ""      # said before the errors, e.g. "invalid stack config:"
    # The day-2 guard's refusals: the stack is read, but this update against its last deployment is rejected.
    # `run` is then the program run as if the guard had let the update through (`_refused`).
    refusals: list[Finding] = field(default_factory=list)
    # Why the previous outputs may not be this stack's (`other_cluster`), said before the refusals.
    previous_notes: list[Finding] = field(default_factory=list)
    # The values of the stack's secret keys: taken out of everything above but the record itself.
    secrets: Secrets = field(default_factory=Secrets)

    @property
    def result(self) -> str:
        if self.errors:
            return INVALID
        if self.refusals:
            return REJECTED
        if self.run is None:
            return INVALID
        return REJECTED if any(v.enforcement_level == MANDATORY for v in self.violations) else OK

    @property
    def exit_code(self) -> int:
        return {OK: 0, REJECTED: 1, INVALID: 2}[self.result]


def preview(config: Optional[StackConfig], root: Path, policy_config: Optional[Path] = None,
            load_error: Optional[LoadError] = None, project: str = "aks-kueue", stack: str = "",
            previous_outputs: Optional[Path] = None, source: Optional[Path] = None,
            stack_outputs: Optional[dict[str, Path]] = None) -> Outcome:
    """Run the program offline for one stack, then the pack over what it registered.
    `load_error`: why the stack file could not be read (then `config` is None);
    `previous_outputs`: the stack's last deployment, for the day-2 guard; `source`: the stack file
    `config` was read from, named in the errors; `stack_outputs`: other stacks' last outputs by
    name, for a fleet's StackReferences.

    No message, finding, verdict or table of the outcome shows a value of a secret key (the
    record's inputs are as the engine receives them: what the program made secret is `[secret]`)."""
    outcome = _preview(config, root, policy_config, load_error, project, stack, previous_outputs, source,
                       stack_outputs)
    if config is not None and config.secret_keys:
        _hide(outcome, config.secrets())
    return outcome


def _hide(outcome: Outcome, secrets: Secrets) -> None:
    outcome.secrets = secrets
    if not secrets:
        return
    for name in ("errors", "findings", "refusals", "violations", "verdicts", "other_violations"):
        setattr(outcome, name, secrets.value(getattr(outcome, name)))
    if outcome.judgement is not None:  # a copy: the pack remembers the judgement it made
        outcome.judgement = dataclasses.replace(outcome.judgement, findings=secrets.value(outcome.judgement.findings),
                                                capacity=secrets.value(outcome.judgement.capacity))
    if outcome.run is not None:
        outcome.run.warnings = secrets.value(outcome.run.warnings)


def _preview(config: Optional[StackConfig], root: Path, policy_config: Optional[Path], load_error: Optional[LoadError],
             project: str, stack: str, previous_outputs: Optional[Path], source: Optional[Path],
             stack_outputs: Optional[dict[str, Path]]) -> Outcome:
    outcome = Outcome(project=config.project if config else project, stack=config.stack if config else stack)
    where = str(source) if source is not None else None
    if load_error is not None:
        outcome.errors.append(InputError.of(load_error))
        return outcome
    if config is None:
        outcome.errors.append(InputError("no stack config to preview", where))
        return outcome
    try:
        # The policy config is checked first: a typo there should not wait for the program.
        pack_config = load_policy_config(policy_config) if policy_config is not None else None
    except LoadError as error:  # it names the file, and the policy and property at fault
        outcome.errors.append(InputError.of(error))
        return outcome
    previous = None
    if previous_outputs is not None:
        try:
            previous = read_previous_outputs(previous_outputs)
            check_previous_outputs(previous, previous_outputs)
        except LoadError as error:
            outcome.errors.append(InputError.of(error))
            return outcome
        outcome.previous_notes = other_cluster(previous, config)
    others = {}
    for name, path in (stack_outputs or {}).items():
        try:
            others[name] = read_previous_outputs(path, preview_document=True)
        except LoadError as error:  # the flag names the stack; the error, the file
            outcome.errors.append(InputError(f"--stack-outputs {name}: {error}", error.source or None))
            return outcome
    try:
        run = run_program(config, root, previous_outputs=previous, stack_outputs=others)
    except ProgramRefused as error:
        outcome.refusals = list(error.findings)
        outcome.findings = [*outcome.previous_notes, *outcome.refusals]
        return _refused(outcome, config, root, pack_config, others)
    except ProgramError as error:
        outcome.findings = list(error.findings)
        if error.findings:  # the program's reasons, one error each at its stack key, under its first line
            outcome.errors_header = str(error).split("\n", 1)[0]
            read_from = dataclasses.replace(config, path=source) if source is not None else config
            outcome.errors = [InputError.of(e) for e in read_from.errors(error.findings)]
        else:
            outcome.errors = [InputError(str(error), where)]
        return outcome
    return _judged(outcome, run, pack_config)


def _judged(outcome: Outcome, run: ProgramRun, pack_config: Optional[dict]) -> Outcome:
    """The outcome with the pack's verdicts on `run` and the judge's findings."""
    outcome.run = run
    outcome.violations = evaluate(run, pack_config)
    from aks_kueue.judge.rules import QUOTA_FITS, policy_for
    from aks_kueue.policies.base import overhead, read_and_judge

    from pulumi_policy.proxy import UnknownValueError

    try:
        _, judgement = read_and_judge(judged_view(run), overhead(properties(pack_config, QUOTA_FITS)))
    except UnknownValueError:
        # A value the pack needs is unknown until deployment: the policies said they cannot run yet
        # (the runtime's advisory violations), and there is no judgement to show.
        outcome.findings = list(run.day2_findings)
        outcome.other_violations = list(outcome.violations)
        return outcome
    # The day-2 guard's notices (what this update destroys, an unguarded stack) are findings too.
    outcome.judgement = judgement
    outcome.findings = [*outcome.previous_notes, *outcome.refusals, *judgement.findings, *run.day2_findings]
    enabled = levels(pack_config)
    routed = [Verdict(f, policy_for(f), enabled[policy_for(f)]) for f in judgement.findings]
    outcome.verdicts = [v for v in routed if v.level != DISABLED]
    shown = {(v.policy, v.finding.violation()) for v in outcome.verdicts}
    outcome.other_violations = [v for v in outcome.violations if (v.policy, v.message) not in shown]
    return outcome


def _refused(outcome: Outcome, config: StackConfig, root: Path, pack_config: Optional[dict],
             stack_outputs: Optional[dict] = None) -> Outcome:
    """A refused update still shows what it would register and what the pack says of it: the program
    run again without the last deployment, so that the guard lets it through (the refusals stay the
    verdict: the result is `rejected`). What the guard says on that run is left out: it ran without the last
    deployment, so its notices (the stack unguarded, every allowReplacement entry matching nothing) would
    contradict the refusals, whose fixes are the one recipe."""
    try:
        run = run_program(config, root, stack_outputs=stack_outputs or {})
    except ProgramError:
        return outcome  # the refusals alone; the stack itself is judged on the next run
    rerun = {str(f) for f in run.day2_findings}
    run.component_outputs = {urn: outputs for urn, outputs in run.component_outputs.items()
                             if not is_guard(urn)}
    _judged(outcome, run, pack_config)
    run.warnings = [w for w in run.warnings if w not in rerun]
    return outcome


# What the day-2 guard says of a stack without previous outputs (`aks_kueue.day2.guard`).
UNGUARDED, UNGUARDED_KEY = "day2-unguarded", "day2"
# The top-level keys of the documents people give by mistake for `pulumi stack output --json`.
_NOT_OUTPUTS = (
    ({"project", "stack", "resources", "violations", "outputs", "result"},
     "the JSON of `aks-kueue preview` (an offline run, not the last deployment)"),
    ({"steps"}, "a plan (`pulumi preview --json`), whose `steps` say what an update would do"),
    ({"deployment"}, "a state export (`pulumi stack export`)"),
)


def check_previous_outputs(outputs: dict[str, Any], path: Path) -> None:
    """A LoadError when `outputs` plainly is another document than `pulumi stack output --json`."""
    for keys, what in _NOT_OUTPUTS:
        if keys <= set(outputs):
            raise LoadError(str(path), None, f"this is {what}, not a stack's outputs; give what `pulumi stack "
                                             "output --json --show-secrets` prints for this stack")


OTHER_CLUSTER = "day2-other-cluster"


def other_cluster(outputs: dict[str, Any], config: Optional[StackConfig]) -> list[Finding]:
    """Why the previous outputs look like another stack's: their cluster or resource group is not the one
    this stack deploys. A rename is refused by the guard all the same; this says which it probably is."""
    if config is None:
        return []
    from aks_kueue.settings import SettingsError, parse_settings

    try:
        settings = parse_settings(config.config)
    except (SettingsError, ValueError):
        return []  # the program reports the stack's own problems
    theirs = (outputs.get("clusterName"), outputs.get("resourceGroupName"))
    ours = (settings.cluster.name, settings.resource_group_name)
    if not all(isinstance(v, str) and v != "[secret]" for v in theirs) or theirs == ours:
        return []
    return [Finding(kind=OTHER_CLUSTER, severity=WARNING, object="stack", key=UNGUARDED_KEY,
                    message=f"the previous outputs are of another cluster: {theirs[0]} in resource group {theirs[1]}, "
                    f"while stack {config.stack} deploys {ours[0]} in {ours[1]}, so the guard compares two different "
                    "clusters",
                    fix="if this is not a rename, give this stack's own outputs (`pulumi stack output --json "
                    f"--show-secrets --stack {config.stack}`)",
                    numbers={"previous": list(theirs), "stack": list(ours)})]


def document(outcome: Outcome) -> dict[str, Any]:
    """The contract's JSON document, on every exit code."""
    from aks_kueue.judge.capacity import pool_json

    run = outcome.run
    judgement = outcome.judgement
    return {
        "project": outcome.project,
        "stack": outcome.stack,
        "resources": [registration_json(r) for r in run.registrations] if run else [],
        "violations": [v.to_json() for v in outcome.violations],
        "outputs": run.outputs if run else {},
        "findings": [f.to_json() for f in outcome.findings],
        "capacity": {"flavors": [row.to_json() for row in judgement.capacity] if judgement else [],
                     "pools": [outcome.secrets.value(pool_json(p)) for p in judgement.pools] if judgement else []},
        "result": outcome.result,
        **({"errors": [e.to_json() for e in outcome.errors]} if outcome.errors else {}),
    }


def registration_json(registration: Any) -> dict[str, Any]:
    return {"urn": registration.urn, "type": registration.type, "name": registration.name,
            "parent": registration.parent, "dependsOn": registration.depends_on, "provider": registration.provider,
            "inputs": registration.inputs, "options": registration.options}
