"""The aks-kueue CrossGuard policy pack, generated from the judge's rule registry
(`aks_kueue/judge/rules.py`, `base.build`). `policy/__main__.py` serves `POLICIES` to the Pulumi
engine, and `aks_kueue.preview.pack` runs the same policies over an offline preview."""

from aks_kueue.policies.base import build

PACK_NAME = "aks-kueue"
# The offline run reports this version; `policy/PulumiPolicy.yaml` gives the engine its own.
PACK_VERSION = "0.2.0"
POLICIES = build()

__all__ = ["PACK_NAME", "PACK_VERSION", "POLICIES"]
