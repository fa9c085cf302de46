"""`aks-kueue simulate --stack MANAGER --stack-outputs WORKER=FILE ...`: the workloads raced across a
MultiKueue fleet (`aks_kueue/admission/dispatch.py`).

The manager's queue objects come from its stack, as if given before the files; each worker's from
its `fleet` output, the one its stack exports and the manager judges (what `pulumi stack output
--json` prints for it). Only workers that have exported their kubeconfig are in the manager's
MultiKueueConfig, so only they are raced, in its order.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from aks_kueue.k8s.loader import LoadError


@dataclass
class FleetObjects:
    manager: list[dict[str, Any]]
    workers: list[tuple[str, list[dict[str, Any]]]]
    skipped: list[str]           # why a listed worker is not raced


def fleet_objects(stack: str, files: dict[str, Path], output) -> Optional[FleetObjects]:
    """The fleet of stack `stack` when it is a MultiKueue manager, else None (then `--stack-outputs`
    is refused); exit 2 through `output` when a stack or a file cannot be used."""
    from aks_kueue.cli.inputs import stack_settings
    from aks_kueue.kueue.multikueue import Role
    from aks_kueue.model.fleet_outputs import FleetInputs, StackOutputs, worker_model
    from aks_kueue.model.props import UnreadableValue
    from aks_kueue.model.from_settings import from_settings
    from aks_kueue.preview.errors import InputError
    from aks_kueue.preview.run import read_previous_outputs
    from aks_kueue.preview.stackfile import project_root
    from aks_kueue.settings.errors import SettingsError

    settings, stack_config = stack_settings(stack, output)
    if settings.fleet is None or settings.fleet.role is not Role.MANAGER:
        if files:
            output.fail([LoadError("", None, f"--stack-outputs: stack {stack} is not a MultiKueue manager "
                                             "(aks-kueue:fleet.role: manager); give the manager's stack")])
        return None
    others = {}
    for name, path in files.items():
        try:
            values = read_previous_outputs(path, preview_document=True)
        except LoadError as error:  # the flag names the stack; the error, the file
            output.fail([InputError(f"--stack-outputs {name}: {error}", error.source or None)])
        others[name] = StackOutputs(values, frozenset(k for k, v in values.items() if v == "[secret]"))
    try:
        model = from_settings(settings, project_root(), stack, FleetInputs(stack, others))
    except SettingsError as error:  # each at its stack key, in the stack file
        output.fail(stack_config.errors(error.problems))
    workers, skipped = [], []
    for worker in model.fleet.workers if model.fleet is not None else ():
        if not worker.ready or worker.outputs is None:
            skipped.append(f"{worker.name} ({worker.stack}): no outputs given, or no kubeconfig in them; it is in "
                           "no MultiKueueConfig, so nothing is dispatched there")
            continue
        try:
            view = worker_model(worker.outputs, worker.stack)
        except UnreadableValue as error:
            skipped.append(f"{worker.name}: {error}")
            continue
        workers.append((worker.name, _objects(view)))
    return FleetObjects(_objects(model), workers, skipped)


def _objects(model) -> list[dict[str, Any]]:
    """A cluster's queue objects and the namespaces (with labels) its LocalQueues live in."""
    return [dict(o.manifest) for o in model.objects] + [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n.name, "labels": dict(n.labels)}}
        for n in model.namespaces]


def print_dispatch(decisions: list[dict[str, Any]]) -> None:
    """Per workload: what each worker would decide of its copy, and the one taken to win the race."""
    from rich.console import Console
    from rich.table import Table

    table = Table("workload", "worker", "mode", "flavors", "message", title="AllAtOnce dispatch to the workers",
                  expand=True)
    for decision in decisions:
        workload = f"{decision['namespace']}/{decision['name']}"
        if not decision.get("workers"):
            table.add_row(workload, "-", "-", "", "not dispatched: no quota reserved on the manager"
                          if decision["mode"] != "Fit" else "no worker to dispatch to")
            continue
        for worker in decision["workers"]:
            flavors = "; ".join(f"{ps['name']}: " + ", ".join(f"{r}={f}" for r, f in ps["flavors"].items())
                                for ps in worker["podSets"])
            won = " (taken to win the race)" if worker["name"] == decision.get("dispatchedTo") else ""
            table.add_row(workload, worker["name"] + won, worker["mode"], flavors, worker["message"] or "")
            workload = ""
    Console().print(table)
