"""Offline outputs for a fleet's stacks, so that each member's offline preview can be given the
others' (`--stack-outputs STACK=FILE`), as the PR workflow previews every stack file:

    python -m aks_kueue.preview.fleet STACKS_DIR OUT_DIR

For each fleet in STACKS_DIR (the stack files with `aks-kueue:fleet`), the members are previewed in
the order of a fleet's first `pulumi up`s: the manager alone (its teams need no worker), then each
worker having read the manager's outputs. Each member's outputs go to OUT_DIR/<stack>.outputs.json
and the flags its own preview then takes to OUT_DIR/<stack>.args, one a line: a manager gets its
workers' outputs, a worker its manager's. A stack the fleet key names is found by its last part
(acme/aks-kueue/fleet-westus3 is stacks/Pulumi.fleet-westus3.yaml); one with no file here, or whose
preview fails, gets no outputs, and the preview of the stacks that read it says so.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

from aks_kueue.k8s.loader import LoadError
from aks_kueue.preview.fleet_order import fleet_key as _fleet_key, local_name as _local, stack_files
from aks_kueue.preview.run import ProgramError, run_program
from aks_kueue.preview.stackfile import load_stack, project_root


def _outputs(path: Path, stack: str, root: Path, others: dict[str, Path]) -> Optional[dict[str, Any]]:
    try:
        given = {name: json.loads(file.read_text()) for name, file in others.items()}
        return run_program(load_stack(path, stack, root), root, stack_outputs=given).outputs
    except (ProgramError, LoadError, OSError, ValueError) as error:
        print(f"fleet outputs: {stack}: {error}", file=sys.stderr)
        return None


def write_fleet_outputs(stacks: Path, out: Path, root: Optional[Path] = None) -> list[str]:
    """The members given outputs, in the order they were previewed."""
    root = root or project_root()
    out.mkdir(parents=True, exist_ok=True)
    files = stack_files(stacks)
    fleets = {stack: key for stack, path in files.items() if (key := _fleet_key(path)) is not None}
    done: list[str] = []

    def record(stack: str, outputs: Optional[dict[str, Any]]) -> Optional[Path]:
        if outputs is None:
            return None
        file = out / f"{stack}.outputs.json"
        file.write_text(json.dumps(outputs))
        done.append(stack)
        return file

    for manager, key in fleets.items():
        if key.get("role") != "manager":
            continue
        manager_file = record(manager, _outputs(files[manager], manager, root, {}))
        workers = [w for w in key.get("workers") or [] if isinstance(w, dict) and _local(w.get("stack")) in fleets]
        args = []
        for worker in workers:
            local = _local(worker["stack"])
            reads = {name: manager_file for name in [fleets[local].get("manager")] if manager_file and name}
            worker_file = record(local, _outputs(files[local], local, root, reads))
            (out / f"{local}.args").write_text("".join(f"--stack-outputs={n}={f}\n" for n, f in reads.items()))
            if worker_file is not None:
                args.append(f"--stack-outputs={worker['stack']}={worker_file}\n")
        (out / f"{manager}.args").write_text("".join(args))
    return done


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m aks_kueue.preview.fleet STACKS_DIR OUT_DIR")
    write_fleet_outputs(Path(sys.argv[1]), Path(sys.argv[2]))
