"""Kubeflow Training Operator v1 jobs: PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob.

Sources (kubernetes-sigs/kueue, tag v0.19.2): pkg/controller/jobs/kubeflow/kubeflowjob/
kubeflowjob_controller.go (`PodSets`, `OrderedReplicaTypes`, `podsCount`, `PriorityClass`,
`ValidateOnCreate`) and each kind's pkg/controller/jobs/kubeflow/jobs/<kind>/<kind>_controller.go
(`OrderedReplicaTypes`, `ReplicaSpecs`, `ReplicaSpecsFieldName`), with the types Kueue vendors
(vendor/github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1/*_types.go).

One pod set per replica type the job has, in the kind's order, named after the type in lower
case (`Master` -> `master`); its count is the replica's `replicas` (1 when unset), its template
the replica's. A replica type under any other key is not read by Kueue (it indexes the map by
the exact names), so it is reported as a note, not counted.
"""

from __future__ import annotations

from typing import Any

from aks_kueue.k8s.objects import map_at
from aks_kueue.k8s import field as k8s_field
from aks_kueue.kueue.jobs.model import JobOptions
from aks_kueue.kueue.jobs.podsets import MPI_REPLICA_INDEX, PodSet, Reader, _template, lower, topology_request

# The Training Operator's pod index label, the same for MPIJob and the v1 jobs.
REPLICA_INDEX = MPI_REPLICA_INDEX

# kind -> (the spec field holding the replica specs, `OrderedReplicaTypes`)
REPLICA_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "PyTorchJob": ("pytorchReplicaSpecs", ("Master", "Worker")),
    "TFJob": ("tfReplicaSpecs", ("Chief", "Master", "PS", "Worker", "Evaluator")),
    "XGBoostJob": ("xgbReplicaSpecs", ("Master", "Worker")),
    "PaddleJob": ("paddleReplicaSpecs", ("Master", "Worker")),
    "JAXJob": ("jaxReplicaSpecs", ("Worker",)),
}


def kubeflow_job(obj: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    kind = str(obj.get("kind"))
    field, ordered = REPLICA_TYPES[kind]
    spec = read.map(obj, "spec", "")
    replicas = read.map(spec, field, "spec", required=True)
    podsets = []
    for replica_type in ordered:
        replica = replicas.get(replica_type)
        if replica is None:
            continue
        path = f"spec.{field}[{replica_type}]"
        if not isinstance(replica, dict):
            read.errors.append(k8s_field.invalid(path, k8s_field.OMIT, "must be of type object"))
            continue
        template = _template(read.map(replica, "template", path, required=True))
        count = read.int(replica, "replicas", path, 1)
        podsets.append(PodSet(lower(replica_type), count or 0, template, f"{path}.template", None,
                              topology_request(template, options, REPLICA_INDEX)))
    return podsets


def ignored_replica_types(obj: dict[str, Any]) -> list[str]:
    """Keys of the replica specs Kueue does not read (`master` instead of `Master`, a typo)."""
    kind = str(obj.get("kind"))
    field, ordered = REPLICA_TYPES[kind]
    spec = map_at(obj, "spec")
    replicas = map_at(spec, field)
    return [str(k) for k in replicas if k not in ordered]


def priority_class(obj: dict[str, Any]) -> str:
    """`PriorityClass()`'s first choice: `spec.runPolicy.schedulingPolicy.priorityClass` (the
    replica templates' priorityClassName come next, as for every job)."""
    spec = map_at(obj, "spec")
    policy = map_at(spec, "runPolicy")
    scheduling = map_at(policy, "schedulingPolicy")
    value = scheduling.get("priorityClass")
    return value if isinstance(value, str) else ""
