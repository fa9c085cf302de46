"""The keys of the security baseline: their secure defaults, and bad values named by key."""

from __future__ import annotations

import pytest

from aks_kueue.settings import SettingsError, parse_settings
from tests.conftest import edited, flat, stack_doc

WORKSPACE = ("/subscriptions/11111111-2222-3333-4444-555555555555/resourceGroups/shared/providers/"
             "Microsoft.OperationalInsights/workspaces/central")


def problems(config: dict) -> list[str]:
    with pytest.raises(SettingsError) as error:
        parse_settings(flat(config))
    return [str(p) for p in error.value.problems]


def security(**values):
    return lambda c: c["aks-kueue:cluster"]["security"].update(values)


def pool(index, **values):
    return lambda c: c["aks-kueue:nodePools"][index].update(values)


def test_defaults_follow_the_baseline():
    sec = parse_settings(flat(stack_doc("prod"))).cluster.security
    assert sec.azure_policy is True
    assert (sec.image_cleaner.enabled, sec.image_cleaner.interval_hours) == (True, 168)
    assert sec.defender.enabled is None and sec.key_vault_secrets_provider is None
    provider = parse_settings(flat(edited("prod", security(keyVaultSecretsProvider={})))).cluster.security
    assert provider.key_vault_secrets_provider.enabled and provider.key_vault_secrets_provider.secret_rotation


def test_defender_uses_the_workspace_it_is_given_else_monitoring_s():
    assert parse_settings(flat(stack_doc("prod"))).defender_workspace == "monitoring"
    assert parse_settings(flat(stack_doc("dev"))).defender_workspace is None   # no monitoring: left alone
    own = edited("dev", security(defender={"logAnalyticsWorkspaceId": WORKSPACE}))
    assert parse_settings(flat(own)).defender_workspace == WORKSPACE
    assert parse_settings(flat(edited("prod", security(defender={"enabled": False})))).defender_workspace is None


@pytest.mark.parametrize("edit, expected", [
    (security(defender={"enabled": True}), "aks-kueue:cluster.security.defender.enabled: Defender for Containers "
     "needs a Log Analytics workspace and this stack has none"),
    (security(defender={"logAnalyticsWorkspaceId": "central"}), "aks-kueue:cluster.security.defender."
     "logAnalyticsWorkspaceId: 'central' is not a Log Analytics workspace resource id"),
    (security(defender={"enabled": False, "logAnalyticsWorkspaceId": WORKSPACE}),
     "aks-kueue:cluster.security.defender.logAnalyticsWorkspaceId: is used only while Defender is on"),
    (security(imageCleaner={"intervalHours": 12}), "aks-kueue:cluster.security.imageCleaner.intervalHours"),
    (security(imageCleaner={"intervalHours": 3000}), "aks-kueue:cluster.security.imageCleaner.intervalHours"),
    (security(keyVaultSecretsProvider={"rotationPollInterval": "soon"}),
     "aks-kueue:cluster.security.keyVaultSecretsProvider.rotationPollInterval: 'soon' is not a duration"),
    (security(keyVaultSecretsProvider={"secretRotation": False, "rotationPollInterval": "2m"}),
     "aks-kueue:cluster.security.keyVaultSecretsProvider.rotationPollInterval: is used only with secretRotation"),
    (security(azurePolicy="maybe"), "aks-kueue:cluster.security.azurePolicy"),
    (pool(0, osDiskType="Ephemeral"), "aks-kueue:nodePools[0].osDiskType: Standard_D8s_v5 does not support "
     "ephemeral OS disks"),
    (pool(1, vmSize="Standard_NC24ads_A100_v4", osDiskType="Ephemeral"), "aks-kueue:nodePools[1].osDiskType: an "
     "ephemeral OS disk of 128 GiB does not fit Standard_NC24ads_A100_v4, whose cache or temp disk holds 64 GiB; set "
     "osDiskSizeGb to 64 or less, or osDiskType: Managed"),
    (pool(1, osDiskType="Ephemeral", osDiskSizeGb=400), "aks-kueue:nodePools[1].osDiskSizeGb: an ephemeral OS disk "
     "of 400 GiB does not fit Standard_NC8as_T4_v3, whose cache or temp disk holds 352 GiB; set osDiskSizeGb to 352"),
    (pool(1, osDiskSizeGb=10), "aks-kueue:nodePools[1].osDiskSizeGb"),
    (pool(1, osDiskType="Ephemeral2"), "aks-kueue:nodePools[1].osDiskType"),
    (lambda c: c["aks-kueue:cluster"]["systemPool"].update(osDiskType="Ephemeral"),
     "aks-kueue:cluster.systemPool.osDiskType: Standard_D4s_v5 does not support ephemeral OS disks"),
])
def test_bad_values_name_their_key(edit, expected):
    found = problems(edited("dev", edit))
    assert any(p.startswith(expected) for p in found), found


def test_an_ephemeral_disk_that_fits_is_accepted():
    settings = parse_settings(flat(edited("dev", pool(1, osDiskType="Ephemeral", osDiskSizeGb=200))))
    assert (settings.node_pools[1].os_disk_type, settings.node_pools[1].os_disk_size_gb) == ("Ephemeral", 200)
