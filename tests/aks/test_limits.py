"""Every limit of `aks_kueue/aks/limits.py` is cited data: a URL and the words there that state it."""

from __future__ import annotations

import re
import types

import pytest

from aks_kueue.aks import limits
from aks_kueue.aks.limits import Citation, Cited, Range

_WORDS = {0: "zero", 1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight",
          9: "nine", 10: "ten"}


def states(quote: str, number: int) -> bool:
    """The quote gives the number, as digits (5000 or 5,000) or, up to ten, in words."""
    spellings = {str(number), f"{number:,}"} | ({_WORDS[number]} if number in _WORDS else set())
    return any(re.search(rf"(?<![\d.])(?<!\d,){re.escape(s)}(?!\d|,\d)", quote, re.IGNORECASE) for s in spellings)


def cited(citation: object) -> bool:
    return (isinstance(citation, Citation) and citation.url.startswith("https://") and bool(citation.name.strip())
            and bool(citation.quote.strip()))


def uncited(module: types.ModuleType) -> list[str]:
    """The module's limits (public upper-case numbers, ranges and citations) that lack a citation
    stating them."""
    found = []
    for name, value in vars(module).items():
        if not name.isupper() or name.startswith("_") or isinstance(value, (str, bool)):
            continue
        if isinstance(value, Range):
            ok = cited(value.citation) and value.minimum <= value.maximum and all(
                states(value.citation.quote, n) for n in (value.minimum, value.maximum))
        elif isinstance(value, int):
            ok = isinstance(value, Cited) and cited(value.citation) and states(value.citation.quote, int(value))
        else:
            ok = cited(value)
        if not ok:
            found.append(name)
    return found


def test_every_limit_has_a_citation_stating_it():
    assert uncited(limits) == []


def test_the_check_fails_on_a_limit_without_a_citation():
    fake = types.ModuleType("fake_limits")
    source = Citation("a page", "https://example.org/page", "at most 12 of them")
    fake.GOOD = Cited(12, source)
    fake.BARE = 12
    fake.WRONG_NUMBER = Cited(13, source)
    fake.NO_URL = Cited(12, Citation("a page", "", "at most 12 of them"))
    fake.RANGE_WITHOUT_ITS_MAXIMUM = Range("x", 1, 99, "units", source)
    fake.TEXT = "Linux"
    assert uncited(fake) == ["BARE", "WRONG_NUMBER", "NO_URL", "RANGE_WITHOUT_ITS_MAXIMUM"]


def test_the_module_has_the_limits_issue_17_names():
    ranges = {name: value for name, value in vars(limits).items() if isinstance(value, Range)}
    assert {(r.field, r.minimum, r.maximum) for r in ranges.values()} == {
        ("intervalDays", 1, 7), ("intervalWeeks", 1, 4), ("intervalMonths", 1, 6), ("dayOfMonth", 1, 31),
        ("durationHours", 4, 24), ("drainTimeoutInMinutes", 1, 1440), ("nodeSoakDurationInMinutes", 0, 30)}
    assert all("/2025-09-01/managedClusters.json" in r.citation.url for r in ranges.values())


@pytest.mark.parametrize("number,quote,expected", [
    (5000, "5,000 across all node pools", True), (4, "at least 4 vCPUs", True), (2, "fewer than two vCPUs", True),
    (30, "a minimum of 300 pods", False), (1, "1440", False), (24, "from 4 to 24 hours.", True),
    (5, "5,000 nodes", False), (1, '"minimum": 1, "maximum": 7', True),
])
def test_states_reads_numbers_as_people_write_them(number, quote, expected):
    assert states(quote, number) is expected


def test_a_cited_number_is_the_number():
    assert limits.MAX_NODES_PER_POOL == 1000 and limits.MAX_NODES_PER_POOL + 1 == 1001
    assert isinstance(limits.MIN_PODS_PER_POOL, int) and limits.MIN_PODS_PER_POOL.citation.url.endswith(
        "concepts-network-ip-address-planning")


@pytest.mark.parametrize("max_pods,nodes,refused", [
    (10, 3, False), (10, 2, True), (29, 0, True), (30, 0, False), (250, 0, False), (15, 2, False), (14, 2, True)])
def test_the_pod_floor(max_pods, nodes, refused):
    problem = limits.pod_floor_problem(max_pods, nodes, "minCount", "its minCount")
    assert (problem is not None) is refused
