"""How `aks-kueue replay` shows its answer: text tables, Markdown for a pull request, the chart
(`replay.png`), `summary.md` and `workloads.csv`. Everything is drawn from the contract's JSON
document (`aks_kueue.replay.report`), and the chart from the replay's time series.

With two configurations the first is the change under review, the second the base; differences are
the first minus the second, so a negative wait is the change making teams wait less.

Every table of ClusterQueues shows the work done again (rerun resource-hours of its main resource);
with spot pools the interruptions per ClusterQueue and the evictions per pool, and with `--prices`
the cost per ClusterQueue and per pool (its hourly price and the price's date) and each
configuration's total (`_spot_and_cost`, below).
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any, Iterator, Optional

from aks_kueue.admission.fair_sharing import INT64_MAX
from aks_kueue.cli.chart import png_figure
from aks_kueue.cli.markdown import cell, table
from aks_kueue.replay.trace import format_duration

# At most this many ClusterQueues get a line of their own in the chart; the rest are summed.
CHART_QUEUES = 8
NEVER_STARTED_SHOWN = 10


def _wait(value: Optional[float]) -> str:
    return "-" if value is None else format_duration(value)


def _stat(waits: dict[str, Any], key: str) -> str:
    """A wait statistic, `≥` when waits cut at the end make it a lower bound."""
    value = waits[key]
    return ("≥ " if key in waits.get("lowerBounds", ()) and value is not None else "") + _wait(value)


def _delta_wait(value: Optional[float]) -> str:
    if value is None:
        return "-"
    if value == 0:
        return "0"
    return ("+" if value > 0 else "-") + format_duration(abs(value))


def _number(value: Optional[float], digits: int = 2) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}".rstrip("0").rstrip(".") if isinstance(value, float) else f"{value:,}"


def _share(value: Optional[float]) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _main_usage(queue: dict[str, Any]) -> str:
    """The busiest flavor-resource of a queue, as `a100/nvidia.com/gpu 64%`."""
    rows = [u for u in queue["usage"] if u["utilisation"] is not None]
    if not rows:
        return "-"
    top = max(rows, key=lambda u: u["utilisation"])
    return f"{top['flavor']}/{top['resource']} {_share(top['utilisation'])}"


def _headline(document: dict[str, Any], trace) -> str:
    start = document["start"]
    files = ", ".join(trace.files) if len(trace.files) <= 3 else f"{len(trace.files)} files"
    since = document.get("from") or 0.0
    window = (f"the window {format_duration(since)} to {format_duration(document['end'] or 0)} (before it: warm-up)"
              if since else f"replayed to {format_duration(document['end'] or 0)}")
    return (f"{document['summary']['workloads']:,} workloads from {files}; "
            f"{'start ' + start + ', ' if start else ''}{window}")


QUEUE_COLUMNS = ("ClusterQueue", "submitted", "finished", "running", "admitted at end", "pending at end",
                 "never admitted", "never started", "preemptions", "preempted workloads", "evicted",
                 "wait to admit p50/p95/max", "wait to start p50/p95/max", "busiest usage")
COUNTS = 11   # the columns of QUEUE_COLUMNS that are counts (the text's first table)


def _queue_row(queue: dict[str, Any]) -> list[str]:
    admit, start = queue["waitToAdmit"], queue["waitToStart"]
    counts = [str(queue[k]) for k in ("submitted", "finished", "running", "admittedAtEnd", "pendingAtEnd",
                                      "neverAdmitted", "neverStarted", "preemptions", "preemptedWorkloads",
                                      "evictions")]
    return [queue["name"], *counts, " / ".join(_stat(admit, k) for k in ("p50", "p95", "max")),
            " / ".join(_stat(start, k) for k in ("p50", "p95", "max")), _main_usage(queue)]


WAIT_COLUMNS = ("ClusterQueue", "to admit p50", "p95", "max", "cut", "to start p50", "p95", "max", "cut")
USAGE_COLUMNS = ("ClusterQueue", "flavor", "resource", "nominal", "mean used", "utilisation", "borrowed hours")
COHORT_COLUMNS = ("Cohort", "flavor", "resource", "own nominal", "mean used of it", "utilisation",
                  "borrowed hours", "subtree quota", "subtree mean used")
BACKTEST_COLUMNS = ("compared with the export", "workloads", "median error", "p95 error", "within 5m",
                    "censored")


def _wait_row(queue: dict[str, Any]) -> list[str]:
    row = [queue["name"]]
    for part in ("waitToAdmit", "waitToStart"):
        waits = queue[part]
        row += [*(_stat(waits, k) for k in ("p50", "p95", "max")), str(waits["censored"])]
    return row


def _amount(value: Optional[float], unit: str) -> str:
    return f"{_number(value)}{' ' + unit if unit else ''}"


def _usage_rows(configuration: dict[str, Any]) -> list[list[str]]:
    rows = []
    for queue in configuration["clusterQueues"]:
        for usage in queue["usage"]:
            rows.append([queue["name"], usage["flavor"], usage["resource"], _amount(usage["nominal"], usage["unit"]),
                         _amount(usage["meanUsed"], usage["unit"]), _share(usage["utilisation"]),
                         _number(usage["borrowedHours"])])
    return rows


def _cohort_rows(configuration: dict[str, Any]) -> list[list[str]]:
    rows = []
    for cohort in configuration.get("cohorts", []):
        for usage in cohort["usage"]:
            unit = usage["unit"]
            rows.append([cohort["name"], usage["flavor"], usage["resource"], _amount(usage["nominal"], unit),
                         _amount(usage["meanUsed"], unit), _share(usage["utilisation"]),
                         _number(usage["borrowedHours"]), _amount(usage["subtreeQuota"], unit),
                         _amount(usage["subtreeMeanUsed"], unit)])
    return rows


def _backtest_rows(configuration: dict[str, Any]) -> list[list[str]]:
    found = configuration.get("backtest")
    if not found:
        return []
    rows = []
    for part in ("admitted", "started"):
        errors = found[part]
        rows.append([f"time {part}", str(errors["compared"]), _wait(errors["medianError"]),
                     _wait(errors["p95Error"]), _share(errors["within5m"]), str(errors["censored"])])
    return rows


def _node_startup_lines(configuration: dict[str, Any]) -> list[str]:
    """The `--node-startup` the exports suggest, per pool, with what it rests on."""
    lines = []
    for found in configuration.get("nodeStartup", []):
        fast = found["medianNotWaited"]
        less = (f", less {format_duration(fast)} for the {found['notWaited']} that did not (their pods' own start)"
                if fast is not None else " (no workload of this pool started quicker, so it includes the pods' own "
                                         "start)")
        lines.append(f"suggested from the exports: --node-startup {found['pool']}={format_duration(found['suggested'])}"
                     f" (admission to PodsReady: median {format_duration(found['medianWaited'])} for the "
                     f"{found['waited']} workloads that waited more than {format_duration(found['threshold'])} for "
                     f"their pods{less}; the {format_duration(found['threshold'])} threshold is assumed)")
    return lines


POOL_COLUMNS = ("pool", "node-hours", "peak nodes", "min-max", "mean allocated", "hours at maxCount", "node startup")


def _pool_row(pool: dict[str, Any]) -> list[str]:
    return [pool["name"], _number(pool["nodeHours"]), str(pool["peakNodes"]), f"{pool['minCount']}-{pool['maxCount']}",
            f"{_share(pool['meanAllocated'])} ({pool['resource']})", _number(pool["hoursAtMax"]),
            format_duration(pool["nodeStartup"])]


DIFF_COLUMNS = ("ClusterQueue", "wait to start p95", "Δ", "wait to admit p95", "Δ", "pending at end", "Δ",
                "preemptions", "Δ", "never admitted", "Δ", "never started", "Δ")


def _difference_rows(document: dict[str, Any]) -> list[list[str]]:
    first, second = document["configurations"]
    theirs = {q["name"]: q for q in second["clusterQueues"]}
    blank = [""] * (len(DIFF_COLUMNS) - 3)
    rows = []
    for queue in first["clusterQueues"]:
        other = theirs.get(queue["name"])
        if other is None:
            rows.append([queue["name"], _stat(queue["waitToStart"], "p95"), "new", *blank])
            continue
        row = [queue["name"]]
        for part in ("waitToStart", "waitToAdmit"):
            mine, base = queue[part]["p95"], other[part]["p95"]
            row += [f"{_stat(queue[part], 'p95')} (base {_stat(other[part], 'p95')})",
                    _delta_wait(None if mine is None or base is None else mine - base)]
        for key in ("pendingAtEnd", "preemptions", "neverAdmitted", "neverStarted"):
            row += [f"{queue[key]} (base {other[key]})", f"{queue[key] - other[key]:+d}"]
        rows.append(row)
    mine = {q["name"] for q in first["clusterQueues"]}
    rows += [[name, "removed", "", *blank] for name in theirs if name not in mine]
    return rows


def _waiting(configuration: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The workloads not running or finished at the end, each with its reason (streamed: there can be many)."""
    return (w for w in configuration["workloads"] if w["state"] in ("pending", "admitted"))


def _waiting_lines(configuration: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """The first NEVER_STARTED_SHOWN waiting workloads, never admitted or never started first, and how many wait."""
    shown: list[dict[str, Any]] = []
    later: list[dict[str, Any]] = []
    count = 0
    for workload in _waiting(configuration):
        count += 1
        never = workload["neverAdmitted"] or workload["neverStarted"]
        if never and len(shown) < NEVER_STARTED_SHOWN:
            shown.append(workload)
        elif not never and len(later) < NEVER_STARTED_SHOWN:
            later.append(workload)
    return (shown + later)[:NEVER_STARTED_SHOWN], count


def _unrouted_line(configuration: dict[str, Any]) -> Optional[str]:
    count = configuration["unrouted"]
    if not count:
        return None
    return (f"{count:,} workloads reach no ClusterQueue here (no such LocalQueue, or its ClusterQueue does not exist): "
            "never admitted, and a --fail-on-wait gate fails on them")


SHARE_COLUMNS = ("ClusterQueue", "weight", "at end", "highest", "mean", "borrowing hours")


def _weighted(value: Optional[int]) -> str:
    """Kueue's weightedShare; int64's maximum is a weight-0 queue that borrows: an infinite share."""
    return "-" if value is None else "∞" if value >= INT64_MAX else f"{value:,}"


def _share_rows(configuration: dict[str, Any]) -> list[list[str]]:
    rows = []
    for queue in configuration["clusterQueues"]:
        fair = queue.get("fairSharing")
        if fair is None:
            continue
        share = fair["weightedShare"]
        rows.append([queue["name"], f"{fair['weight']:g}", _weighted(share["atEnd"]), _weighted(share["max"]),
                     "∞ at times" if share["mean"] is None else _number(share["mean"], 1),
                     _number(fair["borrowingHours"])])
    return rows


# Text ------------------------------------------------------------------------------------------


def print_text(document: dict[str, Any], trace) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:
        console = Console(width=160)  # a log or a file: wide enough for the tables, never cut

    def table(title: str, columns, rows) -> None:
        shown = Table(*columns, title=title, title_justify="left")
        for row in rows:
            shown.add_row(*row)
        console.print(shown)

    def say(line: str) -> None:
        console.print(line, highlight=False, markup=False)

    say(_headline(document, trace))
    configurations = document["configurations"]
    for index, configuration in enumerate(configurations):
        role = "" if len(configurations) == 1 else (" (the change)" if index == 0 else " (the base)")
        console.print(f"\n[bold]{configuration['name']}{role}[/bold]: {configuration['events']:,} events",
                      highlight=False)
        for line in configuration["assumptions"]:
            say(f"  assumed: {line}")
        unrouted = _unrouted_line(configuration)
        if unrouted:
            say(f"  {unrouted}")
        queues = configuration["clusterQueues"]
        table("per ClusterQueue (state at the end: finished + running + admitted + pending = submitted)",
              QUEUE_COLUMNS[:COUNTS], [_queue_row(q)[:COUNTS] for q in queues])
        table("work done again, spot and cost", *_queue_extras(configuration))
        table("waits (p50 / p95 / max; ≥: a lower bound, waits cut at the end of the replay; cut: how many)",
              WAIT_COLUMNS, [_wait_row(q) for q in queues])
        table("usage of nominal quota", USAGE_COLUMNS, _usage_rows(configuration))
        if configuration.get("cohorts"):
            table("usage of the Cohorts' own quota (what their ClusterQueues borrow beyond their own and lent quota)",
                  COHORT_COLUMNS, _cohort_rows(configuration))
        if any("fairSharing" in q for q in queues):
            table("fair sharing: weightedShare (per mille of the cohort's lendable, over the weight)", SHARE_COLUMNS,
                  _share_rows(configuration))
        if configuration["pools"]:
            extra, pool_cells = _pool_extras(configuration)
            table("per pool", POOL_COLUMNS + extra, [_pool_row(p) + pool_cells(p) for p in configuration["pools"]])
        if "cost" in configuration:
            say(_total_cost(configuration))
        if configuration.get("backtest"):
            table("backtest: predicted against what the exports observed (absolute errors)", BACKTEST_COLUMNS,
                  _backtest_rows(configuration))
        for line in _node_startup_lines(configuration):
            say(f"  {line}")
        shown, count = _waiting_lines(configuration)
        for workload in shown:
            say(f"  {workload['state']} at the end: {workload['namespace']}/{workload['name']} "
                f"({workload['clusterQueue']}): {workload['reason'] or 'still waiting at the end'}")
        if count > len(shown):
            say(f"  ... and {count - len(shown):,} more waiting at the end (workloads.csv with --out)")
    if "differences" in document:
        table("\nthe change minus the base", DIFF_COLUMNS, _difference_rows(document))
        table("work done again, spot and cost: the change minus the base", *_difference_extras(document))
        if all("cost" in c for c in configurations):
            say(_total_cost_difference(configurations))
    _print_gates(document, say)


def _print_gates(document: dict[str, Any], say) -> None:
    for gate in document["summary"]["gates"]:
        mark = "passed" if gate["passed"] else "FAILED"
        statistic = next(k for k in gate if k in ("p50", "p95", "max"))
        if gate["clusterQueue"] is None:
            say(f"gate {statistic} wait to start <= {format_duration(gate[statistic])}: {gate['unrouted']:,} "
                f"workloads reach no ClusterQueue {mark}")
            continue
        bound = "≥ " if gate["lowerBound"] and gate["value"] is not None else ""
        say(f"gate {statistic} wait to start <= {format_duration(gate[statistic])}: "
            f"{gate['clusterQueue']} {bound}{_wait(gate['value'])} {mark}")


# Markdown --------------------------------------------------------------------------------------


def markdown(document: dict[str, Any], trace) -> str:
    configurations = document["configurations"]
    gates = document["summary"]["gates"]
    failed = [g for g in gates if not g["passed"]]
    over = sum(1 for g in failed if g["clusterQueue"] is not None)
    unrouted = next((g["unrouted"] for g in failed if g["clusterQueue"] is None), 0)
    verdict = (":x: " + "; ".join(([f"{over} ClusterQueue(s) over the wait gate"] if over else [])
                                  + ([f"{unrouted:,} workloads reach no ClusterQueue"] if unrouted else [])) if failed
               else ":white_check_mark: every ClusterQueue within the wait gate" if gates else "")
    names = " against ".join(f"`{c['name']}`" for c in configurations)
    lines = [f"## aks-kueue replay: {names}", "", _headline(document, trace) + (f". {verdict}" if verdict else ""), ""]
    if "differences" in document:
        lines += ["**What the change does** (this configuration minus the base; negative waits are shorter):", ""]
        lines += table(DIFF_COLUMNS, _difference_rows(document)) + [""]
        lines += table(*_difference_extras(document)) + [""]
        pools = _pool_differences(configurations)
        if pools:
            lines += table(("pool", "node-hours", "Δ", "peak nodes", "Δ", "hours at maxCount", "Δ")
                           + _pool_difference_extras(configurations)[0], pools) + [""]
        if all("cost" in c for c in configurations):
            lines += [f"**{_total_cost_difference(configurations)}**", ""]
    for index, configuration in enumerate(configurations):
        role = "" if len(configurations) == 1 else (" (this change)" if index == 0 else " (base)")
        opened = len(configurations) == 1
        lines += [f"<details{' open' if opened else ''}><summary><b>{cell(configuration['name'])}{role}</b>: "
                  f"{configuration['events']:,} events</summary>", ""]
        lines += _markdown_configuration(configuration)
        lines += ["Assumed:", ""] + [f"- {cell(a)}" for a in configuration["assumptions"]] + ["", "</details>", ""]
    return "\n".join(lines) + "\n"


def _markdown_configuration(configuration: dict[str, Any]) -> list[str]:
    """One configuration's tables and lists, for the pull-request comment."""
    lines = []
    unrouted = _unrouted_line(configuration)
    if unrouted:
        lines += [f"**{cell(unrouted)}**", ""]
    lines += table(QUEUE_COLUMNS, [_queue_row(q) for q in configuration["clusterQueues"]]) + [""]
    lines += table(*_queue_extras(configuration)) + [""]
    if any("fairSharing" in q for q in configuration["clusterQueues"]):
        lines += ["Fair sharing, weightedShare per ClusterQueue:", ""]
        lines += table(SHARE_COLUMNS, _share_rows(configuration)) + [""]
    if any(q["waitToStart"]["lowerBounds"] or q["waitToAdmit"]["lowerBounds"] for q in configuration["clusterQueues"]):
        lines += ["≥: a lower bound (waits cut at the end of the replay count with what they had waited by then).", ""]
    if configuration.get("cohorts"):
        lines += ["Cohorts' own quota (what their ClusterQueues borrow beyond their own and lent quota):", ""]
        lines += table(COHORT_COLUMNS, _cohort_rows(configuration)) + [""]
    if configuration["pools"]:
        extra, pool_cells = _pool_extras(configuration)
        lines += table(POOL_COLUMNS + extra, [_pool_row(p) + pool_cells(p) for p in configuration["pools"]]) + [""]
    if "cost" in configuration:
        lines += [_total_cost(configuration), ""]
    if configuration.get("backtest"):
        lines += ["Backtest: predicted against what the exports observed (absolute errors):", ""]
        lines += table(BACKTEST_COLUMNS, _backtest_rows(configuration)) + [""]
        lines += [f"- {cell(line)}" for line in _node_startup_lines(configuration)]
        lines += [""] if configuration.get("nodeStartup") else []
    shown, count = _waiting_lines(configuration)
    if shown:
        lines += ["Not running at the end, with the reason:", ""]
        lines += [f"- `{w['namespace']}/{w['name']}` ({w['clusterQueue']}, {w['state']}): "
                  f"{cell(w['reason'] or 'still waiting')}" for w in shown]
        if count > len(shown):
            lines.append(f"- ... and {count - len(shown):,} more (workloads.csv)")
        lines.append("")
    return lines


def _pool_differences(configurations: list[dict[str, Any]]) -> list[list[str]]:
    first, second = configurations
    theirs = {p["name"]: p for p in second["pools"]}
    columns, extra = _pool_difference_extras(configurations)
    rows = []
    for pool in first["pools"]:
        other = theirs.get(pool["name"])
        if other is None:
            rows.append([pool["name"], _number(pool["nodeHours"]), "new", str(pool["peakNodes"]), "", "", ""]
                        + extra(pool, None))
            continue
        rows.append([pool["name"], f"{_number(pool['nodeHours'])} (base {_number(other['nodeHours'])})",
                     f"{pool['nodeHours'] - other['nodeHours']:+,.1f}",
                     f"{pool['peakNodes']} (base {other['peakNodes']})", f"{pool['peakNodes'] - other['peakNodes']:+d}",
                     f"{_number(pool['hoursAtMax'])} (base {_number(other['hoursAtMax'])})",
                     f"{pool['hoursAtMax'] - other['hoursAtMax']:+,.1f}"] + extra(pool, other))
    mine = {p["name"] for p in first["pools"]}
    rows += [[name, "removed", "", "", "", "", ""] + [""] * len(columns) for name in theirs if name not in mine]
    return rows


# Spot and cost ------------------------------------------------------------------------------------


def _rerun(queue: dict[str, Any]) -> str:
    """The rerun resource-hours of a queue's main resource (its GPUs, else cpu), as `138.03 nvidia.com/gpu`."""
    hours = queue.get("rerunHours") or {}
    main = next((r for r in hours if "gpu" in r), "cpu" if "cpu" in hours else next(iter(hours), None))
    return "0" if main is None else f"{_number(hours[main])} {main}"


def _money(cost: Optional[dict[str, Any]]) -> str:
    """`1,234.56 USD`; a lower bound (`≥`) when pools it used have no price."""
    if cost is None:
        return "no price"
    return f"{'≥ ' if cost.get('unpriced') else ''}{cost['amount']:,.2f} {cost['currency'] or ''}".rstrip()


def _pool_cost(pool: dict[str, Any]) -> str:
    cost = pool.get("cost")
    if cost is None:
        return "no price (see assumed)"
    return f"{_money(cost)} ({cost['hourly']:g} a node-hour, price of {cost['priceDate'] or 'no stated date'})"


def _queue_extras(configuration: dict[str, Any]) -> tuple[tuple[str, ...], list[list[str]]]:
    """The table of work done again (per ClusterQueue, the rerun hours of its main resource), spot
    interruptions (with spot pools) and cost (with prices)."""
    queues = configuration["clusterQueues"]
    spot = any("spotInterruptions" in q for q in queues)
    priced = "cost" in configuration
    columns = ("ClusterQueue", "rerun resource-hours") + (("spot interrupted",) if spot else ()) \
        + (("cost",) if priced else ())
    rows = [[queue["name"], _rerun(queue)] + ([str(queue.get("spotInterruptions", 0))] if spot else [])
            + ([_money(queue.get("cost"))] if priced else []) for queue in queues]
    return columns, rows


def _pool_extras(configuration: dict[str, Any]):
    pools = configuration["pools"]
    spot = any("spotEvictions" in p for p in pools)
    priced = "cost" in configuration
    columns = (("spot evictions",) if spot else ()) + (("cost",) if priced else ())

    def cells(pool: dict[str, Any]) -> list[str]:
        return ([str(pool["spotEvictions"]) if pool.get("spot") else "-"] if spot else []) \
            + ([_pool_cost(pool)] if priced else [])
    return columns, cells


def _total_cost(configuration: dict[str, Any]) -> str:
    cost = configuration["cost"]
    dates = sorted({p["cost"]["priceDate"] or "no stated date" for p in configuration["pools"] if p.get("cost")})
    text = (f"cost of the pools: {_money(cost)}, at list prices of {', '.join(dates) or 'no date'} "
            f"(the Azure Retail Prices files given)")
    if cost.get("unallocated"):
        text += f"; {cost['unallocated']:,.2f} of it on pools where no ClusterQueue was allocated anything"
    if cost.get("unpriced"):
        text += f"; pools without a price: {', '.join(cost['unpriced'])}"
    return text


def _total_cost_difference(configurations: list[dict[str, Any]]) -> str:
    mine, base = configurations[0]["cost"], configurations[1]["cost"]
    return (f"cost of the pools: {_money(mine)} (base {_money(base)}), "
            f"{mine['amount'] - base['amount']:+,.2f} {mine['currency'] or ''}".rstrip())


def _difference_extras(document: dict[str, Any]) -> tuple[tuple[str, ...], list[list[str]]]:
    """The difference table of work done again, spot interruptions and cost, per ClusterQueue in both."""
    first, second = document["configurations"]
    theirs = {q["name"]: q for q in second["clusterQueues"]}
    spot = any("spotInterruptions" in q for q in first["clusterQueues"] + second["clusterQueues"])
    priced = "cost" in first and "cost" in second
    columns = ("ClusterQueue", "rerun resource-hours", "Δ") + (("spot interrupted", "Δ") if spot else ()) \
        + (("cost", "Δ") if priced else ())
    rows = []
    for queue in first["clusterQueues"]:
        other = theirs.get(queue["name"])
        if other is None:
            continue
        row = [queue["name"], f"{_rerun(queue)} (base {_rerun(other)})", _rerun_delta(queue, other)]
        if spot:
            mine, base = queue.get("spotInterruptions", 0), other.get("spotInterruptions", 0)
            row += [f"{mine} (base {base})", f"{mine - base:+d}"]
        if priced:
            row += [f"{_money(queue['cost'])} (base {_money(other['cost'])})",
                    f"{queue['cost']['amount'] - other['cost']['amount']:+,.2f}"]
        rows.append(row)
    return columns, rows


def _rerun_delta(queue: dict[str, Any], other: dict[str, Any]) -> str:
    mine, base = queue.get("rerunHours") or {}, other.get("rerunHours") or {}
    both = {**base, **mine}
    main = next((r for r in both if "gpu" in r), "cpu" if "cpu" in both else next(iter(both), None))
    return "0" if main is None else f"{mine.get(main, 0.0) - base.get(main, 0.0):+,.2f}"


def _pool_difference_extras(configurations: list[dict[str, Any]]):
    spot = any("spotEvictions" in p for c in configurations for p in c["pools"])
    priced = all("cost" in c for c in configurations)
    columns = (("spot evictions", "Δ") if spot else ()) + (("cost", "Δ") if priced else ())

    def cells(pool: dict[str, Any], other: Optional[dict[str, Any]]) -> list[str]:
        found = []
        if spot:
            mine, base = pool.get("spotEvictions", 0), (other or {}).get("spotEvictions", 0)
            found += [f"{mine} (base {base})" if other is not None else str(mine), f"{mine - base:+d}"]
        if priced:
            mine_cost, base_cost = pool.get("cost"), (other or {}).get("cost")
            known = mine_cost is not None and (other is None or base_cost is not None)
            found += [f"{_money(mine_cost)} (base {_money(base_cost)})" if other is not None else _money(mine_cost),
                      f"{mine_cost['amount'] - (base_cost['amount'] if base_cost else 0.0):+,.2f}"
                      if mine_cost is not None and known else "-"]
        return found
    return columns, cells


# Files -----------------------------------------------------------------------------------------


def write_out(document: dict[str, Any], results: list, trace, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    chart = draw_chart(document, results, out / "replay.png")
    summary = out / "summary.md"
    summary.write_text(markdown(document, trace), encoding="utf-8")
    rows = out / "workloads.csv"
    write_csv(document, rows)
    return [chart, summary, rows]


CSV_COLUMNS = ("configuration", "namespace", "name", "clusterQueue", "submitted", "admitted", "started", "finished",
               "state", "admissions", "waitToAdmit", "waitToStart", "waitCut", "preemptions", "evictions",
               "neverAdmitted", "neverStarted", "deactivated", "flavors", "reason", "observedAdmitted",
               "observedStarted")


def write_csv(document: dict[str, Any], path: Path) -> None:
    """One row a workload and configuration; a wait still running at the end counts to the end (`waitCut`);
    with spot pools, its spot interruptions last."""
    end = document["end"] or 0.0
    spot = any("spotEvictions" in p for c in document["configurations"] for p in c["pools"])
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS + (("spotInterruptions",) if spot else ()))
        for configuration in document["configurations"]:
            for w in configuration["workloads"]:
                admitted, started = w["admitted"], w["started"]
                observed = w.get("observed") or {}
                writer.writerow([
                    configuration["name"], w["namespace"], w["name"], w["clusterQueue"] or "", w["submitted"],
                    _cell(admitted), _cell(started), _cell(w["finished"]), w["state"], w["admissions"],
                    _cell(round((admitted if admitted is not None else end) - w["submitted"], 3)),
                    _cell(round((started if started is not None else end) - w["submitted"], 3)),
                    str(started is None).lower(), w["preemptions"], w["evictions"],
                    str(w["neverAdmitted"]).lower(), str(w["neverStarted"]).lower(), str(w["deactivated"]).lower(),
                    json.dumps(w["flavors"], sort_keys=True, separators=(",", ":")), w["reason"] or "",
                    _cell(observed.get("admitted")), _cell(observed.get("started"))]
                    + ([w.get("spotInterruptions", "")] if spot else []))


def _cell(value: Optional[float]) -> str:
    return "" if value is None else repr(value)


def _time_scale(span: float) -> tuple[float, str]:
    if span >= 2 * 86400:
        return 86400.0, "days"
    if span >= 2 * 3600:
        return 3600.0, "hours"
    if span >= 120:
        return 60.0, "minutes"
    return 1.0, "seconds"


# One colour per ClusterQueue (and Cohort, and pool) in every picture: a name's hash picks it from this
# palette (matplotlib's tab10 and the dark shades of tab20b and tab20c: no pale ones, which vanish on white),
# so it does not depend on the run, the configuration or the other names. Two names of one picture that land
# on the same colour are told apart by a marker.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354",
           "#756bb1", "#636363")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
OTHERS_COLOUR = "#444444"


def colour(name: str) -> str:
    """A name's colour in every picture: the same for the same name, whatever else is drawn."""
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    return PALETTE[int.from_bytes(digest[:4], "big") % len(PALETTE)]


def styles(names: list[str]) -> dict[str, tuple[str, Optional[str]]]:
    """Each name's colour, and a marker for the second and later names of a picture sharing one."""
    found: dict[str, tuple[str, Optional[str]]] = {}
    taken: dict[str, int] = {}
    for name in sorted(names):
        shade = colour(name)
        count = taken.get(shade, 0)
        taken[shade] = count + 1
        found[name] = (shade, None if count == 0 else MARKERS[(count - 1) % len(MARKERS)])
    return found


def _steps(series, since: float, end: float, scale: float) -> tuple[list[float], list[float]]:
    """A step function's points within [since, end], starting with its value at `since`."""
    xs: list[float] = [since / scale]
    ys: list[float] = [0.0]
    for t, v in series:
        if t > end:
            break
        if t <= since:
            ys[0] = v
            continue
        xs.append(t / scale)
        ys.append(v)
    xs.append(end / scale)
    ys.append(ys[-1])
    return xs, ys


class _Panel:
    """One chart of the picture: its lines (colour, marker), the base dashed when comparing."""

    def __init__(self, axis, since: float, end: float, scale: float):
        self.axis, self.since, self.end, self.scale = axis, since, end, scale
        self.peak = 0.0

    def step(self, series, shade: str, marker: Optional[str], label: str, dashed: bool, width: float = 1.4) -> None:
        xs, ys = _steps(series, self.since, self.end, self.scale)
        self.peak = max(self.peak, max(ys))
        self.axis.step(xs, ys, where="post", linestyle="--" if dashed else "-", color=shade, label=label,
                       linewidth=width, marker=marker, markevery=max(1, len(xs) // 12) if marker else None,
                       markersize=4)

    def finish(self, ylabel: str, title: str, legend: str, integer: bool = True, unit_top: float = 1.0) -> None:
        from matplotlib.ticker import MaxNLocator

        axis = self.axis
        axis.set_ylabel(ylabel)
        if integer:
            axis.yaxis.set_major_locator(MaxNLocator(integer=True))
        axis.set_ylim(0, max(self.peak * 1.08, unit_top))   # never below 0, never a range of nothing
        axis.set_xlim(self.since / self.scale, max(self.end, self.since + 1e-9) / self.scale)
        axis.set_title(title, loc="left", fontsize=11)
        axis.grid(alpha=0.3)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(title=legend, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title_fontsize=8)


def draw_chart(document: dict[str, Any], results: list, path: Path) -> Path:
    """Over the report's window: pending workloads per ClusterQueue (the busiest ones, the rest summed),
    the usage of nominal quota of the same ClusterQueues (their busiest flavor/resource) and of the Cohorts
    with quota of their own, nodes per pool, and with fair sharing the weighted share of the ClusterQueues
    whose share rose highest; with two configurations the base is dashed. Colours come from the names
    (`colour`). `results` are the configurations' `report.Result`s."""
    since = min(r.since for r in results)
    end = max(max(r.end for r in results), since)
    scale, unit = _time_scale(end - since)
    with_nodes = any(r.pools is not None for r in results)
    with_shares = any(r.fair_shares is not None for r in results)
    rows = 2 + with_nodes + with_shares
    with png_figure(path, rows, 1, figsize=(11, 3.4 * rows + 0.6), sharex=True, squeeze=False) as (figure, axes):
        pending, usage = _Panel(axes[0][0], since, end, scale), _Panel(axes[1][0], since, end, scale)
        nodes = _Panel(axes[2][0], since, end, scale) if with_nodes else None
        shares = _Panel(axes[-1][0], since, end, scale) if with_shares else None
        busiest = _busiest_queues(results[0], since)
        sharing = list(dict.fromkeys(name for r in results if r.fair_shares is not None
                                     for name in _highest_shares(r.fair_shares, since)))
        cohorts = sorted({name for r in results for name in r.cohorts})
        pools = sorted({name for r in results if r.pools is not None for name in r.pools})
        shade = styles(list(dict.fromkeys(busiest + sharing)) + [f"cohort {c}" for c in cohorts] + pools)
        for index, found in enumerate(results):
            suffix = "" if len(results) == 1 else (" (change)" if index == 0 else " (base)")
            _draw_result(found, (pending, usage, nodes, shares), busiest, sharing, shade, suffix, index % 2 == 1)
        compared = "" if len(results) == 1 else " (solid: this change, dashed: base)"
        pending.finish("pending workloads", f"Pending workloads per ClusterQueue{compared}", "ClusterQueue")
        usage.finish("share of nominal quota", "Usage of nominal quota: each ClusterQueue's busiest flavor/resource, "
                     "and each Cohort's own quota", "ClusterQueue or Cohort (flavor/resource)", integer=False)
        usage.axis.yaxis.set_major_formatter(_percent_formatter())
        if nodes is not None:
            nodes.finish("nodes (incl. starting)", "Nodes per pool", "pool")
        if shares is not None:
            shares.finish("weighted share (per mille)", "Fair sharing: weighted share per ClusterQueue (a weight-0 "
                          "queue that borrows: drawn at the top)", "ClusterQueue", integer=False)
        axes[-1][0].set_xlabel(f"{unit} since the first submission")
        figure.suptitle("aks-kueue replay: " + " vs ".join(c["name"] for c in document["configurations"]),
                        fontsize=12, x=0.01, ha="left")
    return path


def _draw_result(found, panels: tuple, busiest: list[str], sharing: list[str], shade: dict, suffix: str,
                 dashed: bool) -> None:
    """One configuration's lines on the panels (pending, usage, nodes or None, shares or None)."""
    pending, usage, nodes, shares = panels
    for name in busiest:
        if name in found.queues:
            pending.step(found.queues[name].series, *shade[name], name + suffix, dashed)
        if name in found.usage:
            line = found.usage[name]
            usage.step(line.shares(), *shade[name], f"{name} {line.label}{suffix}", dashed)
    others = [q for n, q in found.queues.items() if n not in busiest]
    if others:
        pending.step(_summed([q.series for q in others]), OTHERS_COLOUR, None,
                     f"{len(others)} other ClusterQueues{suffix}", dashed, 1.2)
    for name, line in found.cohorts.items():
        usage.step(line.shares(), *shade[f"cohort {name}"], f"Cohort {name} {line.label} (own quota){suffix}",
                   dashed, 2.0)
    for name, series in (found.pools or {}).items():
        assert nodes is not None
        nodes.step(series.series, *shade[name], name + suffix, dashed)
    if shares is not None and found.fair_shares is not None:
        for name in sharing:
            if name in found.fair_shares:
                shares.step(_share_series(found.fair_shares[name]), *shade[name], name + suffix, dashed)


def _percent_formatter():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _: f"{value * 100:.0f}%")


def _share_series(series) -> list[tuple[float, float]]:
    """A ClusterQueue's precise weighted share over time (`report.Steps`); an infinite share is drawn
    at the highest finite one (or 1000) so that the rest stays readable."""
    values = list(series.values)
    ceiling = max([v for v in values if v != float("inf")] + [1000.0])
    return [(t, ceiling if v == float("inf") else v) for t, v in zip(series.times, values)]


def _highest_shares(fair_shares: dict, since: float) -> list[str]:
    """The ClusterQueues whose share rose highest in the window (up to CHART_QUEUES), those that never
    borrowed left out."""
    peaks = []
    for name, series in fair_shares.items():
        points = list(zip(series.times, series.values))
        before = [v for t, v in points if t <= since]
        peak = max([v for t, v in points if t > since] + before[-1:], default=0.0)
        if peak > 0:
            peaks.append((-peak, name))
    return [name for _, name in sorted(peaks)[:CHART_QUEUES]]


def _busiest_queues(found, since: float) -> list[str]:
    """The ClusterQueues with the most pending workloads in the window (CHART_QUEUES of them), by name on a tie."""
    def peak(steps) -> int:
        inside = [v for t, v in steps.series if t >= since]
        before = [v for t, v in steps.series if t < since]
        return max(inside + before[-1:], default=0)

    peaks = sorted(((peak(q), n) for n, q in found.queues.items()), key=lambda p: (-p[0], p[1]))
    return [n for top, n in peaks[:CHART_QUEUES] if top > 0] or [n for _, n in peaks[:CHART_QUEUES]]


def _summed(all_series: list[list[tuple[float, int]]]) -> list[tuple[float, int]]:
    """The sum of several step functions, as one."""
    changes: dict[float, int] = {}
    for series in all_series:
        previous = 0
        for t, v in series:
            changes[t] = changes.get(t, 0) + v - previous
            previous = v
    total, found = 0, []
    for t in sorted(changes):
        total += changes[t]
        found.append((t, total))
    return found
