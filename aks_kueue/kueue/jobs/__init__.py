"""Jobs become Workloads, as Kueue v0.19.2's job integrations make them.

Pure: no Pulumi, no settings. Teams submit Jobs, JobSets, RayJobs, MPIJobs, pods and so
on with the `kueue.x-k8s.io/queue-name` label; Kueue builds a Workload for each and
admits that. This package builds the same Workload offline, so the admission core can
decide it, and applies the job webhooks Kueue registers.

    from aks_kueue.kueue.jobs import JobOptions, derive_workloads

    options = JobOptions.from_config(frameworks=["batch/job", "pod"], feature_gates={})
    for result in derive_workloads(objects, options):    # objects: the whole input, any kinds
        result.source       # JobRef: apiVersion, kind, name, namespace of the job
        result.outcome      # JobOutcome: WORKLOAD, MEMBER, BLOCKED, NOT_MANAGED or UNSUPPORTED
        result.workloads    # the v1beta2 Workloads Kueue would create (defaulted, validated)
        result.errors       # FieldErrors: what Kueue's webhooks refuse, in the job's field paths
        result.reason       # why there is no Workload ("Kueue would not manage this object: ...")
        result.notes        # warnings (a defaulted queue, an unknown PriorityClass, ...)

`is_job(manifest)` says whether Kueue has an integration for an object's kind;
`is_context(manifest)` whether it is read for the jobs (training runtimes, PriorityClasses).

What is derived, per Workload: the name Kueue gives it (`names.workload_name`: the
5-character suffix hashes the job's UID, which only the API server knows, so it matches
the cluster's only when the manifest carries `metadata.uid`), the namespace, `queueName`
(the label; without it, `default` when the namespace has a LocalQueue named `default`
and no Kueue-managed owner owns the job), pod sets with names and counts, `minCount` from
`kueue.x-k8s.io/job-min-parallelism` (cleared when PartialAdmission is off), the pod
templates with their requests, limits, overhead, node selectors, affinity and
tolerations, topology requests when TopologyAwareScheduling is on, `priorityClassRef`
and `priority` (the `kueue.x-k8s.io/priority-class` label naming a WorkloadPriorityClass
of the input, else the pods' PriorityClass), and `maximumExecutionTimeSeconds`.

Integrations modelled: all 18 of Kueue v0.19.2: batch/v1 Job, JobSet, RayJob, RayCluster,
RayService, MPIJob (v2beta1), the Kubeflow v1 PyTorchJob, TFJob, XGBoostJob, PaddleJob and
JAXJob, TrainJob (given its TrainingRuntime or ClusterTrainingRuntime), pods and pod groups,
Deployments, StatefulSets, LeaderWorkerSets (a Workload per replica group), AppWrappers (the
pod sets of what they wrap) and SparkApplications (behind the alpha gate
SparkApplicationIntegration). An object whose integration is not in `options.frameworks`
(or whose gate is off) comes back NOT_MANAGED, "Kueue would not manage this object: ...".
UNSUPPORTED remains for an integration without a builder; none is left.

`options.resources` (the Configuration's resource exclusions and transformations) does not
change the Workloads; the admission core applies it when it charges them.

Sources: kubernetes-sigs/kueue at tag v0.19.2, pkg/controller/jobframework/ and
pkg/controller/jobs/; each module names the files it follows.
"""

from aks_kueue.kueue.jobs.derive import INTEGRATIONS, derive_workloads, integration_of, is_context, is_job
from aks_kueue.kueue.jobs.model import QUEUE_LABEL, JobOptions, JobRef, JobResult, JobOutcome
from aks_kueue.kueue.jobs.names import workload_name

__all__ = ["derive_workloads", "is_job", "is_context", "integration_of", "INTEGRATIONS", "JobOptions", "JobRef",
           "JobResult", "JobOutcome", "QUEUE_LABEL", "workload_name"]
