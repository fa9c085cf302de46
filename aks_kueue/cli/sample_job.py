"""`aks-kueue sample-job`: a job for one LocalQueue of a stack, that Kueue admits and the nodes can run.

The job carries the `kueue.x-k8s.io/queue-name` label, tolerates the taints of the flavors (and their
pools) its pods are admitted to, and asks for what fits both the ClusterQueue's nominal quota and one
node of those pools. The figures come from the judge (`aks_kueue.judge.judge(model)`: its `flavors`
and `pools`), and the finished job is handed back to the judge as an expected workload, so the rule
that proves expected workloads (admitted alone on an empty cluster, schedulable at the pools'
maxCount) also decides whether the sample is printed.

Flavors are chosen as Kueue's flavor assigner would for such a pod: in each resource group's order,
the first flavor with quota for it. A GPU pod takes the first flavor whose quota and nodes both offer
the GPUs asked for; the pods of a job that ask for no GPU (a Ray head, an MPI launcher, the RayJob
submitter) take the first flavor with cpu quota, as Kueue would give them.

Sizes, per pod: a CPU pod asks for 1 cpu and 2Gi (a Ray head) or 500m and 512Mi (an MPI launcher),
never more than half a node; a GPU pod asks for its GPUs and half of the node's cpu and memory per
GPU, leaving room for the DaemonSets AKS runs that the capacity model does not subtract; KubeRay's
submitter keeps its defaults (500m, 200Mi). Worker counts (2 for JobSet and MPIJob, 1 otherwise)
and then sizes shrink until the pods fit the flavor's nominal quota and its pools.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import typer

from aks_kueue.cli.app import app
from aks_kueue.cli.common import fail, unexpected

if TYPE_CHECKING:
    from aks_kueue.kueue.views import ClusterQueue

KINDS: dict[str, str] = {"Job": "batch/job", "JobSet": "jobset.x-k8s.io/jobset", "RayJob": "ray.io/rayjob",
                         "MPIJob": "kubeflow.org/mpijob"}
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
_QUEUE = re.compile(r"^(?P<namespace>[a-z0-9]([-a-z0-9]*[a-z0-9])?)/(?P<name>[a-z0-9]([-a-z0-9.]*[a-z0-9])?)$")
GIB = 2**30
MIB = 2**20
CPU, MEMORY = "cpu", "memory"
# Images that show the job ran; replace them with your own.
BUSYBOX = "busybox:1.36"
CUDA = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
RAY_VERSION = "2.41.0"
MPI_PI = "mpioperator/mpi-pi:openmpi"
# KubeRay's submitter defaults, which Kueue counts (`aks_kueue.kueue.jobs.podsets.SUBMITTER_RESOURCES`).
SUBMITTER_REQUESTS = {CPU: 500, MEMORY: 200 * MIB}
MIN_CPU, MIN_MEMORY = 100, 64 * MIB


class SampleError(Exception):
    """What keeps a sample from being written; `code` 2 for a flag or stack that cannot be used, 1 for a
    request the stack cannot hold."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


@dataclass
class SamplePodSet:
    """One pod set of the sample: its count, its requests in Kueue's units, where it lands."""

    name: str
    count: int
    requests: dict[str, int]
    flavor: str
    pool: str                      # the pool its size was taken from
    tolerations: list[dict[str, str]] = field(default_factory=list)
    gpu_resource: Optional[str] = None
    resizable: bool = False        # a worker: its count and size may shrink to fit


@dataclass
class Sample:
    kind: str
    namespace: str
    queue: str
    cluster_queue: str
    pod_sets: list[SamplePodSet]


@app.command("sample-job")
def sample_job(
    stack: str = typer.Option(..., "--stack", "-s", metavar="NAME",
                              help="The stack (stacks/Pulumi.NAME.yaml) whose queue the job is for."),
    queue: str = typer.Option(..., "--queue", metavar="NAMESPACE/LOCALQUEUE", help="The LocalQueue the job is for."),
    gpus: int = typer.Option(0, "--gpus", min=0, metavar="N",
                             help="GPUs per pod (of the workers, for JobSet, RayJob, MPIJob)."),
    kind: str = typer.Option("Job", "--kind", metavar="KIND",
                             help="Job, JobSet, RayJob or MPIJob; it must be enabled on the stack."),
) -> None:
    """Print a job for a LocalQueue that Kueue admits and the stack's nodes can run (YAML on stdout)."""
    from aks_kueue.k8s.loader import LoadError

    try:
        typer.echo(render(stack, queue, gpus, kind), nl=False)
    except SampleError as error:
        fail(f"sample-job: {error}", error.code)
    except LoadError as error:  # the stack file
        fail(f"sample-job: {error}")
    except typer.Exit:  # a RuntimeError: the catch-all below would call an exit a bug
        raise
    except Exception as error:  # a bug, not bad input: say so briefly
        fail(f"sample-job: {unexpected(error)}")


def render(stack: str, queue: str, gpus: int, kind: str) -> str:
    """The sample's YAML, headed by comments saying where each pod set lands; SampleError when there is none."""
    import yaml

    settings, model = load(stack)
    sample = plan(settings, model, queue, gpus, kind)
    manifest = job_manifest(sample)
    verify(settings, model, manifest, sample)
    command = f"aks-kueue sample-job --stack {stack} --queue {queue} --kind {sample.kind}" + (
        f" --gpus {gpus}" if gpus else "")
    header = [f"# {command}", f"# LocalQueue {sample.namespace}/{sample.queue} -> ClusterQueue {sample.cluster_queue}; "
              "per pod set, count x requests -> flavor (pool):"]
    header += [f"#   {p.name}: {p.count} x {_show(p.requests)} -> {p.flavor} ({p.pool})" for p in sample.pod_sets]
    header.append(f"# Submit: kubectl create -f FILE; watch: kubectl -n {sample.namespace} get workloads")
    return "\n".join(header) + "\n" + yaml.safe_dump(manifest, sort_keys=False)


# --- the stack --------------------------------------------------------------------------------------

def load(stack: str):
    """The stack's settings and model; a LoadError when the stack file cannot be read, SampleError when
    they cannot be used as written."""
    from aks_kueue.cli.common import load_stack_config
    from aks_kueue.judge import blocking_findings
    from aks_kueue.model.from_settings import from_settings
    from aks_kueue.settings.errors import SettingsError

    stack_config, root = load_stack_config(stack, None)
    try:
        settings = stack_config.settings()
        model = from_settings(settings, root, stack)
    except SettingsError as error:
        raise _unusable(stack_config, error.problems) from None
    if problems := blocking_findings(model):
        raise _unusable(stack_config, problems)
    if settings.kueue.install == "none":
        raise SampleError(f"stack {stack} installs no Kueue (kueue.install: none), so it has no queue to submit to")
    return settings, model


def _unusable(stack_config, problems) -> SampleError:
    """Why the stack cannot be used: each problem at its stack key, in the stack file."""
    return SampleError(f"--stack {stack_config.stack} cannot be used:\n"
                       + "\n".join(str(e) for e in stack_config.errors(problems)))


def plan(settings, model, queue: str, gpus: int, kind: str) -> Sample:
    """Which pods the sample has, their requests, flavors and tolerations."""
    from aks_kueue.judge import judge
    from aks_kueue.judge.objects import of_kind, valid_objects
    from aks_kueue.kueue.views import ClusterQueue, LocalQueue

    match = _QUEUE.fullmatch(queue)
    if not match:
        raise SampleError(f"--queue {queue!r} is not NAMESPACE/LOCALQUEUE, for example team-a/default")
    namespace, name = match["namespace"], match["name"]
    valid = valid_objects(model)  # every object, as the stack's blocking findings are none (`load`)
    local_queues = [q.view for q in of_kind(valid, LocalQueue)]
    local_queue = next((q for q in local_queues if q.namespace == namespace and q.name == name), None)
    if local_queue is None:
        from aks_kueue.k8s.spelling import suggest

        names = [f"{q.namespace}/{q.name}" for q in local_queues]
        raise SampleError(f"stack {model.stack} has no LocalQueue {namespace}/{name}; its LocalQueues: "
                          f"{', '.join(names) or 'none'}{suggest(f'{namespace}/{name}', names)}")
    kind = _kind(kind, settings, model.stack)
    target = local_queue.cluster_queue
    cluster_queue = next((q.view for q in of_kind(valid, ClusterQueue) if q.view.name == target), None)
    if cluster_queue is None:
        raise SampleError(f"LocalQueue {namespace}/{name} points at ClusterQueue {target}, which the stack lacks")
    quota = QueueQuota.of(cluster_queue)
    judgement = judge(model)
    chooser = Chooser(quota, judgement.flavors, cluster_queue.name, model.resource_rules)
    pod_sets = _pod_sets(kind, gpus, chooser)
    _fit(pod_sets, quota, judgement.flavors, cluster_queue.name)
    _fit_charges(pod_sets, quota, model.resource_rules, cluster_queue.name)
    return Sample(kind, namespace, name, cluster_queue.name, pod_sets)


def _kind(kind: str, settings, stack: str) -> str:
    from aks_kueue.k8s.spelling import suggest

    enabled = [k for k, framework in KINDS.items() if framework in settings.kueue.frameworks_in_force]
    chosen = next((k for k in KINDS if k.lower() == kind.lower()), None)
    if chosen is None:
        hint = suggest(kind.lower(), [k.lower() for k in KINDS])  # --kind is read case-insensitively
        raise SampleError(f"--kind {kind!r} is not a kind sample-job writes (it writes {', '.join(KINDS)}; stack "
                          f"{stack} enables {', '.join(enabled) or 'none of them'}){hint}")
    if chosen not in enabled:
        raise SampleError(f"--kind {chosen}: its integration {KINDS[chosen]} is not enabled on stack {stack} "
                          f"(kueue.integrations); choose one it enables: {', '.join(enabled) or 'none'}")
    return chosen


@dataclass
class QueueQuota:
    """A ClusterQueue's resource groups (covered resources, flavors in order) and nominal quotas."""

    groups: list[tuple[list[str], list[str]]]
    nominal: dict[str, dict[str, int]]

    @classmethod
    def of(cls, queue: "ClusterQueue") -> "QueueQuota":
        return cls([(list(group.covered_resources), list(group.flavor_names)) for group in queue.resource_groups],
                   {flavor.name: {r.name: r.nominal_quota for r in flavor.resources}
                    for group in queue.resource_groups for flavor in group.flavors})

    def covered(self, resource: str) -> bool:
        return any(resource in covered for covered, _ in self.groups)

    def flavors_for(self, resource: str) -> list[str]:
        return next((flavors for covered, flavors in self.groups if resource in covered), [])


@dataclass
class Chooser:
    """Picks the flavor and pool a pod set lands on, from the queue's quota and the judge's placements."""

    quota: QueueQuota
    placements: dict
    cluster_queue: str
    rules: Any = None              # the Configuration's resource transformations (ResourceRules)

    def cpu_target(self):
        """The first flavor with cpu (and memory) quota that lands on a pool: where Kueue puts a pod that
        asks for no GPU."""
        resource = CPU if self.quota.covered(CPU) else MEMORY
        for flavor in self.quota.flavors_for(resource):
            quota = self.quota.nominal.get(flavor, {})
            if all(quota.get(r, 0) > 0 for r in (CPU, MEMORY) if self.quota.covered(r)):
                pool = self._largest(flavor, CPU)
                if pool is not None:
                    return flavor, pool
        raise SampleError(f"ClusterQueue {self.cluster_queue} has no flavor with cpu and memory quota on a node pool "
                          "(flavors: " + ", ".join(self._describe(f, (CPU, MEMORY)) for f in self.quota.nominal) + ")",
                          1)

    def gpu_target(self, gpus: int):
        """The first flavor, in its resource group's order, whose quota and nodes both offer `gpus`."""
        from aks_kueue.aks.nodes import GPU_PREFIXES

        seen = []
        for covered, flavors in self.quota.groups:
            for resource in (r for r in covered if r.startswith(GPU_PREFIXES)):
                for flavor in flavors:
                    quota = self.quota.nominal.get(flavor, {}).get(resource, 0)
                    pool = self._largest(flavor, resource)
                    per_node = pool.node.amounts.get(resource, 0) if pool is not None else 0
                    seen.append(f"{flavor}: {resource} quota {quota}, {per_node} per node"
                                + (f" ({pool.spec.vm_size})" if pool is not None and per_node else ""))
                    if quota >= gpus and per_node >= gpus:
                        return flavor, pool, resource
        if not seen:
            raise SampleError(f"--gpus {gpus}: ClusterQueue {self.cluster_queue} covers no GPU resource "
                              "(nvidia.com/*, amd.com/*); give it a GPU flavor, or leave --gpus out", 1)
        raise SampleError(f"--gpus {gpus}: no flavor of ClusterQueue {self.cluster_queue} offers {gpus} GPUs to one "
                          f"pod in both quota and nodes ({'; '.join(seen)}); ask for fewer", 1)

    def _largest(self, flavor: str, resource: str):
        """The pool of the flavor whose node holds the most of `resource`, among pools it reaches."""
        placement = self.placements.get(flavor)
        pools = [pool for pool, nodes in placement.pools if nodes > 0] if placement is not None else []
        return max(pools, key=lambda p: (p.node.amounts.get(resource, 0), p.node.amounts.get(CPU, 0)), default=None)

    def _describe(self, flavor: str, resources) -> str:
        quota = self.quota.nominal.get(flavor, {})
        placement = self.placements.get(flavor)
        where = ", ".join(p.name for p, n in placement.pools if n > 0) if placement is not None else ""
        return f"{flavor} ({', '.join(f'{r} {quota.get(r, 0)}' for r in resources)}; pools: {where or 'none'})"

    def tolerations(self, flavor: str) -> list[dict[str, str]]:
        """Tolerations for the flavor's nodeTaints and the NoSchedule/NoExecute taints of its pools."""
        from aks_kueue.judge.workloads import toleration
        from aks_kueue.k8s.scheduling import SCHEDULING_EFFECTS

        placement = self.placements.get(flavor)
        if placement is None:
            return []
        taints = [*placement.node_taints, *(t for pool, nodes in placement.pools if nodes > 0
                                            for t in pool.spec.taints if t.get("effect") in SCHEDULING_EFFECTS)]
        return list({tuple(t.items()): t for t in map(toleration, taints)}.values())


def _pod_sets(kind: str, gpus: int, chooser: Chooser) -> list[SamplePodSet]:
    cpu_flavor, cpu_pool = chooser.cpu_target()

    def placed(name: str, count: int, requests: dict[str, int], flavor: str = cpu_flavor, pool=cpu_pool,
               gpu_resource: Optional[str] = None) -> SamplePodSet:
        return SamplePodSet(name, count, _covered(requests, chooser.quota, chooser.rules), flavor,
                            f"pool {pool.name}, {pool.spec.vm_size}", chooser.tolerations(flavor), gpu_resource)

    def small(name: str, cpu: int, memory: int, count: int = 1) -> SamplePodSet:
        node = cpu_pool.node.amounts
        return placed(name, count, {CPU: min(cpu, _floor(node.get(CPU, 0) // 2, 100)),
                                    MEMORY: min(memory, _floor(node.get(MEMORY, 0) // 2, 64 * MIB))})

    workers = {"Job": ("main", 1), "JobSet": ("workers", 2), "RayJob": ("workers", 1), "MPIJob": ("worker", 2)}[kind]
    if gpus:
        flavor, pool, resource = chooser.gpu_target(gpus)
        node = pool.node.amounts
        requests = {CPU: max(1000, _floor(node.get(CPU, 0) * gpus // node[resource] // 2, 1000)),
                    MEMORY: max(GIB, _floor(node.get(MEMORY, 0) * gpus // node[resource] // 2, GIB)), resource: gpus}
        worker = placed(*workers, requests, flavor, pool, resource)
    else:
        worker = small(workers[0], 1000, 2 * GIB, workers[1])
    worker.resizable = True
    if kind == "RayJob":
        return [small("head", 1000, 2 * GIB), worker, placed("submitter", 1, dict(SUBMITTER_REQUESTS))]
    if kind == "MPIJob":
        return [small("launcher", 500, 512 * MIB), worker]
    return [worker]


def _covered(requests: dict[str, int], quota: QueueQuota, rules: Any = None) -> dict[str, int]:
    """Only what the ClusterQueue covers: Kueue refuses a pod asking for a resource it does not. With
    the Configuration's transformations, a request Kueue replaces by covered outputs is charged as
    those, so it stays (a pod asking for no cpu would not run)."""
    transforms = rules.by_input if rules else {}

    def charged(resource: str) -> bool:
        transformation = transforms.get(resource)
        if transformation is not None and str(transformation.strategy) == "Replace":
            return all(quota.covered(name) for name, _ in transformation.outputs)
        return quota.covered(resource)

    return {r: v for r, v in requests.items() if charged(r)}


def charges(requests: dict[str, int], rules: Any) -> dict[str, int]:
    """One pod's requests (Kueue's units) as Kueue charges them after the Configuration's exclusions and
    transformations (`aks_kueue.kueue.transformations`)."""
    from fractions import Fraction

    from aks_kueue.kueue.units import to_units

    if not rules:
        return dict(requests)
    exact = {r: Fraction(v, 1000) if r == CPU else Fraction(v) for r, v in requests.items()}
    return to_units(rules.apply(exact))


def _fit_charges(pod_sets: list[SamplePodSet], quota: QueueQuota, rules: Any, cluster_queue: str) -> None:
    """With transformations, shrink the workers until what Kueue charges (a credit, a total) fits the
    nominal quota of the flavor it is charged to: the pod set's own, else the first flavor covering it."""
    if not rules:
        return
    worker = next(p for p in pod_sets if p.resizable)

    def charged(pod_set: SamplePodSet):
        for resource, value in charges(pod_set.requests, rules).items():
            flavors = quota.flavors_for(resource)
            yield pod_set.flavor if pod_set.flavor in flavors or not flavors else flavors[0], resource, value

    what = "Kueue's resource transformations charge the sample's pods"
    while worker.count > 1 and _over(pod_sets, quota, charged, cluster_queue, what):
        worker.count -= 1
    if error := _over(pod_sets, quota, charged, cluster_queue, what):
        raise error


def _over(pod_sets: list[SamplePodSet], quota: QueueQuota, charged, cluster_queue: str,
          what: str) -> Optional[SampleError]:
    """The error for the first flavor and resource whose nominal quota is less than what the pods are
    `charged` (per pod: flavor, resource, amount) in all, if there is one."""
    used: dict[tuple[str, str], int] = {}
    for pod_set in pod_sets:
        for flavor, resource, value in charged(pod_set):
            used[(flavor, resource)] = used.get((flavor, resource), 0) + pod_set.count * value
    for (flavor, resource), total in used.items():
        have = quota.nominal.get(flavor, {}).get(resource, 0)
        if total > have and quota.covered(resource):
            return SampleError(f"{what} {_show({resource: total})} of flavor {flavor}, but ClusterQueue "
                               f"{cluster_queue} has a nominal quota of {_show({resource: have})} there; raise it", 1)
    return None


def _floor(value: int, step: int) -> int:
    return value // step * step


def _fit(pod_sets: list[SamplePodSet], quota: QueueQuota, placements: dict, cluster_queue: str) -> None:
    """Shrink the workers until every flavor's nominal quota and pools hold the pods."""
    from aks_kueue.judge.workloads import pods_per_node

    worker = next(p for p in pod_sets if p.resizable)
    placement = placements[worker.flavor]
    room = sum(pods_per_node(pool, worker.requests)[0] * nodes for pool, nodes in placement.pools if nodes > 0)
    worker.count = max(1, min(worker.count, room))

    def left(resource: str) -> int:
        fixed = sum(p.count * p.requests.get(resource, 0) for p in pod_sets
                    if p is not worker and p.flavor == worker.flavor)
        return quota.nominal.get(worker.flavor, {}).get(resource, 0) - fixed

    # A request the queue does not cover is one Kueue's transformations replace (`_covered`); `_fit_charges`
    # fits what it is charged as.
    while worker.count > 1 and any(worker.count * v > left(r) for r, v in worker.requests.items() if quota.covered(r)):
        worker.count -= 1
    for resource, step, least in ((CPU, 100, MIN_CPU), (MEMORY, 64 * MIB, MIN_MEMORY)):
        if resource in worker.requests and quota.covered(resource) and worker.requests[resource] > left(resource):
            worker.requests[resource] = _floor(max(left(resource), 0), step)
            if worker.requests[resource] < least:
                raise SampleError(f"ClusterQueue {cluster_queue}'s nominal {resource} quota in flavor {worker.flavor} "
                                  f"leaves {_show({resource: max(left(resource), 0)})} for the job's {worker.name} "
                                  "pods, too little for a sample; raise the quota", 1)
    if error := _over(pod_sets, quota, lambda p: ((p.flavor, r, v) for r, v in p.requests.items()), cluster_queue,
                      "the sample's pods need"):
        raise error


def _show(requests: dict[str, int]) -> str:
    from aks_kueue.kueue.units import format_amount

    return ", ".join(f"{r} {format_amount(r, v)}" for r, v in requests.items())


# --- the manifest -----------------------------------------------------------------------------------

def _resources(pod_set: SamplePodSet) -> dict[str, Any]:
    from aks_kueue.kueue.units import format_amount

    requests = {r: format_amount(r, v) for r, v in pod_set.requests.items()}
    limits = {r: q for r, q in requests.items() if r != CPU}  # memory and GPUs: limit = request
    return {"requests": requests, **({"limits": limits} if limits else {})}


def _pod(pod_set: SamplePodSet, container: dict[str, Any], restart: Optional[str] = "Never") -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if restart:
        spec["restartPolicy"] = restart
    spec["containers"] = [{**container, "resources": _resources(pod_set)}]
    if pod_set.tolerations:
        spec["tolerations"] = pod_set.tolerations
    return {"spec": spec}


def _hello(pod_set: SamplePodSet) -> dict[str, Any]:
    if pod_set.gpu_resource:
        return {"name": "main", "image": CUDA, "command": ["nvidia-smi"]}
    return {"name": "main", "image": BUSYBOX, "command": ["sh", "-c", "echo hello from $(hostname); sleep 30"]}


def job_manifest(sample: Sample) -> dict[str, Any]:
    by_name = {p.name: p for p in sample.pod_sets}
    metadata = {"name": f"sample-{sample.kind.lower()}", "namespace": sample.namespace,
                "labels": {QUEUE_LABEL: sample.queue}}
    head = {"apiVersion": "", "kind": sample.kind, "metadata": metadata}
    def job_spec(pod_set: SamplePodSet, **more: Any) -> dict[str, Any]:
        return {"parallelism": pod_set.count, "completions": pod_set.count, "backoffLimit": 0, **more,
                "template": _pod(pod_set, _hello(pod_set))}

    if sample.kind == "Job":
        return {**head, "apiVersion": "batch/v1", "spec": {
            "suspend": True, **job_spec(by_name["main"], ttlSecondsAfterFinished=3600)}}
    if sample.kind == "JobSet":
        return {**head, "apiVersion": "jobset.x-k8s.io/v1alpha2", "spec": {
            "suspend": True, "ttlSecondsAfterFinished": 3600, "replicatedJobs": [{
                "name": "workers", "replicas": 1, "template": {"spec": job_spec(by_name["workers"])}}]}}
    if sample.kind == "RayJob":
        return _ray_job(head, by_name)
    return _mpi_job(head, by_name)


def _ray_job(head: dict[str, Any], by_name: dict[str, SamplePodSet]) -> dict[str, Any]:
    ray_head, workers, submitter = by_name["head"], by_name["workers"], by_name["submitter"]
    image = f"rayproject/ray:{RAY_VERSION}"
    worker_image = image + ("-gpu" if workers.gpu_resource else "")
    submitter_pod = _pod(submitter, {"name": "ray-job-submitter", "image": image})
    submitter_pod["spec"]["containers"][0]["resources"]["limits"] = {CPU: "1", MEMORY: "1Gi"}  # KubeRay's defaults
    return {**head, "apiVersion": "ray.io/v1", "spec": {
        "entrypoint": 'python -c "import ray; ray.init(); print(ray.cluster_resources())"',
        "shutdownAfterJobFinishes": True, "ttlSecondsAfterFinished": 600,
        "submitterPodTemplate": submitter_pod,
        "rayClusterSpec": {
            "rayVersion": RAY_VERSION,
            "headGroupSpec": {"rayStartParams": {}, "template": _pod(
                ray_head, {"name": "ray-head", "image": image}, restart=None)},
            "workerGroupSpecs": [{
                "groupName": "workers", "replicas": workers.count, "minReplicas": workers.count,
                "maxReplicas": workers.count, "rayStartParams": {},
                "template": _pod(workers, {"name": "ray-worker", "image": worker_image}, restart=None)}]}}}


def _mpi_job(head: dict[str, Any], by_name: dict[str, SamplePodSet]) -> dict[str, Any]:
    launcher, worker = by_name["launcher"], by_name["worker"]
    # As mpi-operator's pi example runs it (examples/v2beta1/pi): the launcher runs mpirun, workers sshd.
    user = {"runAsUser": 1000}
    launcher_pod = _pod(launcher, {"name": "launcher", "image": MPI_PI, "securityContext": user, "command": ["mpirun"],
                                   "args": ["-n", str(worker.count), "/home/mpiuser/pi"]}, restart=None)
    worker_pod = _pod(worker, {"name": "worker", "image": MPI_PI, "securityContext": user,
                               "command": ["/usr/sbin/sshd"], "args": ["-De", "-f", "/home/mpiuser/.sshd_config"]},
                      restart=None)
    return {**head, "apiVersion": "kubeflow.org/v2beta1", "spec": {
        "slotsPerWorker": 1, "sshAuthMountPath": "/home/mpiuser/.ssh",
        "runPolicy": {"cleanPodPolicy": "Running", "ttlSecondsAfterFinished": 600, "suspend": True},
        "mpiReplicaSpecs": {
            "Launcher": {"replicas": 1, "template": launcher_pod},
            "Worker": {"replicas": worker.count, "template": worker_pod}}}}


# --- the judge's verdict ----------------------------------------------------------------------------

def verify(settings, model, manifest: dict[str, Any], sample: Sample) -> None:
    """The Workload Kueue would create for the job, proven like an expected workload: valid, admitted
    alone on an empty cluster, and schedulable on the pools at maxCount."""
    from aks_kueue.judge import judge
    from aks_kueue.kueue.jobs import JobOptions, JobOutcome, derive_workloads
    from aks_kueue.model.desired import ExpectedWorkload

    kueue = settings.kueue
    options = JobOptions.from_config(frameworks=kueue.frameworks_in_force, feature_gates=kueue.feature_gates_in_force)
    results = derive_workloads([dict(o.manifest) for o in model.objects] + [manifest], options)
    result = next(r for r in results if r.source.kind == manifest["kind"])
    if result.errors or result.outcome is not JobOutcome.WORKLOAD:
        reasons = [f"{e.field}: {e.text}" for e in result.errors] or [result.reason]
        raise SampleError("the sample would not be admitted as written (this is a bug, please report it): "
                          + "; ".join(reasons), 1)
    key = f"sample-job --queue {sample.namespace}/{sample.queue}"
    expected = tuple(ExpectedWorkload(w, key) for w in result.workloads)
    checked = judge(dataclasses.replace(model, workloads=expected))
    labels = {w.label for w in expected}
    problems = [f for f in checked.findings if f.object in labels]
    if problems:
        raise SampleError("no sample fits this queue as the stack stands:\n"
                          + "\n".join(f"{f.message}; {f.fix}" if f.fix else f.message for f in problems), 1)
