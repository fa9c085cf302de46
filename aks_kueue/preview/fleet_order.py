"""The order in which the stack files under a folder deploy, a fleet's members in a safe order, and the
other members of a fleet a stack reads. For the deploy workflow, which runs it before anything is
installed (it needs PyYAML only, and imports nothing of the program):

    python -m aks_kueue.preview.fleet_order deploy STACKS_DIR     # lines for $GITHUB_OUTPUT
    python -m aks_kueue.preview.fleet_order peers STACK_FILE      # the stacks it reads, one a line

A fleet's stacks read each other's outputs, so they deploy in phases (docs/fleet.md): every
manager, then every worker (in its manager's declared order), then every manager again. The first
manager run exports new teams before the workers mirror them; the second takes what the workers
now export (a new worker's kubeconfig, a rotated token, changed queues). On a first deploy that is
exactly the order a fleet needs (manager, workers, manager); later, for a change on a worker only,
the first manager run changes nothing. Stacks outside a fleet keep the order of before: the
development ones (`aks-kueue:environment: development`) first, in parallel, then the production ones.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import yaml

FLEET_KEY = "aks-kueue:fleet"
ENVIRONMENT_KEY = "aks-kueue:environment"
PRODUCTION = "production"


def stack_files(stacks: Path) -> dict[str, Path]:
    """stacks/Pulumi.<stack>.yaml by stack name, in name order."""
    return {p.name[len("Pulumi."):-len(".yaml")]: p for p in sorted(stacks.glob("Pulumi.*.yaml"))}


def _config(path: Path) -> dict[str, Any]:
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return {}
    config = document.get("config") if isinstance(document, dict) else None
    return config if isinstance(config, dict) else {}


def fleet_key(path: Path) -> Optional[dict[str, Any]]:
    """A stack file's `aks-kueue:fleet`, if it has one (a mapping)."""
    fleet = _config(path).get(FLEET_KEY)
    return fleet if isinstance(fleet, dict) else None


def local_name(stack: Any) -> str:
    """The stack a fully qualified name means here: acme/aks-kueue/fleet-westus3 is fleet-westus3."""
    return str(stack).rsplit("/", 1)[-1]


def environment(path: Path) -> str:
    """The GitHub environment a stack deploys in: `production`, or a development stack's own name."""
    value = _config(path).get(ENVIRONMENT_KEY, PRODUCTION)
    return path.name[len("Pulumi."):-len(".yaml")] if value == "development" else PRODUCTION


def deploy_plan(stacks: Path) -> dict[str, list]:
    """The stacks outside any fleet by environment, and a fleet's managers and workers in their order,
    each with its GitHub environment."""
    files = stack_files(stacks)
    fleets = {stack: key for stack, path in files.items() if (key := fleet_key(path)) is not None}
    managers = [s for s, key in fleets.items() if key.get("role") == "manager"]
    workers: list[str] = []
    for manager in managers:
        for listed in fleets[manager].get("workers") or []:
            local = local_name(listed.get("stack")) if isinstance(listed, dict) else ""
            if fleets.get(local, {}).get("role") == "worker" and local not in workers:
                workers.append(local)
    # Workers of a manager deployed elsewhere, or not listed by it (yet), come after the listed ones.
    workers += [s for s, key in fleets.items() if key.get("role") == "worker" and s not in workers]
    others = [s for s in files if s not in fleets]
    return {
        "development": [s for s in others if environment(files[s]) != PRODUCTION],
        "production": [s for s in others if environment(files[s]) == PRODUCTION],
        "fleetManagers": [{"stack": s, "environment": environment(files[s])} for s in managers],
        "fleetWorkers": [{"stack": s, "environment": environment(files[s])} for s in workers],
    }


def peers(path: Path) -> list[str]:
    """The other stacks of its fleet a stack reads, as its fleet key names them (fully qualified): a
    manager its workers, a worker its manager; none outside a fleet."""
    key = fleet_key(path)
    if key is None:
        return []
    if key.get("role") == "manager":
        return list(dict.fromkeys(str(w["stack"]) for w in key.get("workers") or []
                                  if isinstance(w, dict) and w.get("stack")))
    return [str(key["manager"])] if key.get("manager") else []


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "deploy":
        for name, stacks in deploy_plan(Path(argv[1])).items():
            print(f"{name}={json.dumps(stacks)}")
        return 0
    if len(argv) == 2 and argv[0] == "peers":
        for stack in peers(Path(argv[1])):
            print(stack)
        return 0
    print("usage: python -m aks_kueue.preview.fleet_order deploy STACKS_DIR | peers STACK_FILE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
