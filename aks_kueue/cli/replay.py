"""`aks-kueue replay`: a trace of workloads through a configuration (or two), in virtual time.

The contract is `../shared/contract/replay.md`. This module reads the flags and builds each
configuration (`aks_kueue.replay.ReplayConfig`): from a stack (its queue objects as the program
registers them, its node pools through the capacity model, the Kueue Configuration it installs), from
Kueue YAML (`--queues`), or from a generator trace. The replay itself is `aks_kueue.replay`; the
tables, the Markdown, the chart and the CSV are `cli.replay_render`.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any, NoReturn, Optional

import typer

from aks_kueue.cli.app import app
from aks_kueue.cli.common import unexpected, warn
from aks_kueue.cli.output import Output, register_document
from aks_kueue.k8s.loader import LoadError
from aks_kueue.replay.pace import HARNESS, KUEUE_14477
from aks_kueue.replay.pace import given as given_cycle

FORMATS = ("text", "markdown")
GATE_STATISTICS = {"P50": "p50", "P95": "p95", "MAX": "max"}
MAX_CYCLE_TIME = 3600.0
DUPLICATE_CONSEQUENCE = ("; one configuration holds one definition of each object (the API server keeps one per "
                         "name): remove one, or replay the files apart")


class Unusable(Exception):
    """Input that cannot be used (exit 2): one or more errors, each a LoadError."""

    def __init__(self, errors: list[LoadError]):
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


def _flag_error(message: str) -> Unusable:
    return Unusable([LoadError("", None, message)])


@app.command()
def replay(
    traces: list[str] = typer.Argument(..., help="Trace files or directories (Workload exports, JSON Lines, CSV, "
                                                 "or Kueue's generator YAML), or - for standard input."),
    stack: Optional[str] = typer.Option(None, "--stack", "-s", help="Replay against stack NAME "
                                                                    "(stacks/Pulumi.NAME.yaml): queues and pools."),
    config: Optional[Path] = typer.Option(None, "--config", help="Replay against the stack file at PATH."),
    queues: Optional[list[str]] = typer.Option(None, "--queues", help="Replay against Kueue YAML (files or "
                                                                      "directories): quota alone, no nodes."),
    compare_stack: Optional[str] = typer.Option(None, "--compare-stack", help="Also replay against stack NAME "
                                                                              "(the base) and compare."),
    compare_config: Optional[Path] = typer.Option(None, "--compare-config", help="Compare with this stack file."),
    compare_queues: Optional[list[str]] = typer.Option(None, "--compare-queues", help="Compare with this Kueue YAML."),
    node_startup: Optional[list[str]] = typer.Option(
        None, "--node-startup", help="A new node's time to Ready: DURATION for every pool, or POOL=DURATION "
                                     "(repeatable). Default: assumed per pool, printed in the report."),
    scale_down_delay: str = typer.Option("10m", "--scale-down-delay", help="How long a node stays empty before "
                                                                           "the autoscaler removes it."),
    until: Optional[str] = typer.Option(None, "--until", help="End the window (and the replay) this long after "
                                                              "the first submission, or at this RFC 3339 time."),
    since: Optional[str] = typer.Option(None, "--from", help="Start the window this long after the first "
                                                             "submission, or at this RFC 3339 time; what comes "
                                                             "before is replayed as warm-up, not reported."),
    cycle_time: Optional[str] = typer.Option(None, "--cycle-time", help="How long one scheduling cycle takes (one "
                                                                        "head per ClusterQueue per cycle). Default: "
                                                                        "2.4s, from kubernetes-sigs/kueue#14477, "
                                                                        "printed in the report."),
    fail_on_wait: Optional[str] = typer.Option(None, "--fail-on-wait", help="P95=DURATION: exit 1 when a "
                                                                            "ClusterQueue's p95 wait to start is "
                                                                            "longer (also P50=, MAX=)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="json: the same as --json."),
    output_format: str = typer.Option("text", "--format", help="text (tables) or markdown (a PR comment)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write replay.png, summary.md and workloads.csv here."),
    spot_eviction: Optional[list[str]] = typer.Option(
        None, "--spot-eviction", help="Evictions per node-hour on spot pools: RATE for every spot pool, or "
                                      "POOL=RATE (repeatable); RATE as 0.05, or as Azure's hourly band, 5%. Default: "
                                      "assumed, printed in the report."),
    seed: int = typer.Option(0, "--seed", min=0, help="Seed of the spot eviction draws (the same seed, the same "
                                                      "evictions)."),
    prices: Optional[list[str]] = typer.Option(
        None, "--prices", help="Price files from the Azure Retail Prices API (repeatable): each pool's cost. "
                               "Without them, no cost is shown."),
) -> None:
    """Replay a trace of workloads against a queue configuration (or two): waits, preemptions, nodes.

    Durations are Go-style (90s, 5m, 1h30m) or seconds. Exits 0 when done, 1 when a --fail-on-wait gate
    fails, 2 when an input cannot be used.
    """
    from aks_kueue.replay import read_trace

    as_json = as_json or output == "json"
    try:
        _check_output(output, output_format, out)
        given = [f for f, v in (("--stack", stack), ("--config", config), ("--queues", queues)) if v]
        compared = [f for f, v in (("--compare-stack", compare_stack), ("--compare-config", compare_config),
                                   ("--compare-queues", compare_queues)) if v]
        if len(given) > 1:
            raise _flag_error(f"give one configuration: {' or '.join(given)}, not both")
        if len(compared) > 1:
            raise _flag_error(f"give one configuration to compare with: {' or '.join(compared)}, not both")
        delay = _duration(scale_down_delay, "--scale-down-delay")
        pace = None if cycle_time is None else given_cycle(_cycle_time(cycle_time))
        startups, everywhere = _startups(node_startup or [])
        gate = _gate(fail_on_wait)
        trace = read_trace(traces)
        # The trace lives until the command ends: left out of cyclic collections from here on (each
        # collection of the older generation walked its hundreds of thousands of workloads again);
        # `few_collections` puts the collector back when the command ends.
        gc.freeze()
        warn(trace.notes)
        window = _window(trace, since, until)
        if trace.generated is not None:
            if given or compared:
                raise _flag_error("a generator trace defines its own queues; give it without --stack, --config, "
                                  "--queues or --compare-*")
            configurations = [_generated(trace.generated)]
        else:
            if not given:
                raise _flag_error(_name_a_configuration())
            configurations = [_queues_config(queues) if queues else _stack_config(stack, config)]
            if compared:
                configurations.append(_queues_config(compare_queues, "--compare-queues") if compare_queues
                                      else _stack_config(compare_stack, compare_config))
        for configuration in configurations:
            configuration.scale_down_delay = delay
            configuration.default_startup = everywhere
            configuration.cycle = pace or (HARNESS if trace.generated is not None else KUEUE_14477)
            _routed(configuration, trace, window)
        _apply_startups(configurations, startups)
        _apply_spot(configurations, spot_eviction or [], seed)
        if prices:
            _apply_prices(configurations, prices)
        code = _replay_and_report(configurations, trace, window, gate, as_json, output_format, out)
    except Unusable as unusable:
        _invalid(unusable.errors, as_json)
    except LoadError as error:
        _invalid([error], as_json)
    except Exception as error:  # a bug, not bad input: say so briefly
        _invalid([LoadError("", None, unexpected(error))], as_json)
    raise typer.Exit(code)


def _check_output(output: Optional[str], output_format: str, out: Optional[Path]) -> None:
    if output not in (None, "json"):
        raise _flag_error(f"-o/--output takes json, not {output!r}")
    if output_format not in FORMATS:
        raise _flag_error(f"--format must be one of {', '.join(FORMATS)}, not {output_format!r}")
    if out is not None and out.exists() and not out.is_dir():
        raise _flag_error(f"--out: {out} exists and is not a directory")


def _replay_and_report(configurations: list, trace, window: "Window", gate, as_json: bool, output_format: str,
                       out: Optional[Path]) -> int:
    """Replay every configuration (side by side when comparing), then say what happened: the exit code.
    The renderer (tables, Markdown, the chart, and what they import) is loaded only when asked for: the
    JSON document does without it."""
    from aks_kueue.cli.replay_run import replayed
    from aks_kueue.replay.report import document, write

    with replayed(configurations, trace, window.until, since=window.since, series=out is not None) as results:
        found = document(results, trace, gate)
        failed = [g for g in found["summary"]["gates"] if not g["passed"]]
        found["result"] = "rejected" if failed else "ok"
        found["errors"] = []
        if out is not None:
            from aks_kueue.cli import replay_render as render
            try:
                written = render.write_out(found, results, trace, out)
            except OSError as error:
                raise _flag_error(f"--out: cannot write to {out}: {error.strerror or error}") from None
            typer.echo(f"wrote {', '.join(str(p) for p in written)}", err=True)
        if as_json:
            write(found, sys.stdout)  # json.dumps(found, indent=2), its workloads streamed
            sys.stdout.write("\n")
        else:
            from aks_kueue.cli import replay_render as render
            if output_format == "markdown":
                sys.stdout.write(render.markdown(found, trace))
            else:
                render.print_text(found, trace)
    for entry in failed:
        if entry["clusterQueue"] is None:
            typer.echo(f"replay: gate failed: {entry['unrouted']:,} workloads reach no ClusterQueue of "
                       f"{configurations[0].name} (they wait forever)", err=True)
            continue
        typer.echo(f"replay: gate failed: ClusterQueue {entry['clusterQueue']} waits "
                   f"{'at least ' if entry['lowerBound'] else ''}{entry['value']:g} s to start at {gate.statistic}, "
                   f"more than {gate.limit:g} s", err=True)
    return 1 if failed else 0


def _empty(_argv=()) -> dict[str, Any]:
    return {"start": None, "end": None, "configurations": [], "summary": {"workloads": 0, "events": 0, "gates": []}}


register_document("replay", _empty)


def _invalid(errors: list[LoadError], as_json: bool) -> NoReturn:
    Output("replay", as_json, _empty()).fail(errors)


# Flags -----------------------------------------------------------------------------------------


def _duration(text: str, flag: str) -> float:
    from aks_kueue.replay.trace import ValueProblem, duration

    try:
        return duration(text, "a duration")
    except ValueProblem as problem:
        raise _flag_error(f"{flag}: {problem}") from None


def _cycle_time(text: str) -> float:
    """`--cycle-time`: at most an hour (a cycle takes seconds; one of hours is a unit mistake)."""
    seconds = _duration(text, "--cycle-time")
    if seconds > MAX_CYCLE_TIME:
        raise _flag_error(f"--cycle-time {text}: a scheduling cycle of more than an hour is not one Kueue runs (the "
                          "published figure is 2.4 s); give seconds, e.g. 2.4s")
    return seconds


def _startups(values: list[str]) -> tuple[dict[str, float], Optional[float]]:
    per_pool: dict[str, float] = {}
    everywhere = None
    for value in values:
        pool, sep, text = value.partition("=")
        if sep and not pool:
            raise _flag_error(f"--node-startup {value!r}: name the pool before '='")
        if sep:
            per_pool[pool] = _duration(text, f"--node-startup {value!r}")
        else:
            everywhere = _duration(value, f"--node-startup {value!r}")
    return per_pool, everywhere


def _apply_startups(configurations: list, startups: dict[str, float]) -> None:
    known = {p.name for c in configurations for p in c.pools or []}
    unknown = sorted(set(startups) - known)
    if unknown:
        raise _flag_error(f"--node-startup: no pool {', '.join(unknown)} in "
                          f"{' or '.join(c.name for c in configurations)}"
                          + (f" (its pools: {', '.join(sorted(known))})" if known else " (it has no node pools)"))
    for configuration in configurations:
        configuration.node_startup = {p: s for p, s in startups.items()
                                      if any(pool.name == p for pool in configuration.pools or [])}


def _apply_spot(configurations: list, values: list[str], seed: int) -> None:
    """`--spot-eviction` and `--seed`, the same for every configuration (so that `--compare` draws the
    same lives for the same nodes)."""
    from aks_kueue.replay.spot import parse_spot_eviction

    rates = parse_spot_eviction(values)
    rates.check([p.spec for c in configurations for p in c.pools or []])
    for configuration in configurations:
        configuration.spot_rates = rates
        configuration.seed = seed


def _apply_prices(configurations: list, paths: list[str]) -> None:
    """`--prices`: each pool's hourly price in its stack's region. A pool without one is named, with the
    `curl` line that fetches it; prices in two currencies are refused (costs would not add up)."""
    from aks_kueue.aks.prices import fetch_command, read_prices

    priced = [c for c in configurations if c.pools]
    if not priced:
        raise _flag_error(f"--prices: {' and '.join(c.name for c in configurations)} "
                          f"{'has' if len(configurations) == 1 else 'have'} no node pools (Kueue YAML alone, or a "
                          "generator trace): there is nothing to price; give a stack (--stack or --config)")
    book = read_prices(paths)
    for configuration in priced:
        region = configuration.region
        if not region:
            raise _flag_error(f"--prices: {configuration.name} names no region (azure-native:location), so its "
                              "pools cannot be priced")
        found = book.for_pools(region, [p.spec for p in configuration.pools])
        configuration.prices = found
        if found.missing:
            sizes = sorted({m.vm_size for m in found.missing.values()})
            fetch = f"fetch the missing prices with: {fetch_command([region], sizes)}"
            warn([f"{configuration.name}: {missing}" for missing in found.missing.values()] + [fetch])
            configuration.notes.append(fetch)
    currencies = {c.prices.currency for c in priced if c.prices is not None and c.prices.currency is not None}
    if len(currencies) > 1:
        raise _flag_error(f"--prices: the configurations are priced in {' and '.join(sorted(currencies))}; fetch "
                          "every price in one currency (the API's currencyCode parameter) so that costs compare")


def _gate(value: Optional[str]):
    from aks_kueue.replay.report import Gate

    if value is None:
        return None
    statistic, sep, limit = value.partition("=")
    if not sep or statistic.upper() not in GATE_STATISTICS:
        raise _flag_error(f"--fail-on-wait {value!r}: write P95=DURATION (or P50=, MAX=), e.g. P95=30m")
    return Gate(GATE_STATISTICS[statistic.upper()], _duration(limit, f"--fail-on-wait {value!r}"))


class Window:
    """The report's window, in seconds from the trace's first submission: `--from` (history before it is
    replayed as warm-up) and `--until` (the replay ends there)."""

    def __init__(self, since: float, until: Optional[float]):
        self.since, self.until = since, until


def _window(trace, since: Optional[str], until: Optional[str]) -> Window:
    """`--from` and `--until`: a duration from the first submission, or (for a trace with real times) an
    RFC 3339 time. The window must hold a submission."""
    start = _instant_or_duration(trace, since, "--from")
    stop = _instant_or_duration(trace, until, "--until")
    first = start or 0.0
    if stop is not None and stop < first:
        raise _flag_error(f"--until ({stop:g} s) is before --from ({first:g} s): the window is empty")
    last = max(w.submitted for w in trace.workloads)
    if first > last:
        raise _flag_error(f"--from ({first:g} s) is after the trace's last submission ({last:g} s): no workload is "
                          "submitted in the window")
    return Window(first, stop)


def _instant_or_duration(trace, text: Optional[str], flag: str) -> Optional[float]:
    from aks_kueue.replay.trace import ValueProblem, instant

    if text is None:
        return None
    if text[:1].isdigit() and "T" in text.upper() and "-" in text:  # an RFC 3339 time, not 1h30m
        if trace.start is None:
            raise _flag_error(f"{flag} {text}: this trace has no real times (its submissions are seconds from the "
                              "start); give a duration from the first submission, e.g. 2h")
        try:
            at = instant(text)
        except ValueProblem as problem:
            raise _flag_error(f"{flag}: {problem}") from None
        if at < trace.start:
            raise _flag_error(f"{flag} {text} is before the trace's first submission "
                              f"({_iso(trace.start)})")
        return round(at - trace.start, 6)
    return _duration(text, flag)


def _iso(seconds: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def _name_a_configuration() -> str:
    """The sentence for a replay without a configuration: the stacks it could have named."""
    from aks_kueue.preview.stackfile import project_root

    try:
        stacks = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (project_root() / "stacks").glob("Pulumi.*.yaml"))
    except Exception:  # noqa: BLE001 - no project here: the sentence names none
        stacks = []
    found = f"the stacks here: {', '.join(stacks)}" if stacks else "no stack files were found here"
    return ("name the configuration to replay against: --stack NAME, --config PATH (a stack file) or --queues PATH "
            f"(Kueue YAML, repeatable); {found}")


def _routed(configuration, trace, window: Window) -> None:
    """A trace none of whose workloads (in the window) reaches a ClusterQueue of the configuration is the
    wrong trace or the wrong configuration: exit 2, naming the queues the trace asks for."""
    lqs: dict[tuple[str, str], str] = {}
    cqs: set[str] = set()
    for obj in configuration.objects:
        metadata = obj.get("metadata") or {}
        if obj.get("kind") == "LocalQueue":
            lqs[(str(metadata.get("namespace") or "default"), str(metadata.get("name")))] = \
                str((obj.get("spec") or {}).get("clusterQueue"))
        elif obj.get("kind") == "ClusterQueue":
            cqs.add(str(metadata.get("name")))
    asked: dict[tuple[str, str], int] = {}
    for workload in trace.workloads:
        if window.since <= workload.submitted and (window.until is None or workload.submitted <= window.until):
            key = (workload.namespace, workload.queue)
            if lqs.get(key) in cqs:
                return
            asked[key] = asked.get(key, 0) + 1
    shown = sorted(asked.items(), key=lambda item: (-item[1], item[0]))
    named = ", ".join(f"{ns}/{queue} ({count:,})" for (ns, queue), count in shown[:10])
    more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
    have = ", ".join(f"{ns}/{name}" for ns, name in sorted(lqs)[:10]) or "none"
    raise _flag_error(f"none of the trace's {sum(asked.values()):,} workloads reaches a ClusterQueue of "
                      f"{configuration.name}: they ask for LocalQueues {named}{more} (namespace/name, workloads); "
                      f"its LocalQueues are {have}. Replay the trace against the configuration it came from")


# Configurations ----------------------------------------------------------------------------------


def _generated(generated):
    from aks_kueue.replay import ReplayConfig

    objects = _validated([(o, f"{generated.file} (generated {o['kind']} {o['metadata']['name']})", None)
                          for o in generated.objects])
    return ReplayConfig(f"generator {generated.file}", objects, notes=list(generated.notes))


def _validated(given: list[tuple[dict, str, Any]], unique: bool = False) -> list[dict]:
    """Kueue objects as Kueue v0.19.2 would store them (converted, validated, defaulted); Namespaces as given.
    Each comes with where it is read and its Document (None: it is its own source), which errors name.
    `unique`: an object defined twice (same kind, namespace and name) is refused, naming both places."""
    from aks_kueue.kueue.validate import duplicates, load_object, validate_object

    objects, errors, loaded = [], [], []
    for manifest, where, document in given:
        if manifest.get("kind") == "Namespace" and manifest.get("apiVersion") == "v1":
            objects.append(manifest)
            continue
        obj = load_object(manifest, where)
        loaded.append((obj, document))
        problems = validate_object(obj)
        if problems:
            errors += [LoadError(document.file if document else where, document.index if document else None,
                                 f"{obj.describe()}: {p}") for p in problems]
            continue
        objects.append(obj.defaulted)
    if unique:
        placed = {id(obj): document for obj, document in loaded}
        for twice in duplicates([obj for obj, _ in loaded], DUPLICATE_CONSEQUENCE):
            document = placed[id(twice.object)]
            errors.append(LoadError(document.file if document else twice.object.source,
                                    document.index if document else None, str(twice)))
    if errors:
        raise Unusable(errors)
    return objects


def _queues_config(paths: list[str], flag: str = "--queues"):
    """Kueue YAML: flavors, cohorts, ClusterQueues, LocalQueues, priority classes, Namespaces, and
    optionally a Kueue Configuration; no nodes. An object defined twice (kind, namespace, name) in the
    files is refused, naming both places: the replay would have to pick one."""
    from aks_kueue.kueue.configuration import judge_configuration
    from aks_kueue.kueue.manifests import Category, category, read_inputs
    from aks_kueue.replay import ReplayConfig

    documents = read_inputs(paths, regular_only=True)
    given, notes, kueue, configured = [], [], None, None
    for document in documents:
        manifest = document.manifest
        kind = category(manifest)
        if kind is Category.CONFIGURATION and configured is not None:
            raise Unusable([LoadError(document.file, document.index, f"a second Kueue Configuration; "
                                      f"{configured.where} already gives one, and Kueue runs with one")])
        if kind is Category.KUEUE:
            if manifest.get("kind") == "Workload":
                notes.append(f"{document.where}: a Workload among the queues is left out; workloads come from "
                             "the trace")
                continue
            given.append((manifest, document.where, document))
        elif kind is Category.CONFIGURATION:
            configured = document
            report = judge_configuration(manifest)
            if report.errors:
                raise Unusable([LoadError(document.file, document.index, f"Configuration: {e}") for e in report.errors])
            kueue = {**(report.effective or {}), "featureGates": dict(report.gates)}
        elif manifest.get("apiVersion") == "v1" and manifest.get("kind") == "Namespace":
            given.append((manifest, document.where, document))
        else:
            notes.append(f"{document.where}: {document.kind} {document.name or ''} is not a Kueue object; left out")
    warn(notes)
    objects = _validated(given, unique=True)
    if not any(o.get("kind") == "ClusterQueue" for o in objects):
        raise Unusable([LoadError("", None, f"{flag} {' '.join(paths)}: no ClusterQueue in these files")])
    return ReplayConfig("queues " + " ".join(paths), objects, kueue=kueue)


def _stack_config(stack: Optional[str], config: Optional[Path]):
    """A stack's queues as the program registers them, its pools through the capacity model, and the Kueue
    Configuration it installs (the Helm chart's with the stack's overrides; Kueue's defaults for the managed
    extension, whose Configuration is not the stack's to set)."""
    from aks_kueue.aks.nodes import CatalogError, pool_capacity
    from aks_kueue.cli.common import load_stack_config, stack_name
    from aks_kueue.judge import blocking_findings, generated_stubs
    from aks_kueue.judge.objects import checked_object
    from aks_kueue.kueue.configuration import helm_configuration
    from aks_kueue.model.from_settings import from_settings
    from aks_kueue.replay import ReplayConfig
    from aks_kueue.settings.errors import SettingsError

    name = stack_name(stack, config)
    label = f"config {config}" if config is not None else f"stack {name}"
    stack_config, root = load_stack_config(stack, config)  # a LoadError names the file
    try:
        settings = stack_config.settings()
        model = from_settings(settings, root, name)
    except SettingsError as error:  # each at its stack key, in the stack file
        raise Unusable(stack_config.errors(error.problems)) from None
    problems = blocking_findings(model)
    if problems:
        raise Unusable(stack_config.errors(problems))
    if settings.kueue.install == "none":
        raise Unusable([LoadError("", None, f"{label} installs no Kueue (kueue.install: none): nothing to replay")])
    valid = []
    for item in model.objects:
        obj, errors = checked_object(item)
        if errors:
            raise Unusable([LoadError("", None, f"{label}: {item.label}: {e.field}: {e.text}") for e in errors])
        valid.append((item, obj.defaulted or obj.manifest))
    objects = [dict(m) for _, m in valid]
    objects += [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n.name, "labels": dict(n.labels)}}
                for n in model.namespaces]
    objects += generated_stubs(model)
    notes = []
    kueue = None
    if settings.kueue.install == "helm":
        kueue = helm_configuration(settings.kueue.frameworks, settings.kueue.manager_configuration_overrides,
                                   settings.kueue.command_line_gates).in_force()
    else:
        notes.append("the managed Kueue extension's Configuration is not the stack's to set: Kueue v0.19's defaults "
                     "are assumed (waitForPodsReady on)")
    region = model.cluster.region if model.cluster is not None else ""
    try:
        pools = [pool_capacity(p, region) for p in model.pools]
    except CatalogError as error:
        raise Unusable([LoadError("", None, f"{label}: {error}")]) from None
    return ReplayConfig(label, objects, kueue=kueue, pools=pools, notes=notes, region=region or None)
