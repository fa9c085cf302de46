"""`aks-kueue replay` with spot pools and prices (issue 32): the flags, their errors, and what every
report (JSON, text, Markdown) says of evictions and cost, on the shipped prod stack and the worked
example's spot variant (`tests/fixtures/stacks/prod-spot-h100.yaml`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from aks_kueue.cli import app

FIXTURES = Path(__file__).parents[1] / "fixtures"
TRACE = FIXTURES / "replay" / "research-week.jsonl"
PROD = FIXTURES / "stacks" / "prod-filled.yaml"
SPOT = FIXTURES / "stacks" / "prod-spot-h100.yaml"
H100, A100, D16 = "Standard_NC40ads_H100_v5", "Standard_NC24ads_A100_v4", "Standard_D16ds_v5"


def run(*args):
    result = CliRunner().invoke(app, ["replay", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


def row(sku, price, meter=None, product="Virtual Machines Test Series", kind="Consumption", region="eastus",
        currency="USD", **extra):
    found = {"currencyCode": currency, "retailPrice": price, "armRegionName": region, "armSkuName": sku,
             "meterName": meter or sku.removeprefix("Standard_").replace("_", " "), "productName": product,
             "type": kind, "unitOfMeasure": "1 Hour", "serviceName": "Virtual Machines",
             "effectiveStartDate": "2026-10-01T00:00:00Z", "isPrimaryMeterRegion": True}
    found.update(extra)
    return found


def prices(tmp_path, rows, name="prices.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"Items": rows, "NextPageLink": None, "Count": len(rows)}, indent=2))
    return path


# The prices the worked example needs, each among the rows the API returns beside it.
def decoys(sku, regular, spot):
    return [row(sku, regular * 1.4, product="Virtual Machines Test Series Windows"),
            row(sku, regular * 8000, kind="Reservation", reservationTerm="1 Year"),
            row(sku, regular * 0.8, kind="DevTestConsumption"),
            row(sku, spot * 0.7, meter=f"{sku} Low Priority"),
            row(sku, regular * 1.1, region="westus3"),
            row(sku, regular * 0.9, isPrimaryMeterRegion=False),
            row(sku, regular), row(sku, spot, meter=f"{sku} Spot")]


def all_prices(tmp_path) -> Path:
    return prices(tmp_path, decoys(D16, 1.0, 0.2) + decoys(A100, 4.0, 1.0) + decoys(H100, 10.0, 3.0))


def test_each_pool_is_priced_on_its_meter_among_decoys_and_queues_share_it(tmp_path):
    code, out, err = run(TRACE, "--config", SPOT, "--compare-config", PROD, "--prices", all_prices(tmp_path),
                         "--json")
    assert code == 0, err
    document = json.loads(out)
    change, base = document["configurations"]
    hourly = {p["name"]: p["cost"]["hourly"] for p in change["pools"]}
    assert hourly == {"cpu": 1.0, "a100": 4.0, "h100": 10.0, "h100spot": 3.0}
    for configuration in (change, base):
        for pool in configuration["pools"]:
            cost = pool["cost"]
            assert cost["currency"] == "USD" and cost["priceDate"] == "2026-10-01T00:00:00Z"
            assert cost["amount"] == pytest.approx(pool["nodeHours"] * cost["hourly"], abs=0.01)
        # Every pool's cost goes to the ClusterQueues that were allocated something on it.
        shared = sum(q["cost"]["amount"] for q in configuration["clusterQueues"])
        assert shared == pytest.approx(configuration["cost"]["amount"] - configuration["cost"]["unallocated"], abs=0.05)
    # training's pods run on h100 (base) or h100spot (change) alone: it pays for those pools whole.
    training = {c["name"]: next(q for q in c["clusterQueues"] if q["name"] == "training") for c in (change, base)}
    assert training[change["name"]]["cost"]["amount"] == pytest.approx(
        next(p for p in change["pools"] if p["name"] == "h100spot")["cost"]["amount"], abs=0.01)
    difference = next(d for d in document["differences"] if d["clusterQueue"] == "training")
    assert difference["cost"] == pytest.approx(
        training[change["name"]]["cost"]["amount"] - training[base["name"]]["cost"]["amount"], abs=0.01)
    assert difference["spotInterruptions"] == training[change["name"]]["spotInterruptions"] > 0
    # Spot fields where a configuration has spot pools, and only there.
    assert all("spotEvictions" in p for p in change["pools"]) and not any("spotEvictions" in p for p in base["pools"])
    assert all("spotInterruptions" in w for w in change["workloads"])
    assert not any("spotInterruptions" in w for w in base["workloads"])


def test_text_and_markdown_give_the_cost_its_currency_and_its_price_date(tmp_path):
    path = all_prices(tmp_path)
    code, out, err = run(TRACE, "--config", SPOT, "--compare-config", PROD, "--prices", path, "--format", "markdown")
    assert code == 0, err
    assert "| ClusterQueue | rerun resource-hours | Δ | spot interrupted | Δ | cost | Δ |" in out
    assert "**cost of the pools: " in out and "USD (base " in out
    assert "(3 a node-hour, price of 2026-10-01T00:00:00Z)" in out
    assert "pool h100spot: 3 USD a node-hour, Standard_NC40ads_H100_v5 in eastus on its Spot meter" in out
    code, out, err = run(TRACE, "--config", SPOT, "--prices", path)
    assert code == 0, err
    assert "cost of the pools: " in out and "at list prices of 2026-10-01T00:00:00Z" in out
    assert "spot interrupted" in out and "spot evictions" in out


def test_without_prices_there_is_no_cost_anywhere():
    code, out, err = run(TRACE, "--config", SPOT, "--compare-config", PROD, "--json")
    assert code == 0, err
    assert '"cost"' not in out
    code, out, _ = run(TRACE, "--config", SPOT, "--format", "markdown")
    assert " cost " not in out.replace("cost of", "") and "USD" not in out


def test_a_size_without_a_price_is_named_with_the_line_that_fetches_it(tmp_path):
    path = prices(tmp_path, decoys(D16, 1.0, 0.2) + decoys(A100, 4.0, 1.0) + [row(H100, 10.0)])
    code, out, err = run(TRACE, "--config", SPOT, "--prices", path, "--json")
    assert code == 0, err
    assert f"warning: config {SPOT}: no price for {H100} in eastus on its Spot meter" in err
    assert ("fetch the missing prices with: curl -sfG 'https://prices.azure.com/api/retail/prices' "
            "--data-urlencode \"\\$filter=serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and "
            f"armRegionName eq 'eastus' and armSkuName eq '{H100}'\" -o prices.json") in err
    (configuration,) = json.loads(out)["configurations"]
    spot = next(p for p in configuration["pools"] if p["name"] == "h100spot")
    assert spot["cost"] is None
    training = next(q for q in configuration["clusterQueues"] if q["name"] == "training")
    assert training["cost"]["unpriced"] == ["h100spot"]
    assert configuration["cost"]["unpriced"] == ["h100spot"]
    assert any(a.startswith(f"pool h100spot: no cost (no price for {H100}") for a in configuration["assumptions"])


@pytest.mark.parametrize("args, message", [
    (["--spot-eviction", "often"], "--spot-eviction 'often': 'often' is not a rate"),
    (["--spot-eviction", "cpu=0.1"], "--spot-eviction cpu=...: cpu is not a spot pool (spot: false)"),
    (["--spot-eviction", "gpu=0.1"], "--spot-eviction gpu=...: gpu names no pool of the configurations replayed; "
                                     "spot pools: h100spot"),
])
def test_a_bad_spot_eviction_flag_exits_2_naming_it(args, message):
    code, out, err = run(TRACE, "--config", SPOT, "--json", *args)
    assert code == 2
    assert message in err and json.loads(out)["result"] == "invalid"


def test_a_rate_where_no_configuration_has_spot_pools_is_refused():
    code, _, err = run(TRACE, "--config", PROD, "--spot-eviction", "0.1")
    assert code == 2 and "have no spot pool (spot: true)" in err


def test_prices_without_pools_and_price_files_given_as_traces_are_refused(tmp_path):
    queues = FIXTURES / "replay" / "queues.yaml"
    code, _, err = run(FIXTURES / "replay" / "waits.jsonl", "--queues", queues, "--prices", all_prices(tmp_path))
    assert code == 2 and "has no node pools (Kueue YAML alone, or a generator trace): there is nothing to price" in err
    path = all_prices(tmp_path)
    code, _, err = run(TRACE, "--config", PROD, "--prices", path, path)
    assert code == 2 and "is a page of the Azure Retail Prices API, not a trace: give each price file with its own " \
                         "--prices" in err


def test_prices_in_two_currencies_are_refused(tmp_path):
    path = prices(tmp_path, [row(D16, 1.0), row(A100, 4.0, currency="EUR"), row(H100, 10.0)])
    code, _, err = run(TRACE, "--config", PROD, "--prices", path)
    assert code == 2 and "fetch every price in one currency" in err


def test_the_seed_decides_the_evictions_and_the_same_seed_gives_the_same_bytes():
    first = run(TRACE, "--config", SPOT, "--json")
    assert first[0] == 0
    assert run(TRACE, "--config", SPOT, "--json", "--seed", "0")[1] == first[1]
    other = run(TRACE, "--config", SPOT, "--json", "--seed", "1")
    assert other[0] == 0 and other[1] != first[1]
    assumptions = json.loads(other[1])["configurations"][0]["assumptions"]
    assert any("drawn from --seed 1 by pool and node number" in a for a in assumptions)


def test_a_band_given_as_a_percent_is_the_rate_the_report_states():
    code, out, err = run(TRACE, "--config", SPOT, "--spot-eviction", "h100spot=20%", "--json")
    assert code == 0, err
    (configuration,) = json.loads(out)["configurations"]
    assert any(a.startswith("pool h100spot: spot, a node is evicted at 0.2231 a node-hour (on average after 4.5 h "
                            "Ready), given as 20% an hour") for a in configuration["assumptions"])
