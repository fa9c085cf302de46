"""The policies never crash on odd resources: 1,000 generated resource sets through the servicer.

Each set starts from resources shaped like the program's (cluster, pools, installers, Kueue
objects, namespaces, the expected-workloads ConfigMap, the device plugin, the provider)
and then loses fields, gets unknown values and values of the wrong type. Whatever comes
in, the pack answers with violations (an unknown gives the runtime's advisory), never
with an exception and never with the pack's own internal-failure violation.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings, strategies as st

import yaml

from aks_kueue.aks.device_plugin import daemonset
from aks_kueue.aks.pools import Pool
from aks_kueue.model.carrier import carrier_manifest
from aks_kueue.policies.base import INTERNAL_FAILURE
from aks_kueue.preview.pack import evaluate
from aks_kueue.preview.recorder import Registration
from components.kueue_install.values import manager_configuration

from tests.policies.args import CLUSTER, CLUSTER_PROPS, EXTENSION, POOL, PROVIDER, RELEASE, UNKNOWN, kueue, \
    pool_props, urn, workload

_T4 = Pool(name="t4", vm_size="Standard_NC8as_T4_v3", max_count=2, max_pods=110,
           taints=({"key": "sku", "value": "gpu", "effect": "NoSchedule"},))
TEMPLATES = [
    (CLUSTER, CLUSTER_PROPS),
    (POOL, pool_props("cpu", "Standard_D8s_v5", 3, availabilityZones=["1", "2"], nodeLabels={"team": "a"})),
    (POOL, pool_props("t4", "Standard_NC8as_T4_v3", 2, nodeTaints=["sku=gpu:NoSchedule"],
                      gpuProfile={"driver": "Install"}, scaleSetPriority="Spot")),
    (EXTENSION, {"extensionType": "microsoft.kueue", "releaseTrain": "preview", "autoUpgradeMinorVersion": True}),
    (RELEASE, {"chart": "oci://registry.k8s.io/kueue/charts/kueue", "version": "0.19.2", "values": {
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(manager_configuration(["batch/job"]))}}}),
    kueue("ResourceFlavor", "t4", {"nodeLabels": {"kubernetes.azure.com/agentpool": "t4"},
                                   "nodeTaints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]}),
    kueue("Cohort", "research", {}),
    kueue("ClusterQueue", "ml", {"cohortName": "research", "namespaceSelector": {}, "resourceGroups": [{
        "coveredResources": ["cpu", "nvidia.com/gpu"], "flavors": [{"name": "t4", "resources": [
            {"name": "cpu", "nominalQuota": "10", "borrowingLimit": "2"},
            {"name": "nvidia.com/gpu", "nominalQuota": "2"}]}]}]}),
    kueue("LocalQueue", "default", {"clusterQueue": "ml"}, namespace="ml"),
    kueue("WorkloadPriorityClass", "high", value=1000),
    ("kubernetes:core/v1:Namespace", {"apiVersion": "v1", "kind": "Namespace",
                                      "metadata": {"name": "ml", "labels": {"team": "ml"}}}),
    ("kubernetes:core/v1:ConfigMap", carrier_manifest([workload("job", {"cpu": "2", "nvidia.com/gpu": "1"}, 2)],
                                                      {"ClusterQueue ml": "aks-kueue:queues.clusterQueues[0]"},
                                                      "production")),
    ("kubernetes:apps/v1:DaemonSet", daemonset("nvidia-device-plugin", "none", [_T4])),
    (PROVIDER, {"kubeconfig": {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
                               "value": "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\n"}}),
]

ODD = st.one_of(st.none(), st.booleans(), st.integers(-3, 300), st.floats(-1e6, 1e6, allow_nan=False),
                st.text(max_size=6), st.just(UNKNOWN), st.just("1.33"), st.just("Standard_NC24ads_A100_v4"),
                st.lists(st.one_of(st.integers(0, 5), st.text(max_size=3)), max_size=2),
                st.dictionaries(st.text(max_size=4), st.integers(0, 5), max_size=2))


SECRET_SIG = "4dabf18193072939515e22adb298388d"


def paths(value, prefix=()):
    """Every key path into a template, to pick the ones to damage."""
    found = []
    if isinstance(value, dict) and SECRET_SIG not in value:  # the engine never sends a broken secret marker
        for key, child in value.items():
            found += [prefix + (key,)] + paths(child, prefix + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += [prefix + (index,)] + paths(child, prefix + (index,))
    return found


def damaged(props, edits):
    props = copy.deepcopy(props)
    for path, replacement, delete in edits:
        target = props
        try:
            for key in path[:-1]:
                target = target[key]
            if delete and isinstance(target, dict):
                target.pop(path[-1], None)
            else:
                target[path[-1]] = replacement
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit changed the shape above this path
    return props


PATHS = [st.sampled_from(paths(props)) for _, props in TEMPLATES]


@st.composite
def resource_sets(draw):
    chosen = draw(st.lists(st.integers(0, len(TEMPLATES) - 1), min_size=1, max_size=6))
    registrations = []
    for index, template in enumerate(chosen):
        type_token, props = TEMPLATES[template]
        edits = draw(st.lists(st.tuples(PATHS[template], ODD, st.booleans()), max_size=3))
        inputs = damaged(props, edits)
        earlier = [r.urn for r in registrations]
        depends_on = draw(st.lists(st.sampled_from(earlier), max_size=2, unique=True)) if earlier else []
        registrations.append(Registration(
            urn=urn(type_token, f"r{index}", draw(st.sampled_from(["dev", "prod"]))), type=type_token,
            name=f"r{index}", custom=True, parent=None, depends_on=depends_on, provider=None, inputs=inputs,
            raw_inputs=inputs, additional_secret_outputs=draw(st.sampled_from([[], ["kubeconfig"]]))))
    return SimpleNamespace(project="aks-kueue", stack="dev", registrations=registrations)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(resource_sets())
def test_odd_resource_sets_give_only_violations_or_passes(run):
    for violation in evaluate(run):
        assert violation.enforcement_level in ("mandatory", "advisory")
        assert INTERNAL_FAILURE not in violation.message, violation
        assert isinstance(violation.message, str) and violation.message
