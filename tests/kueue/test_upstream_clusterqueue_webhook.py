"""The ClusterQueue webhook rules against upstream Kueue's TestValidateClusterQueue cases."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from aks_kueue.kueue.webhooks import validate_cluster_queue

CASES = yaml.safe_load((Path(__file__).parents[1] / "fixtures" / "upstream" / "TestValidateClusterQueue.yaml")
                       .read_text())


@pytest.mark.parametrize("case", CASES, ids=[c["upstream"] for c in CASES])
def test_validate_cluster_queue(case):
    errors = validate_cluster_queue(case["spec"], gates=frozenset({"ConcurrentAdmission"}))
    assert [e.field for e in errors] == case["wantErrors"], [str(e) for e in errors]
    if "detail" in case:
        assert case["detail"] in errors[0].message


def test_upstream_case_count():
    assert len(CASES) == 39
