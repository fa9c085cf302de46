"""aks-kueue: the pure-Python side of the AKS + Kueue platform program.

Settings, Kueue facts and the offline preview live here. Nothing in this package
registers Pulumi resources; `components/` does that from validated settings.
"""

__version__ = "0.1.0"
