"""The aks-kueue CrossGuard policy pack: its policies, and the pack run over an offline preview.

`policy/__main__.py` serves `POLICIES` to the Pulumi engine; `evaluate` runs the same
policies, through the same pulumi_policy servicer, over what `aks-kueue preview` recorded.
"""

from __future__ import annotations

from typing import Any, Optional

from aks_kueue.policies import capacity, install, security
from aks_kueue.policies.config import config_error
from aks_kueue.preview.pack import run_pack

PACK_NAME = "aks-kueue"
# The offline run reports this version; `policy/PulumiPolicy.yaml` gives the engine its own.
PACK_VERSION = "0.1.0"
POLICIES: list = [*install.POLICIES, *capacity.POLICIES, *security.POLICIES]


def evaluate(run: Any, config: Optional[dict] = None) -> list[dict]:
    """Every policy of the pack over a recorded offline preview (`aks_kueue.preview.run.ProgramRun`),
    with `config` in the JSON shape of `pulumi preview --policy-pack-config`.

    Returns `[{"policy", "enforcementLevel", "urn", "message"}]` ordered by policy, URN and
    message. Disabled policies report nothing; a value unknown during preview gives the
    runtime's advisory "can't run policy ... during preview". ValueError on an invalid config.
    """
    return run_pack(PACK_NAME, PACK_VERSION, POLICIES, run, config)


def policy_config_error(config: Any) -> Optional[str]:
    """A sentence saying what is wrong with a policy config, or None when it is valid."""
    return config_error(POLICIES, config)


__all__ = ["PACK_NAME", "PACK_VERSION", "POLICIES", "evaluate", "policy_config_error"]
