"""The replace-forcing facts: the data names the pinned provider, and its paths are real inputs."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from pulumi_azure_native import containerservice as cs, resources

from aks_kueue.day2.replacement import (AGENT_POOL, MAINTENANCE_CONFIGURATION, MANAGED_CLUSTER, RESOURCE_GROUP,
                                        changes, extract, facts, replace_on_changes)
from aks_kueue.versions import AZURE_NATIVE_REQUIRES

ROOT = Path(__file__).resolve().parents[2]


def test_the_data_is_for_the_installed_and_pinned_provider():
    data = facts()
    installed = version("pulumi-azure-native")
    assert installed == data.azure_native_version
    assert installed in SpecifierSet(data.azure_native_requires)
    assert data.azure_native_requires == AZURE_NATIVE_REQUIRES
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'"pulumi-azure-native{AZURE_NATIVE_REQUIRES}"' in pyproject
    # The API version the data describes is the one the installed SDK uses.
    source = Path(cs.managed_cluster.__file__).read_text()
    assert f"Uses Azure REST API version {data.api_version}." in source


def _input_names(args_class) -> set[str]:
    """The provider (camelCase) names of an SDK input type, from its getters."""
    source = Path(__import__(args_class.__module__, fromlist=["x"]).__file__).read_text()
    block = source.split(f"class {args_class.__name__}:", 1)[1].split("\nclass ", 1)[0]
    names = set(re.findall(r'@pulumi\.getter\(name="(\w+)"\)', block))
    names |= set(re.findall(r"@pulumi\.getter\n    def (\w+)\(", block))
    return names


NESTED = {
    MANAGED_CLUSTER: {"networkProfile": cs.ContainerServiceNetworkProfileArgs},
    AGENT_POOL: {"networkProfile": cs.AgentPoolNetworkProfileArgs},
}
TOP = {RESOURCE_GROUP: resources.ResourceGroupArgs, MANAGED_CLUSTER: cs.ManagedClusterArgs,
       AGENT_POOL: cs.AgentPoolArgs, MAINTENANCE_CONFIGURATION: cs.MaintenanceConfigurationArgs}


@pytest.mark.parametrize("type_token", list(TOP))
def test_every_path_is_an_input_of_the_pinned_sdk(type_token):
    entry = facts().resources[type_token]
    top = _input_names(TOP[type_token])
    assert entry.paths
    for path in entry.paths:
        head, _, leaf = path.partition(".")
        if type_token == RESOURCE_GROUP and head == "resourceGroupName" or head in ("resourceName",):
            continue  # URL path parameters (the SDK spells resourceName `resource_name_`)
        assert head in top, f"{type_token}: {head} is not an input of {TOP[type_token].__name__}"
        if leaf:
            assert leaf in _input_names(NESTED[type_token][head]), f"{type_token}: {path}"


def test_aks_create_only_fields_are_declared_replace_on_changes_and_sourced():
    entry = facts().resources[AGENT_POOL]
    assert set(replace_on_changes(AGENT_POOL)) == {"availabilityZones", "enableEncryptionAtHost", "osDiskType",
                                                   "osDiskSizeGB", "maxPods", "scaleSetPriority",
                                                   "scaleSetEvictionPolicy"}
    # Each with its source and the sentence it comes from.
    assert all(("learn.microsoft.com" in why and '"' in why) or "aks.md" in why
               for why in entry.aks_create_only.values())
    assert replace_on_changes(MANAGED_CLUSTER) == []  # azure-native's own list covers the cluster


def test_extract_keeps_only_forcing_paths_and_changes_compares_them():
    inputs = {"resourceGroupName": "rg", "resourceName": "aks", "location": "eastus", "kubernetesVersion": "1.34",
              "networkProfile": {"networkPlugin": "azure", "loadBalancerSku": "standard"}}
    found = extract(MANAGED_CLUSTER, inputs)
    assert found == {"resourceGroupName": "rg", "resourceName": "aks", "location": "eastus",
                     "networkProfile.networkPlugin": "azure"}
    moved = extract(MANAGED_CLUSTER, {**inputs, "location": "westus", "kubernetesVersion": "1.35"})
    assert [(c.path, c.old, c.new) for c in changes(MANAGED_CLUSTER, found, moved)] == [
        ("location", "eastus", "westus")]
    # A forcing input that appears (or goes) forces a replacement too.
    added = {**found, "diskEncryptionSetID": "/des"}
    assert [c.path for c in changes(MANAGED_CLUSTER, found, added)] == ["diskEncryptionSetID"]
    assert changes("azure-native:unknown:Thing", found, moved) == []


# How the pinned SDK's descriptions (from the AKS API spec) say an input is fixed at creation.
_CREATE_ONLY_WORDS = re.compile(r"after creation|at creation|creation time|once set|cannot be changed|"
                                r"can't be changed|can not be changed|immutable|only be set", re.I)


def _sent_agent_pool_inputs() -> set[str]:
    """The AgentPool inputs the program sends for prod's pools and a Spot pool, in camelCase."""
    from components.node_pools.inputs import created_with, pool_inputs
    from tests.conftest import edited, model_of

    def spot(c):
        c["aks-kueue:nodePools"][0]["spot"] = True
    names = set()
    for config in (edited("prod", lambda c: None), edited("prod", spot)):
        model = model_of(config, "prod")
        for pool in (*model.pools, *model.cluster.system_pools):
            names |= {re.sub(r"_(\w)", lambda m: m.group(1).upper(), k) for k, v in
                      pool_inputs(pool, {}, created_with(pool)).items() if v is not None}
    return names


def test_every_create_only_pool_input_the_program_sends_replaces_the_pool():
    """What the pinned SDK marks as fixed at creation, and the program sends, is in the data."""
    source = Path(cs.agent_pool.__file__).read_text()
    block = source.split("class AgentPoolArgs:", 1)[1].split("\nclass ", 1)[0]
    marked = {re.sub(r"_(\w)", lambda m: m.group(1).upper(), name)
              for name, text in re.findall(r":param [^\n]*?\] (\w+): ([^\n]*)", block)
              if _CREATE_ONLY_WORDS.search(text)}
    assert "osDiskType" in marked  # the words find what the SDK says
    sent = _sent_agent_pool_inputs()
    assert {"maxPods", "vmSize", "scaleSetPriority", "scaleSetEvictionPolicy"} <= sent
    paths = set(facts().resources[AGENT_POOL].paths)
    assert marked & sent <= paths, marked & sent - paths
