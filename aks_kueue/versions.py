"""Every version this program pins, in one place.

The Kueue chart version and the Kueue API version move together: the 0.19 chart
serves `kueue.x-k8s.io/v1beta2` as its storage version, and the feature-gate and
framework lists in `kueue_catalog` are those of 0.19.2, the newest Kueue source stored here.
The chart default is the latest 0.19 patch, 0.19.7: 0.19.6 and 0.19.7 fix ways a workload could
run beyond its ClusterQueue's quota (kubernetes-sigs/kueue CHANGELOG/CHANGELOG-0.19.md: v0.19.7
#16401, LeaderWorkerSet and StatefulSet pods ungated before admission "could run without quota";
v0.19.6 #16132, a Job with parallelism above completions "allowing the ClusterQueue to admit
Workloads beyond its quota", #16053, a resource transformation letting "a Workload bypass
ClusterQueue quota accounting", #16047, pod-level requests that "could reserve too little quota").
A stack may pin any published 0.19 release (`KUEUE_CHART_RELEASES`) and nothing else.
"""

KUEUE_CHART_REPOSITORY = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_CHART_VERSION = "0.19.7"
KUEUE_CHART_SERIES = "0.19"
# Every release of the 0.19 chart, each a tag of kubernetes-sigs/kueue with its section in
# CHANGELOG/CHANGELOG-0.19.md (v0.19.0 to v0.19.7); a version not listed is not published.
KUEUE_CHART_RELEASES = ("0.19.0", "0.19.1", "0.19.2", "0.19.3", "0.19.4", "0.19.5", "0.19.6", "0.19.7")
KUEUE_API_VERSION = "kueue.x-k8s.io/v1beta2"
KUEUE_CONFIG_API_VERSION = "config.kueue.x-k8s.io/v1beta2"
KUEUE_NAMESPACE = "kueue-system"

MANAGED_KUEUE_EXTENSION_TYPE = "microsoft.kueue"
MANAGED_KUEUE_DEFAULT_RELEASE_TRAIN = "preview"
# The version Microsoft's documented pinned install uses (kueue-overview, extension pivot).
MANAGED_KUEUE_EXAMPLE_VERSION = "0.19.6-aks.0.4.4"

MIN_KUBERNETES_MINOR = 34

NVIDIA_DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.18.0"

# NVIDIA's DCGM exporter chart (index https://nvidia.github.io/dcgm-exporter/helm-charts/index.yaml,
# chart 4.8.2 = app 4.8.2, image nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless, tag 4.5.3-4.8.2).
DCGM_EXPORTER_CHART_REPOSITORY = "https://nvidia.github.io/dcgm-exporter/helm-charts"
DCGM_EXPORTER_CHART = "dcgm-exporter"
DCGM_EXPORTER_CHART_VERSION = "4.8.2"
# The provider whose replacement rules aks_kueue/day2/data/replace-forcing.yaml records; the
# SDK asks for the provider plugin of its own version, so this pins both.
AZURE_NATIVE_REQUIRES = ">=3.29.0,<3.30"
# kubelogin for the PR workflow's cloud job (the program's kubeconfig runs `kubelogin`).
KUBELOGIN_VERSION = "v0.2.14"

# The job CRDs a MultiKueue manager installs (it runs no job controllers, but the API server must
# serve the jobs it dispatches): each project's repository and the release Kueue 0.19.2 builds and
# tests against (kubernetes-sigs/kueue v0.19.2 go.mod; hack/make/deps.mk names the CRD files).
JOB_CRD_RELEASES = {
    "jobset": ("kubernetes-sigs/jobset", "v0.12.0"),
    "kuberay": ("ray-project/kuberay", "v1.6.2"),
    "mpi-operator": ("kubeflow/mpi-operator", "v0.8.2"),
    "training-operator": ("kubeflow/training-operator", "v1.9.3"),
    "trainer": ("kubeflow/trainer", "v2.2.1"),
    "appwrapper": ("project-codeflare/appwrapper", "v1.2.2"),
    "lws": ("kubernetes-sigs/lws", "v0.9.0"),
}
