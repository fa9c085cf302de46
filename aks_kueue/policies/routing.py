"""Which policy reports which finding: one table, so every finding is reported exactly once.

A finding of severity error goes to the policy of its kind, which is mandatory unless the
policy config says otherwise. A warning goes to the policy of its kind where that policy
reports warnings (`kueue-managed-extension-region`), and otherwise to the advisory
`aks-kueue-warnings`. The security baseline's checks are errors in production stacks
(their own mandatory policies) and warnings in development stacks (`aks-kueue-warnings`).
"""

from __future__ import annotations

from aks_kueue.judge import (RESOURCE_UNREADABLE, capacity, fleet, install, objects, provisioning, security, topology,
                             workloads)
from aks_kueue.judge.finding import WARNING, Finding

WARNINGS = "aks-kueue-warnings"
READABLE = "aks-kueue-resources-readable"
OBJECTS_VALID = "kueue-objects-valid"
SINGLE_INSTALLER = "kueue-single-installer"
INSTALL_MODE = "kueue-install-mode"
PREVIEW_TRAIN = "kueue-no-preview-train-in-prod"
QUOTA_FITS = "kueue-quota-fits-capacity"
FLAVORS_MATCH = "kueue-flavors-match-pools"
WORKLOADS_FIT = "kueue-expected-workloads-fit"
MANAGED_LIMITS = "kueue-managed-extension-limits"
MANAGED_REGION = "kueue-managed-extension-region"
PROVISIONING = "kueue-provisioning-request-supported"
FLEET = "kueue-multikueue-fleet"

POLICY_OF_KIND: dict[str, str] = {
    RESOURCE_UNREADABLE: READABLE,
    objects.OBJECT_INVALID: OBJECTS_VALID, objects.NAMESPACE_UNUSABLE: OBJECTS_VALID,
    objects.WORKLOAD_INVALID: WORKLOADS_FIT,
    **{kind: SINGLE_INSTALLER for kind in install.SINGLE_KINDS},
    **{kind: INSTALL_MODE for kind in install.MODE_KINDS},
    install.PREVIEW_TRAIN: PREVIEW_TRAIN,
    **{kind: MANAGED_LIMITS for kind in install.MANAGED_KINDS},
    install.MANAGED_REGION: MANAGED_REGION,
    **{kind: QUOTA_FITS for kind in capacity.QUOTA_KINDS},
    **{kind: FLAVORS_MATCH for kind in capacity.FLAVOR_KINDS},
    **{kind: WORKLOADS_FIT for kind in workloads.KINDS},
    **{kind: WORKLOADS_FIT for kind in (*provisioning.WORKLOAD_KINDS, *topology.WORKLOAD_KINDS)},
    **{kind: FLAVORS_MATCH for kind in topology.FLAVOR_KINDS},
    **{kind: PROVISIONING for kind in provisioning.AVAILABILITY_KINDS},
    **{kind: kind for kind in security.KINDS},
    **{kind: FLEET for kind in fleet.KINDS},
}
# Policies that report warnings of their own kinds rather than leaving them to aks-kueue-warnings.
REPORTS_WARNINGS = {MANAGED_REGION}


def policy_for(finding: Finding) -> str:
    policy = POLICY_OF_KIND.get(finding.kind, WARNINGS)
    if finding.severity == WARNING and policy not in REPORTS_WARNINGS:
        return WARNINGS
    return policy
