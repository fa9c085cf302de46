"""The one Typer app every subcommand module registers itself on."""

from __future__ import annotations

import inspect
import os
import re
import sys
from typing import Any, NoReturn, Optional, Sequence

import typer
from typer.core import TyperArgument, TyperGroup

from aks_kueue.cli.common import few_collections
from aks_kueue.compat import ClickException
from aks_kueue.cli.output import usage_error

# What this module takes from Typer beyond its documented API, checked with typer 0.29.2:
# - Click's exceptions are not re-exported (`ClickException` comes through aks_kueue.compat). Only the
#   base class is needed, to give a command line Click refuses its JSON document (`_Group`).
# - Help shows a type column (`<bool>`, `<path>`, `<list[str]>`) and writes a required argument as
#   `{PATH}...`, with no switch for either: `_plain_help` adjusts the built commands' parameters.


class _Group(TyperGroup):
    """Typer's group, which also gives a command line Click refuses (an unknown flag, a missing
    argument, a value out of range) its one JSON document on stdout when JSON was asked for. Click
    still prints the refusal on stderr and exits 2."""

    _argv: Sequence[str] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _plain_help(self)
        for command in self.commands.values():
            _plain_help(command)

    def make_context(self, info_name, args, parent=None, **extra):
        self._argv = list(args)
        try:
            return super().make_context(info_name, args, parent, **extra)
        except ClickException as error:
            self._refused(error)
            raise

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except ClickException as error:
            self._refused(error)
            raise

    def _refused(self, error: ClickException) -> None:
        context = getattr(error, "ctx", None)
        command = context.info_name if context is not None and context.parent is not None else None
        message = error.format_message()
        usage_error(f"{command}: {message}" if command else message, command, self._argv)


def _plain_help(command: Any) -> None:
    """Help as people read it: a flag shows no type, an argument shows its metavar (PATH...), in the table
    and in the usage line alike; each option that takes a value names it with its own metavar."""
    for param in command.params:
        if isinstance(param, TyperArgument):
            shown = param.metavar or param.name.upper() + ("..." if param.nargs != 1 else "")
            # Typer's own methods replaced on this one parameter: what the help shows of it.
            param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
            param.get_usage_pieces = (  # type: ignore[method-assign]
                lambda text: lambda ctx: [text])(shown if param.required else f"[{shown}]")
        elif getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    original = command.get_help_option

    def help_option(ctx):
        option = original(ctx)
        if option is not None:
            option.metavar = ""
        return option

    command.get_help_option = help_option


class _Program(typer.Typer):
    """Typer's app; called as the `aks-kueue` process (the console script, `python -m
    aks_kueue.cli`), the process ends as soon as the command has, its output flushed."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except SystemExit as done:  # every command ends in one, with its exit code
            exit_now(done.code)


def exit_now(code: Any) -> NoReturn:
    """What `sys.exit(code)` does, without tearing the interpreter down first.

    Freeing a preview's objects one by one, with the collections of the interpreter's shutdown,
    took longer than the dev stack's whole run under the mocks (0.15 s of 0.68 s; 0.3 s for a
    large organisation), and there is nothing left to close: files are written and closed by then,
    stdout and stderr are flushed here. Exceptions other than SystemExit are not caught, so a
    traceback still ends the usual way."""
    status = 0 if code is None else code if isinstance(code, int) else 1
    if not isinstance(code, (int, type(None))):
        print(code, file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # e.g. a reader that went away: the interpreter's own status for it
            status = 120 if stream is sys.stdout else status
    os._exit(status)


app = _Program(cls=_Group, add_completion=False, no_args_is_help=True,
               help="Offline tools for the aks-kueue Pulumi program.")


def versions() -> list[str]:
    """What `--version` prints: this program, the Kueue it pins, and the Pulumi packages it runs on."""
    from importlib.metadata import PackageNotFoundError, version

    from aks_kueue import versions as pinned

    def installed(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "not installed"

    return [
        f"aks-kueue {installed('aks-kueue')}",
        f"Kueue chart {pinned.KUEUE_CHART_VERSION} ({pinned.KUEUE_CHART_REPOSITORY}), API {pinned.KUEUE_API_VERSION}; "
        f"managed extension {pinned.MANAGED_KUEUE_EXTENSION_TYPE} (default release train "
        f"{pinned.MANAGED_KUEUE_DEFAULT_RELEASE_TRAIN})",
        f"Pulumi SDK {installed('pulumi')}, pulumi-policy {installed('pulumi-policy')}",
        f"providers: pulumi-azure-native {installed('pulumi-azure-native')}, "
        f"pulumi-kubernetes {installed('pulumi-kubernetes')}",
        f"Python {sys.version.split()[0]}",
    ]


def _version(value: bool) -> None:
    if value:
        typer.echo("\n".join(versions()))
        raise typer.Exit(0)


@app.callback()
def main(
    ctx: typer.Context,
    version: Optional[bool] = typer.Option(
        None, "--version", callback=_version, is_eager=True, metavar="",
        help="Print the program's version, the pinned Kueue chart and API version, and the Pulumi SDK and "
             "provider versions."),
) -> None:
    """aks-kueue: AKS, Kueue and quota checks, offline."""
    # For the whole command, its own imports included; put back when the command ends.
    ctx.with_resource(few_collections())


def reflowed(text: Optional[str]) -> Optional[str]:
    """A docstring as help: each paragraph on one line, so the terminal wraps it, not the source.
    (Typer keeps the source's line breaks in every paragraph after the first.)"""
    if not text:
        return text
    paragraphs = re.split(r"\n\s*\n", inspect.cleandoc(text))
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


def tidy_help(program: typer.Typer = app) -> None:
    """Every command's help reflowed; called once every command is registered."""
    for info in program.registered_commands:
        if info.help is None and info.callback is not None:
            info.help = reflowed(inspect.getdoc(info.callback))
