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
from aks_kueue.judge.finding import Finding
from aks_kueue.preview.pack import (MANDATORY, PolicyConfigError, Violation, evaluate, judged_view, levels,
                                    load_policy_config, properties)
from aks_kueue.preview.run import ProgramError, ProgramRefused, ProgramRun, read_previous_outputs, run_program
from aks_kueue.preview.stackfile import StackConfig, StackFileError
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
    errors: list[str] = field(default_factory=list)
    # The day-2 guard's refusals: the stack is read, but this update against its last deployment is rejected.
    refusals: list[Finding] = field(default_factory=list)
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
            load_error: Optional[str] = None, project: str = "aks-kueue", stack: str = "",
            previous_outputs: Optional[Path] = None) -> Outcome:
    """Run the program offline for one stack, then the pack over what it registered.
    `previous_outputs`: the stack's last deployment, for the day-2 guard.

    No message, finding, verdict or table of the outcome shows a value of a secret key (the
    record's inputs are as the engine receives them: what the program made secret is `[secret]`)."""
    from aks_kueue.settings.vocabulary import config_secrets

    outcome = _preview(config, root, policy_config, load_error, project, stack, previous_outputs)
    if config is not None and config.secret_keys:
        _hide(outcome, config_secrets(config.config, config.secret_keys))
    return outcome


def _hide(outcome: Outcome, secrets: Secrets) -> None:
    outcome.secrets = secrets
    if not secrets:
        return
    outcome.errors = secrets.value(outcome.errors)
    outcome.findings = secrets.value(outcome.findings)
    outcome.refusals = secrets.value(outcome.refusals)
    outcome.violations = secrets.value(outcome.violations)
    outcome.verdicts = secrets.value(outcome.verdicts)
    outcome.other_violations = secrets.value(outcome.other_violations)
    if outcome.judgement is not None:  # a copy: the pack remembers the judgement it made
        outcome.judgement = dataclasses.replace(outcome.judgement, findings=secrets.value(outcome.judgement.findings),
                                                capacity=secrets.value(outcome.judgement.capacity))
    if outcome.run is not None:
        outcome.run.warnings = secrets.value(outcome.run.warnings)


def _preview(config: Optional[StackConfig], root: Path, policy_config: Optional[Path], load_error: Optional[str],
             project: str, stack: str, previous_outputs: Optional[Path]) -> Outcome:
    outcome = Outcome(project=config.project if config else project, stack=config.stack if config else stack)
    if load_error is not None:
        outcome.errors.append(load_error)
        return outcome
    try:
        # The policy config is checked first: a typo there should not wait for the program.
        pack_config = load_policy_config(policy_config) if policy_config is not None else None
        previous = read_previous_outputs(previous_outputs) if previous_outputs is not None else None
        run = run_program(config, root, previous_outputs=previous)
    except (PolicyConfigError, StackFileError) as error:
        outcome.errors.append(str(error))
        return outcome
    except ProgramRefused as error:
        outcome.refusals = outcome.findings = list(error.findings)
        return outcome
    except ProgramError as error:
        outcome.errors.append(str(error))
        outcome.findings = list(error.findings)
        return outcome
    outcome.run = run
    outcome.violations = evaluate(run, pack_config)
    from aks_kueue.policies.base import overhead, read_and_judge
    from aks_kueue.policies.routing import QUOTA_FITS, policy_for

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
    outcome.judgement, outcome.findings = judgement, list(judgement.findings) + run.day2_findings
    enabled = levels(pack_config)
    routed = [Verdict(f, policy_for(f), enabled[policy_for(f)]) for f in judgement.findings]
    outcome.verdicts = [v for v in routed if v.level != DISABLED]
    shown = {(v.policy, str(v.finding)) for v in outcome.verdicts}
    outcome.other_violations = [v for v in outcome.violations if (v.policy, v.message) not in shown]
    return outcome


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
        **({"errors": list(outcome.errors)} if outcome.errors else {}),
    }


def registration_json(registration: Any) -> dict[str, Any]:
    return {"urn": registration.urn, "type": registration.type, "name": registration.name,
            "parent": registration.parent, "dependsOn": registration.depends_on, "provider": registration.provider,
            "inputs": registration.inputs, "options": registration.options}
