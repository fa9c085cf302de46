"""A stack's place in a MultiKueue fleet, as the judge reads it.

A fleet is one manager stack and N worker stacks, each read by the others through their stack
outputs (`fleet_outputs.py` says what each role exports). The model holds what this stack read of
the others: a manager, each worker's `fleet` output and what can be said of its kubeconfig; a
worker, the manager's `fleet` output. A kubeconfig itself never enters the model (it is a
secret): only whether its content was known, and what Kueue would refuse in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

from aks_kueue.kueue.multikueue import Role

FLEET_KEY = "aks-kueue:fleet"
# The stack outputs of a fleet: every member exports `fleet` (plain), a worker also its kubeconfig (secret).
FLEET_OUTPUT = "fleet"
KUBECONFIG_OUTPUT = "multikueueKubeconfig"
OUTPUTS_SCHEMA = 1


@dataclass(frozen=True)
class KubeconfigCheck:
    """What the judge knows of one worker's kubeconfig: whether its content could be read here (a
    secret an offline preview holds as `[secret]` cannot), and what Kueue would refuse in it."""

    known: bool
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Worker:
    name: str                                   # the MultiKueueCluster's name
    stack: str                                  # org/project/stack
    key: str                                    # aks-kueue:fleet.workers[i]
    # The worker stack's `fleet` output as this stack read it; None when it has none yet.
    outputs: Optional[Mapping[str, Any]] = None
    # None when the worker exports no kubeconfig yet: then the manager creates no cluster for it.
    kubeconfig: Optional[KubeconfigCheck] = None

    @property
    def label(self) -> str:
        return f"MultiKueueCluster {self.name}"

    @property
    def ready(self) -> bool:
        """The manager can connect to it: the worker has exported its kubeconfig."""
        return self.kubeconfig is not None


@dataclass(frozen=True)
class Fleet:
    role: Role
    stack: str = ""                             # this stack, org/project/stack
    key: str = FLEET_KEY
    # A manager's workers, in the declared order, and its own MultiKueue settings.
    workers: tuple[Worker, ...] = ()
    quota_management: Optional[str] = None
    egress_ip_ranges: Optional[tuple[str, ...]] = None    # None: not declared
    # The integrations whose CRDs the manager installs (MultiKueue needs the job CRDs there).
    crds: tuple[str, ...] = ()
    # The teams (`team_names`) the manager's last deployment exported, which its workers have had the
    # chance to mirror; None before its first.
    exported_teams: Optional[tuple[str, ...]] = None
    # A worker's manager and what it read of it; None when the manager has no `fleet` output yet.
    manager: Optional[str] = None
    manager_outputs: Optional[Mapping[str, Any]] = None
    token_generations: tuple[int, ...] = ()

    @property
    def manages(self) -> bool:
        return self.role is Role.MANAGER

    @property
    def ready_workers(self) -> tuple[Worker, ...]:
        return tuple(w for w in self.workers if w.ready)
