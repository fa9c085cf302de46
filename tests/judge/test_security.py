"""The AKS production security baseline (`aks_kueue/judge/security.py`): each check fails on the
setting it names, is an error in production and a warning in development, and the prod stack
passes every one of them."""

from __future__ import annotations

import json

import pytest

from aks_kueue.day2.state import from_outputs
from aks_kueue.judge import judge
from aks_kueue.judge.finding import ERROR, WARNING
from aks_kueue.judge.rules import RULES, Judging, run
from aks_kueue.judge.security import public_ranges
from aks_kueue.model.record import settled
from aks_kueue.settings import parse_settings
from tests.conftest import edited, flat, model_of, run_config, stack_doc

KINDS = tuple(kind for kind, each in RULES.items() if each.baseline)
WORKSPACE = ("/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/shared/providers/"
             "Microsoft.OperationalInsights/workspaces/central")


def baseline(config, stack="prod", model=None):
    model = model or model_of(config, stack)
    return run(Judging(model), keep=lambda each: each.baseline)


def kinds(findings, severity=None):
    return sorted({f.kind for f in findings if severity is None or f.severity == severity})


@pytest.mark.parametrize("ranges, family", [
    (["0.0.0.0/0"], "IPv4"),
    (["0.0.0.0/1", "128.0.0.0/1"], "IPv4"),
    (["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/1"], "IPv4"),
    (["::/0"], "IPv6"),
    (["::/1", "8000::/1"], "IPv6"),
    (["203.0.113.0/24", "::/1", "8000::/1"], "IPv6"),
    (["0.0.0.0/1"], None),
    (["0.0.0.0/1", "::/1"], None),           # half of each family is not every address of either
    (["0.0.0.0/1", "128.0.0.0/2"], None),
    (["10.0.0.1", "fd00::1"], None),
    (["not-a-range"], None),
])
def test_public_is_judged_by_the_union_of_the_ranges_per_family(ranges, family):
    assert public_ranges(tuple(ranges)) == family


def test_halves_of_the_address_space_are_as_public_as_everything():
    def edit(c):
        c["aks-kueue:cluster"]["security"]["apiServerAuthorizedIpRanges"] = ["0.0.0.0/1", "128.0.0.0/1"]
    found = [f for f in baseline(edited("prod", edit)) if f.kind == "aks-api-server-access-restricted"]
    assert len(found) == 1 and found[0].severity == ERROR and "every IPv4 address" in found[0].message


def test_the_prod_stack_passes_every_check_and_another_name_changes_nothing():
    config = stack_doc("prod")
    found = baseline(config)
    assert kinds(found, ERROR) == []
    # Not even a note: every pool has an ephemeral OS disk (the A100's sized to its 64 GiB temp disk).
    assert found == []
    assert judge(model_of(config, "prd")).findings == judge(model_of(config, "prod")).findings


def test_every_check_names_its_source_and_how_to_relax_it():
    for kind, check in ((k, RULES[k]) for k in KINDS):
        assert check.title.endswith(".") and check.source, kind
        assert "checkov" in check.source or "learn.microsoft.com" in check.source, kind


def _security(**values):
    def edit(c):
        c["aks-kueue:cluster"]["security"].update(values)
    return edit


def _pool(index, **values):
    def edit(c):
        c["aks-kueue:nodePools"][index].update(values)
    return edit


def _cluster(**values):
    def edit(c):
        c["aks-kueue:cluster"].update(values)
    return edit


def _no_monitoring(c):
    del c["aks-kueue:monitoring"]


@pytest.mark.parametrize("kind, edit, key, words", [
    ("aks-azure-policy", _security(azurePolicy=False), "aks-kueue:cluster.security.azurePolicy", "Azure Policy"),
    ("aks-defender", _security(defender={"enabled": False}), "aks-kueue:cluster.security.defender", "turned off"),
    ("aks-image-cleaner", _security(imageCleaner={"enabled": False}), "aks-kueue:cluster.security.imageCleaner",
     "Image Cleaner is off"),
    ("aks-paid-tier", _cluster(tier="Free"), "aks-kueue:cluster.tier", "Free tier"),
    ("aks-max-pods", _pool(0, maxPods=30), "aks-kueue:nodePools[0].maxPods", "30 pods per node"),
    ("aks-ephemeral-os-disk", _pool(2, osDiskType="Managed"), "aks-kueue:nodePools[2].osDiskType",
     "OS disk is Managed"),
    ("aks-host-encryption", _pool(0, encryptionAtHost=False), "aks-kueue:nodePools[0].encryptionAtHost",
     "without host encryption"),
    ("aks-secrets-store-rotation", _security(keyVaultSecretsProvider={"secretRotation": False}),
     "aks-kueue:cluster.security.keyVaultSecretsProvider.secretRotation", "without rotation"),
])
def test_each_check_is_an_error_in_production_and_a_warning_in_development(kind, edit, key, words):
    config = edited("prod", edit)
    found = [f for f in baseline(config) if f.severity == ERROR]
    assert len(found) == 1 and (found[0].kind, found[0].key) == (kind, key) and words in found[0].message, found
    assert found[0].fix
    config["aks-kueue:environment"] = "development"
    assert [(f.kind, f.severity) for f in baseline(config) if f.key == key] == [(kind, WARNING)]
    assert kinds(baseline(config), ERROR) == []


def _monitoring_off(c):
    c["aks-kueue:monitoring"] = {"managedPrometheus": False, "containerInsights": False}


def settings_of(config):
    return parse_settings(flat(config))


def test_monitoring_turned_off_fails_both_parts_and_defender():
    found = baseline(edited("prod", _monitoring_off))
    assert {(f.kind, f.key) for f in found if f.severity == ERROR} == {
        ("aks-monitoring", "aks-kueue:monitoring.managedPrometheus"),
        ("aks-monitoring", "aks-kueue:monitoring.containerInsights"),
        ("aks-defender", "aks-kueue:cluster.security.defender")}
    defender = next(f for f in found if f.kind == "aks-defender")
    assert "not turned on by this stack" in defender.message and "containerInsights" in defender.fix


def test_production_without_the_key_turns_on_what_it_requires():
    config = edited("prod", _no_monitoring)
    assert not {"aks-monitoring", "aks-defender"} & set(kinds(baseline(config)))
    monitoring = settings_of(config).monitoring
    assert (monitoring.managed_prometheus, monitoring.container_insights, monitoring.kueue_metrics,
            monitoring.gpu_metrics, monitoring.dashboards) == (True, True, True, True, False)


def test_development_without_the_key_leaves_monitoring_alone_and_warns():
    def edit(c):
        _no_monitoring(c)
        c["aks-kueue:environment"] = "development"
    config = edited("prod", edit)
    assert settings_of(config).monitoring is None
    found = [f for f in baseline(config) if f.kind == "aks-monitoring"]
    assert found and all(f.severity == WARNING for f in found)


def test_defender_with_its_own_workspace_needs_no_monitoring():
    def edit(c):
        _no_monitoring(c)
        c["aks-kueue:cluster"]["security"]["defender"] = {"logAnalyticsWorkspaceId": WORKSPACE}
    assert "aks-defender" not in kinds(baseline(edited("prod", edit)))


def test_the_secrets_provider_is_judged_only_where_it_is_on():
    assert "aks-secrets-store-rotation" not in kinds(baseline(edited("prod", _security(
        keyVaultSecretsProvider={}))))
    assert "aks-secrets-store-rotation" not in kinds(baseline(edited("prod", _security(
        keyVaultSecretsProvider={"enabled": False}))))


def test_a_size_the_catalog_does_not_know_is_not_checked_and_says_so():
    def edit(c):
        c["aks-kueue:nodePools"][0].update(vmSize="Standard_Z64s_v9", capacity={"cpu": 64, "memory": "256Gi"})
    found = [f for f in baseline(edited("prod", edit)) if f.key.startswith("aks-kueue:nodePools[0]")]
    assert {(f.kind, f.severity) for f in found} == {("aks-host-encryption", WARNING),
                                                     ("aks-ephemeral-os-disk", WARNING)}
    assert all("not checked" in f.message for f in found)
    # Stating it turns host encryption on: nothing left to say about it.
    edited_on = edited("prod", lambda c: (edit(c), c["aks-kueue:nodePools"][0].update(encryptionAtHost=True)))
    assert "aks-host-encryption" not in kinds(baseline(edited_on))


def _previous_without(config, entry, *facts):
    """What the last deployment left, its pool `entry` created without `facts` (before the program set them)."""
    outputs = json.loads(json.dumps(run_config(config, "prod", preview=False).outputs))
    for fact in facts:
        outputs["day2"]["resources"][entry]["facts"].pop(fact, None)
    return outputs


def test_create_only_settings_are_required_of_new_pools_and_advised_for_kept_ones():
    config = edited("prod", lambda c: (_pool(2, osDiskType="Managed")(c), _pool(0, encryptionAtHost=False)(c)))
    new = {f.kind: f for f in baseline(config) if f.kind in ("aks-ephemeral-os-disk", "aks-host-encryption")}
    assert {k: f.severity for k, f in new.items()} == {"aks-ephemeral-os-disk": ERROR, "aks-host-encryption": ERROR}
    # The same pools, deployed last time with these settings: AKS cannot change them in place.
    previous = from_outputs(json.loads(json.dumps(run_config(config, "prod", preview=False).outputs))).record
    kept = settled(model_of(config, "prod"), previous)
    assert all(p.existing for p in kept.pools)
    advised = {f.kind: f for f in baseline(config, model=kept) if f.key.startswith("aks-kueue:nodePools")}
    assert {k: f.severity for k, f in advised.items()} == {"aks-ephemeral-os-disk": WARNING,
                                                          "aks-host-encryption": WARNING}
    assert "nodePools.h100 in aks-kueue:allowReplacement" in advised["aks-ephemeral-os-disk"].fix


def test_a_pool_created_before_the_program_chose_its_os_disk_keeps_aks_choice():
    """A pool the last deployment created without osDiskType got what AKS picks (ephemeral where it
    fits), so it passes; nothing is sent that would replace it."""
    config = stack_doc("prod")
    previous = from_outputs(_previous_without(config, "nodePools.h100", "osDiskType", "osDiskSizeGB")).record
    kept = settled(model_of(config, "prod"), previous)
    h100 = next(p for p in kept.pools if p.name == "h100")
    assert h100.existing and h100.os_disk_type is None and h100.effective_os_disk_type == "Ephemeral"
    assert "aks-ephemeral-os-disk" not in kinds([f for f in baseline(config, model=kept) if "[2]" in f.key])


def test_every_kind_has_a_policy_of_its_own():
    from aks_kueue.policies import POLICIES

    names = {p.name for p in POLICIES}
    assert all(RULES[kind].policy == kind and RULES[kind].baseline and kind in names for kind in KINDS)


def test_the_security_page_lists_every_check_with_its_source():
    import re

    from tests.conftest import ROOT

    section = (ROOT / "docs" / "security.md").read_text()
    rows = {line.split("`")[1]: line for line in section.splitlines() if line.startswith("| `aks-")}
    assert set(rows) == set(KINDS)
    for kind, check in ((k, RULES[k]) for k in KINDS):
        for checkov in re.findall(r"CKV_AZURE_\d+", check.source):
            assert checkov in rows[kind], (kind, checkov)
