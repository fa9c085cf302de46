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
- Quota: Azure counts vCPUs per VM family and region; a size's family is what
  `az vm list-skus` reports for it, and `az vm list-usage` gives that family's use and limit.
- Kubernetes patches: AKS rolls versions out region by region ("up to 10 business days",
  learn.microsoft.com/azure/aks/supported-kubernetes-versions), so a pinned patch may not be in
  the region yet; `az aks get-versions` lists what the region offers.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Optional, Sequence


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


@dataclass(frozen=True)
class Advisory:
    key: str
    message: str
    command: str


def _provider(namespace: str, why: str, key: str) -> Advisory:
    return Advisory(
        key=key,
        message=(f"the resource provider {namespace} must be registered in the subscription ({why}); "
                 f"`Registered` means it is, otherwise run `az provider register --namespace {namespace}`"),
        command=f"az provider show --namespace {namespace} --query registrationState -o tsv")


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
            message=("host encryption needs the EncryptionAtHost feature registered in the subscription; "
                     "`Registered` means it is, otherwise run `az feature register --namespace "
                     "Microsoft.Compute --name EncryptionAtHost`, then `az provider register --namespace "
                     "Microsoft.Compute`"),
            command="az feature show --namespace Microsoft.Compute --name EncryptionAtHost "
                    "--query properties.state -o tsv"))
    if kubernetes_version is not None and kubernetes_version.count(".") == 2:
        found.append(Advisory(
            key="aks-kueue:cluster.kubernetesVersion",
            message=(f"the pinned patch {kubernetes_version} must be one AKS offers in {region} (AKS adds and "
                     "removes patches weekly and rolls them out region by region); it is listed there if "
                     "offered, or pin the minor version alone"),
            command=f"az aks get-versions --location {region} -o table"))
    first: dict[str, PoolUse] = {}  # one advisory per size, however many pools use it
    for pool in pools:
        first.setdefault(pool.vm_size.lower(), pool)
    for pool in first.values():
        size = pool.vm_size
        found.append(Advisory(
            key=pool.key,
            message=(f"{size} must be offered to the subscription in {region}: the command prints nothing when "
                     "it is, and the restriction (NotAvailableForSubscription, or the zones it is not in) "
                     "when it is not"),
            command=_size_query(region, size, f"[?name=='{size}'].restrictions[].reasonCode")))
    for pool in pools:
        if not pool.gpu:
            continue
        needed = f"{pool.vcpus * pool.nodes} vCPUs" if pool.vcpus else f"{pool.nodes} nodes' vCPUs"
        family_query = f"[?name=='{pool.vm_size}'].family | [0]"
        family = "$(" + _size_query(region, pool.vm_size, family_query) + ")"
        found.append(Advisory(
            key=pool.key,
            message=(f"{pool.vm_size} at {pool.nodes} nodes needs {needed} of its VM family's quota in "
                     f"{region}, and new subscriptions often have no GPU quota; limit minus used must cover it "
                     "(request more at https://portal.azure.com/#view/Microsoft_Azure_Capacity/QuotaMenuBlade)"),
            command=(f"az vm list-usage --location {region} --query \"[?name.value=='{family}']."
                     "{family:name.value, used:currentValue, limit:limit}\" -o table")))
    return found
