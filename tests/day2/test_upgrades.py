"""The version/channel rule, per channel, through the settings users write."""

from __future__ import annotations

import pytest

from aks_kueue.day2.upgrades import manages_kubernetes_version, version_channel_problem
from aks_kueue.settings import SettingsError, parse_settings
from tests.conftest import edited, flat


@pytest.mark.parametrize("channel,version,drifts,managed", [
    ("patch", "1.34", False, True),        # the channel keeps the newest 1.34 patch: nothing to undo
    ("patch", "1.34.6", True, True),       # the channel moves 1.34.6; the next up would go back: refused
    ("stable", "1.34", False, False),      # moves the minor: the version is only used to create the cluster
    ("stable", "1.34.6", False, False),
    ("rapid", "1.35", False, False),
    ("node-image", "1.34.6", False, True),  # node images only: the version stays put
    ("none", "1.34.6", False, True),
])
def test_version_and_channel(channel, version, drifts, managed):
    assert (version_channel_problem(version, channel) is not None) is drifts
    assert manages_kubernetes_version(channel) is managed

    def edit(c):
        c["aks-kueue:cluster"]["kubernetesVersion"] = version
        c["aks-kueue:cluster"].setdefault("security", {})["upgradeChannel"] = channel
    if drifts:
        with pytest.raises(SettingsError) as error:
            parse_settings(flat(edited("dev", edit)))
        (problem,) = error.value.problems
        assert problem.path == "aks-kueue:cluster.kubernetesVersion" and 'write "1.34"' in problem.fix
    else:
        assert parse_settings(flat(edited("dev", edit))).cluster.kubernetes_version == version
