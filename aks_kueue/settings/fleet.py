"""`aks-kueue:fleet`: this stack's place in a MultiKueue fleet, one manager stack and N worker stacks.

```yaml
aks-kueue:fleet:                      # the manager's stack
  role: manager
  workers:                            # in this order in the MultiKueueConfig (at most 20)
    - {name: westus3-a100, stack: acme/aks-kueue/fleet-westus3}
  quotaManagement: Manual             # optional: MultiKueueConfig.spec.quotaManagement
  egressIpRanges: [203.0.113.7/32]    # optional: where the manager's Kueue connects from
aks-kueue:fleet:                      # a worker's stack
  role: worker
  manager: acme/aks-kueue/fleet-manager
  tokenGenerations: [1]               # optional: the service-account tokens kept; the first is exported
```

The manager declares the teams (namespaces, LocalQueues, priority classes); each worker mirrors
them from the manager's outputs and declares its own flavors and ClusterQueues. What a stack of
the other role would use is an error here, named by its key.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Iterator, Literal, Optional

from pydantic import field_validator

from aks_kueue.k8s import names
from aks_kueue.k8s.field import Path
from aks_kueue.kueue import multikueue as mk
from aks_kueue.kueue.multikueue import Role
from pydantic_core import PydanticCustomError

from aks_kueue.settings.base import ConfigModel, check, checked, matching, problem, snake

# `pulumi stack ls` prints org/project/stack; Pulumi's names are letters, digits, '-', '_' and '.'.
StackName = Annotated[str, matching(re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"),
                                    "is not a fully qualified stack name",
                                    "write org/project/stack as `pulumi stack ls --all` prints it")]


def _cluster_name_problem(value: str) -> Optional[PydanticCustomError]:
    if not names.dns1123_label_problem(value):
        return None
    return problem(f"{value!r} is not a DNS label (lower-case letters, digits and '-', at most 63, starting and ending "
                   "with a letter or digit); it names the MultiKueueCluster")


class FleetWorker(ConfigModel):
    name: Annotated[str, checked(_cluster_name_problem)]
    stack: StackName


class Fleet(ConfigModel):
    role: Role
    # The manager's keys.
    workers: Optional[list[FleetWorker]] = None
    quota_management: Optional[Literal["Manual", "Automated"]] = None
    egress_ip_ranges: Optional[list[str]] = None
    # The worker's keys.
    manager: Optional[StackName] = None
    token_generations: Optional[list[int]] = None

    @field_validator("egress_ip_ranges")
    @classmethod
    def _ranges(cls, values: Optional[list[str]]) -> Optional[list[str]]:
        for i, value in enumerate(values or []):
            try:
                ipaddress.ip_network(value, strict=False)
            except ValueError:
                raise problem(f"{value!r} is not an IP address or CIDR range",
                              fix="write the manager's outbound addresses, e.g. 203.0.113.7/32",
                              at=Path().index(i)) from None
        return values

    @field_validator("token_generations")
    @classmethod
    def _generations(cls, values: Optional[list[int]]) -> Optional[list[int]]:
        if values is None:
            return None
        if not values:
            raise problem("must list at least one token generation (the first is the one the manager gets)")
        for i, value in enumerate(values):
            if value < 1:
                raise problem(f"{value} is not a generation; generations count from 1", at=Path().index(i))
            if value in values[:i]:
                raise problem(f"generation {value} is listed twice",
                              fix="list each once", at=Path().index(i))
        return values

    @check
    def _role_keys(self):
        other, keys = {Role.MANAGER: (Role.WORKER, ("manager", "tokenGenerations")),
                       Role.WORKER: (Role.MANAGER, ("workers", "quotaManagement", "egressIpRanges"))}[self.role]
        for key in keys:
            if getattr(self, snake(key)) is not None:
                yield problem(f"is a key of a fleet {other}, and this stack's role is {self.role}",
                              fix="remove it", at=key)
        if self.role is Role.MANAGER:
            if self.workers is None:
                yield problem("is required for a manager: list the worker stacks, in the order the MultiKueueConfig "
                              "gets them (an empty list while none exists yet)", at="workers")
            yield from _unique(self.workers or [])
        elif self.manager is None:
            yield problem("is required for a worker: the manager's fully qualified stack name, whose outputs hold the "
                          "teams this worker mirrors", at="manager")

    @property
    def generations(self) -> list[int]:
        """The worker's token generations, newest (exported) first."""
        return list(self.token_generations or [1])


def _unique(workers: list[FleetWorker]) -> Iterator[PydanticCustomError]:
    names: dict[str, int] = {}
    stacks: dict[str, int] = {}
    for i, worker in enumerate(workers):
        if worker.name in names:
            yield problem(f"{worker.name!r} is also workers[{names[worker.name]}]'s name; each MultiKueueCluster needs "
                          "its own", at=Path("workers").index(i).child("name"))
        if worker.stack in stacks:
            yield problem(f"{worker.stack} is also workers[{stacks[worker.stack]}]",
                          fix="list each worker stack once", at=Path("workers").index(i).child("stack"))
        names.setdefault(worker.name, i)
        stacks.setdefault(worker.stack, i)


def cross_key_problems(settings) -> Iterator[PydanticCustomError]:
    """What the fleet key needs of the rest of the stack (called by the root settings' validator):
    Kueue installed, a worker's teams left to the manager, the quota automation's gate."""
    fleet: Fleet = settings.fleet
    if settings.kueue.install == "none":
        yield problem(f"a fleet {fleet.role} runs Kueue (MultiKueue is part of it)",
                      fix="set kueue.install to helm or managed, or remove aks-kueue:fleet", at="fleet")
    queues = settings.queues
    if fleet.role is Role.WORKER and queues is not None:
        for key, present in (("localQueues", queues.local_queues), ("workloadPriorityClasses",
                                                                   queues.workload_priority_classes)):
            if present:
                yield problem(f"a fleet worker mirrors its {key} from the manager's stack ({fleet.manager}), so that "
                              "every cluster has the same teams",
                              fix="declare them in the manager's stack and remove them here", at=f"queues.{key}")
    if fleet.role is Role.MANAGER and fleet.quota_management == mk.AUTOMATED:
        kueue = settings.kueue
        if kueue.install != "helm" or not kueue.feature_gates_in_force.get(mk.QUOTA_GATE):
            yield problem(f"Automated needs Kueue's alpha feature gate {mk.QUOTA_GATE} (KEP-9988)",
                          fix=f"set kueue.featureGates.{mk.QUOTA_GATE}: true with install: helm (the managed extension "
                          "sets no gates), or use Manual", at="fleet.quotaManagement")
