"""What AKS's cluster autoscaler does with the ProvisioningRequests Kueue creates.

Sources (`../shared/reference/aks.md` section a.5, and the pages named there):
- AKS's managed cluster autoscaler answers ProvisioningRequests (`autoscaling.x-k8s.io/v1`) from
  Kubernetes 1.33 (Azure/AKS PR #5867, 2026-09-04; before that Azure/AKS issue #5492 said there was
  no way to turn it on). It needs no autoscaler-profile setting: the AKS CAS profile has no key for
  it, and Microsoft's guides (configure-kueue-with-cluster-autoscaler, and
  use-managed-kueue-extension-with-the-cluster-autoscaler-on-aks for the managed extension) only
  create the Kueue objects.
- Microsoft's guides and samples (Azure/AKS `examples/kueue-and-ray-on-aks/2-kueue-queues/manifests/
  40-autoscale-queue.yaml`, `50-gpu-autoscale-queue.yaml`) use the class
  `best-effort-atomic-scale-up.autoscaling.x-k8s.io`. The upstream autoscaler AKS runs also
  implements `check-capacity.autoscaling.x-k8s.io` (kubernetes/autoscaler `cluster-autoscaler/FAQ.md`,
  "How can I use ProvisioningRequest to run batch workloads"); no AKS page shows it, so it is
  accepted as the upstream class it is. Other classes (`queued-provisioning.gke.io`, ...) belong
  to other clouds' autoscalers: nothing on AKS answers them, so the check never passes.
- What the atomic class does (the FAQ, and `core/scaleup/orchestrator/orchestrator.go` `ScaleUp`
  with `allOrNothing`): pods of the request that fit nodes that already exist are left there; the
  rest must fit ONE node group (an AKS node pool) scaled up within its maxCount, or nothing is
  added and the request is not provisioned. `check-capacity` never adds a node: it passes only
  when the nodes already exist.
- Node auto-provisioning (Karpenter) does not answer ProvisioningRequests; AKS documents them for
  the cluster autoscaler only (and the managed Kueue extension supports the autoscaler only).
- Kueue starts its provisioning controller only when the API server serves ProvisioningRequests
  at Kueue's start (kueue v0.19.2 `cmd/kueue/main.go`, "Skipping provisioning controller setup");
  no Kueue feature gate is involved in 0.19 (`ProvisioningACC` is gone from
  `pkg/features/kube_features.go`).
"""

from __future__ import annotations

from aks_kueue.k8s.field import FieldError

ATOMIC_SCALE_UP = "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
CHECK_CAPACITY = "check-capacity.autoscaling.x-k8s.io"
# The classes AKS's cluster autoscaler answers, the one Microsoft documents first.
PROVISIONING_CLASSES = (ATOMIC_SCALE_UP, CHECK_CAPACITY)
# The classes that add nodes (the others only check what exists).
SCALE_UP_CLASSES = frozenset({ATOMIC_SCALE_UP})
# The first Kubernetes minor whose AKS cluster autoscaler answers ProvisioningRequests.
MIN_PROVISIONING_MINOR = 33


def class_problem(name: object) -> FieldError | None:
    """Why AKS's cluster autoscaler would never answer a ProvisioningRequest of this class, or None."""
    if name in PROVISIONING_CLASSES:
        return None
    return FieldError("", f"{name!r} is not a class AKS's cluster autoscaler provides, so no ProvisioningRequest of "
                          "it is ever provisioned",
                      f"use {ATOMIC_SCALE_UP} (scales a pool up for the whole workload, all or nothing) or "
                      f"{CHECK_CAPACITY} (admits only when existing nodes have room)")
