"""What no offline check can know, stated as advisories with the `az` command that checks it.

A stack can be valid in every way this program can see and still fail at `pulumi up`
because of the subscription it deploys into: a resource provider that is not registered,
a preview feature that is not registered, a VM size the subscription may not use in the
region, or a GPU family whose vCPU quota is too small (new subscriptions often have none).
`advisories()` turns plain values (the region, the pools' VM sizes and node counts, the
features in use) into one `Advisory` per thing to check, each with the key to change and an
exact, read-only `az` command that answers it. It never calls Azure.

Sources:
- Resource providers: AKS needs Microsoft.ContainerService; cluster extensions (the managed
  Kueue extension) need Microsoft.KubernetesConfiguration too
  (learn.microsoft.com/azure/aks/deploy-extensions-az-cli, `shared/reference/aks.md` b.3).
- Host encryption: "ensure the EncryptionAtHost feature is enabled for your subscription",
  checked with `az feature show --namespace Microsoft.Compute --name EncryptionAtHost`
  (learn.microsoft.com/azure/aks/enable-host-encryption).
- The managed Kueue extension documents no feature flag to register (`aks.md` d); its
  prerequisites are the providers above, AKS 1.34 or later and the k8s-extension CLI.
- Quota: Azure counts a regular VM's vCPUs against its VM family's quota in the region (and the
  region's total); a size's family is what `az vm list-skus` reports for it, and
  `az vm list-usage` gives that family's use and limit (learn.microsoft.com/azure/virtual-machines/quotas).
  A Spot VM's vCPUs count against one separate quota instead, the region's Spot vCPUs "across all
  VM families" (learn.microsoft.com/azure/quotas/spot-quota; the Spot FAQ of
  learn.microsoft.com/azure/virtual-machines/spot-vms: "a separate quota pool"). It is one number
  for every spot pool of the region, so the advisory adds them up. Its names: "Total Regional
  Spot vCPUs" in the portal's Usage + quotas and Quotas pages (Azure/az-hop,
  docs/tutorials/Implementing_Azure_HPC_OnDemand_Platform.md, "Validate a sufficient number of
  vCPU cores"); `lowPriorityCores`, shown as "Total Regional Low-priority vCPUs", in
  `az vm list-usage` and the usages API (the localizedValue the Azure Resource Graph queries of
  learn.microsoft.com/azure/quotas/how-to-guide-monitoring-alerting filter on; a deployment past
  it fails with "exceeding approved LowPriorityCores quota").
- Kubernetes patches: AKS rolls versions out region by region ("up to 10 business days",
  learn.microsoft.com/azure/aks/supported-kubernetes-versions), so a pinned patch may not be in
  the region yet; `az aks get-versions` lists what the region offers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Optional, Sequence

# The region's Spot vCPU quota as `az vm list-usage` names it (name.value) and shows it (localName),
# and as the portal's Usage + quotas and Quotas pages show it (see the module's sources).
SPOT_QUOTA = "lowPriorityCores"
SPOT_QUOTA_CLI_NAME = "Total Regional Low-priority vCPUs"
SPOT_QUOTA_PORTAL_NAME = "Total Regional Spot vCPUs"
_QUOTA_PAGE = "https://portal.azure.com/#view/Microsoft_Azure_Capacity/QuotaMenuBlade"


class Feature(str, Enum):
    """Things a stack uses that need something registered in the subscription."""

    HOST_ENCRYPTION = "host-encryption"
    MANAGED_KUEUE = "managed-kueue"


@dataclass(frozen=True)
class PoolUse:
    """One node pool as the advisories need it: plain values, read from settings or resources."""

    key: str                 # the key to change, e.g. "aks-kueue:nodePools[1].vmSize"
    vm_size: str             # e.g. "Standard_NC24ads_A100_v4"
    nodes: int               # the most nodes it can have (maxCount, or count for the system pool)
    vcpus: Optional[int]     # vCPUs per node, None when the catalog does not know the size
    gpu: bool
    spot: bool = False       # Spot priority: its vCPUs count against the region's Spot quota


@dataclass(frozen=True)
class Advisory:
    key: str
    message: str  # what Azure must say, in one sentence
    command: str  # the read-only az command that says it
    then: str = ""  # how to read its answer, and what to do when it says no


def _provider(namespace: str, why: str, key: str) -> Advisory:
    return Advisory(
        key=key,
        message=f"the resource provider {namespace} must be registered in the subscription ({why})",
        command=f"az provider show --namespace {namespace} --query registrationState -o tsv",
        then=f"`Registered` means it is, otherwise run `az provider register --namespace {namespace}`")


def _size_query(region: str, vm_size: str, query: str) -> str:
    return (f"az vm list-skus --location {region} --resource-type virtualMachines --size {vm_size} "
            f"--query \"{query}\" -o tsv")


def advisories(region: str, pools: Sequence[PoolUse], features: Iterable[Feature] = (),
               kubernetes_version: Optional[str] = None) -> list[Advisory]:
    """The checks only Azure can answer for this stack, in a stable order."""
    features = set(features)
    found = [_provider("Microsoft.ContainerService", "AKS itself", "azure-native:location")]
    if Feature.MANAGED_KUEUE in features:
        found.append(_provider("Microsoft.KubernetesConfiguration", "the managed Kueue extension is a cluster "
                               "extension", "aks-kueue:kueue.install"))
    if Feature.HOST_ENCRYPTION in features:
        found.append(Advisory(
            key="aks-kueue:nodePools",
            message="host encryption needs the EncryptionAtHost feature registered in the subscription",
            command="az feature show --namespace Microsoft.Compute --name EncryptionAtHost "
                    "--query properties.state -o tsv",
            then="`Registered` means it is, otherwise run `az feature register --namespace Microsoft.Compute --name "
                 "EncryptionAtHost`, then `az provider register --namespace Microsoft.Compute`"))
    if kubernetes_version is not None and kubernetes_version.count(".") == 2:
        found.append(Advisory(
            key="aks-kueue:cluster.kubernetesVersion",
            message=f"the pinned patch {kubernetes_version} must be one AKS offers in {region}",
            command=f"az aks get-versions --location {region} -o table",
            then="it is listed there if offered, or pin the minor version alone"))
    first: dict[str, PoolUse] = {}  # one advisory per size, however many pools use it
    for pool in pools:
        first.setdefault(pool.vm_size.lower(), pool)
    for pool in first.values():
        size = pool.vm_size
        found.append(Advisory(
            key=pool.key,
            message=f"{size} must be offered to the subscription in {region}",
            command=_size_query(region, size, f"[?name=='{size}'].restrictions[].reasonCode"),
            then="it prints nothing when it is, and the restriction (NotAvailableForSubscription, or the zones it is "
                 "not in) when it is not"))
    spot = [pool for pool in pools if pool.spot]
    for pool in pools:
        if pool.spot:
            found.append(_spot_quota(region, pool, spot))
        elif pool.gpu:
            found.append(_family_quota(region, pool))
    return found


def _needed(pool: PoolUse) -> str:
    return f"{pool.vcpus * pool.nodes} vCPUs" if pool.vcpus else f"{pool.nodes} nodes' vCPUs"


def _family_quota(region: str, pool: PoolUse) -> Advisory:
    """A regular GPU pool: its VM family's quota, which new subscriptions often have at 0."""
    family_query = f"[?name=='{pool.vm_size}'].family | [0]"
    family = "$(" + _size_query(region, pool.vm_size, family_query) + ")"
    return Advisory(
        key=pool.key,
        message=f"{pool.vm_size} at {pool.nodes} nodes needs {_needed(pool)} of its VM family's quota in {region}",
        command=(f"az vm list-usage --location {region} --query \"[?name.value=='{family}']."
                 "{family:name.value, used:currentValue, limit:limit}\" -o table"),
        then=f"limit minus used must cover it, else raise that family's quota (the row it prints, at {_QUOTA_PAGE})")


def _spot_quota(region: str, pool: PoolUse, spot: Sequence[PoolUse]) -> Advisory:
    """A spot pool: the region's one Spot vCPU quota, shared by every spot pool (whatever their
    families), so the advice gives this pool's share and the total."""
    together = ""
    if len(spot) > 1:
        known = sum(p.vcpus * p.nodes for p in spot if p.vcpus)
        unknown = [p.vm_size for p in spot if not p.vcpus]
        together = (f" (the stack's {len(spot)} spot pools together: "
                    + (f"at least {known} vCPUs, plus those of the {', '.join(unknown)} nodes"
                       if unknown else f"{known} vCPUs") + ")")
    return Advisory(
        key=pool.key,
        message=(f"{pool.vm_size} at {pool.nodes} nodes is a spot pool that needs {_needed(pool)} of the region's "
                 f"Spot vCPU quota in {region}{together}, not of its VM family's quota"),
        command=(f"az vm list-usage --location {region} --query \"[?name.value=='{SPOT_QUOTA}']."
                 "{quota:name.value, used:currentValue, limit:limit}\" -o table"),
        then=(f"limit minus used must cover it, else raise \"{SPOT_QUOTA_PORTAL_NAME}\" (the portal's name; `az vm "
              f"list-usage` shows \"{SPOT_QUOTA_CLI_NAME}\", {SPOT_QUOTA}) at {_QUOTA_PAGE}"))
