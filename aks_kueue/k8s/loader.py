"""Bounded reading of YAML and JSON: every file the program reads goes through here.

A manifest, a stack file or a policy config can come from anyone, so reading one must
never take unbounded time or memory, and never end in a traceback. The bounds:

- `max_bytes` (64 MiB; `STACK_FILE_LIMITS` 1 MiB): a file larger than this is refused. At
  most `max_bytes + 1` bytes are read, so a device such as `/dev/zero`, an endless pipe or
  standard input cannot exhaust memory; character and block devices are refused before
  reading, and a named pipe is opened without waiting for a writer (with none, it reads as
  empty). Files that must be regular files (`regular_only`: stack and project files) are
  refused at once when they are anything else. `open_binary` applies the same bounds to a
  file read in parts (replay reads a trace of millions of lines a line at a time).
- `max_depth` (100): maps and lists nested deeper are refused. Kubernetes objects nest
  about 20 deep (a JobSet's node affinity expressions); PyYAML's recursive composer
  overflows Python's stack a little past 300, so the bound is checked while parsing.
- `max_alias_nodes` (1,000,000): the nodes that YAML aliases (`*name`) add, counted as
  if each alias were written out, per file. A "billion laughs" file of a few hundred
  bytes expands to billions of nodes; this stops it while parsing. A backlog of 10,000
  Workloads that each alias a 100-node pod template still loads.

Duplicated keys in a map are refused, as kubectl and Pulumi refuse them: the last value
would silently win otherwise.

Values follow one of two dialects (`Dialect`). Manifests follow Kubernetes' YAML (YAML 1.1
scalars, as `sigs.k8s.io/yaml` reads them): `yes`/`no`/`on`/`off` are booleans, numbers are
numbers, and a timestamp stays the text it was (Kubernetes reads `creationTimestamp` as a
string); custom tags (`!Ref`), complex keys and the `!!set`/`!!omap`/`!!pairs` types have no
meaning in a Kubernetes object and are refused. `Pulumi.yaml` and stack files follow the
Pulumi CLI (Go's yaml.v3, YAML 1.2: `yaml12.py` says what differs): only `true`/`false` are
booleans, `1:50` is text, an unquoted date is a timestamp, a map key must be text, and tags
are read as yaml.v3 reads them. Merge keys (`<<`) are honoured in both.

The parser is libyaml's event stream when PyYAML has it, PyYAML's own otherwise; objects
are built from the events in one pass that also applies the bounds. A JSON text is read
with the `json` module (much faster), and the same depth and duplicate-key rules apply.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Optional

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (AliasEvent, DocumentEndEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent,
                         ScalarEvent, SequenceEndEvent, SequenceStartEvent)
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from aks_kueue.k8s import yaml12
from aks_kueue.k8s.field import FieldError
from aks_kueue.k8s.merge import json_copy

STDIN = "-"
MIB = 1024 * 1024


class Dialect(str, Enum):
    """How plain scalars (and tags and keys) are read."""

    KUBERNETES = "kubernetes"   # YAML 1.1 scalars, as sigs.k8s.io/yaml reads manifests
    PULUMI = "pulumi"           # Go's yaml.v3 (YAML 1.2), as the Pulumi CLI reads Pulumi.yaml and stack files


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 64 * MIB
    max_depth: int = 100
    max_alias_nodes: int = 1_000_000
    # What a file past max_bytes is told, after "is larger than N, the most this program reads".
    too_large: str = "from one file; split it into smaller files"

    def describe(self) -> str:
        return (f"{_size(self.max_bytes)} per file, {self.max_depth} levels of nesting, "
                f"{self.max_alias_nodes:,} nodes added by YAML aliases")


DEFAULT_LIMITS = Limits()
# A stack file is typed by people: prod's is 10 KB, and a thousand LocalQueues written inline are
# about 150 KB. Larger sets of Kueue objects belong in `queueManifests` files (64 MiB each). The cap
# keeps reading and checking a stack file to a few seconds and a few hundred MB at most.
STACK_FILE_LIMITS = Limits(max_bytes=1 * MIB, too_large="from a stack or project file; move large sets of Kueue "
                                                         "objects into files listed in aks-kueue:queueManifests")


@dataclass(frozen=True)
class LoadError(Exception):
    """A file that cannot be used; `str()` is a sentence naming the file and the place in it (its
    line in a line-oriented file, else its document) and the field: `FILE line N: field: reason`."""

    source: str
    document: Optional[int]
    reason: str
    line: Optional[int] = None   # 1-based
    key: Optional[str] = None    # the field, e.g. `retailPrice` or `podSets[0].count`
    # The 1-based line a document's parser found the problem on, which `reason` already names (so a
    # command that names documents keeps its sentence); `unplaced()` is the reason without it.
    position: Optional[int] = None

    def __str__(self) -> str:
        field = f"{self.key}: {self.reason}" if self.key else self.reason
        if not self.source:
            return field  # about a flag, not a file
        where = display_name(self.source)
        if self.line is not None:
            where += f" line {self.line}"
        elif self.document is not None:
            where += f" document {self.document}"
        return f"{where}: {field}"

    @classmethod
    def at(cls, source: str, error: FieldError, document: Optional[int] = None,
           line: Optional[int] = None) -> "LoadError":
        """A field error of a file's document or line: its path is the key, its message and fix the reason."""
        return cls(source, document, error.text, line=line, key=error.field or None)

    def as_json(self) -> dict[str, Any]:
        where = {"line": self.line, "document": self.document, "key": self.key or None}
        return {"file": self.source or None, **{k: v for k, v in where.items() if v is not None}, "message": str(self)}

    def unplaced(self) -> str:
        """The reason without the line it names, for a message that names the line itself."""
        if self.position is None:
            return self.reason
        return self.reason.replace(f" at line {self.position}, column ", " at column ").replace(
            f" (again at line {self.position})", "").removesuffix(f" (line {self.position})")


def read_text(path: str | Path, limits: Limits = DEFAULT_LIMITS, what: str = "a YAML or JSON file",
              regular_only: bool = False) -> str:
    """The text of a file, or of standard input for `-`, reading at most `max_bytes + 1` bytes.
    `regular_only`: anything but a regular file (a named pipe, a device, a socket) is refused
    before it is opened for reading."""
    with open_binary(path, limits, what, regular_only) as handle:
        data = handle.read()
    return _decode(data, str(path), what)


class open_binary:  # noqa: N801 - used as a function: `with open_binary(path) as handle:`
    """A file (or standard input for `-`) to read in parts (`Bounded`: lines or blocks), with the
    bounds and refusals of `read_text`: past `max_bytes` a read raises a LoadError. (A class, not a
    generator: contextlib would set `__traceback__` on the frozen LoadError on its way out.)"""

    def __init__(self, path: str | Path, limits: Limits = DEFAULT_LIMITS, what: str = "a YAML or JSON file",
                 regular_only: bool = False):
        self.path, self.limits, self.what, self.regular_only = path, limits, what, regular_only
        self.descriptor: Optional[int] = None
        self.handle: Optional[BinaryIO] = None

    def __enter__(self) -> "Bounded":
        path, source, what, limits = self.path, str(self.path), self.what, self.limits
        if source == STDIN:
            if self.regular_only:
                raise LoadError(source, None, f"standard input cannot be used here; give {what} as a path")
            return Bounded(sys.stdin.buffer, STDIN, limits)
        try:
            if self.regular_only:
                _refuse_special(os.stat(path).st_mode, source, what)
            # Without O_NONBLOCK, opening a named pipe waits for a writer, forever if none comes.
            self.descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
            mode = os.fstat(self.descriptor).st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(path)
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                raise LoadError(source, None, f"is a device, not a file; give {what}")
            if self.regular_only:
                _refuse_special(mode, source, what)  # replaced since it was looked at
            if stat.S_ISFIFO(mode) and hasattr(os, "set_blocking"):
                os.set_blocking(self.descriptor, True)  # a pipe with no writer now reads as empty
            if stat.S_ISREG(mode) and os.fstat(self.descriptor).st_size > limits.max_bytes:
                raise LoadError(source, None, _too_large(limits))
            self.handle = open(self.descriptor, "rb", closefd=False)
        except OSError as error:
            self._close()
            raise _open_error(error, source, what) from None
        except LoadError:
            self._close()
            raise
        return Bounded(self.handle, source, limits)

    def __exit__(self, *exc: Any) -> None:
        self._close()

    def _close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None
        if self.descriptor is not None:
            os.close(self.descriptor)
            self.descriptor = None


class Bounded:
    """A binary handle that refuses to read past `limits.max_bytes` in all (a LoadError), whatever
    the file claims its size is (a pipe, standard input, a file that grows)."""

    def __init__(self, handle: BinaryIO, source: str, limits: Limits):
        self.handle, self.source, self.limits = handle, source, limits
        self.left = limits.max_bytes + 1   # one byte more than allowed: reading it means too large

    def _count(self, data: bytes) -> bytes:
        self.left -= len(data)
        if self.left <= 0:
            raise LoadError(self.source, None, _too_large(self.limits))
        return data

    def read(self, size: int = -1) -> bytes:
        """At most `size` bytes (-1: the rest)."""
        wanted = self.left if size < 0 else min(size, self.left)
        try:
            return self._count(self.handle.read(wanted))
        except OSError as error:
            raise _open_error(error, self.source, "a file") from None

    def readline(self, size: int) -> bytes:
        """The next line, cut at `size` bytes (a line that long has no newline at its end)."""
        try:
            return self._count(self.handle.readline(min(size, self.left)))
        except OSError as error:
            raise _open_error(error, self.source, "a file") from None


def _open_error(error: OSError, source: str, what: str) -> LoadError:
    if isinstance(error, FileNotFoundError):
        return LoadError(source, None, "no such file")
    if isinstance(error, IsADirectoryError):
        return LoadError(source, None, f"is a directory; give {what}")
    if isinstance(error, PermissionError):
        return LoadError(source, None, "cannot be read (permission denied)")
    return LoadError(source, None, f"cannot be read ({error.strerror or error})")


def _refuse_special(mode: int, source: str, what: str) -> None:
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise LoadError(source, None, f"is a directory; give {what}")
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    raise LoadError(source, None, f"is {kind}, not a regular file; give {what} (a regular file)")


def _too_large(limits: Limits) -> str:
    return f"is larger than {_size(limits.max_bytes)}, the most this program reads {limits.too_large}"


def _decode(data: bytes, source: str, what: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise LoadError(source, None, f"not a text file (it is not UTF-8); give {what}") from None
    return text[1:] if text.startswith("\ufeff") else text


def parse_documents(text: str, source: str, limits: Limits = DEFAULT_LIMITS,
                    dialect: Dialect = Dialect.KUBERNETES) -> list[Any]:
    """Every document of a YAML stream (an empty document is None), or the one JSON value."""
    if dialect is Dialect.KUBERNETES and _looks_like_json(text):
        try:
            return [parse_json(text, source, limits)]
        except _NotJson:
            pass  # flow-style YAML such as `{a: 1}`, or several JSON objects in a row
        except LoadError as error:
            raise _placed(error, text, limits, dialect) from None
    return _Builder(source, limits, dialect).run(text)


def _placed(error: LoadError, text: str, limits: Limits, dialect: Dialect) -> LoadError:
    """The JSON reader's error with the line it is on: the YAML reader (whose events carry lines) reads
    the text again to find it. Only on the way to an error, so its cost does not matter."""
    try:
        _Builder(error.source, limits, dialect).run(text)
    except LoadError as found:
        if found.position is not None:
            return replace(error, position=found.position)
    return error


def _long_number(error: ValueError) -> str:
    """Python refuses to read an integer of more than `sys.get_int_max_str_digits()` digits: say so plainly."""
    return (f"a number with more than {sys.get_int_max_str_digits():,} digits; no Kubernetes or Kueue field "
            "holds one" if "digits" in str(error) else str(error))


def parse_single(text: str, source: str, limits: Limits = DEFAULT_LIMITS,
                 dialect: Dialect = Dialect.KUBERNETES) -> Any:
    """A file that holds one document (a stack file); None when it is empty."""
    try:
        documents = parse_documents(text, source, limits, dialect)
    except LoadError as error:
        raise LoadError(error.source, None, error.reason) from None  # one document: no index to give
    if len(documents) > 1:
        raise LoadError(source, 1, "a second YAML document; this file holds exactly one (remove the `---`)")
    return documents[0] if documents else None


def parse_json(text: str, source: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """A JSON text with the same bounds as YAML: nesting depth and duplicated keys."""
    try:
        value = _DECODER.decode(text)  # one decoder: JSON Lines parse millions of texts
    except _DuplicateKey as duplicate:
        raise LoadError(source, None, f"the key {duplicate.key!r} appears twice in one object; "
                                      "keep one (JSON readers disagree on which would win)") from None
    except RecursionError:
        raise LoadError(source, None, f"nested deeper than {limits.max_depth} levels") from None
    except json.JSONDecodeError as error:
        raise _NotJson(f"not valid JSON at line {error.lineno} column {error.colno}: {error.msg}") from None
    except ValueError as error:  # an integer too long for Python to read (`sys.set_int_max_str_digits`)
        raise LoadError(source, None, _long_number(error)) from None
    # A value is at most as deep as its text has opening brackets: most texts need no walk at all.
    if text.count("{") + text.count("[") > limits.max_depth and _depth_exceeds(value, limits.max_depth):
        raise LoadError(source, None, f"nested deeper than {limits.max_depth} levels")
    return value


def json_value_at(text: str, index: int, source: str, limits: Limits = DEFAULT_LIMITS) -> tuple[Any, int]:
    """The JSON value that starts at `index` of `text` (a file that holds several values in a row, or
    whose parts a reader walks itself to know their lines), and the index just after it; with the
    bounds of `parse_json`. A syntax error names its line and column in the whole text."""
    try:
        value, end = _DECODER.raw_decode(text, index)
    except _DuplicateKey as duplicate:
        raise LoadError(source, None, f"the key {duplicate.key!r} appears twice in one object; keep one (JSON "
                                      "readers disagree on which would win)", line=line_of(text, index)) from None
    except RecursionError:
        raise LoadError(source, None, f"nested deeper than {limits.max_depth} levels",
                        line=line_of(text, index)) from None
    except json.JSONDecodeError as error:
        raise LoadError(source, None, f"not valid JSON at column {error.colno}: {error.msg}",
                        line=error.lineno) from None
    if _depth_exceeds(value, limits.max_depth):
        raise LoadError(source, None, f"nested deeper than {limits.max_depth} levels", line=line_of(text, index))
    return value, end


def line_of(text: str, index: int) -> int:
    """The 1-based line of `text` that holds the character at `index`."""
    return text.count("\n", 0, index) + 1


def loads_json(text: str, source: str, limits: Limits = DEFAULT_LIMITS) -> Any:
    """`parse_json` for files that must be JSON: a syntax error is a LoadError too."""
    try:
        return parse_json(text, source, limits)
    except _NotJson as error:
        raise LoadError(source, None, str(error)) from None


def load_file(path: str | Path, limits: Limits = DEFAULT_LIMITS, what: str = "a YAML or JSON file",
              regular_only: bool = False) -> list[Any]:
    """`read_text` then `parse_documents`."""
    return parse_documents(read_text(path, limits, what, regular_only), str(path), limits)


def display_name(path: str | Path) -> str:
    """How messages name a file: its path, or "standard input" for `-`."""
    return "standard input" if str(path) == STDIN else str(path)


class _NotJson(ValueError):
    pass


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs)


def _looks_like_json(text: str) -> bool:
    stripped = text.lstrip()
    return stripped[:1] in ("{", "[")


def _depth_exceeds(value: Any, max_depth: int) -> bool:
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n % MIB == 0 else f"{n:,} bytes"


# The YAML side -------------------------------------------------------------------------

_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_RESOLVER = Resolver()
_CONSTRUCTOR = SafeConstructor()
_PARSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def data_file(path: Path) -> Any:
    """A YAML (or JSON) file this package ships, read with libyaml's parser where PyYAML has it (the
    pure-Python one cost every process a few ms a file). Trusted: no bounds, unlike what users give."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_PARSER)


@lru_cache(maxsize=65536)
def _plain(value: str, pulumi: bool) -> Any:
    """A plain scalar (unquoted, no tag): the same text always means the same value."""
    if pulumi:
        return _MergeKey if value == "<<" else _v3(value, "")
    return _typed(_RESOLVER.resolve(ScalarNode, value, (True, False)), value)


def _scalar(event: ScalarEvent, pulumi: bool) -> Any:
    """A scalar's value; with `pulumi`, as yaml.v3 reads it (`yaml12.resolve`)."""
    tag, value = event.tag, event.value
    if tag is None:
        if not event.implicit[0]:
            return value  # quoted or a block scalar: a string
        # Keys and small values repeat a lot: the short ones are remembered.
        return _plain(value, pulumi) if len(value) < 64 else _plain.__wrapped__(value, pulumi)
    if pulumi:
        return _v3(value, tag)
    return value if tag == "!" else _typed(tag, value)  # the non-specific tag `!`: a string


def _v3(value: str, tag: str) -> Any:
    try:
        return yaml12.resolve(value, tag)
    except yaml12.TagError as error:
        raise ValueError(f"{error}; the Pulumi CLI fails on it (yaml.v3): fix the value or remove the tag") from None


# Kubernetes reads timestamps as text; binary stays the base64 text a Secret expects.
_AS_TEXT = {_STR, "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:binary", "tag:yaml.org,2002:value"}
_CONSTRUCT = {"tag:yaml.org,2002:null": _CONSTRUCTOR.construct_yaml_null,
              "tag:yaml.org,2002:bool": _CONSTRUCTOR.construct_yaml_bool,
              "tag:yaml.org,2002:int": _CONSTRUCTOR.construct_yaml_int,
              "tag:yaml.org,2002:float": _CONSTRUCTOR.construct_yaml_float}


def _typed(tag: str, value: str) -> Any:
    if tag in _AS_TEXT:
        return value
    if tag in _CONSTRUCT:
        return _CONSTRUCT[tag](ScalarNode(tag, value))
    if tag == _MERGE:
        return _MergeKey
    raise ValueError(f"the tag {tag!r} has no meaning in a Kubernetes object; remove it")


class _MergeKey:
    """The `<<` key."""


class _Frame:
    __slots__ = ("value", "anchor", "nodes", "key", "key_line", "has_key", "merges", "merged")

    def __init__(self, value: Any, anchor: Optional[str]):
        self.value = value
        self.anchor = anchor
        self.nodes = 1
        self.key: Any = None
        self.key_line: Optional[int] = None
        self.has_key = False
        # Maps merged in with `<<`, weakest first; the map's own keys win over all of them.
        self.merges: list[dict] = []
        self.merged = False


class _Builder:
    """Builds Python values from parser events, applying the bounds as it goes."""

    def __init__(self, source: str, limits: Limits, dialect: Dialect = Dialect.KUBERNETES):
        self.source = source
        self.limits = limits
        self.pulumi = dialect is Dialect.PULUMI
        self.document: Optional[int] = None
        self.aliased = 0

    def fail(self, reason: str, event: Any = None, line: Optional[int] = None) -> LoadError:
        """`line`: 0-based, when `event` does not give it."""
        line = getattr(getattr(event, "start_mark", None), "line", line)
        where = f" (line {line + 1})" if line is not None else ""
        return LoadError(self.source, self.document, reason + where, position=None if line is None else line + 1)

    def run(self, text: str) -> list[Any]:
        documents: list[Any] = []
        try:
            self._events(text, documents)
        except LoadError:
            raise
        except yaml.MarkedYAMLError as error:
            mark = error.problem_mark
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            raise LoadError(self.source, None, f"not valid YAML{where}: {error.problem or error}",
                            position=mark.line + 1 if mark else None) from None
        except yaml.YAMLError as error:
            # PyYAML's reader words a control character on two lines: a reason is one.
            raise LoadError(self.source, None, f"not valid YAML: {' '.join(str(error).split())}") from None
        return documents

    def _events(self, text: str, documents: list[Any]) -> None:
        stack: list[_Frame] = []
        anchors: dict[str, tuple[Any, int]] = {}
        max_depth = self.limits.max_depth
        index = -1
        result: Any = None
        event: Any  # dispatched on its class below (`cls is ...`, cheaper than isinstance in this loop)
        for event in yaml.parse(text, Loader=_PARSER):
            cls = event.__class__
            if cls is ScalarEvent:
                try:
                    value = _scalar(event, self.pulumi)
                except ValueError as error:
                    raise self.fail(_long_number(error), event) from None
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1)
                nodes = 1
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                if len(stack) >= max_depth:
                    raise self.fail(f"nested deeper than {max_depth} levels", event)
                stack.append(self._container(event, cls is MappingStartEvent))
                continue
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                frame = stack.pop()
                value = frame.value
                if frame.merges:
                    merged: dict = {}
                    for source in frame.merges:
                        merged.update(source)
                    merged.update(value)
                    value = merged
                nodes = frame.nodes
                if frame.anchor is not None:
                    anchors[frame.anchor] = (value, nodes)
            elif cls is AliasEvent:
                value, nodes = self._alias(event, anchors)
            elif cls is DocumentStartEvent:
                index += 1
                self.document = index
                anchors = {}
                result = None
                continue
            elif cls is DocumentEndEvent:
                documents.append(result)
                self.document = None
                continue
            else:
                continue  # stream start and end
            if not stack:
                result = "<<" if value is _MergeKey else value
                continue
            parent = stack[-1]
            parent.nodes += nodes
            container = parent.value
            if container.__class__ is list:
                container.append("<<" if value is _MergeKey else value)  # a merge key only as a key
            elif not parent.has_key:
                if value.__class__ in (dict, list):
                    raise self.fail("a map key must be a plain value, not a map or a list", event)
                if self.pulumi and value.__class__ is not str and value is not _MergeKey:
                    raise self.fail(f"the map key {getattr(event, 'value', value)} is not text; the Pulumi CLI "
                                    "refuses it (\"expected only "
                                    "string keys\"): quote it", event)
                parent.key = value
                parent.key_line = event.start_mark.line if event.start_mark else None
                parent.has_key = True
            else:
                key = parent.key
                parent.has_key = False
                if key is _MergeKey:
                    self._merge(parent, value, event)
                    continue
                if value is _MergeKey:
                    value = "<<"
                if key in container:
                    raise LoadError(self.source, self.document,
                                    f"the key {_show(key)} appears twice in one map (again at line "
                                    f"{(parent.key_line or 0) + 1}); keep one: kubectl and Pulumi refuse this, "
                                    "and otherwise the last value would silently win",
                                    position=None if parent.key_line is None else parent.key_line + 1)
                container[key] = value

    def _container(self, event: Any, mapping: bool) -> _Frame:
        """The frame of a map or list that starts here; only the plain tags are taken."""
        tag = None if self.pulumi else event.tag  # yaml.v3 reads a tagged map or list as one
        if tag not in (None, "!", _MAP if mapping else _SEQ):
            raise self.fail(f"the tag {tag!r} has no meaning in a Kubernetes object; remove it", event)
        return _Frame({} if mapping else [], event.anchor)

    def _alias(self, event: Any, anchors: dict[str, tuple[Any, int]]) -> tuple[Any, int]:
        """A copy of the anchored value (no shared objects: each use is its own value), and its nodes,
        counted against the bound on what aliases expand to."""
        if event.anchor not in anchors:
            raise self.fail(f"the alias *{event.anchor} names no anchor defined before it", event)
        original, nodes = anchors[event.anchor]
        self.aliased += nodes
        if self.aliased > self.limits.max_alias_nodes:
            raise self.fail(f"YAML aliases expand to more than {self.limits.max_alias_nodes:,} nodes "
                            "(an alias bomb?); write the repeated parts out or split the file", event)
        return json_copy(original), nodes

    def _merge(self, frame: _Frame, value: Any, event: Any) -> None:
        if frame.merged:
            raise self.fail("the merge key << appears twice in one map; merge a list of maps instead", event)
        frame.merged = True
        sources = value if isinstance(value, list) else [value]
        for source in sources:
            if not isinstance(source, dict):
                raise self.fail("the merge key << takes a map or a list of maps", event)
        # In `<<: [a, b]` a wins over b, as in YAML's merge key type.
        frame.merges.extend(reversed(sources))


def _show(key: Any) -> str:
    return repr(key) if not isinstance(key, str) else f"'{key}'"


__all__ = ["Limits", "DEFAULT_LIMITS", "STACK_FILE_LIMITS", "Dialect", "LoadError", "STDIN", "display_name",
           "read_text", "open_binary", "Bounded", "parse_documents", "parse_single", "parse_json", "loads_json",
           "load_file"]
