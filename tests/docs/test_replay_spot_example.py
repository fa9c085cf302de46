"""docs/replay.md's worked question, "Spot H100 for research": its commands run, and every figure the
page shows is the one they print (the comparison, the table over seeds and bands, the ranges the
prose quotes); the example's stack is prod with the two edits the page shows; its price file says on
every row that it is not a real price."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import FILLED_PROD, ROOT
from tests.docs.pages import examples
from tests.docs.test_examples import layout, script_of

PAGE = ROOT / "docs" / "replay.md"
SPOT_STACK = ROOT / "tests" / "fixtures" / "stacks" / "prod-spot-h100.yaml"
PRICES = ROOT / "tests" / "fixtures" / "replay" / "prices-EXAMPLE-not-real.json"


def between(text: str, name: str) -> str:
    return text.split(f"<!-- {name}: begin -->\n", 1)[1].split(f"<!-- {name}: end -->", 1)[0]


def blocks() -> list:
    found = [e for e in examples(PAGE) if "prod-spot-h100.yaml" in e.script]
    assert len(found) == 2, [e.id for e in found]
    return found


def printed(example, tmp_path: Path) -> str:
    env = {**os.environ, "PATH": f"{Path(sys.prefix) / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "COLUMNS": "120", "NO_COLOR": "1"}
    done = subprocess.run(["bash", "-c", script_of(example)], cwd=layout(tmp_path), env=env, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    comparison, seeds = blocks()
    return printed(comparison, tmp_path_factory.mktemp("a")), printed(seeds, tmp_path_factory.mktemp("b"))


def test_the_comparison_on_the_page_is_what_the_command_prints(outputs):
    out = outputs[0]
    shown = out[out.index("**What the change does**"):out.index("<details>")].rstrip() + "\n"
    assert between(PAGE.read_text(), "spot example") == shown


def test_the_table_over_seeds_and_bands_is_what_the_loop_prints(outputs):
    rows = between(PAGE.read_text(), "spot seeds").splitlines()[2:]
    assert rows == outputs[1].splitlines() and len(rows) == 10


def _ranges(out: str) -> dict[str, dict[str, tuple[str, str]]]:
    """Per band, the lowest and highest of each column, as the prose writes them."""
    found: dict[str, dict[str, list[float]]] = {}
    for line in out.splitlines():
        band, _, wait, _, interrupted, rerun, _, cost, _ = [c.strip() for c in line.strip("| ").split(" | ")]
        columns = found.setdefault(band, {"wait": [], "interrupted": [], "rerun": [], "cost": []})
        columns["wait"].append(float(wait.removesuffix(" h")))
        columns["interrupted"].append(float(interrupted))
        columns["rerun"].append(float(rerun.replace(",", "")))
        columns["cost"].append(float(cost.replace(",", "")))
    shown = {"wait": "{:.1f}", "interrupted": "{:.0f}", "rerun": "{:,.0f}", "cost": "{:,.0f}"}
    return {band: {key: (shown[key].format(min(values)), shown[key].format(max(values)))
                   for key, values in columns.items()} for band, columns in found.items()}


def test_the_ranges_the_prose_quotes_are_the_tables(outputs):
    text = " ".join(PAGE.read_text().split())  # the prose wraps lines
    low, high = _ranges(outputs[1])["5%"], _ranges(outputs[1])["20%"]
    assert f"The pools cost {low['cost'][0]} to {low['cost'][1]} against 3,192 on demand" in text
    assert f"goes from 5.6 hours to {low['wait'][0]} to {low['wait'][1]}" in text
    assert f"{low['interrupted'][0]} to {low['interrupted'][1]} runs are interrupted" in text
    assert f"{low['rerun'][0]} to {low['rerun'][1]} GPU-hours are run again" in text
    assert f"{high['interrupted'][0]} to {high['interrupted'][1]} interruptions" in text
    assert f"{high['rerun'][0]} to {high['rerun'][1]} GPU-hours rerun" in text
    assert f"a bill of {high['cost'][0]} to {high['cost'][1]}" in text


def test_the_spot_stack_is_prod_with_the_two_edits_the_page_shows():
    base = yaml.safe_load(FILLED_PROD.read_text())["config"]
    change = yaml.safe_load(SPOT_STACK.read_text())["config"]
    expected = copy.deepcopy(base)
    pools = expected["aks-kueue:nodePools"]
    h100 = next(p for p in pools if p["name"] == "h100")
    pools.append({**h100, "name": "h100spot", "spot": True})
    flavor = next(f for f in expected["aks-kueue:queues"]["resourceFlavors"] if f["name"] == "h100")
    flavor["nodePool"] = "h100spot"
    flavor["spec"]["tolerations"] = [{"key": "kubernetes.azure.com/scalesetpriority", "operator": "Equal",
                                      "value": "spot", "effect": "NoSchedule"}]
    assert change == expected
    shown = PAGE.read_text().split("tolerating the\nspot taint:", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    snippet = yaml.safe_load(shown)
    assert snippet["aks-kueue:nodePools"] == [pools[-1]]
    assert snippet["aks-kueue:queues"]["resourceFlavors"] == [flavor]


def test_every_price_of_the_example_says_it_is_not_real():
    items = json.loads(PRICES.read_text())["Items"]
    assert items and all(row["productName"].startswith("EXAMPLE, NOT A REAL PRICE: ") for row in items)
    assert {row["currencyCode"] for row in items} == {"XTS"}       # ISO 4217's code for testing
    assert "**The prices in this example are not real.**" in PAGE.read_text()
