"""A stand-in policy pack for tests of the CLI's own rules (exit codes, flags, rendering).

It answers with the violations a test sets and remembers the config it was given, so a
test can pin down what the CLI does with any verdict. Only ever installed through
monkeypatch, for one test. The judge still runs: the findings and the capacity table are
real, only the pack's violations (and so the exit code) are the test's.
"""

from __future__ import annotations

from typing import Optional

import pytest

from aks_kueue.k8s.field import FieldError
from aks_kueue.preview import outcome, pack as pack_module
from aks_kueue.preview.pack import Violation


class FakePack:
    def __init__(self):
        self.violations: list[dict] = []
        self.configs: list = []
        self.config_problem: Optional[FieldError] = None

    def evaluate(self, run, config):
        self.configs.append(config)
        # Violations may name a resource by type; the URN is the run's own.
        found = []
        for violation in self.violations:
            violation = dict(violation)
            kind = violation.pop("urn_of_type", None)
            urn = next(r.urn for r in run.registrations if r.type.endswith(kind)) if kind is not None else None
            found.append(Violation(violation["policy"], violation["enforcementLevel"], urn, violation["message"]))
        return found

    def policy_config_error(self, config):
        return self.config_problem


@pytest.fixture
def fake_pack(monkeypatch) -> FakePack:
    pack = FakePack()
    monkeypatch.setattr(outcome, "evaluate", pack.evaluate)
    monkeypatch.setattr(pack_module, "policy_config_error", pack.policy_config_error)
    return pack


def violation(policy: str, level: str, message: str, urn_of_type: str | None = None) -> dict:
    found = {"policy": policy, "enforcementLevel": level, "message": message}
    if urn_of_type:
        found["urn_of_type"] = urn_of_type
    return found
