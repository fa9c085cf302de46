"""The typed shapes of `aks_kueue.kueue.jobs`: options in, one result per job out."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterable, Mapping, Optional

from aks_kueue.kueue import catalog
from aks_kueue.k8s.field import FieldError
from aks_kueue.kueue.transformations import NO_RULES, ResourceRules

# Labels and annotations Kueue reads on jobs (pkg/controller/constants/constants.go,
# pkg/controller/jobs/job/job_controller.go, pkg/controller/jobs/pod/constants/constants.go).
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"
MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
PREBUILT_WORKLOAD = "kueue.x-k8s.io/prebuilt-workload-name"
JOB_UID_LABEL = "kueue.x-k8s.io/job-uid"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
COMPLETIONS_EQUAL_PARALLELISM = "kueue.x-k8s.io/job-completions-equal-parallelism"
ELASTIC_JOB = "kueue.x-k8s.io/elastic-job"
ADMISSION_GATED_BY = "kueue.x-k8s.io/admission-gated-by"
POD_GROUP_NAME = "kueue.x-k8s.io/pod-group-name"
POD_GROUP_TOTAL_COUNT = "kueue.x-k8s.io/pod-group-total-count"
POD_GROUP_FAST_ADMISSION = "kueue.x-k8s.io/pod-group-fast-admission"
ROLE_HASH = "kueue.x-k8s.io/role-hash"
MANAGED_LABEL = "kueue.x-k8s.io/managed"
IS_GROUP_WORKLOAD = "kueue.x-k8s.io/is-group-workload"
PROVREQ_PREFIX = "provreq.kueue.x-k8s.io/"
DEFAULT_LOCAL_QUEUE = "default"
DEFAULT_POD_SET = "main"
# pkg/controller/jobframework/constants.go
MAX_POD_SETS = 18
# The chart's default managedJobsNamespaceSelector: every namespace but these.
UNMANAGED_NAMESPACES = frozenset({"kube-system", "kueue-system"})


class JobOutcome(str, Enum):
    """What Kueue would do with one job-like object."""

    def __str__(self) -> str:  # as enum.StrEnum (Python 3.11) does; this runs on 3.10 too
        return self.value

    WORKLOAD = "workload"          # it gets the Workload(s) in `workloads`
    MEMBER = "member"              # another object's Workload covers it (a pod group's other pods)
    BLOCKED = "blocked"            # Kueue manages it, but the input lacks what its Workload needs
    NOT_MANAGED = "not-managed"    # Kueue would leave it alone
    UNSUPPORTED = "unsupported"    # Kueue manages it through an integration this package does not model


@dataclass(frozen=True)
class JobOptions:
    """The Kueue configuration in force: enabled integrations, feature gates, and what the
    Configuration's `resources` section excludes and transforms (which jobs do not change, but
    whoever admits their Workloads must apply: `aks_kueue.admission`)."""

    frameworks: frozenset[str] = frozenset(catalog.CHART_DEFAULT_FRAMEWORKS)
    gates: frozenset[str] = frozenset(g.name for g in catalog.FEATURE_GATES.values() if g.default)
    manage_jobs_without_queue_name: bool = False
    unmanaged_namespaces: frozenset[str] = UNMANAGED_NAMESPACES
    resources: ResourceRules = NO_RULES
    # `integrations.externalFrameworks`: kinds (`Kind.version.group`) whose own controllers
    # build their Workloads, which cannot be derived offline.
    external_frameworks: frozenset[str] = frozenset()

    @classmethod
    def from_config(cls, frameworks: Optional[Iterable[str]] = None,
                    feature_gates: Optional[Mapping[str, bool]] = None,
                    manage_jobs_without_queue_name: bool = False,
                    resources: ResourceRules = NO_RULES,
                    external_frameworks: Iterable[str] = ()) -> "JobOptions":
        """Frameworks as `integrations.frameworks` lists them (None: the chart's default);
        feature gates as overrides of Kueue's defaults."""
        overrides = dict(feature_gates or {})
        gates = frozenset(name for name, gate in catalog.FEATURE_GATES.items() if overrides.get(name, gate.default))
        chosen = catalog.CHART_DEFAULT_FRAMEWORKS if frameworks is None else tuple(frameworks)
        return cls(frozenset(chosen), gates, manage_jobs_without_queue_name, resources=resources,
                   external_frameworks=frozenset(f for f in external_frameworks if isinstance(f, str)))

    def external(self, api_version: Any, kind: Any) -> bool:
        """Whether `integrations.externalFrameworks` lists this kind (`Kind.version.group`)."""
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return False
        group, _, version = api_version.rpartition("/")
        return f"{kind}.{version}.{group}".rstrip(".") in self.external_frameworks

    def enabled(self, gate: str) -> bool:
        return gate in self.gates


@dataclass(frozen=True)
class JobRef:
    """The object a result is about, as the contract's `source` names it."""

    api_version: str
    kind: str
    name: str
    namespace: Optional[str]

    def as_source(self) -> dict[str, str]:
        return {"apiVersion": self.api_version, "kind": self.kind, "name": self.name}

    def describe(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"


@dataclass
class JobResult:
    """Kueue's treatment of one job-like object.

    `errors` are what Kueue's webhook for the job would refuse (the API server then
    rejects the object), and problems of the Workload it would build; `reason` says why
    there is no Workload when `outcome` is not WORKLOAD; `notes` are warnings.
    """

    source: JobRef
    framework: Optional[str]
    outcome: JobOutcome
    workloads: list[dict[str, Any]] = field(default_factory=list)
    errors: list[FieldError] = field(default_factory=list)
    reason: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def managed(self) -> bool:
        return self.outcome in (JobOutcome.WORKLOAD, JobOutcome.MEMBER, JobOutcome.BLOCKED)
