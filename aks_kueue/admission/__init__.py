"""The admission core: a Python model of Kueue's quota semantics, without Pulumi.

This version holds the quota tree (`quota`). The flavor assigner, `simulate` and the
"can this ever be admitted" API build on it.
"""
