"""Facts about Kueue v0.19.2 that settings are checked against.

Source: kubernetes-sigs/kueue at tag v0.19.2, `pkg/features/kube_features.go` for the
gates, `pkg/config/validation.go` for what they need, and `pkg/controller/jobs/*/*_controller.go`
(`FrameworkName`, `JobType`) for the integrations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Stage = Literal["Alpha", "Beta", "GA", "Deprecated"]


@dataclass(frozen=True)
class FeatureGate:
    name: str
    stage: Stage
    default: bool
    locked: bool = False


def _gates(stage: Stage, default: bool, names: str, locked: bool = False) -> list[FeatureGate]:
    return [FeatureGate(n, stage, default, locked) for n in names.split()]


FEATURE_GATES: dict[str, FeatureGate] = {
    g.name: g
    for g in [
        *_gates("Beta", True, """
            TopologyAwareScheduling LocalQueueMetrics PartialAdmission FlavorFungibility
            PrioritySortingWithinCohort VisibilityOnDemand MultiKueue AdmissionFairSharing
            FairSharingPreemptWithinNominal FairSharingPrioritizeNonBorrowing QuotaCheckStrategy
            ReclaimablePods ElasticJobsViaWorkloadSlices KueueDRAIntegration
            KueueDRAIntegrationExtendedResource KueueDRAIntegrationPartitionableDevices
            KueueDRARejectWorkloadsWhenDRADisabled TASProfileMixed TASFailedNodeReplacement
            TASFailedNodeReplacementFailFast TASReplaceNodeOnPodTermination TASReplaceNodeOnNodeTaints
            TASMultiLayerTopology TASHandleOverlappingFlavors TASRecomputeAssignmentWithinSchedulingCycle
            TASAssignmentsEncodingByHostnamePrefix TASCacheNodeMatchResults TASCachingRemainingResources
            TASValidateWorkloadSliceSize SchedulingEquivalenceHashing AdmissionGatedBy
            AssignQueueLabelsForPods CleanupProvisioningRequestsOnEviction
            DeferRayServiceFinalizationForRedisCleanup FinishOrphanedWorkloads
            FlavorFungibilityPreserveScanProgress LWSImmutableGroupSize MetricForWorkloadCreationLatency
            MetricsForCohorts MultiKueueAdaptersForCustomJobs MultiKueueIncrementalDispatcherConfig
            MultiKueueIncrementalDispatcherRespectConfigOrder MultiKueueRemoteSpecSync
            PodIntegrationValidateGroupOwner RemoveFinalizersWithStrictPatch
            SkipAncestorCheckForDeletedWorkloads SkipReassignmentForPodOwnedWorkloads TLSOptions
            ValidateRayAndSparkJobUpdates VectorizedResourceRequests WorkloadIdentifierAnnotations
            WorkloadValidateResourcesAreNonNegative WorkloadValidationForPodSetMetadata
        """),
        *_gates("Beta", False, "UnadmittedWorkloadsObservability UnadmittedWorkloadsExplicitStatus"),
        *_gates("Alpha", False, """
            KueueDRAIntegrationConsumableCapacity TASBalancedPlacement TASRespectNodeAffinityPreferred
            TASCacheTopologyTree ElasticJobsViaWorkloadSlicesWithTAS WorkloadPriorityClassDefaulting
            PriorityBoost ConcurrentAdmission SparkApplicationIntegration ShortWorkloadNames
            FailureRecoveryPolicy MultiKueueClusterProfile CustomMetricLabels DisableWaitForPodsReady
            SchedulerLibraryIntegration PrioritizePreemptorWorkloads
            RecomputeAssignmentUponPreemptionTargetsOverlap RejectUpdatesToCQWithInvalidOnFlavors
            WorkloadRequestUseMergePatch FastQuotaReleaseInPodIntegration MultiKueueOrchestratedPreemption
            MultiKueueManagerQuotaAutomation MultiKueueKubeConfigPathValidation
            SchedulerLongRequeueInterval SchedulerTimestampPreemptionBuffer
        """),
        *_gates("Deprecated", False, "TASReplaceNodeDueToNotReadyOverFixedTime"),
        *_gates("Deprecated", False, "MultiKueueAllowInsecureKubeconfigs", locked=True),
        *_gates("GA", True, """
            HierarchicalCohorts ObjectRetentionPolicies ManagedJobsNamespaceSelectorAlwaysRespected
            PropagateBatchJobLabelsToWorkload SkipFinalizersForPodsSuspendedByParent
            MultiKueueWaitForWorkloadAdmitted MultiKueueRedoAdmissionOnEvictionInWorker
        """, locked=True),
    ]
}

# The manager refuses to start when a gate is on while a gate it needs is off
# (`LoadAndValidateFeatureGates` in pkg/config/validation.go, in its order).
GATE_REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "TASProfileMixed": ("TopologyAwareScheduling",),
    "TASHandleOverlappingFlavors": ("TopologyAwareScheduling",),
    "TASFailedNodeReplacement": ("TopologyAwareScheduling",),
    **{g: ("TopologyAwareScheduling", "TASFailedNodeReplacement") for g in (
        "TASFailedNodeReplacementFailFast", "TASReplaceNodeOnPodTermination",
        "TASReplaceNodeDueToNotReadyOverFixedTime")},
    **{g: ("TopologyAwareScheduling",) for g in (
        "TASBalancedPlacement", "TASReplaceNodeOnNodeTaints", "TASMultiLayerTopology",
        "TASRespectNodeAffinityPreferred", "TASRecomputeAssignmentWithinSchedulingCycle")},
    "UnadmittedWorkloadsExplicitStatus": ("UnadmittedWorkloadsObservability",),
    "ElasticJobsViaWorkloadSlicesWithTAS": ("ElasticJobsViaWorkloadSlices", "TopologyAwareScheduling"),
    # KueueDRARejectWorkloadsWhenDRADisabled is not checked there.
    **{g: ("KueueDRAIntegration",) for g in (
        "KueueDRAIntegrationExtendedResource", "KueueDRAIntegrationPartitionableDevices",
        "KueueDRAIntegrationConsumableCapacity")},
}

# The names `integrations.frameworks` accepts; anything else is rejected as NotSupported.
FRAMEWORKS: tuple[str, ...] = (
    "batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/rayservice", "ray.io/raycluster",
    "jobset.x-k8s.io/jobset", "kubeflow.org/paddlejob", "kubeflow.org/pytorchjob",
    "kubeflow.org/tfjob", "kubeflow.org/xgboostjob", "kubeflow.org/jaxjob",
    "trainer.kubeflow.org/trainjob", "workload.codeflare.dev/appwrapper",
    "sparkoperator.k8s.io/sparkapplication", "pod", "deployment", "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)

# The kind each integration manages, as "group/version, Kind=Kind" (the `JobType` of each
# job controller and the API package it imports). Two entries naming one kind are duplicates.
FRAMEWORK_KINDS: dict[str, str] = {
    "batch/job": "batch/v1, Kind=Job",
    "kubeflow.org/mpijob": "kubeflow.org/v2beta1, Kind=MPIJob",
    "ray.io/rayjob": "ray.io/v1, Kind=RayJob",
    "ray.io/rayservice": "ray.io/v1, Kind=RayService",
    "ray.io/raycluster": "ray.io/v1, Kind=RayCluster",
    "jobset.x-k8s.io/jobset": "jobset.x-k8s.io/v1alpha2, Kind=JobSet",
    "kubeflow.org/paddlejob": "kubeflow.org/v1, Kind=PaddleJob",
    "kubeflow.org/pytorchjob": "kubeflow.org/v1, Kind=PyTorchJob",
    "kubeflow.org/tfjob": "kubeflow.org/v1, Kind=TFJob",
    "kubeflow.org/xgboostjob": "kubeflow.org/v1, Kind=XGBoostJob",
    "kubeflow.org/jaxjob": "kubeflow.org/v1, Kind=JAXJob",
    "trainer.kubeflow.org/trainjob": "trainer.kubeflow.org/v1alpha1, Kind=TrainJob",
    "workload.codeflare.dev/appwrapper": "workload.codeflare.dev/v1beta2, Kind=AppWrapper",
    "sparkoperator.k8s.io/sparkapplication": "sparkoperator.k8s.io/v1beta2, Kind=SparkApplication",
    "pod": "/v1, Kind=Pod",
    "deployment": "apps/v1, Kind=Deployment",
    "statefulset": "apps/v1, Kind=StatefulSet",
    "leaderworkerset.x-k8s.io/leaderworkerset": "leaderworkerset.x-k8s.io/v1, Kind=LeaderWorkerSet",
}

# The chart's default `integrations.frameworks`, used when a stack names none.
CHART_DEFAULT_FRAMEWORKS: tuple[str, ...] = (
    "batch/job", "kubeflow.org/mpijob", "ray.io/rayjob", "ray.io/rayservice", "ray.io/raycluster",
    "jobset.x-k8s.io/jobset", "workload.codeflare.dev/appwrapper", "trainer.kubeflow.org/trainjob",
    "pod", "deployment", "statefulset", "leaderworkerset.x-k8s.io/leaderworkerset",
)

FRAMEWORK_GATES: dict[str, str] = {"sparkoperator.k8s.io/sparkapplication": "SparkApplicationIntegration"}

# What the AKS managed extension runs: Job, Pod, Deployment, StatefulSet, JobSet, Ray,
# MPIJob and Trainer v2. Kubeflow v1 jobs, AppWrapper and LeaderWorkerSet are not offered.
MANAGED_FRAMEWORKS: tuple[str, ...] = (
    "batch/job", "pod", "deployment", "statefulset", "jobset.x-k8s.io/jobset",
    "ray.io/rayjob", "ray.io/raycluster", "ray.io/rayservice", "kubeflow.org/mpijob",
    "trainer.kubeflow.org/trainjob",
)

# Regions where the managed extension is offered (MS Learn, install the managed Kueue extension).
MANAGED_REGIONS: tuple[str, ...] = ("centralus", "eastus", "westus", "westus2")
