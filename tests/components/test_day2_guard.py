"""The guard component in a real `pulumi up`: its refusals and notices never show a secret value."""

from __future__ import annotations

import json

import components.day2_guard as guard_component
from aks_kueue.day2.allow import Allowances
from aks_kueue.day2.guard import Report
from aks_kueue.judge.finding import ERROR, WARNING, Finding
from aks_kueue.secrets import Secrets

SIZE = "Standard_NC24ads_A100_v4"


def test_refusals_and_notices_leave_secret_values_out(monkeypatch):
    """Reported: the offline preview hid them, but the program's own guard printed and raised them as they were."""
    hidden = Secrets.of({"aks-kueue:nodePools": json.dumps([{"name": "a100", "vmSize": SIZE}])}, ["nodePools"])
    said = [f"{SIZE} -> Standard_NC48ads_A100_v4 replaces AgentPool a100"]
    report = Report(refusals=[Finding(kind="day2-replace-refused", severity=ERROR, object="AgentPool a100",
                                      key="aks-kueue:nodePools[0].vmSize",
                                      message=said[0])],
                    notices=[Finding(kind="day2-replace", severity=WARNING, object="AgentPool a100",
                                     key="aks-kueue:nodePools[0]", message=said[0])])
    monkeypatch.setattr(guard_component, "judge_update", lambda previous, desired, allowances: report)
    warned: list[str] = []
    monkeypatch.setattr(guard_component.pulumi.log, "warn", lambda message, *args, **kwargs: warned.append(message))
    judged = guard_component._judged(None, None, Allowances(), hidden)
    shown = [str(f) for f in judged.refusals + judged.notices] + warned
    assert len(shown) == 3 and all(SIZE not in line and "AgentPool a100" in line for line in shown)
    # Without secrets the same words stand as they are: the test can tell the two apart.
    assert SIZE in str(guard_component._judged(None, None, Allowances(), Secrets()).refusals[0])
