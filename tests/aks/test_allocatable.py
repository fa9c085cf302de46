"""Node allocatable against the worked AKS table, and the stacks' quotas against it."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

import pytest

from aks_kueue.aks.allocatable import default_max_pods, node_allocatable, reserved_cpu_millicores
from aks_kueue.k8s.quantity import parse_quantity
from aks_kueue.aks.nodes import AGENTPOOL
from aks_kueue.settings import parse_settings
from tests.conftest import flat, model_of, stack_doc

# aks.md section a.5: vCPU, GiB, allocatable CPU (m), allocatable GiB at 30 / 110 / 250 pods,
# computed by the AKS formula without a VM-overhead margin.
TABLE = [
    ("Standard_D4s_v5", 4, 16, 3860, (15.27, 13.71, 11.90)),
    ("Standard_D8s_v5", 8, 32, 7820, (31.27, 29.71, 26.97)),
    ("Standard_D16s_v5", 16, 64, 15740, (63.27, 61.71, 58.97)),
    ("Standard_E8s_v5", 8, 64, 7820, (63.27, 61.71, 58.97)),
    ("Standard_NC24ads_A100_v4", 24, 220, 23660, (219.27, 217.71, 214.97)),
    ("Standard_NC40ads_H100_v5", 40, 320, 39500, (319.27, 317.71, 314.97)),
    ("Standard_ND96isr_H100_v5", 96, 1900, 94940, (1899.27, 1897.71, 1894.97)),
]


@pytest.mark.parametrize("size,vcpus,gib,cpu_m,memory", TABLE)
def test_allocatable_matches_the_worked_table(size, vcpus, gib, cpu_m, memory):
    for pods, expected_gib in zip((30, 110, 250), memory):
        node = node_allocatable(vcpus, gib, pods, vm_overhead=Fraction(0))
        assert node.cpu_millicores == cpu_m
        assert round(node.memory_bytes / 2**30, 2) == expected_gib, (size, pods)


@pytest.mark.parametrize("cores,reserved", [(1, 60), (2, 100), (4, 140), (8, 180), (16, 260), (32, 420), (64, 740)])
def test_cpu_reservation_brackets(cores, reserved):
    assert reserved_cpu_millicores(cores) == reserved


def test_every_figure_is_explained():
    lines = node_allocatable(16, 64, 110).explanation
    assert lines[0] == "cpu: 16 vCPU = 16000m, less 260m kube-reserved"
    assert "7.5% VM overhead" in lines[1] and "2250 MiB" in lines[2]


def _capacity_by_flavor(stack: str) -> tuple[dict, dict]:
    settings = parse_settings(flat(stack_doc(stack)))
    model = model_of(stack_doc(stack))
    pools = {p.name: p for p in settings.node_pools}
    net = settings.cluster.network
    capacity = {}
    for flavor in model.of_kind("ResourceFlavor"):
        pool = pools[flavor.manifest["spec"]["nodeLabels"][AGENTPOOL]]
        node = node_allocatable(pool.size.vcpus, pool.size.memory_gib,
                                pool.max_pods or default_max_pods(net.plugin, net.plugin_mode))
        capacity[flavor.name] = {"cpu": Fraction(node.cpu_millicores, 1000) * pool.max_count,
                                 "memory": node.memory_bytes * pool.max_count,
                                 "nvidia.com/gpu": int(pool.size.gpus) * pool.max_count}
    quota: dict = defaultdict(lambda: defaultdict(Fraction))
    for cq in model.of_kind("ClusterQueue"):
        for group in cq.manifest["spec"]["resourceGroups"]:
            for flavor in group["flavors"]:
                for resource in flavor["resources"]:
                    quota[flavor["name"]][resource["name"]] += parse_quantity(resource["nominalQuota"])
    return capacity, quota


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_stack_quotas_fit_the_pools_at_their_maximum(stack):
    capacity, quota = _capacity_by_flavor(stack)
    for flavor, resources in quota.items():
        for resource, amount in resources.items():
            assert amount <= capacity[flavor][resource], (stack, flavor, resource, float(amount),
                                                          float(capacity[flavor][resource]))


# aks.md section a.5's kube-reserved memory column (MiB at 30 / 110 / 250 pods) for the same sizes.
RESERVED_MIB = {"Standard_D4s_v5": (650, 2250, 4096)}


@pytest.mark.parametrize("size,vcpus,gib,cpu_m,memory", TABLE)
def test_allocatable_to_the_mib(size, vcpus, gib, cpu_m, memory):
    """capacity - the table's kube-reserved column - 100 MiB eviction, exactly."""
    reserved = RESERVED_MIB.get(size, (650, 2250, 5050))
    for pods, reserved_mib in zip((30, 110, 250), reserved):
        node = node_allocatable(vcpus, gib, pods, vm_overhead=Fraction(0))
        assert node.memory_bytes == (gib * 1024 - reserved_mib - 100) * 2**20, (size, pods)


@pytest.mark.parametrize("size,vcpus,gib,cpu_m,memory", TABLE)
def test_pool_nodes_subtract_the_device_plugin_on_gpu_pools_only(size, vcpus, gib, cpu_m, memory):
    from aks_kueue.aks.device_plugin import REQUESTS
    from aks_kueue.aks.nodes import node_resources
    from aks_kueue.model.from_settings import user_pool
    from aks_kueue.settings.pools import NodePool

    pool = NodePool.model_validate({"name": "p", "vmSize": size, "minCount": 0, "maxCount": 2, "maxPods": 110})
    node = node_resources(user_pool(pool, 0, parse_settings(flat(stack_doc("dev")))))
    base = node_allocatable(vcpus, gib, 110)
    plugin = pool.needs_device_plugin
    assert plugin == (pool.size.gpu_vendor == "nvidia")
    assert node.amounts["cpu"] == base.cpu_millicores - (parse_quantity(REQUESTS["cpu"]) * 1000 if plugin else 0)
    assert node.amounts["memory"] == base.memory_bytes - (parse_quantity(REQUESTS["memory"]) if plugin else 0)
    assert node.amounts["pods"] == 110 - plugin
    assert any("nvidia-device-plugin" in line for line in node.explanation) == plugin
