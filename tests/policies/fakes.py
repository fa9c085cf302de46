"""A stand-in policy pack for tests of the CLI's own rules (exit codes, flags, rendering).

It answers with the violations a test sets and remembers the config it was given, so a
test can pin down what the CLI does with any verdict. Only ever installed through
monkeypatch, for one test. Tests of the real policies call `real_pack()` instead.
"""

from __future__ import annotations

import sys
import types

import pytest


class FakePack:
    def __init__(self):
        self.violations: list[dict] = []
        self.configs: list = []
        self.config_problem: str | None = None

    def evaluate(self, run, config):
        self.configs.append(config)
        # Violations may name a resource by type; the URN is the run's own.
        found = []
        for violation in self.violations:
            violation = dict(violation)
            kind = violation.pop("urn_of_type", None)
            if kind is not None:
                violation["urn"] = next(r.urn for r in run.registrations if r.type.endswith(kind))
            found.append(violation)
        return found

    def policy_config_error(self, config):
        return self.config_problem


@pytest.fixture
def fake_pack(monkeypatch) -> FakePack:
    pack = FakePack()
    module = types.ModuleType("aks_kueue.policies")
    module.PACK_NAME = "fake"
    module.POLICIES = []
    module.evaluate = pack.evaluate
    module.policy_config_error = pack.policy_config_error
    monkeypatch.setitem(sys.modules, "aks_kueue.policies", module)
    return pack


def violation(policy: str, level: str, message: str, urn_of_type: str | None = None) -> dict:
    found = {"policy": policy, "enforcementLevel": level, "urn": None, "message": message}
    if urn_of_type:
        found["urn_of_type"] = urn_of_type
    return found


PACK_MISSING = "the policy pack (aks_kueue.policies with evaluate) is not built yet"


def real_pack():
    """The real pack, or a skip while it does not exist yet."""
    pack = pytest.importorskip("aks_kueue.policies", reason=PACK_MISSING)
    if not hasattr(pack, "evaluate"):  # a package still being written has no API yet
        pytest.skip(PACK_MISSING)
    return pack
