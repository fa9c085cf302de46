"""Prices from files in the Azure Retail Prices API's shape (issue 32): the hourly Linux
pay-as-you-go price of a VM size in a region, the Spot meter for spot pools, every decoy row the
API returns beside it ignored, a size without a price named, and errors that say where."""

from __future__ import annotations

import json
import math
import os
import subprocess
import shutil

import pytest

from aks_kueue.aks.pools import Pool
from aks_kueue.aks.prices import (Cost, Meter, NoPrice, Price, fetch_command, fetch_filter, fetch_url, price_row,
                                  read_prices, shares)
from aks_kueue.k8s.loader import Limits, LoadError

H100 = "Standard_NC40ads_H100_v5"
D16 = "Standard_D16s_v5"


def row(meter="NC40ads H100 v5", price=6.98, sku=H100, region="eastus", kind="Consumption",
        product="Virtual Machines NCadsH100v5 Series", **extra):
    """A row as the API returns one (its fields in its order)."""
    found = {"currencyCode": "USD", "tierMinimumUnits": 0.0, "retailPrice": price, "unitPrice": price,
             "armRegionName": region, "location": "US East", "effectiveStartDate": "2025-06-01T00:00:00Z",
             "meterId": "00000000-0000-0000-0000-000000000000", "meterName": meter, "productId": "DZH318Z0PJ5Q",
             "skuId": "DZH318Z0PJ5Q/000K", "productName": product, "skuName": meter, "serviceName": "Virtual Machines",
             "serviceId": "DZH313Z7MMC8", "serviceFamily": "Compute", "unitOfMeasure": "1 Hour", "type": kind,
             "isPrimaryMeterRegion": True, "armSkuName": sku}
    found.update(extra)
    return found


# Every kind of row the API returns for one size in one region, and neighbours; only two are prices.
REGULAR = row()
SPOT = row(meter="NC40ads H100 v5 Spot", price=2.2)
DECOYS = [
    row(product="Virtual Machines NCadsH100v5 Series Windows", price=7.9),                      # Windows
    row(meter="NC40ads H100 v5 Spot", product="Virtual Machines NCadsH100v5 Series Windows", price=3.1),
    row(meter="NC40ads H100 v5 Low Priority", price=1.4),                                      # Batch's
    row(meter="NC40ads H100 v5 Low Priority", product="Virtual Machines NCadsH100v5 Series Windows", price=2.3),
    row(kind="Reservation", price=36500.0, reservationTerm="1 Year"),                          # the whole term
    row(kind="Reservation", price=90000.0, reservationTerm="3 Years"),
    row(kind="DevTestConsumption", price=5.5),
    row(price=6.5, isPrimaryMeterRegion=False),                                                 # not billed
    row(price=9.9, unitOfMeasure="1/Day"),
    row(price=0.9, serviceName="Virtual Machines Licenses", meter="NC40ads H100 v5 RHEL"),
    row(region="westus3", price=7.1),                                                           # neighbours
    row(sku="Standard_NC80adis_H100_v5", price=13.96),
]


def page(items, link=None) -> str:
    return json.dumps({"BillingCurrency": "USD", "CustomerEntityId": "Default", "CustomerEntityType": "Retail",
                       "Items": items, "NextPageLink": link, "Count": len(items)}, indent=4)


def row_line(text: str, n: int = 0) -> int:
    """The line the n-th row of a page (as `page` writes it) starts on."""
    at = -1
    for _ in range(n + 1):
        at = text.index("\n        {", at + 1)
    return text.count("\n", 0, at) + 2


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_regular_and_the_spot_meter_are_found_among_decoys_of_every_kind(tmp_path):
    book = read_prices([write(tmp_path, "prices.json", page([*DECOYS[:6], REGULAR, *DECOYS[6:], SPOT]))])
    regular = book.price(H100, "eastus", Meter.REGULAR)
    spot = book.price(H100, "eastus", Meter.SPOT)
    assert isinstance(regular, Price) and (regular.hourly, regular.currency) == (6.98, "USD")
    assert isinstance(spot, Price) and spot.hourly == 2.2
    assert regular.date == "2025-06-01T00:00:00Z"
    # Sizes and regions as a stack writes them: case does not matter.
    assert book.price(H100.lower(), "EastUS", Meter.SPOT).hourly == 2.2
    # Each decoy alone prices nothing in eastus.
    for decoy in DECOYS:
        alone = read_prices([write(tmp_path, "decoy.json", page([decoy]))])
        assert all(isinstance(alone.price(H100, "eastus", meter), NoPrice) for meter in Meter), decoy


def test_the_line_of_the_chosen_row_is_where_it_starts(tmp_path):
    text = page([REGULAR, SPOT])
    path = write(tmp_path, "prices.json", text)
    spot = read_prices([path]).price(H100, "eastus", Meter.SPOT)
    lines = text.splitlines()
    assert spot.row.line == row_line(text, 1) and "Spot" in lines[spot.row.line + 8]
    assert spot.row.where == f"{path} line {spot.row.line}"


def test_pages_concatenated_several_files_arrays_and_bare_rows_are_all_read(tmp_path):
    # `cat page.json >> prices.json` (docs/replay.md's loop): pages with nothing between them.
    concatenated = write(tmp_path, "pages.json", page([REGULAR], "https://prices.azure.com/...&$skip=1000")
                         + page([DECOYS[0]]))
    array = write(tmp_path, "array.json", json.dumps([DECOYS[4]]))
    bare = write(tmp_path, "rows.jsonl", "\n".join(json.dumps(r) for r in (SPOT, DECOYS[6])) + "\n")
    book = read_prices([concatenated, array, bare])
    assert book.rows == 5
    assert book.price(H100, "eastus", Meter.SPOT).row.where == f"{bare} line 1"
    assert book.price(H100, "eastus", Meter.REGULAR).row.file == str(concatenated)


def test_a_size_without_a_price_is_named_with_what_the_files_hold_instead(tmp_path):
    book = read_prices([write(tmp_path, "prices.json", page([REGULAR, *DECOYS]))])
    spot = book.price(H100, "eastus", Meter.SPOT)
    assert isinstance(spot, NoPrice)
    assert str(spot).startswith(f"no price for {H100} in eastus on its Spot meter: none of its 11 rows there is a "
                                "Linux pay-as-you-go hourly price of that meter (")
    for told in ("3 Windows", "1 Low Priority", "2 Reservation (its retailPrice is the whole term)",
                 "1 DevTestConsumption", "1 its regular (pay-as-you-go) meter", "1 priced per '1/Day'",
                 "1 not the primary meter region (isPrimaryMeterRegion false)",
                 "1 Virtual Machines Licenses (not Virtual Machines)"):
        assert told in str(spot), told
    assert str(book.price(H100, "swedencentral", Meter.REGULAR)).endswith(
        "the price files price it only in eastus, westus3")
    assert str(book.price(D16, "eastus", Meter.REGULAR)).endswith(
        f"the price files ({tmp_path / 'prices.json'}) have no row for it")


def test_the_latest_price_wins_and_two_prices_of_one_date_are_refused(tmp_path):
    older = write(tmp_path, "june.json", page([REGULAR]))
    newer = write(tmp_path, "july.json", page([row(price=6.5, effectiveStartDate="2025-07-01T00:00:00Z")]))
    assert read_prices([newer, older]).price(H100, "eastus", Meter.REGULAR).hourly == 6.5
    # Instants, not texts: 02:00 at +03:00 is before 00:00 UTC on the same day.
    early = write(tmp_path, "early.json", page([row(price=6.1, effectiveStartDate="2025-06-01T02:00:00.5+03:00")]))
    assert read_prices([early, older]).price(H100, "eastus", Meter.REGULAR).hourly == 6.98
    again = write(tmp_path, "again.json", page([REGULAR]))
    assert read_prices([older, again]).price(H100, "eastus", Meter.REGULAR).hourly == 6.98  # the same row twice
    other = write(tmp_path, "other.json", "\n\n" + page([row(price=7.5)]))
    with pytest.raises(LoadError) as refused:
        read_prices([older, other]).price(H100, "eastus", Meter.REGULAR)
    first = row_line(page([REGULAR]))
    assert str(refused.value) == (f"{other} line {first + 2}: retailPrice: {H100} in eastus on its regular "
                                  f"(pay-as-you-go) meter costs 7.5 USD here and 6.98 USD at {older} line {first}, "
                                  "both effective "
                                  "2025-06-01T00:00:00Z; keep one of the two (files fetched at different times "
                                  "should not both be given)")


def test_pools_are_priced_in_one_currency(tmp_path):
    pools = [Pool(name="h100", vm_size=H100, max_count=2, max_pods=110),
             Pool(name="h100spot", vm_size=H100, max_count=6, max_pods=110, spot=True),
             Pool(name="cpu", vm_size=D16, max_count=3, max_pods=110)]
    found = read_prices([write(tmp_path, "p.json", page([REGULAR, SPOT]))]).for_pools("eastus", pools)
    assert {n: p.hourly for n, p in found.prices.items()} == {"h100": 6.98, "h100spot": 2.2}
    assert list(found.missing) == ["cpu"] and found.currency == "USD"
    assert found.describe()[1].startswith(f"pool h100spot: 2.2 USD a node-hour, {H100} in eastus on its Spot meter, "
                                          "effective 2025-06-01T00:00:00Z (")
    assert found.describe()[2].startswith(f"pool cpu: no cost (no price for {D16} in eastus on its regular")
    euros = write(tmp_path, "eur.json", page([REGULAR, row(meter="NC40ads H100 v5 Spot", price=2.0,
                                                           currencyCode="EUR")]))
    with pytest.raises(LoadError, match=r"line \d+: currencyCode: Standard_NC40ads_H100_v5 is priced in EUR, "
                                        r"Standard_NC40ads_H100_v5 in USD \(.*\); fetch every price in one currency"):
        read_prices([euros]).for_pools("eastus", pools)


def test_cost_and_the_share_of_each_clusterqueue():
    price = read_price_of(SPOT)
    cost = price.cost(412.0)
    assert cost == Cost(412.0 * 2.2, "USD", 2.2, "2025-06-01T00:00:00Z")
    assert cost.as_json() == {"amount": 906.4, "currency": "USD", "hourly": 2.2, "priceDate": "2025-06-01T00:00:00Z"}
    split = shares(906.4, {"research": 30.0, "training": 10.0, "idle": 0.0})
    assert split == {"research": pytest.approx(679.8), "training": pytest.approx(226.6)}
    assert math.isclose(sum(split.values()), 906.4) and shares(906.4, {"research": 0.0}) == {}


def read_price_of(value) -> Price:
    found = price_row(value, "prices.json", 1)
    return Price(found.vm_size, found.region, found.meter, found.hourly, found.currency, found.date, found)


@pytest.mark.parametrize("change, message", [
    (lambda r: r.pop("retailPrice"), "retailPrice: Required value: a price of 0 or more (a JSON number)"),
    (lambda r: r.update(retailPrice="6.98"), "retailPrice: must be a price of 0 or more (a JSON number), not \"6.98\""),
    (lambda r: r.update(retailPrice=-1), "retailPrice: must be a price of 0 or more (a JSON number), not -1"),
    (lambda r: r.update(retailPrice=True), "retailPrice: must be a price of 0 or more (a JSON number), not true"),
    (lambda r: r.pop("armSkuName"), "armSkuName: Required value: every row of the Retail Prices API has it"),
    (lambda r: r.update(type=None), "type: must be a string, not null"),
    (lambda r: r.update(isPrimaryMeterRegion="yes"), "isPrimaryMeterRegion: must be true or false, not \"yes\""),
    (lambda r: r.update(effectiveStartDate="June 2025"),
     "effectiveStartDate: must be an RFC 3339 time such as 2026-11-01T00:00:00Z, not \"June 2025\""),
    (lambda r: r.update(effectiveStartDate="2025-13-01T00:00:00Z"),
     "effectiveStartDate: must be an RFC 3339 time such as 2026-11-01T00:00:00Z, not \"2025-13-01T00:00:00Z\""),
])
def test_a_bad_row_is_named_by_file_line_and_field(tmp_path, change, message):
    bad = dict(SPOT)
    change(bad)
    text = page([REGULAR, bad])
    path = write(tmp_path, "prices.json", text)
    with pytest.raises(LoadError) as refused:
        read_prices([path])
    assert str(refused.value) == f"{path} line {row_line(text, 1)}: {message}"


@pytest.mark.parametrize("text, message", [
    ('{"Items": [{"a": 1, "a": 2}]}', "line 1: the key 'a' appears twice in one object"),
    ('{"Items": [], "Items": []}', "line 1: the key 'Items' appears twice in one object"),
    ('{"Items": {"armSkuName": "x"}}', "line 1: Items: must be a list of price rows"),
    ('{"Items": [\n  {"armSkuName": "x",}\n]}', "line 2: not valid JSON at column 22: Expecting property name"),
    ('{"Items": [\n  3\n]}', "line 2: must be a price row (a JSON object"),
    ('{"Items": [', "line 1: Items: not valid JSON: the list of rows is not closed"),
    ("  \n", "is empty; give what the Retail Prices API returned"),
    ('"prices"', "line 1: must hold pages of the Retail Prices API"),
    ('{"Items": [' + "[" * 200 + "]" * 200 + "]}", "line 1: nested deeper than 100 levels"),
    ("{{}}", "line 1: not valid JSON: expected a key in double quotes"),
])
def test_a_file_that_is_no_price_file_says_where_and_why(tmp_path, text, message):
    path = write(tmp_path, "prices.json", text)
    with pytest.raises(LoadError) as refused:
        read_prices([path])
    assert str(refused.value).startswith(f"{path} {message}") or str(refused.value).startswith(f"{path}: {message}"), \
        str(refused.value)


def test_only_regular_files_of_bounded_size_are_read(tmp_path):
    with pytest.raises(LoadError, match="is a directory"):
        read_prices([tmp_path])
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(LoadError, match=r"is a named pipe \(FIFO\), not a regular file"):
        read_prices([fifo])
    big = write(tmp_path, "big.json", page([REGULAR] * 40))
    with pytest.raises(LoadError, match="is larger than 4,096 bytes, the most this program reads from one price "
                                        "file; fetch only the regions and sizes of your pools"):
        read_prices([big], Limits(max_bytes=4096, too_large=__import__("aks_kueue.aks.prices").aks.prices
                                  .PRICE_LIMITS.too_large))


def test_a_large_file_is_read_with_the_last_rows_line_right(tmp_path):
    """20,000 rows (about 16 MB, a few regions' Virtual Machines prices); the walk counts each
    newline once, from the last row it numbered (timed in the report of issue 32, not here)."""
    rows = [row(sku=f"Standard_X{i}_v5") for i in range(20_000)]
    text = page(rows)
    book = read_prices([write(tmp_path, "big.json", text)])
    last = book.price("Standard_X19999_v5", "eastus", Meter.REGULAR)
    assert book.rows == 20_000 and text.splitlines()[last.row.line - 1].strip() == "{"


def test_the_fetch_filter_names_the_regions_and_sizes():
    assert fetch_filter(["eastus"], [H100, D16, H100]) == (
        "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and armRegionName eq 'eastus' and "
        f"(armSkuName eq '{D16}' or armSkuName eq '{H100}')")
    assert "(armRegionName eq 'eastus' or armRegionName eq 'westus3')" in fetch_filter(["westus3", "eastus"], [D16])
    assert fetch_url(["eastus"], [D16], "EUR").endswith("&currencyCode='EUR'")
    with pytest.raises(ValueError, match="VM size \"Standard_D16'; rm -rf ~\" is not an Azure name"):
        fetch_filter(["eastus"], ["Standard_D16'; rm -rf ~"])
    with pytest.raises(ValueError, match="no region"):
        fetch_filter([], [D16])


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_the_curl_line_is_valid_bash_and_asks_for_the_filter():
    """Run it against a stand-in `curl` that prints its arguments, one a line."""
    line = fetch_command(["eastus"], [H100, D16], out="my prices.json", currency="USD")
    done = subprocess.run(["bash", "-c", 'curl() { printf "%s\\n" "$@"; }\n' + line], capture_output=True, text=True,
                          timeout=10)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "-sfG", "https://prices.azure.com/api/retail/prices", "--data-urlencode", "$filter=" + fetch_filter(
            ["eastus"], [H100, D16]), "--data-urlencode", "currencyCode='USD'", "-o", "my prices.json"]


def test_the_docs_curl_line_is_the_one_for_prod(tmp_path):
    """docs/replay.md's line for prod is what `fetch_command` writes for prod's region and user pools,
    and the NoPrice sentence it quotes is the reader's."""
    from tests.conftest import stack_doc
    from tests.docs.pages import examples, DOCS

    prod = stack_doc("prod")
    line = fetch_command([prod["azure-native:location"]], [p["vmSize"] for p in prod["aks-kueue:nodePools"]])
    assert any(example.script.strip() == line for example in examples(DOCS / "replay.md"))
    rows = [row(product="Virtual Machines NCadsH100v5 Series Windows")] * 3 + [
        row(kind="Reservation", price=36500.0)] * 2 + [REGULAR]
    told = str(read_prices([write(tmp_path, "p.json", page(rows))]).price(H100, "eastus", Meter.SPOT))
    assert f"`{told}`" in " ".join((DOCS / "replay.md").read_text().split())
