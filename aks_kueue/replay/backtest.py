"""The backtest: what the replay predicts beside what a Workload export says happened.

An export (`kubectl get workloads -A -o yaml`) records, per Workload, the last time it was admitted
(the `Admitted=True` condition's lastTransitionTime: a condition keeps only its last transition) and
when its pods were all ready after that (`PodsReady=True`, reason `Started`): `trace.Observed`, read by
`formats`. Replayed against the configuration that was in force, each workload's predicted admission
and start (of its last admission, as the report gives them) stand beside the observed ones, and the
configuration gets a summary of the absolute errors: the median and the p95 (nearest rank, as every
percentile of the report) and the share within 5 minutes.

A workload the export saw admitted but the replay never admitted (or has waiting again at its end) is
compared with a censored error: at least the time from the observed admission to the replay's end. It
counts as outside 5 minutes, and the summary says how many there were (`censored`), since its error
can only be larger. A workload not yet admitted at the export is not compared.

From the same exports, a `--node-startup` per pool: the time from admission to PodsReady of the
workloads that waited for new nodes. An export alone does not say which did, so the rule is a stated
assumption: a gap above `WAITED_FOR_NODES` (2 minutes) waited; the suggestion is the median gap of those
less the median gap of the others (the pods' own start on a Ready node: scheduling, image pull,
readiness), and is made only for a pool with at least one workload that waited. A workload's pool is
its admission's flavors' pool: the `kubernetes.azure.com/agentpool` label of the flavor's nodeLabels, or,
with a stack's pools, the one pool whose labels carry all of them.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from aks_kueue.aks.pools import AGENTPOOL
from aks_kueue.kueue.views import ResourceFlavor, views_of
from aks_kueue.replay.config import ReplayConfig
from aks_kueue.replay.engine import Run, State
from aks_kueue.replay.stats import percentile
from aks_kueue.replay.stats import rounded as _round
from aks_kueue.replay.trace import Observed

# The share of workloads predicted within this many seconds of what happened.
WITHIN = 300.0
# Admission to PodsReady above this, the workload waited for new nodes (an assumption, printed).
WAITED_FOR_NODES = 120.0
ADMITTED_STATES = frozenset({State.ADMITTED, State.RUNNING, State.FINISHED})
STARTED_STATES = frozenset({State.RUNNING, State.FINISHED})


def observed_row(observed: Observed) -> dict[str, Optional[float]]:
    return {"admitted": _round(observed.admitted), "started": _round(observed.started)}


def backtest(pairs: Sequence[tuple[Run, Observed]], end: float) -> dict[str, Any]:
    """The errors of the prediction, where the export observed an admission (`compared`)."""
    admitted = [(run.admitted if run.state in ADMITTED_STATES else None, o.admitted) for run, o in pairs
                if o.admitted is not None]
    started = [(run.started if run.state in STARTED_STATES else None, o.started) for run, o in pairs
               if o.started is not None]
    return {"compared": len(admitted), "admitted": _errors(admitted, end), "started": _errors(started, end)}


def _errors(pairs: list[tuple[Optional[float], float]], end: float) -> dict[str, Any]:
    """Absolute errors of (predicted, observed) pairs; a missing prediction counts from the end (censored)."""
    errors, censored = [], 0
    for predicted, observed in pairs:
        if predicted is None:
            censored += 1
            errors.append((max(0.0, end - observed), True))
        else:
            errors.append((abs(predicted - observed), False))
    values = sorted(error for error, _ in errors)
    within = sum(1 for error, cut in errors if not cut and error <= WITHIN)
    return {"compared": len(errors), "medianError": _round(percentile(values, 0.5)),
            "p95Error": _round(percentile(values, 0.95)),
            "within5m": round(within / len(errors), 4) if errors else None, "censored": censored}


def node_startup_suggestions(pairs: Sequence[tuple[Run, Observed]], config: ReplayConfig) -> list[dict[str, Any]]:
    """Per pool with a workload that waited for new nodes: the suggested `--node-startup` and its basis."""
    pool_of = pools_of_flavors(config)
    gaps: dict[str, list[float]] = {}
    for _, observed in pairs:
        if observed.admitted is None or observed.started is None or not observed.flavors:
            continue
        pools = {pool_of.get(flavor) for flavor in observed.flavors}
        if len(pools) != 1 or None in pools:
            continue  # a flavor on no known pool, or pods on several pools: whose startup it was is unknown
        gaps.setdefault(str(next(iter(pools))), []).append(observed.started - observed.admitted)
    found = []
    for pool, values in sorted(gaps.items()):
        waited = sorted(g for g in values if g > WAITED_FOR_NODES)
        quick = sorted(g for g in values if g <= WAITED_FOR_NODES)
        if not waited:
            continue
        slow, fast = percentile(waited, 0.5), percentile(quick, 0.5)
        assert slow is not None
        found.append({"pool": pool, "suggested": _round(max(0.0, slow - (fast or 0.0))), "waited": len(waited),
                      "notWaited": len(quick), "medianWaited": _round(slow), "medianNotWaited": _round(fast),
                      "threshold": WAITED_FOR_NODES})
    return found


def pools_of_flavors(config: ReplayConfig) -> dict[str, str]:
    """Each ResourceFlavor's pool: its nodeLabels' agentpool, else the one stack pool carrying them all."""
    found = {}
    for flavor in views_of(config.objects, ResourceFlavor):
        name, labels = flavor.name, flavor.node_labels
        if labels.get(AGENTPOOL):
            found[name] = str(labels[AGENTPOOL])
            continue
        matching = [pool.name for pool in config.pools or []
                    if labels and all(str(v) in pool.labels.get(k, ()) for k, v in labels.items())]
        if len(matching) == 1:
            found[name] = matching[0]
    return found


__all__ = ["backtest", "node_startup_suggestions", "observed_row", "pools_of_flavors", "WITHIN", "WAITED_FOR_NODES"]
