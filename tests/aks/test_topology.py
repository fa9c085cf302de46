"""`fromAks` levels: AKS's node labels, broadest first, hostname last."""

from __future__ import annotations

import pytest

from aks_kueue.aks.autoscaler import PROVISIONING_CLASSES, class_problem
from aks_kueue.aks.nodes import node_labels
from aks_kueue.aks.pools import Pool
from aks_kueue.aks.topology import AKS_LEVELS, NON_ZONAL_ZONE, from_aks_problem, levels_from_aks


def test_levels_are_the_labels_aks_puts_on_every_node():
    assert levels_from_aks(["zone", "hostname"]) == [{"nodeLabel": "topology.kubernetes.io/zone"},
                                                     {"nodeLabel": "kubernetes.io/hostname"}]
    # The capacity model labels nodes the same way: a non-zonal pool's nodes are in zone "0".
    plain = node_labels(Pool(name="cpu", vm_size="Standard_D8s_v5", max_count=1, max_pods=110), "eastus")
    zonal = node_labels(Pool(name="cpu", vm_size="Standard_D8s_v5", max_count=1, max_pods=110, zones=("1", "2")),
                        "eastus")
    assert plain[AKS_LEVELS["zone"]] == {NON_ZONAL_ZONE} and zonal[AKS_LEVELS["zone"]] == {"eastus-1", "eastus-2"}


@pytest.mark.parametrize("names, fine", [(["zone", "hostname"], True), (["zone"], True), (["hostname"], True),
                                         (["hostname", "zone"], False), (["zone", "zone"], False), ([], False),
                                         (["rack"], False)])
def test_from_aks_lists(names, fine):
    assert (from_aks_problem(names) is None) is fine


def test_only_the_classes_aks_answers_pass():
    assert all(class_problem(c) is None for c in PROVISIONING_CLASSES)
    assert "not a class AKS's cluster autoscaler provides" in class_problem("queued-provisioning.gke.io").message
