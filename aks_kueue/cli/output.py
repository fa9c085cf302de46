"""How every subcommand answers (`cli.md`): sentences on stderr, and with `--json` (also spelt
`-o json`) exactly one JSON document on stdout, on every exit code, a bad flag included.

Each command registers the document it prints when nothing could be read (`register_document`),
so that a flag Click refuses before the command runs still gets one: `usage_error` prints it.
Errors are `InputError`s, the one shape of every document's `errors`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, NoReturn, Optional, Sequence

import typer

from aks_kueue.k8s.spelling import suggest
from aks_kueue.preview.errors import InputError

RESULTS = {0: "ok", 1: "rejected", 2: "invalid"}
TEXT, JSON, MARKDOWN = "text", "json", "markdown"

OUTPUT_OPTION = typer.Option(None, "-o", "--output", metavar="FORMAT",
                             help="json (the same as --json) or text, as kubectl, az and helm spell it.")
JSON_OPTION = typer.Option(False, "--json", help="Print one JSON document on stdout, on every exit code.")

# command name -> its document when nothing could be read, from the command line it was given.
_DOCUMENTS: dict[str, Callable[[Sequence[str]], dict[str, Any]]] = {}


def register_document(command: str, empty: Callable[[Sequence[str]], dict[str, Any]]) -> None:
    _DOCUMENTS[command] = empty


def print_document(document: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(document, indent=2) + "\n")


def invalid(document: dict[str, Any], errors: Iterable[Any], code: int = 2) -> dict[str, Any]:
    """`document` with the contract's `result` for `code` and its `errors`, each an `InputError`."""
    return {**document, "result": RESULTS[code], "errors": [InputError.of(e).to_json() for e in errors]}


@dataclass
class Output:
    """One command's answer. `document` is what it prints with --json when it fails before it has
    more to say (its lists empty); commands fill it in as they learn more."""

    command: str
    as_json: bool
    document: dict[str, Any]

    def fail(self, errors: Iterable[Any], code: int = 2, header: str = "") -> NoReturn:
        """Sentences on stderr (after `header`); with --json, the document with its `errors` on stdout."""
        items = [InputError.of(e) for e in errors]
        if header:
            typer.echo(f"{self.command}: {header}", err=True)
        for error in items:
            typer.echo(f"{self.command}: {error}", err=True)
        if self.as_json:
            print_document(invalid(self.document, items, code))
        raise typer.Exit(code)

    def format(self, as_json: bool, output: Optional[str], formats: Sequence[str] = (TEXT, JSON),
               flag: str = "-o") -> str:
        """The output format `--json` and `-o FORMAT` choose together (text when neither is given)."""
        if output is not None and output not in formats:
            self.fail([InputError(f"{flag} {output}: not an output format of {self.command}; use "
                                  f"{' or '.join(formats)}{suggest(output, formats)}")])
        if as_json and output not in (None, JSON):
            self.fail([InputError(f"--json means {flag} json; it cannot go with {flag} {output}")])
        return JSON if as_json else output or TEXT


def asks_for_json(argv: Sequence[str]) -> bool:
    """Whether a command line asks for JSON (`--json`, `-o json`, `-ojson`, `--output=json`, `--format json`),
    read before Click has parsed it: a command line Click refuses still gets its document."""
    words = list(argv)
    flags = set(words[:words.index("--")] if "--" in words else words)
    return bool(flags & {"--json", "-ojson", "-o=json"}) or JSON in option_values(words, "-o", "--output", "--format")


def option_values(argv: Sequence[str], *names: str) -> list[str]:
    """The values a command line gives an option (`--stack dev`, `-s dev`, `--stack=dev`), in order, read as
    `asks_for_json` reads them."""
    words, found = list(argv), []
    for index, word in enumerate(words):
        if word == "--":
            break
        for name in names:
            if word == name and index + 1 < len(words):
                found.append(words[index + 1])
            elif name.startswith("--") and word.startswith(name + "="):
                found.append(word[len(name) + 1:])
    return found


def usage_error(message: str, command: Optional[str], argv: Sequence[str]) -> None:
    """A command line Click refused (an unknown flag, a missing argument, a bad value): with JSON asked
    for, the command's document with the refusal as its one error. Click then says it on stderr."""
    if asks_for_json(argv):
        empty = _DOCUMENTS.get(command or "")
        print_document(invalid(empty(argv) if empty else {}, [InputError(message)]))
