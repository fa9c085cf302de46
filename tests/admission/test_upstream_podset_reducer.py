"""Partial admission's search against upstream's TestSearch cases."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aks_kueue.admission.partial import reduce_counts

CASES = yaml.safe_load((Path(__file__).parents[1] / "fixtures" / "upstream" / "TestSearch.yaml").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["upstream"].split("/", 1)[1] for c in CASES])
def test_search(case):
    limit = case["fits"]["maxTotalCount"]
    result, found = reduce_counts([ps["count"] for ps in case["podSets"]],
                                  [ps.get("minCount") for ps in case["podSets"]],
                                  lambda counts: (sum(counts), sum(counts) <= limit))
    assert (result or 0, found) == (case["want"]["result"], case["want"]["found"])
