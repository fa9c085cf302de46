"""Cohort cycles: the one place the parentName links between Cohorts are followed to find loops.

Kueue disables every Cohort and ClusterQueue in or under a cycle; the object checks report each
loop, the admission snapshot cuts it, and the quota tree refuses to sum one.
"""

from __future__ import annotations

from typing import Mapping


def cohort_cycles(parents: Mapping[str, str]) -> list[list[str]]:
    """Each loop of `parents` (cohort -> its parentName) once, in link order, starting at the first
    member reached; linear in the number of links."""
    found: list[list[str]] = []
    explored: set[str] = set()
    for start in parents:
        chain: list[str] = []
        node = start
        while node in parents and node not in explored:
            explored.add(node)
            chain.append(node)
            node = parents[node]
        if node in chain:
            found.append(chain[chain.index(node):])
    return found
