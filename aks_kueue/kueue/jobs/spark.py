"""SparkApplication (`sparkoperator.k8s.io/v1beta2`), behind Kueue's alpha gate SparkApplicationIntegration.

Sources (kubernetes-sigs/kueue, tag v0.19.2): pkg/controller/jobs/sparkapplication/
sparkapplication_controller.go (`PodSets`, `numInitialExecutors`, `CanSupportIntegration`),
sparkapplication_podset.go (`buildDriverPodTemplateSpec`, `buildExecutorPodTemplateSpec`,
`mutateSparkPod` and its options) and sparkapplication_webhook.go (`validateCreate`), with the
Spark operator code Kueue vendors: vendor/github.com/kubeflow/spark-operator/v2/api/v1beta2/
defaults.go (`SetSparkApplicationDefaults`, which the operator's defaulting webhook applies before
Kueue reads the object), pkg/util/util.go (`ConvertJavaMemoryStringToK8sMemoryString`) and
pkg/common/spark.go (names).

Two pod sets: `driver` (1 pod) and `executor` (`spec.executor.instances`, which the operator
defaults to 1 unless dynamic allocation or `spark.executor.instances` is set; 0 when still unset).
Each pod is built from nothing but the SparkApplication's fields for its role, as Kueue builds
it: one container (`spark-kubernetes-driver`, `spark-kubernetes-executor`) whose requests are
`coreRequest` and `memory` (Java units: 1g is 1Gi; the operator defaults it to 1g unless
`spark.<role>.memory` is set) and whose limits are `coreLimit`, `memoryLimit` and the `gpu`;
the role's sidecars and init containers, priorityClassName, nodeSelector, affinity and
tolerations; the role's `template` gives only labels and annotations. Spark's memory overhead
is not charged (Kueue does not add it).
"""

from __future__ import annotations

import copy
from typing import Any

from aks_kueue.k8s.objects import map_at
from aks_kueue.k8s import field
from aks_kueue.k8s.quantity import QuantityError, parse_quantity
from aks_kueue.kueue.jobs.model import JobOptions
from aks_kueue.kueue.jobs.podsets import PodSet, Reader, elastic, topology_request
from aks_kueue.k8s.field import FieldError

GATE = "SparkApplicationIntegration"
CLUSTER_MODE = "cluster"
DRIVER, EXECUTOR = "driver", "executor"
CONTAINER = {DRIVER: "spark-kubernetes-driver", EXECUTOR: "spark-kubernetes-executor"}
# util.go `unitMap`: Java's memory suffixes (any case) and Kubernetes' binary ones.
_JAVA_UNITS = {"k": "Ki", "kb": "Ki", "m": "Mi", "mb": "Mi", "g": "Gi", "gb": "Gi", "t": "Ti", "tb": "Ti",
               "p": "Pi", "pb": "Pi"}


def java_memory(value: str) -> str:
    """`ConvertJavaMemoryStringToK8sMemoryString`: `512m` -> `512Mi`. It trims the suffix as written,
    so an upper-case one (`1G`) is left in place and the quantity does not parse, as in Kueue."""
    lowered = value.lower()
    for unit in sorted(_JAVA_UNITS, key=len, reverse=True):
        if lowered.endswith(unit):
            return (value[:-len(unit)] if value.endswith(unit) else value) + _JAVA_UNITS[unit]
    return value


def _role(spec: dict[str, Any], role: str) -> dict[str, Any]:
    value = spec.get(role)
    return value if isinstance(value, dict) else {}


def defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as stored after the Spark operator's defaulting webhook (only what Kueue reads)."""
    app = copy.deepcopy(obj)
    spec = app.setdefault("spec", {}) if isinstance(app.get("spec", {}), dict) else {}
    spec.setdefault("mode", CLUSTER_MODE)
    conf = map_at(spec, "sparkConf")
    allocation = spec.get("dynamicAllocation")
    dynamic = (allocation.get("enabled") is True if isinstance(allocation, dict)
               else str(conf.get("spark.dynamicallocation.enabled", "")).lower() in ("1", "t", "true"))
    for role in (DRIVER, EXECUTOR):
        part = spec.setdefault(role, {}) if isinstance(spec.get(role, {}), dict) else {}
        if f"spark.{role}.memory" not in conf and part.get("memory") is None:
            part["memory"] = "1g"
        if role == EXECUTOR and part.get("instances") is None and not conf.get("spark.executor.instances") \
                and not dynamic:
            part["instances"] = 1
    return app


def _pod(spec: dict[str, Any], role: str, read: Reader) -> dict[str, Any]:
    """`mutateSparkPod` on an empty pod of the role: resource-related fields only."""
    part = _role(spec, role)
    path = f"spec.{role}"
    container: dict[str, Any] = {"name": CONTAINER[role]}
    pod: dict[str, Any] = {"containers": [container]}
    init = [copy.deepcopy(c) for c in read.list(part, "initContainers", path) if isinstance(c, dict)]
    pod["initContainers"] = init
    for sidecar in read.list(part, "sidecars", path):
        if isinstance(sidecar, dict) and not any(c.get("name") == sidecar.get("name") and
                                                 c.get("image") == sidecar.get("image") for c in pod["containers"]):
            pod["containers"].append(copy.deepcopy(sidecar))
    if isinstance(part.get("priorityClassName"), str) and part["priorityClassName"]:
        pod["priorityClassName"] = part["priorityClassName"]
    pod["nodeSelector"] = dict(read.map(part, "nodeSelector", path))
    if isinstance(part.get("affinity"), dict):
        pod["affinity"] = copy.deepcopy(part["affinity"])
    pod["tolerations"] = [copy.deepcopy(t) for t in read.list(part, "tolerations", path)]
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for key, into, resource, convert in (("coreRequest", requests, "cpu", False), ("coreLimit", limits, "cpu", False),
                                         ("memory", requests, "memory", True),
                                         ("memoryLimit", limits, "memory", True)):
        value = part.get(key)
        if value is None:
            continue
        text = java_memory(str(value)) if convert else str(value)
        try:
            parse_quantity(text)
        except QuantityError:
            read.errors.append(field.invalid(f"{path}.{key}", value,
                                             f"Kueue cannot build the {role} pod set: it is not a quantity"))
            continue
        into[resource] = text
    gpu = map_at(part, "gpu")
    if isinstance(gpu.get("name"), str) and gpu["name"] and isinstance(gpu.get("quantity"), int) \
            and gpu["quantity"] > 0:
        limits[gpu["name"]] = str(gpu["quantity"])
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    if resources:
        container["resources"] = resources
    template = map_at(part, "template")
    metadata = copy.deepcopy(map_at(template, "metadata"))
    for key in ("labels", "annotations"):
        extra = map_at(part, key)
        if extra or template:
            metadata[key] = {**(metadata.get(key) or {}), **extra}
    return {"metadata": metadata, "spec": pod} if metadata else {"spec": pod}


def spark_application(obj: dict[str, Any], options: JobOptions, read: Reader) -> list[PodSet]:
    spec = read.map(defaulted(obj), "spec", "")
    driver = _pod(spec, DRIVER, read)
    executor = _pod(spec, EXECUTOR, read)
    instances = read.int(_role(spec, EXECUTOR), "instances", "spec.executor", 0)
    return [PodSet(DRIVER, 1, driver, "spec.driver", None, topology_request(driver, options)),
            PodSet(EXECUTOR, instances or 0, executor, "spec.executor", None, topology_request(executor, options))]


def webhook_errors(obj: dict[str, Any], managed: bool, options: JobOptions) -> list[FieldError]:
    """`validateCreate` for a SparkApplication Kueue manages: cluster mode, and dynamic
    allocation only for an elastic job."""
    if not managed:
        return []
    spec = defaulted(obj).get("spec") or {}
    errors = []
    if spec.get("mode") != CLUSTER_MODE:
        errors.append(field.invalid("spec.mode", spec.get("mode"), "only Cluster mode is supported for a kueue "
                                                                   "managed job"))
    allocation = map_at(spec, "dynamicAllocation")
    if allocation.get("enabled") is True and not elastic(obj, options):
        errors.append(field.invalid("spec.dynamicAllocation.enabled", True, "a kueue managed job can use "
                                    "dynamicAllocation only when the ElasticJobsViaWorkloadSlices feature gate is on "
                                    "and the job is an elastic job"))
    return errors
