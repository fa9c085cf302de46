"""The aks-kueue CrossGuard policy pack: one policy per module, each a thin wrapper over the
judge (`aks_kueue/judge/`); `routing.py` says which policy reports which finding. This index
only exports: `policy/__main__.py` serves `POLICIES` to the Pulumi engine, and
`aks_kueue.preview.pack` runs the same policies over an offline preview."""

from aks_kueue.policies import resources_readable
from aks_kueue.policies import objects_valid
from aks_kueue.policies import single_installer
from aks_kueue.policies import install_mode
from aks_kueue.policies import no_preview_train
from aks_kueue.policies import quota_fits
from aks_kueue.policies import flavors_match
from aks_kueue.policies import workloads_fit
from aks_kueue.policies import provisioning_supported
from aks_kueue.policies import managed_limits
from aks_kueue.policies import managed_region
from aks_kueue.policies import baseline_local_accounts
from aks_kueue.policies import baseline_azure_rbac
from aks_kueue.policies import baseline_network_policy
from aks_kueue.policies import baseline_api_server_access
from aks_kueue.policies import baseline_upgrade_channels
from aks_kueue.policies import baseline_system_pool
from aks_kueue.policies import baseline_kubeconfig_secret
from aks_kueue.policies import baseline_azure_policy
from aks_kueue.policies import baseline_defender
from aks_kueue.policies import baseline_image_cleaner
from aks_kueue.policies import baseline_monitoring
from aks_kueue.policies import baseline_max_pods
from aks_kueue.policies import baseline_paid_tier
from aks_kueue.policies import baseline_ephemeral_os
from aks_kueue.policies import baseline_host_encryption
from aks_kueue.policies import baseline_secrets_rotation
from aks_kueue.policies import stack_warnings
from aks_kueue.policies import multikueue_fleet

PACK_NAME = "aks-kueue"
# The offline run reports this version; `policy/PulumiPolicy.yaml` gives the engine its own.
PACK_VERSION = "0.2.0"
POLICIES = [module.POLICY for module in (
    resources_readable, objects_valid, single_installer, install_mode, no_preview_train, quota_fits,
    flavors_match, workloads_fit, provisioning_supported, managed_limits, managed_region, baseline_local_accounts, baseline_azure_rbac,
    baseline_network_policy, baseline_api_server_access, baseline_upgrade_channels, baseline_system_pool,
    baseline_kubeconfig_secret, baseline_azure_policy, baseline_defender, baseline_image_cleaner, baseline_monitoring,
    baseline_max_pods, baseline_paid_tier, baseline_ephemeral_os, baseline_host_encryption, baseline_secrets_rotation,
    stack_warnings, multikueue_fleet)]

__all__ = ["PACK_NAME", "PACK_VERSION", "POLICIES"]
