"""The one cohort-cycle finder."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from aks_kueue.kueue.cohorts import cohort_cycles


def test_each_loop_is_found_once_in_link_order():
    parents = {"a": "b", "b": "c", "c": "a", "d": "a", "e": "e", "f": "g", "x": "y", "y": "x"}
    assert cohort_cycles(parents) == [["a", "b", "c"], ["e"], ["x", "y"]]


def test_a_tree_has_no_loop():
    assert cohort_cycles({"a": "root", "b": "root", "c": "a"}) == []


@given(st.dictionaries(st.sampled_from("abcdefgh"), st.sampled_from("abcdefghi"), max_size=8))
@settings(max_examples=60)
def test_a_cohort_is_in_a_loop_exactly_when_following_its_parents_comes_back(parents):
    def returns(start):
        node, steps = parents.get(start), 0
        while node is not None and steps <= len(parents):
            if node == start:
                return True
            node, steps = parents.get(node), steps + 1
        return False

    loops = cohort_cycles(parents)
    members = [name for loop in loops for name in loop]
    assert len(members) == len(set(members))
    assert set(members) == {name for name in parents if returns(name)}
    for loop in loops:
        assert all(parents[name] == loop[(i + 1) % len(loop)] for i, name in enumerate(loop))
