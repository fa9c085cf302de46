"""What every subcommand shares: how it fails, and how it finds a stack file."""

from __future__ import annotations

import gc
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

import typer


def fail(message: str, code: int = 2) -> None:
    typer.echo(message, err=True)
    raise typer.Exit(code)


def warn(warnings) -> None:
    for warning in warnings:
        typer.echo(f"warning: {warning}", err=True)


def unexpected(error: Exception) -> str:
    """What is said of an exception that is a bug, not bad input; with AKS_KUEUE_DEBUG it is raised again."""
    if os.environ.get("AKS_KUEUE_DEBUG"):
        raise error
    return (f"aks-kueue failed unexpectedly ({type(error).__name__}: {error}); this is a bug, please report it "
            "(AKS_KUEUE_DEBUG=1 shows where)")


@contextmanager
def few_collections() -> Iterator[None]:
    """Python's cyclic garbage collector, tuned for one short command, then put back.

    A preview builds hundreds of thousands of objects that live until it ends (modules, the
    SDK's outputs and futures, the recorded protobufs, the pack's decoded resources), and each
    full collection walked all of them again: a quarter of the large organisation's time. So
    what exists when the command starts is frozen (no collection looks at it again) and young
    collections run every 50,000 allocations instead of 700; garbage is still collected, so
    memory stays bounded (the large organisation peaks about 10% higher)."""
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        if not frozen:  # what someone else froze stays frozen
            gc.unfreeze()


STACK_OPTION = typer.Option(None, "--stack", "-s", metavar="NAME", help="Read stacks/Pulumi.NAME.yaml (default: dev).")
CONFIG_OPTION = typer.Option(None, "--config", metavar="PATH", help="Read a stack file at PATH instead.")


def stack_name(stack: Optional[str], config: Optional[Path]) -> str:
    """The stack a --stack or --config names: `Pulumi.<stack>.yaml` gives <stack>."""
    if config is not None:
        match = re.fullmatch(r"Pulumi\.(.+)\.yaml", config.name)
        return match.group(1) if match else config.stem
    return stack or "dev"


def load_stack_config(stack: Optional[str], config: Optional[Path]):
    """The stack file named by --stack (default dev) or --config, as the Pulumi CLI loads it (its `path`
    names the file), and the project root; a LoadError naming the file (none for flags given together)
    when it cannot be used. The command's name is the caller's to put before the sentence, once."""
    from aks_kueue.k8s.loader import LoadError
    from aks_kueue.preview.stackfile import load_stack, project_root, stack_path

    if stack is not None and config is not None:
        raise LoadError("", None, "give either --stack or --config, not both")
    root = project_root()
    if config is not None:
        return load_stack(config, stack_name(stack, config), root), root
    path = stack_path(root, stack_name(stack, config))
    if not path.exists():
        from aks_kueue.k8s.spelling import suggest

        known = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in path.parent.glob("Pulumi.*.yaml"))
        raise LoadError(str(path), None, f"no such stack file; known stacks: {', '.join(known) or 'none'}"
                                         f"{suggest(stack_name(stack, config), known)}")
    return load_stack(path, stack_name(stack, config), root), root
