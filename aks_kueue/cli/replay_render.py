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
import json
from pathlib import Path
from typing import Any, Optional

from aks_kueue.admission.fair_sharing import INT64_MAX
from aks_kueue.cli.chart import png_figure
from aks_kueue.cli.markdown import cell, table
from aks_kueue.replay.trace import format_duration

# At most this many ClusterQueues get a line of their own in the chart; the rest are summed.
CHART_QUEUES = 8
NEVER_STARTED_SHOWN = 10


def _wait(value: Optional[float]) -> str:
    return "-" if value is None else format_duration(value)


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
    return (f"{document['summary']['workloads']:,} workloads from {files}; "
            f"{'start ' + start + ', ' if start else ''}replayed to {format_duration(document['end'] or 0)}")


QUEUE_COLUMNS = ("ClusterQueue", "submitted", "admitted", "started", "finished", "preempted", "evicted",
                 "pending at end", "never started", "wait to admit p50/p95/max", "wait to start p50/p95/max",
                 "busiest usage")


def _queue_row(queue: dict[str, Any]) -> list[str]:
    admit, start = queue["waitToAdmit"], queue["waitToStart"]
    return [queue["name"], str(queue["submitted"]), str(queue["admitted"]), str(queue["started"]),
            str(queue["finished"]), str(queue["preemptions"]), str(queue["evictions"]), str(queue["pendingAtEnd"]),
            str(queue["neverStarted"]), " / ".join(_wait(admit[k]) for k in ("p50", "p95", "max")),
            " / ".join(_wait(start[k]) for k in ("p50", "p95", "max")), _main_usage(queue)]


COUNT_COLUMNS = ("ClusterQueue", "submitted", "admitted", "started", "finished", "preempted", "evicted", "pending",
                 "never started")
WAIT_COLUMNS = ("ClusterQueue", "to admit p50", "p95", "max", "to start p50", "p95", "max")
USAGE_COLUMNS = ("ClusterQueue", "flavor", "resource", "nominal", "mean used", "utilisation", "borrowed hours")


def _usage_rows(configuration: dict[str, Any]) -> list[list[str]]:
    rows = []
    for queue in configuration["clusterQueues"]:
        for usage in queue["usage"]:
            unit = f" {usage['unit']}" if usage["unit"] else ""
            rows.append([queue["name"], usage["flavor"], usage["resource"], f"{_number(usage['nominal'])}{unit}",
                         f"{_number(usage['meanUsed'])}{unit}", _share(usage["utilisation"]),
                         _number(usage["borrowedHours"])])
    return rows


POOL_COLUMNS = ("pool", "node-hours", "peak nodes", "min-max", "mean allocated", "hours at maxCount", "node startup")


def _pool_row(pool: dict[str, Any]) -> list[str]:
    return [pool["name"], _number(pool["nodeHours"]), str(pool["peakNodes"]), f"{pool['minCount']}-{pool['maxCount']}",
            f"{_share(pool['meanAllocated'])} ({pool['resource']})", _number(pool["hoursAtMax"]),
            format_duration(pool["nodeStartup"])]


DIFF_COLUMNS = ("ClusterQueue", "wait to start p95", "Δ", "wait to admit p95", "Δ", "pending at end", "Δ",
                "preempted", "Δ", "never started", "Δ")


def _difference_rows(document: dict[str, Any]) -> list[list[str]]:
    first, second = document["configurations"]
    theirs = {q["name"]: q for q in second["clusterQueues"]}
    rows = []
    for queue in first["clusterQueues"]:
        other = theirs.get(queue["name"])
        if other is None:
            rows.append([queue["name"], _wait(queue["waitToStart"]["p95"]), "new", "", "", "", "", "", "", "", ""])
            continue
        row = [queue["name"]]
        for part in ("waitToStart", "waitToAdmit"):
            mine, base = queue[part]["p95"], other[part]["p95"]
            row += [f"{_wait(mine)} (base {_wait(base)})",
                    _delta_wait(None if mine is None or base is None else mine - base)]
        for key in ("pendingAtEnd", "preemptions", "neverStarted"):
            row += [f"{queue[key]} (base {other[key]})", f"{queue[key] - other[key]:+d}"]
        rows.append(row)
    mine = {q["name"] for q in first["clusterQueues"]}
    rows += [[name, "removed", "", "", "", "", "", "", "", "", ""] for name in theirs if name not in mine]
    return rows


def _never_started(configuration: dict[str, Any]) -> list[dict[str, Any]]:
    return [w for w in configuration["workloads"] if w["neverStarted"] or w["deactivated"]
            or (w["reason"] and w["admitted"] is None and w["clusterQueue"] is not None)]


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

    console.print(_headline(document, trace), highlight=False)
    configurations = document["configurations"]
    for index, configuration in enumerate(configurations):
        role = "" if len(configurations) == 1 else (" (the change)" if index == 0 else " (the base)")
        console.print(f"\n[bold]{configuration['name']}{role}[/bold]: {configuration['events']:,} events",
                      highlight=False)
        for line in configuration["assumptions"]:
            console.print(f"  assumed: {line}", highlight=False, markup=False)
        if configuration["unrouted"]:
            console.print(f"  {configuration['unrouted']} workloads reach no ClusterQueue here (no such LocalQueue)",
                          highlight=False)
        queues = configuration["clusterQueues"]
        table("per ClusterQueue", COUNT_COLUMNS, [_queue_row(q)[:9] for q in queues])
        table("work done again, spot and cost", *_queue_extras(configuration))
        table("waits (p50 / p95 / max)", WAIT_COLUMNS,
              [[q["name"], *(_wait(q[part][k]) for part in ("waitToAdmit", "waitToStart")
                             for k in ("p50", "p95", "max"))] for q in queues])
        table("usage of nominal quota", USAGE_COLUMNS, _usage_rows(configuration))
        if any("fairSharing" in q for q in queues):
            table("fair sharing: weightedShare (per mille of the cohort's lendable, over the weight)", SHARE_COLUMNS,
                  _share_rows(configuration))
        if configuration["pools"]:
            extra, pool_cells = _pool_extras(configuration)
            table("per pool", POOL_COLUMNS + extra, [_pool_row(p) + pool_cells(p) for p in configuration["pools"]])
        if "cost" in configuration:
            console.print(_total_cost(configuration), highlight=False, markup=False)
        stuck = _never_started(configuration)
        for workload in stuck[:NEVER_STARTED_SHOWN]:
            console.print(f"  not started: {workload['namespace']}/{workload['name']} ({workload['clusterQueue']}): "
                          f"{workload['reason'] or 'still waiting at the end'}", highlight=False, markup=False)
        if len(stuck) > NEVER_STARTED_SHOWN:
            console.print(f"  ... and {len(stuck) - NEVER_STARTED_SHOWN} more (workloads.csv with --out)",
                          highlight=False)
    if "differences" in document:
        table("\nthe change minus the base", DIFF_COLUMNS, _difference_rows(document))
        table("work done again, spot and cost: the change minus the base", *_difference_extras(document))
        if all("cost" in c for c in configurations):
            console.print(_total_cost_difference(configurations), highlight=False, markup=False)
    for gate in document["summary"]["gates"]:
        mark = "passed" if gate["passed"] else "FAILED"
        statistic = next(k for k in gate if k in ("p50", "p95", "max"))
        console.print(f"gate {statistic} wait to start <= {format_duration(gate[statistic])}: "
                      f"{gate['clusterQueue']} {_wait(gate['value'])} {mark}", highlight=False)


# Markdown --------------------------------------------------------------------------------------


def markdown(document: dict[str, Any], trace) -> str:
    configurations = document["configurations"]
    gates = document["summary"]["gates"]
    failed = [g for g in gates if not g["passed"]]
    verdict = (f":x: {len(failed)} ClusterQueue(s) over the wait gate" if failed
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
        lines += table(QUEUE_COLUMNS, [_queue_row(q) for q in configuration["clusterQueues"]]) + [""]
        lines += table(*_queue_extras(configuration)) + [""]
        if any("fairSharing" in q for q in configuration["clusterQueues"]):
            lines += ["Fair sharing, weightedShare per ClusterQueue:", ""]
            lines += table(SHARE_COLUMNS, _share_rows(configuration)) + [""]
        if configuration["pools"]:
            extra, pool_cells = _pool_extras(configuration)
            lines += table(POOL_COLUMNS + extra, [_pool_row(p) + pool_cells(p) for p in configuration["pools"]]) + [""]
        if "cost" in configuration:
            lines += [_total_cost(configuration), ""]
        stuck = _never_started(configuration)
        if stuck:
            lines += ["Admitted but never started, or still waiting with a reason:", ""]
            lines += [f"- `{w['namespace']}/{w['name']}` ({w['clusterQueue']}): {cell(w['reason'] or 'still waiting')}"
                      for w in stuck[:NEVER_STARTED_SHOWN]]
            if len(stuck) > NEVER_STARTED_SHOWN:
                lines.append(f"- ... and {len(stuck) - NEVER_STARTED_SHOWN} more (workloads.csv)")
            lines.append("")
        lines += ["Assumed:", ""] + [f"- {cell(a)}" for a in configuration["assumptions"]] + ["", "</details>", ""]
    return "\n".join(lines) + "\n"


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
               "waitToAdmit", "waitToStart", "preemptions", "evictions", "neverStarted", "deactivated", "flavors",
               "reason")


def write_csv(document: dict[str, Any], path: Path) -> None:
    """One row a workload and configuration; with spot pools, its spot interruptions last."""
    end = document["end"] or 0.0
    spot = any("spotEvictions" in p for c in document["configurations"] for p in c["pools"])
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS + (("spotInterruptions",) if spot else ()))
        for configuration in document["configurations"]:
            for w in configuration["workloads"]:
                admitted = w["admitted"]
                writer.writerow([
                    configuration["name"], w["namespace"], w["name"], w["clusterQueue"] or "", w["submitted"],
                    _cell(w["admitted"]), _cell(w["started"]), _cell(w["finished"]),
                    _cell(None if admitted is None else round(admitted - w["submitted"], 3)),
                    _cell(round((w["started"] if w["started"] is not None else end) - w["submitted"], 3)),
                    w["preemptions"], w["evictions"], str(w["neverStarted"]).lower(), str(w["deactivated"]).lower(),
                    json.dumps(w["flavors"], sort_keys=True, separators=(",", ":")), w["reason"] or ""]
                    + ([w.get("spotInterruptions", "")] if spot else []))


def _cell(value: Optional[float]) -> str:
    return "" if value is None else repr(value)


def _time_scale(end: float) -> tuple[float, str]:
    if end >= 2 * 86400:
        return 86400.0, "days"
    if end >= 2 * 3600:
        return 3600.0, "hours"
    if end >= 120:
        return 60.0, "minutes"
    return 1.0, "seconds"


def _steps(series: list[tuple[float, int]], end: float, scale: float) -> tuple[list[float], list[float]]:
    xs: list[float] = []
    ys: list[float] = []
    for t, v in series:
        if t > end:
            break
        xs.append(t / scale)
        ys.append(v)
    xs.append(end / scale)
    ys.append(ys[-1] if ys else 0)
    return xs, ys


def draw_chart(document: dict[str, Any], results: list, path: Path) -> Path:
    """Pending workloads per ClusterQueue over time (the busiest ones, the rest summed) and nodes
    per pool over time; with two configurations the base is drawn dashed. `results` are the
    configurations' `report.Result`s."""
    end = max(r.end for r in results) or 1.0
    scale, unit = _time_scale(end)
    with_nodes = any(r.pools is not None for r in results)
    with_shares = any(r.fair_shares is not None for r in results)
    panels = 1 + with_nodes + with_shares
    with png_figure(path, panels, 1, figsize=(11, 1.5 + 3 * panels), sharex=True,
                    squeeze=False) as (figure, axes):
        import matplotlib
        from matplotlib.ticker import MaxNLocator

        colours = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        busiest = _busiest_queues(results[0])
        pools = list(dict.fromkeys(name for r in results if r.pools is not None for name in r.pools))
        pending, nodes = axes[0][0], axes[1][0] if with_nodes else None
        shares = axes[-1][0] if with_shares else None
        for index, found in enumerate(results):
            style = ("-", "--")[index % 2]
            suffix = "" if len(results) == 1 else (" (change)" if index == 0 else " (base)")

            def step(chart, xs_ys, colour: str, label: str, width: float = 1.4) -> None:
                chart.step(*xs_ys, where="post", linestyle=style, color=colour, label=label + suffix, linewidth=width)

            for position, name in enumerate(busiest):
                if name in found.queues:
                    step(pending, _steps(found.queues[name].series, found.end, scale),
                         colours[position % len(colours)], name)
            others = [q for n, q in found.queues.items() if n not in busiest]
            if others:
                step(pending, _summed([q.series for q in others], found.end, scale), "#777777",
                     f"{len(others)} other queues", 1.2)
            for name, series in (found.pools or {}).items():
                step(nodes, _steps(series.series, found.end, scale), colours[pools.index(name) % len(colours)], name)
            if shares is not None and found.fair_shares is not None:
                # The queues with the highest shares, each in the colour it has above.
                ranked = busiest + sorted(n for n in found.queues if n not in busiest)
                for name in _highest_shares(found.fair_shares):
                    step(shares, _share_steps(found.fair_shares[name], found.end, scale),
                         colours[ranked.index(name) % len(colours)], name)
        compared = "" if len(results) == 1 else " (solid: this change, dashed: base)"
        # (chart, y label, title, whether its values are counts)
        for chart, label, title, counts in (
                (pending, "pending workloads", f"Pending workloads per ClusterQueue{compared}", True),
                (nodes, "nodes (incl. starting)", "Nodes per pool", True),
                (shares, "weighted share (per mille)", "Fair sharing: weighted share per ClusterQueue (a weight-0 "
                 "queue that borrows: drawn at the top)", False)):
            if chart is None:
                continue
            chart.set_ylabel(label)
            if counts:
                chart.yaxis.set_major_locator(MaxNLocator(integer=True))
            chart.set_title(title, loc="left", fontsize=11)
            chart.grid(alpha=0.3)
            if chart is nodes or chart.get_legend_handles_labels()[0]:
                chart.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
        axes[-1][0].set_xlabel(f"{unit} since the first submission")
        figure.suptitle("aks-kueue replay: " + " vs ".join(c["name"] for c in document["configurations"]),
                        fontsize=12, x=0.01, ha="left")
    return path


def _share_steps(series, end: float, scale: float) -> tuple[list[float], list[float]]:
    """A ClusterQueue's precise weighted share over time (`report.Steps`); an infinite share is drawn
    at the highest finite one (or 1000) so that the rest stays readable."""
    values = list(series.values)
    ceiling = max([v for v in values if v != float("inf")] + [1000.0])
    return _steps([(t, ceiling if v == float("inf") else v) for t, v in zip(series.times, values)], end, scale)


def _highest_shares(fair_shares: dict) -> list[str]:
    """The ClusterQueues whose share rose highest (up to CHART_QUEUES), those that never borrowed left out."""
    peaks = []
    for name, series in fair_shares.items():
        peak = max(series.values, default=0.0)
        if peak > 0:
            peaks.append((-peak, name))
    return [name for _, name in sorted(peaks)[:CHART_QUEUES]]


def _busiest_queues(found) -> list[str]:
    peaks = sorted(((max(q.values), n) for n, q in found.queues.items()), key=lambda p: (-p[0], p[1]))
    return [n for peak, n in peaks[:CHART_QUEUES] if peak > 0] or [n for _, n in peaks[:CHART_QUEUES]]


def _summed(all_series: list[list[tuple[float, int]]], end: float, scale: float) -> tuple[list[float], list[float]]:
    """The sum of several step functions, as one."""
    changes: dict[float, int] = {}
    for series in all_series:
        previous = 0
        for t, v in series:
            changes[t] = changes.get(t, 0) + v - previous
            previous = v
    xs: list[float] = []
    ys: list[float] = []
    total = 0
    for t in sorted(changes):
        if t > end:
            break
        total += changes[t]
        xs.append(t / scale)
        ys.append(total)
    xs.append(end / scale)
    ys.append(total)
    return xs, ys
