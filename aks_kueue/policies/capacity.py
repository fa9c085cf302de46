"""The feasibility analysis as policies: one per family of findings, mandatory by default.

Each policy runs `aks_kueue.feasibility.analyse` on the world rebuilt from the resources
(the same function the settings-based preview runs) and reports its own kinds of finding,
pinned to the resource the finding is about.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable

from pulumi_policy import PolicyConfigSchema

from aks_kueue.kueue import catalog as cat
from aks_kueue.aks.allocatable import DEFAULT_VM_OVERHEAD
from aks_kueue.feasibility import Finding
from aks_kueue.policies.base import Violation, stack_policy
from aks_kueue.policies.kueue_checks import workload_problems
from aks_kueue.policies.world import World

VM_OVERHEAD_SCHEMA = PolicyConfigSchema(properties={"vmOverheadPercent": {
    "type": "number", "minimum": 0, "maximum": 50, "default": float(DEFAULT_VM_OVERHEAD * 100),
    "description": "share of a VM's memory kubelet does not report, in percent (AKS node auto-provisioning "
                   "assumes 7.5)"}})


def overhead(config: dict) -> Fraction:
    return Fraction(str(config.get("vmOverheadPercent", DEFAULT_VM_OVERHEAD * 100))) / 100


def violations(world: World, kinds: Iterable[str], vm_overhead: Fraction = DEFAULT_VM_OVERHEAD) -> list[Violation]:
    analysis = world.analysis(vm_overhead)
    if analysis is None:
        return []
    wanted = set(kinds)
    return [(as_message(f), world.urns.get(f.object)) for f in analysis.findings if f.kind in wanted]


def as_message(finding: Finding) -> str:
    return f"{finding.field}: {finding.message}; {finding.fix}"


QUOTA_KINDS = ("quota-above-capacity", "borrowing-above-capacity")
FLAVOR_KINDS = ("flavor-lands-nowhere", "flavor-resource-missing", "taint-not-tolerated")
WORKLOAD_KINDS = ("workload-not-admitted", "pod-fits-no-node", "podset-exceeds-pools", "podset-conflicting-flavors")
MANAGED_KINDS = ("managed-kubernetes-version", "managed-node-provisioning", "managed-integration",
                 "managed-reserved-name")


def _expected_workloads(world: World, config: dict) -> list[Violation]:
    refused = [(f"{p}", p.urn) for p in workload_problems(world)]
    return refused + violations(world, WORKLOAD_KINDS, overhead(config))


def _region(world: World, config: dict) -> list[Violation]:
    allowed = set(config.get("additionalRegions") or [])
    if world.cluster is not None and world.cluster.region in allowed:
        return []
    return violations(world, ["managed-region"])


QUOTA_FITS = stack_policy(
    "kueue-quota-fits-capacity",
    "Kueue quota (nominal, and what a ClusterQueue can borrow) stays within what the node pools its flavors "
    "select can allocate at their autoscaler maximum.",
    lambda world, config: violations(world, QUOTA_KINDS, overhead(config)), schema=VM_OVERHEAD_SCHEMA)

FLAVORS_MATCH = stack_policy(
    "kueue-flavors-match-pools",
    "Every ResourceFlavor lands on a node pool, its quota names resources those nodes have, and every pool "
    "taint is declared or tolerated by the flavors landing there.",
    lambda world, config: violations(world, FLAVOR_KINDS))

WORKLOADS_FIT = stack_policy(
    "kueue-expected-workloads-fit",
    "Every expected workload is a valid Kueue Workload on an existing queue, is admitted by its ClusterQueue "
    "alone on an empty cluster, and its pods fit the nodes of the pools its flavors select.",
    _expected_workloads, schema=VM_OVERHEAD_SCHEMA)

MANAGED_LIMITS = stack_policy(
    "kueue-managed-extension-limits",
    "The AKS managed Kueue extension runs on AKS 1.34 or later, with the cluster autoscaler (no node "
    "auto-provisioning), and owns every Kueue object named aks-*.",
    lambda world, config: violations(world, MANAGED_KINDS))

MANAGED_REGION = stack_policy(
    "kueue-managed-extension-region",
    f"The AKS managed Kueue extension is documented only in {', '.join(cat.MANAGED_REGIONS)}. Mandatory like "
    "every feasibility finding; set it to advisory in the policy config, or list the region in "
    "additionalRegions, if you know the extension is offered there.",
    _region,
    schema=PolicyConfigSchema(properties={"additionalRegions": {
        "type": "array", "items": {"type": "string"}, "default": [],
        "description": "regions where you know the extension is offered beyond the documented ones"}}))

POLICIES = [QUOTA_FITS, FLAVORS_MATCH, WORKLOADS_FIT, MANAGED_LIMITS, MANAGED_REGION]
