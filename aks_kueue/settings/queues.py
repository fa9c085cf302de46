"""`aks-kueue:queues` and `aks-kueue:expectedWorkloads`: the envelope around Kueue's own shapes.

Only the envelope is checked here (names, pool and queue references). The specs are
Kueue's and are checked by the Kueue validator, with the same key paths.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Optional, Union

from pydantic import Discriminator, Field, Tag, field_validator

from aks_kueue.k8s.quantity import QuantityError, parse_quantity
from aks_kueue.kueue.webhooks import qualified_name_problem
from aks_kueue.settings.base import GUID, Model, field_errors

_QUEUE_REF = re.compile(r"^(?P<namespace>[^/\s]+)/(?P<name>[^/\s]+)$")


class NamedSpec(Model):
    name: str
    spec: Any = None


class FlavorEntry(NamedSpec):
    node_pool: Optional[str] = None


class LocalQueueEntry(NamedSpec):
    namespace: str
    # Entra group object IDs whose members may get credentials and submit and watch jobs in the namespace.
    submitter_groups: list[str] = []

    @field_validator("submitter_groups")
    @classmethod
    def _groups(cls, groups: list[str]) -> list[str]:
        problems: list[tuple[str, str]] = []
        seen: dict[str, int] = {}
        for i, group in enumerate(groups):
            if not GUID.fullmatch(group):
                problems.append((f"[{i}]", f"{group!r} is not an Entra group object ID; use the group's object ID, "
                                 "a GUID such as 3f2b8c1e-7d4a-4e9b-a1c2-5d6e7f809a1b (`az ad group show --group "
                                 "<name> --query id -o tsv` prints it)"))
            elif group.lower() in seen:
                problems.append((f"[{i}]", f"{group} is already listed as submitterGroups[{seen[group.lower()]}]; "
                                 "list each group once"))
            else:
                seen[group.lower()] = i
        if problems:
            raise field_errors(problems)
        return groups


class PriorityClassEntry(Model):
    name: str
    value: Any
    description: Optional[str] = None


class Queues(Model):
    resource_flavors: list[FlavorEntry] = []
    cohorts: list[NamedSpec] = []
    cluster_queues: list[NamedSpec] = []
    local_queues: list[LocalQueueEntry] = []
    workload_priority_classes: list[PriorityClassEntry] = []
    topologies: list[NamedSpec] = []


class Toleration(Model):
    key: Optional[str] = None
    operator: str = "Equal"
    value: Optional[str] = None
    effect: Optional[str] = None
    toleration_seconds: Optional[int] = None


class PodSetShape(Model):
    name: str
    count: int = Field(ge=1)
    min_count: Optional[int] = Field(None, ge=1)
    requests: dict[str, Any]
    node_selector: dict[str, str] = {}
    tolerations: list[Toleration] = []

    @field_validator("requests")
    @classmethod
    def _quantities(cls, requests: dict[str, Any]) -> dict[str, Any]:
        for resource, amount in requests.items():
            if problem := qualified_name_problem(resource):
                raise ValueError(f"{resource!r} is not a resource name: {problem}")
            try:
                if parse_quantity(amount) < 0:
                    raise ValueError(f"requests.{resource} is negative; requests must be >= 0")
            except QuantityError as error:
                raise ValueError(f"requests.{resource}: {error}") from None
        return requests


class ExpectedWorkload(Model):
    name: str
    queue: str
    priority_class: Optional[str] = None
    pod_sets: list[PodSetShape] = Field(min_length=1)

    @field_validator("queue")
    @classmethod
    def _queue(cls, value: str) -> str:
        if not _QUEUE_REF.fullmatch(value):
            raise ValueError(f"{value!r} is not a queue reference; write <namespace>/<LocalQueue>, "
                             "for example team-a/default")
        return value

    @property
    def queue_namespace(self) -> str:
        return self.queue.split("/", 1)[0]

    @property
    def queue_name(self) -> str:
        return self.queue.split("/", 1)[1]


class ManifestWorkload(Model):
    """An expected workload given as a job file (Job, JobSet, RayJob, MPIJob, ... with the
    `kueue.x-k8s.io/queue-name` label), relative to the project root: the Workload Kueue would
    create for it is what the pack proves."""

    manifest: str = Field(min_length=1)


def _workload_kind(value: Any) -> str:
    return "manifest" if isinstance(value, dict) and "manifest" in value else "shape"


# `{manifest: PATH}` or the hand-written shape; each entry is judged as the one it looks like.
ExpectedWorkloadEntry = Annotated[Union[Annotated[ExpectedWorkload, Tag("shape")],
                                        Annotated[ManifestWorkload, Tag("manifest")]],
                                  Discriminator(_workload_kind)]

