"""The program's refusal of a config it cannot use: every problem together, nothing registered."""

from __future__ import annotations

from typing import Iterable

import pulumi

from aks_kueue.judge.finding import ERROR, Finding
from aks_kueue.k8s.field import FieldError

INVALID_SETTING = "invalid-setting"


class InvalidConfig(pulumi.RunError):
    """Raised before any resource is registered. `findings` keeps the problems structured, for the
    offline preview's JSON; the message is what `pulumi up` prints, one `key: what; fix` a line.
    Neither shows a value of a secret config key, whoever wrote the finding."""

    def __init__(self, findings: Iterable[Finding]):
        from aks_kueue.settings.source import program_secrets

        self.findings = program_secrets().value(list(findings))
        super().__init__("invalid stack config:\n" + "\n".join(str(f) for f in self.findings))

    @classmethod
    def from_problems(cls, problems: Iterable[FieldError]) -> "InvalidConfig":
        return cls(Finding(kind=INVALID_SETTING, severity=ERROR, object=p.path, key=p.path, message=p.message,
                           fix=p.fix) for p in problems)
