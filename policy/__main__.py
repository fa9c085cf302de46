"""The aks-kueue policy pack, as the Pulumi engine starts it (`python -m pulumi.policy <engine> policy`).

Only the PolicyPack is built here: constructing it starts the analyzer's gRPC server and
never returns, so the policies themselves live in `aks_kueue/policies/`, where the tests
and `aks-kueue preview` import them. The project root goes first on sys.path because the
engine runs this file with only `policy/` on it, and the pack judges with the program's
own Kueue validator, capacity model and admission core.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pulumi_policy import EnforcementLevel, PolicyPack  # noqa: E402

from aks_kueue.policies import PACK_NAME, POLICIES  # noqa: E402

PolicyPack(
    name=PACK_NAME,
    policies=POLICIES,
    # Each policy states its own level; this applies only to a policy that states none.
    enforcement_level=EnforcementLevel.ADVISORY,
    description="Kueue quota that the node pools can honour, a sound Kueue install, and the AKS security baseline",
)
