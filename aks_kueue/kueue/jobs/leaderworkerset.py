"""LeaderWorkerSet (`leaderworkerset.x-k8s.io/v1`): one Workload per replica group.

Sources (kubernetes-sigs/kueue, tag v0.19.2): pkg/controller/jobs/leaderworkerset/
leaderworkerset_reconciler.go (`filterWorkloads`, `constructWorkload`, `podSets`, `newPodSet`,
`dropLWSPrefixedKeys`), leaderworkerset_controller.go (`defaultLeaderWorkerSetReplicas`,
`validateLeaderWorkerSetReplicaCount`, `GetWorkloadName`) and leaderworkerset_webhook.go
(`validateCreate`, `podTemplateSpecDefault`).

Kueue creates `spec.replicas` Workloads (1 when unset), the i-th named after `<name>-<i>`; each
is a pod group's Workload. With a `leaderTemplate`, its pod sets are `leader` (1 pod) and
`worker` (`size` - 1 pods); without, one pod set `main` of `size` pods (1 when unset). The
templates lose the `leaderworkerset.sigs.k8s.io/` labels and annotations (but the name label),
and carry what Kueue's webhook adds to the templates of a managed LeaderWorkerSet.
"""

from __future__ import annotations

import copy
from typing import Any

from aks_kueue.k8s.objects import map_at
from aks_kueue.k8s import field
from aks_kueue.kueue.jobs.model import DEFAULT_POD_SET, PRIORITY_CLASS_LABEL, QUEUE_LABEL, JobOptions
from aks_kueue.kueue.jobs.podsets import PODSET_GROUP_NAME, PodSet, Reader, annotations_of, labels_of, topology_request
from aks_kueue.k8s.field import FieldError

GROUP = "leaderworkerset.x-k8s.io"
GVK = "leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet"
LEADER, WORKER = "leader", "worker"
WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index"
LWS_PREFIX = "leaderworkerset.sigs.k8s.io"
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"
MAX_REPLICAS = 1_000_000
# What `podTemplateSpecDefault` adds (pkg/controller/jobs/pod/constants/constants.go).
SUSPENDED_BY_PARENT = "kueue.x-k8s.io/pod-suspending-parent"
GROUP_SERVING = "kueue.x-k8s.io/pod-group-serving"
FRAMEWORK = "leaderworkerset.x-k8s.io/leaderworkerset"
COMPONENT_INDEX = "kueue.x-k8s.io/component-workload-index"
POD_INDEX_OFFSET = "kueue.x-k8s.io/pod-index-offset"


def replicas(obj: dict[str, Any], read: Reader) -> int:
    """How many Workloads Kueue makes: `spec.replicas`, 1 when unset (a bad value is the webhook's error)."""
    value = read.int(read.map(obj, "spec", ""), "replicas", "spec", 1)
    return value if value is not None and 0 <= value <= MAX_REPLICAS else 0


def pod_sets(obj: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    """The pod sets of each of its Workloads (they are all alike)."""
    spec = read.map(obj, "spec", "")
    template = read.map(spec, "leaderWorkerTemplate", "spec", required=True)
    path = "spec.leaderWorkerTemplate"
    size = read.int(template, "size", path, 1)
    count = 1 if size is None else size
    added = {QUEUE_LABEL: labels_of(obj).get(QUEUE_LABEL), PRIORITY_CLASS_LABEL: labels_of(obj).get(PRIORITY_CLASS_LABEL)}
    out = []
    name = DEFAULT_POD_SET
    leader = template.get("leaderTemplate")
    worker = read.map(template, "workerTemplate", path, required=True)
    offset = False
    if isinstance(leader, dict):
        name, count = WORKER, count - 1
        shaped = _shaped(leader, added, False)
        out.append(PodSet(LEADER, 1, shaped, f"{path}.leaderTemplate", None, topology_request(shaped, options)))
        # The workers' pod indexes follow the leader's, unless both form a pod set group.
        offset = options.enabled("TopologyAwareScheduling") and PODSET_GROUP_NAME not in annotations_of(worker)
    worker = _shaped(worker, added, offset)
    out.append(PodSet(name, max(count, 0), worker, f"{path}.workerTemplate", None,
                      topology_request(worker, options, WORKER_INDEX)))
    return out


def _shaped(template: dict[str, Any], added: dict[str, Any], offset: bool) -> dict[str, Any]:
    """The template as the Workload holds it: the webhook's additions in, the LWS keys out."""
    shaped = copy.deepcopy(template)
    metadata = shaped.setdefault("metadata", {}) if isinstance(shaped.get("metadata", {}), dict) else {}
    for key in ("labels", "annotations"):
        values = map_at(metadata, key)
        metadata[key] = {k: v for k, v in values.items()
                         if not (str(k).startswith(LWS_PREFIX) and k != LWS_NAME_LABEL)}
    metadata["labels"].update({k: v for k, v in added.items() if isinstance(v, str) and v})
    metadata["annotations"].update({SUSPENDED_BY_PARENT: FRAMEWORK, GROUP_SERVING: "true"})
    if offset:
        metadata["annotations"][POD_INDEX_OFFSET] = "1"
    return shaped


def webhook_errors(obj: dict[str, Any]) -> list[FieldError]:
    """`validateReplicasField`: 0 to 1,000,000 Workloads."""
    spec = map_at(obj, "spec")
    value = spec.get("replicas", 1)
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= MAX_REPLICAS:
        bound = f"must be >= 0, got {value}" if value < 0 else f"must be <= {MAX_REPLICAS}, got {value}"
        return [field.invalid("spec.replicas", value, f"invalid LeaderWorkerSet replicas: {bound}")]
    return []
