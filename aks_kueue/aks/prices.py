"""What a node pool costs an hour: Azure's retail price of its VM size in its region, read from
files in the Azure Retail Prices API's shape, and node-hours turned into cost.

No price is ever invented: the program ships none. A user fetches the prices their pools need
(`fetch_command` prints the `curl` line for a stack's regions and sizes) and gives the files;
a pool whose size the files do not price is named, with what the files hold for it instead.

The files are what `curl 'https://prices.azure.com/api/retail/prices?$filter=...'` returns,
`{"Items": [row, ...], "NextPageLink": ..., "Count": ...}`: one page, pages concatenated in one
file (a paging loop appending each page), several files, or the rows alone (a JSON array of them,
or rows one after another as `jq -c '.Items[]'` prints them). Each file is read through the
program's bounded reader (a regular file, at most 64 MiB, keys given twice refused).

The price of a pool is the row, among all files, with
- `armSkuName` the pool's VM size and `armRegionName` the cluster's region (both compared
  without case), `serviceName` `Virtual Machines` when the row says;
- `type` `Consumption` (pay-as-you-go). `Reservation` rows are ignored: their `retailPrice` is
  the whole 1- or 3-year term, not an hourly price. `DevTestConsumption` rows (Dev/Test
  subscriptions' rates) are ignored;
- `unitOfMeasure` `1 Hour`;
- a Linux price: a row whose `productName` ends in `Windows` includes the Windows licence and is
  ignored (AKS Linux nodes pay none);
- not a `Low Priority` meter (Azure Batch's low-priority VMs, not Spot);
- the Spot meter for a spot pool (a `meterName` ending in `Spot`), the regular meter otherwise;
- a primary meter region: a row with `isPrimaryMeterRegion` false is a duplicate meter that is
  not used for billing, and is ignored.
When rows of several `effectiveStartDate`s remain (files fetched on different days), the latest
is the price; two rows of that date that disagree are an error naming both.

Sources: the Azure Retail Prices REST API overview
(learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices, and its 2020
version in MicrosoftDocs: the response's fields, `type` "Meter consumption type. Other types are
Reservation, Consumption" with `DevTestConsumption` in its sample, a reservation sample whose
`retailPrice` 25007.0 is the term's, `unitOfMeasure` `1 Hour`, `productName` `Virtual Machines
FS Series Windows`, `meterName` `F16s Spot`, at most 1,000 rows a page with `NextPageLink`,
`isPrimaryMeterRegion`: "Primary meters are used for charges and billing"); Azure Spot Virtual
Machines (learn.microsoft.com/azure/virtual-machines/spot-vms: "The meterName and skuName will
both contain Spot"). Prices are list prices in the currency asked for (USD unless
`currencyCode` is given; Microsoft prices in USD and gives others "for your reference"), not a
subscription's negotiated rates.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from pathlib import Path
from typing import Any, Generator, Iterable, Iterator, Mapping, Optional, Sequence, Union
from urllib.parse import quote

from aks_kueue.k8s import field as fe
from aks_kueue.k8s.loader import Limits, LoadError, display_name, json_value_at, line_of, read_text

RETAIL_PRICES_API = "https://prices.azure.com/api/retail/prices"
CONSUMPTION = "Consumption"
HOURLY = "1 Hour"
VIRTUAL_MACHINES = "Virtual Machines"
# A whole region's Virtual Machines prices are over 64 MiB; a stack's sizes are a few KiB.
PRICE_LIMITS = Limits(too_large="from one price file; fetch only the regions and sizes of your pools (the "
                                "$filter of `aks_kueue.aks.prices.fetch_command`, shown in docs/replay.md)")
# The fields a row must have, and their JSON types; every other field of the API is read past.
_TEXT_FIELDS = ("armSkuName", "armRegionName", "unitOfMeasure", "meterName", "productName", "type",
                "currencyCode")
_OPTIONAL_TEXT = ("effectiveStartDate", "serviceName", "skuName")
# What an Azure name may hold in the `$filter` a shell line carries (sizes, regions, currencies).
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_SPACE = re.compile(r"[ \t\r\n]*")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([Tt]\d{2}:\d{2}:\d{2}(?P<fraction>\.\d+)?([Zz]|[+-]\d{2}:\d{2}))?$")


class Meter(str, Enum):
    """The meter a pool is billed on."""

    REGULAR = "regular"
    SPOT = "spot"

    @classmethod
    def of(cls, spot: bool) -> "Meter":
        return cls.SPOT if spot else cls.REGULAR

    def described(self) -> str:
        return "its Spot meter" if self is Meter.SPOT else "its regular (pay-as-you-go) meter"


@dataclass(frozen=True, slots=True)
class PriceRow:
    """One row of a price file, with where it is and what it prices (`meter`), or why it is no
    price of a pool (`ignored`)."""

    file: str
    line: int
    vm_size: str                    # armSkuName, as written
    region: str                     # armRegionName, as written
    hourly: float                   # retailPrice
    currency: str
    date: Optional[str]             # effectiveStartDate, as written (the API calls it optional)
    effective: datetime             # `date` as a UTC instant; the earliest one without a date (it loses)
    meter: Optional[Meter]          # None when the row is no price of any pool
    ignored: str = ""               # why, when `meter` is None

    @property
    def where(self) -> str:
        return f"{display_name(self.file)} line {self.line}"


@dataclass(frozen=True)
class Price:
    """A pool's hourly price: what one node costs an hour, in `currency`, effective from `date`."""

    vm_size: str
    region: str
    meter: Meter
    hourly: float
    currency: str
    date: Optional[str]
    row: PriceRow

    def cost(self, node_hours: float) -> "Cost":
        return Cost(node_hours * self.hourly, self.currency, self.hourly, self.date)


@dataclass(frozen=True)
class Cost:
    """Node-hours at a price: the report's `cost` (`{"amount", "currency", "hourly", "priceDate"}`)."""

    amount: float
    currency: str
    hourly: float
    price_date: Optional[str]

    def as_json(self) -> dict[str, Any]:
        return {"amount": round(self.amount, 2), "currency": self.currency, "hourly": self.hourly,
                "priceDate": self.price_date}


@dataclass(frozen=True)
class NoPrice:
    """A VM size the files do not price in a region on the meter a pool needs, and why."""

    vm_size: str
    region: str
    meter: Meter
    reason: str

    def __str__(self) -> str:
        return f"no price for {self.vm_size} in {self.region} on {self.meter.described()}: {self.reason}"


@dataclass(frozen=True)
class PoolPrices:
    """The price of every pool that has one, the pools that have none, and the one currency."""

    prices: Mapping[str, Price]                 # by pool name
    missing: Mapping[str, NoPrice]              # by pool name
    currency: Optional[str]                     # None when no pool has a price

    def describe(self) -> list[str]:
        """Sentences for a report: each pool's price and its source, or why it has none."""
        lines = [f"pool {name}: {p.hourly:g} {p.currency} a node-hour, {p.vm_size} in {p.region} on "
                 f"{p.meter.described()}, effective {p.date or 'on no stated date'} ({p.row.where})"
                 for name, p in self.prices.items()]
        return lines + [f"pool {name}: no cost ({missing})" for name, missing in self.missing.items()]


@dataclass
class PriceBook:
    """Every row of the price files, indexed by VM size and region."""

    files: tuple[str, ...]
    rows: int = 0
    _index: dict[tuple[str, str], list[PriceRow]] = field(default_factory=dict, repr=False)
    _regions: dict[str, set[str]] = field(default_factory=dict, repr=False)

    def add(self, row: PriceRow) -> None:
        self.rows += 1
        self._index.setdefault((row.vm_size.lower(), row.region.lower()), []).append(row)
        self._regions.setdefault(row.vm_size.lower(), set()).add(row.region)

    def price(self, vm_size: str, region: str, meter: Meter) -> Union[Price, NoPrice]:
        """The hourly Linux consumption price of `vm_size` in `region` on `meter`, or why there is none.
        Raises LoadError when the latest rows of that price disagree."""
        rows = self._index.get((vm_size.lower(), region.lower()), [])
        chosen = [row for row in rows if row.meter is meter]
        if not chosen:
            return NoPrice(vm_size, region, meter, self._why_none(vm_size, region, rows))
        latest = max(row.effective for row in chosen)
        best = [row for row in chosen if row.effective == latest]
        first = best[0]
        for other in best[1:]:
            if (other.hourly, other.currency) != (first.hourly, first.currency):
                raise LoadError(other.file, None, f"{vm_size} in {region} on {meter.described()} costs "
                                f"{other.hourly:g} {other.currency} here and {first.hourly:g} {first.currency} at "
                                f"{first.where}, both effective {first.date or 'on no stated date'}; keep one of "
                                "the two (files fetched at different times should not both be given)",
                                line=other.line, key="retailPrice")
        return Price(vm_size, region, meter, first.hourly, first.currency, first.date, first)

    def for_pools(self, region: str, pools: Iterable[Any]) -> PoolPrices:
        """The price of each pool (anything with `name`, `vm_size` and `spot`, such as
        `aks.pools.Pool`) in the cluster's `region`. Raises LoadError when two pools' prices are
        in different currencies (costs could not be added up)."""
        prices: dict[str, Price] = {}
        missing: dict[str, NoPrice] = {}
        for pool in pools:
            found = self.price(pool.vm_size, region, Meter.of(pool.spot))
            if isinstance(found, Price):
                prices[pool.name] = found
            else:
                missing[pool.name] = found
        currencies = {p.currency for p in prices.values()}
        if len(currencies) > 1:
            first, *rest = prices.values()
            other = next(p for p in rest if p.currency != first.currency)
            raise LoadError(other.row.file, None, f"{other.vm_size} is priced in {other.currency}, "
                            f"{first.vm_size} in {first.currency} ({first.row.where}); fetch every price in one "
                            "currency (the API's currencyCode parameter) so that costs add up",
                            line=other.row.line, key="currencyCode")
        return PoolPrices(prices, missing, currencies.pop() if currencies else None)

    def _why_none(self, vm_size: str, region: str, rows: Sequence[PriceRow]) -> str:
        if not rows:
            elsewhere = sorted(self._regions.get(vm_size.lower(), ()))
            if elsewhere:
                return f"the price files price it only in {', '.join(elsewhere)}"
            return f"the price files ({', '.join(display_name(f) for f in self.files)}) have no row for it"
        counts: dict[str, int] = {}
        for row in rows:
            why = row.ignored or (f"{row.meter.described()}" if row.meter is not None else "")
            counts[why] = counts.get(why, 0) + 1
        told = "; ".join(f"{count} {why}" for why, count in sorted(counts.items(), key=lambda c: (-c[1], c[0])))
        return f"none of its {len(rows)} rows there is a Linux pay-as-you-go hourly price of that meter ({told})"


def read_prices(paths: Sequence[Union[str, Path]], limits: Limits = PRICE_LIMITS) -> PriceBook:
    """Every row of the price files, checked (`FILE line N: field: what is wrong` for the first
    one that is not a price row of the API's shape)."""
    book = PriceBook(files=tuple(str(p) for p in paths))
    for path in paths:
        source = str(path)
        text = read_text(path, limits, what="a price file in the Azure Retail Prices API's JSON shape",
                         regular_only=True)
        for line, value in _rows(text, source, limits):
            book.add(price_row(value, source, line))
    return book


def price_row(value: Any, file: str, line: int) -> PriceRow:
    """One row of the API's `Items`, checked, and what it prices."""
    if not isinstance(value, dict):
        raise LoadError(file, None, "must be a price row (a JSON object with armSkuName, armRegionName, "
                                    "retailPrice, ...)", line=line)
    for key in _TEXT_FIELDS:
        if key not in value:
            raise LoadError.at(file, fe.required(key, "every row of the Retail Prices API has it"), line=line)
        if not isinstance(value[key], str):
            raise LoadError(file, None, f"must be a string, not {_shown(value[key])}", line=line, key=key)
    for key in _OPTIONAL_TEXT:
        if value.get(key) is not None and not isinstance(value[key], str):
            raise LoadError(file, None, f"must be a string, not {_shown(value[key])}", line=line, key=key)
    price = value.get("retailPrice")
    if isinstance(price, bool) or not isinstance(price, (int, float)) or not math.isfinite(price) or price < 0:
        if price is None:
            raise LoadError.at(file, fe.required("retailPrice", "a price of 0 or more (a JSON number)"), line=line)
        raise LoadError(file, None, f"must be a price of 0 or more (a JSON number), not {_shown(price)}", line=line,
                        key="retailPrice")
    primary = value.get("isPrimaryMeterRegion")
    if primary is not None and not isinstance(primary, bool):
        raise LoadError(file, None, f"must be true or false, not {_shown(primary)}", line=line,
                        key="isPrimaryMeterRegion")
    date = value.get("effectiveStartDate")
    effective = _instant(date) if date is not None else datetime.min
    if effective is None:
        raise LoadError(file, None, f"must be an RFC 3339 time such as 2026-11-01T00:00:00Z, not {_shown(date)}",
                        line=line, key="effectiveStartDate")
    meter, ignored = _meter(value)
    return PriceRow(file, line, value["armSkuName"], value["armRegionName"], float(price), value["currencyCode"],
                    date, effective, meter, ignored)


def _meter(row: Mapping[str, Any]) -> tuple[Optional[Meter], str]:
    """What a row prices (a node's hour on the regular or the Spot meter), or why it prices nothing a
    pool pays: the order is the order in which the reasons are told."""
    service = row.get("serviceName")
    if service is not None and service != VIRTUAL_MACHINES:
        return None, f"{service} (not {VIRTUAL_MACHINES})"
    kind = row["type"]
    if kind == "Reservation":
        return None, "Reservation (its retailPrice is the whole term)"
    if kind != CONSUMPTION:
        return None, kind
    if row["unitOfMeasure"] != HOURLY:
        return None, f"priced per {row['unitOfMeasure']!r}"
    if row.get("isPrimaryMeterRegion") is False:
        return None, "not the primary meter region (isPrimaryMeterRegion false)"
    names = (row["meterName"], row["productName"], row.get("skuName") or "")
    if _words(row["productName"])[-1:] == ["windows"]:
        return None, "Windows"
    if any("low priority" in name.lower() for name in names):
        return None, "Low Priority"
    spot = _words(row["meterName"])[-1:] == ["spot"] or _words(row.get("skuName") or "")[-1:] == ["spot"]
    return (Meter.SPOT if spot else Meter.REGULAR), ""


def _rows(text: str, source: str, limits: Limits) -> Iterator[tuple[int, Any]]:
    """Each row of a price file with its line: the values of the file one after another, each a
    page (`{"Items": [...]}`), a JSON array of rows or a row. Walks the pages itself so that
    each row keeps its line; every step moves forward, so the walk ends within the file's size."""
    lines = _Lines(text)
    index = _skip(text, 0)
    if index == len(text):
        raise LoadError(source, None, "is empty; give what the Retail Prices API returned")
    while index < len(text):
        if text[index] == "[":
            index = yield from _array(text, index, source, limits, lines, "")
        elif text[index] == "{":
            index = yield from _object(text, index, source, limits, lines)
        else:
            raise LoadError(source, None, "must hold pages of the Retail Prices API ({\"Items\": [...]}), "
                                          "a JSON array of price rows, or price rows", line=line_of(text, index))
        index = _skip(text, index)


_Walk = Generator[tuple[int, Any], None, int]


def _object(text: str, index: int, source: str, limits: Limits, lines: "_Lines") -> _Walk:
    """A page: its `Items` row by row (its other keys are read past); or, without `Items`, a row."""
    start, keys, seen_items = lines.at(index), {}, False
    index = _skip(text, index + 1)
    while text[index:index + 1] != "}":
        if text[index:index + 1] != '"':
            raise LoadError(source, None, "not valid JSON: expected a key in double quotes",
                            line=line_of(text, index))
        key, index = json_value_at(text, index, source, limits)
        if key in keys or (key == "Items" and seen_items):
            raise LoadError(source, None, f"the key {key!r} appears twice in one object; keep one",
                            line=line_of(text, index))
        index = _skip(text, index)
        if text[index:index + 1] != ":":
            raise LoadError(source, None, "not valid JSON: expected ':' after a key", line=line_of(text, index))
        index = _skip(text, index + 1)
        if key == "Items":
            seen_items = True
            if text[index:index + 1] != "[":
                raise LoadError(source, None, "must be a list of price rows", line=line_of(text, index),
                                key="Items")
            index = yield from _array(text, index, source, limits, lines, "Items")
        else:
            keys[key], index = json_value_at(text, index, source, limits)
        index = _skip(text, index)
        if text[index:index + 1] == ",":
            index = _skip(text, index + 1)
        elif text[index:index + 1] != "}":
            raise LoadError(source, None, "not valid JSON: expected ',' or '}'", line=line_of(text, index))
    if not seen_items:
        yield start, keys
    return index + 1


def _array(text: str, index: int, source: str, limits: Limits, lines: "_Lines", key: str) -> _Walk:
    """A JSON array of rows, each with the line it starts on."""
    index = _skip(text, index + 1)
    while text[index:index + 1] != "]":
        if index >= len(text):
            raise LoadError(source, None, "not valid JSON: the list of rows is not closed with ']'",
                            line=line_of(text, index), key=key or None)
        line = lines.at(index)
        row, index = json_value_at(text, index, source, limits)
        yield line, row
        index = _skip(text, index)
        if text[index:index + 1] == ",":
            index = _skip(text, index + 1)
        elif text[index:index + 1] != "]":
            raise LoadError(source, None, "not valid JSON: expected ',' or ']'", line=line_of(text, index))
    return index + 1


class _Lines:
    """Line numbers of positions met in increasing order, counting each newline once (a file's
    rows would otherwise cost a count from its start each)."""

    def __init__(self, text: str):
        self.text, self.index, self.line = text, 0, 1

    def at(self, index: int) -> int:
        self.line += self.text.count("\n", self.index, index)
        self.index = index
        return self.line


def _skip(text: str, index: int) -> int:
    # _SPACE matches the empty string too, so a match is always found
    found = _SPACE.match(text, index)
    return found.end() if found else index


def _words(text: str) -> list[str]:
    return text.lower().split()


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _instant(text: str) -> Optional[datetime]:
    """An effectiveStartDate (RFC 3339, or a date alone) as a naive UTC instant; None when it is neither.
    Written for Python 3.10's fromisoformat, which reads no `Z` and only 3 or 6 digits of a second."""
    match = _DATE.match(text)
    if match is None:
        return None
    if match.group("fraction"):
        digits = (match.group("fraction")[1:] + "000000")[:6]
        text = f"{text[:match.start('fraction')]}.{digits}{text[match.end('fraction'):]}"
    try:
        found = datetime.fromisoformat(re.sub(r"[Zz]$", "+00:00", text).replace("t", "T"))
    except ValueError:  # a month, a day or an hour out of range
        return None
    return found.astimezone(timezone.utc).replace(tzinfo=None) if found.tzinfo is not None else found


def fetch_filter(regions: Iterable[str], sizes: Iterable[str]) -> str:
    """The Retail Prices API's `$filter` for the Linux and Windows consumption rows (regular, Spot and
    Low Priority meters) of these VM sizes in these regions: what `read_prices` needs, and a
    little more."""
    regions, sizes = _names(regions, "region"), _names(sizes, "VM size")
    return (f"serviceName eq '{VIRTUAL_MACHINES}' and priceType eq '{CONSUMPTION}' and "
            f"{_any_of('armRegionName', regions)} and {_any_of('armSkuName', sizes)}")


def fetch_url(regions: Iterable[str], sizes: Iterable[str], currency: Optional[str] = None) -> str:
    """The first page's URL, encoded, for a loop that follows `NextPageLink`."""
    query = "$filter=" + quote(fetch_filter(regions, sizes), safe="'()")
    if currency is not None:
        query += f"&currencyCode='{_names([currency], 'currency')[0]}'"
    return f"{RETAIL_PRICES_API}?{query}"


def fetch_command(regions: Iterable[str], sizes: Iterable[str], out: str = "prices.json",
                  currency: Optional[str] = None) -> str:
    """The `curl` line (bash) that fetches the prices of these sizes in these regions into `out`:
    one page, which holds every row while the sizes are fewer than about 80 (a page is at most
    1,000 rows); docs/replay.md gives the loop that follows `NextPageLink` for more."""
    encoded = f"--data-urlencode \"\\$filter={fetch_filter(regions, sizes)}\""
    if currency is not None:
        encoded += f" --data-urlencode \"currencyCode='{_names([currency], 'currency')[0]}'\""
    return f"curl -sfG '{RETAIL_PRICES_API}' {encoded} -o {shlex.quote(out)}"


def _names(values: Iterable[str], what: str) -> list[str]:
    found = sorted(set(values), key=str.lower)
    if not found:
        raise ValueError(f"no {what} to fetch prices for")
    for value in found:
        if not _NAME.match(value):
            raise ValueError(f"{what} {value!r} is not an Azure name (letters, digits, '_' and '-')")
    return found


def _any_of(key: str, values: Sequence[str]) -> str:
    terms = " or ".join(f"{key} eq '{value}'" for value in values)
    return f"({terms})" if len(values) > 1 else terms


def shares(amount: float, allocated: Mapping[str, float]) -> dict[str, float]:
    """`amount` split by what each holder (a ClusterQueue) was allocated on a pool (resource-seconds
    of the pool's main resource): the pool's whole cost, idle nodes included, in proportion; empty
    when nothing was allocated (no one to charge)."""
    total = sum(value for value in allocated.values() if value > 0)
    if total <= 0:
        return {}
    return {holder: amount * value / total for holder, value in allocated.items() if value > 0}
