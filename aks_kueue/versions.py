"""Every version this program pins, in one place.

The Kueue chart version and the Kueue API version move together: the 0.19 chart
serves `kueue.x-k8s.io/v1beta2` as its storage version, and the feature-gate and
framework lists in `kueue_catalog` are those of 0.19.2.
"""

KUEUE_CHART_REPOSITORY = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_CHART_VERSION = "0.19.2"
KUEUE_CHART_SERIES = "0.19"
KUEUE_API_VERSION = "kueue.x-k8s.io/v1beta2"
KUEUE_CONFIG_API_VERSION = "config.kueue.x-k8s.io/v1beta2"
KUEUE_NAMESPACE = "kueue-system"

MANAGED_KUEUE_EXTENSION_TYPE = "microsoft.kueue"
MANAGED_KUEUE_DEFAULT_RELEASE_TRAIN = "preview"

MIN_KUBERNETES_MINOR = 34

NVIDIA_DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.18.0"

# The provider whose replacement rules aks_kueue/day2/data/replace-forcing.yaml records; the
# SDK asks for the provider plugin of its own version, so this pins both.
AZURE_NATIVE_REQUIRES = ">=3.29.0,<3.30"
# kubelogin for the PR workflow's cloud job (the program's kubeconfig runs `kubelogin`).
KUBELOGIN_VERSION = "v0.2.14"
