"""Read the manifests teams already have: files, folders and standard input, mixed kinds.

`read_inputs(paths)` reads files, directories (recursively, `*.yaml`, `*.yml` and `*.json`
in name order, as `kubectl apply -f DIR -R` does) and `-` (standard input), every file
through the bounded loader (`aks_kueue.k8s.loader`). Each document, and each item of a
`kind: List`, becomes a `Document` that remembers its file and 0-based document index.
`category()` sorts them: Kueue's own objects, Kueue's Configuration, jobs that a Kueue
integration manages, objects read for the jobs' sake, and everything else.

`read_documents(path)` is the older, strict reader for files that must hold only Kueue
objects (`aks-kueue:queueManifests`).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from aks_kueue.k8s.objects import map_at
from aks_kueue.k8s.loader import DEFAULT_LIMITS, STDIN, Limits, LoadError, display_name, load_file
from aks_kueue.kueue.convert import GROUP, V1BETA1, V1BETA2
from aks_kueue.kueue.schemas import all_kinds, kind_schema

# A file that cannot be used: one error type for the loader and for the manifests on top.
ManifestError = LoadError
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
CONFIG_GROUP = "config.kueue.x-k8s.io"
WHAT = "Kubernetes YAML or JSON"
# The characters the API server draws a generated name's suffix from (k8s.io/apiserver names.go).
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
# names.go maxGeneratedNameLength: 63 less the 5-character suffix.
_GENERATED_PREFIX_MAX = 58


class Category(str, Enum):
    def __str__(self) -> str:  # as enum.StrEnum (Python 3.11) does; this runs on 3.10 too
        return self.value

    KUEUE = "kueue"                  # kueue.x-k8s.io objects: validated and simulated
    CONFIGURATION = "configuration"  # Kueue's own Configuration (config.kueue.x-k8s.io)
    JOB = "job"                      # a kind one of Kueue's integrations manages
    CONTEXT = "context"              # read for others: Namespaces, PriorityClasses, training runtimes
    OTHER = "other"                  # not Kueue's: skipped


@dataclass
class Document:
    """One Kubernetes object of the input, with where it came from."""

    file: str
    index: int
    manifest: dict[str, Any]
    # The name is a stand-in for the one the API server would make from generateName.
    generated_name: bool = False

    @property
    def where(self) -> str:
        return f"{display_name(self.file)} document {self.index}"

    @property
    def api_version(self) -> Any:
        return self.manifest.get("apiVersion")

    @property
    def kind(self) -> Any:
        return self.manifest.get("kind")

    @property
    def name(self) -> Optional[str]:
        metadata = self.manifest.get("metadata")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        return name if isinstance(name, str) else None


def input_files(paths: Iterable[str | Path], suffixes: tuple[str, ...] = MANIFEST_SUFFIXES) -> list[str]:
    """Files to read, in order: a directory expands to its files with these suffixes (manifests by
    default), recursively, in name order."""
    files: list[str] = []
    for given in paths:
        path = str(given)
        if path == STDIN:
            if STDIN in files:
                raise LoadError(STDIN, None, "standard input is given twice; it can be read once")
            files.append(STDIN)
        elif os.path.isdir(path):
            found = []
            for root, dirs, names in os.walk(path):
                dirs.sort()
                found += [os.path.join(root, n) for n in names if n.lower().endswith(suffixes)]
            files += sorted(found)
        elif not os.path.exists(path):
            raise LoadError(path, None, "no such file")
        else:
            files.append(path)
    return files


def read_inputs(paths: Iterable[str | Path], limits: Limits = DEFAULT_LIMITS,
                regular_only: bool = False) -> list[Document]:
    """Every object of every file, in order; a LoadError names the first file that cannot be used.
    `regular_only`: a path that is not a regular file (a named pipe, a device) is refused; `-` still
    reads standard input."""
    documents = []
    for file in input_files(paths):
        for index, value in enumerate(load_file(file, limits, WHAT, regular_only and file != STDIN)):
            documents += _objects(value, file, index)
    return documents


def _objects(value: Any, file: str, index: int) -> list[Document]:
    if value is None:
        return []
    if not isinstance(value, dict):
        raise LoadError(file, index, "a document must be a Kubernetes object (a map), not "
                                     f"{'a list' if isinstance(value, list) else 'a single value'}")
    if _is_list(value):
        items = []
        for item in value.get("items") or []:
            if not isinstance(item, dict):
                raise LoadError(file, index, "a list item must be a Kubernetes object (a map)")
            items.append(Document(file, index, item))
        return items
    return [Document(file, index, value)]


def _is_list(value: dict[str, Any]) -> bool:
    kind = value.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and value.get("apiVersion") == "v1" \
        and isinstance(value.get("items", []), list)


def api_group(manifest: dict[str, Any]) -> str:
    api_version = manifest.get("apiVersion")
    return api_version.rpartition("/")[0] if isinstance(api_version, str) else ""


def category(manifest: dict[str, Any]) -> Category:
    from aks_kueue.kueue.jobs import is_context, is_job

    group, kind = api_group(manifest), manifest.get("kind")
    if group == GROUP:
        return Category.KUEUE
    if group == CONFIG_GROUP and kind == "Configuration":
        return Category.CONFIGURATION
    if is_job(manifest):
        return Category.JOB
    if is_context(manifest) or (manifest.get("apiVersion") == "v1" and kind == "Namespace"):
        return Category.CONTEXT
    return Category.OTHER


def namespaced(manifest: dict[str, Any]) -> bool:
    """Whether the object lives in a namespace: Kueue's namespaced kinds, jobs, TrainingRuntimes."""
    kind = manifest.get("kind")
    group = api_group(manifest)
    if group == GROUP:
        schema = kind_schema(kind) if isinstance(kind, str) else None
        return bool(schema and schema.namespaced)
    from aks_kueue.kueue.jobs import is_job

    return is_job(manifest) or (group == "trainer.kubeflow.org" and kind == "TrainingRuntime")


def default_namespace(document: Document, namespace: str) -> Optional[str]:
    """Put a namespaced object without a namespace into `namespace`, as kubectl would;
    what was done, or None when nothing changed."""
    manifest = document.manifest
    if not namespaced(manifest):
        return None
    metadata = manifest.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("namespace"):
        return None
    metadata["namespace"] = namespace
    return f"no namespace, so it goes to {namespace} as with kubectl"


def generate_names(documents: list[Document]) -> None:
    """Name each object that has only `generateName` (Kueue's quick-start jobs do; `kubectl create`
    of one file five times makes five jobs), as the API server would with 5 random characters.

    The stand-in is deterministic and distinct: the suffix hashes the object's apiVersion, kind,
    namespace, generateName and its ordinal among the input's objects with those
    four (0 for the first copy, 1 for the second, ...), so the same files name the same objects
    wherever they are read from, and copies differ. A stand-in that equals a name already in the
    input (a real one or an earlier stand-in, for that kind and namespace) is hashed again with
    the next ordinal. A prefix longer than 58 characters is cut to 58, as the API server cuts it.
    Marked `generated_name`, so duplicate-name checks judge only real names."""
    taken = {_identity(d.manifest) + (d.name,) for d in documents if d.name}
    seen: dict[tuple, int] = {}
    for document in documents:
        metadata = document.manifest.get("metadata")
        if not isinstance(metadata, dict) or metadata.get("name") or not isinstance(metadata.get("generateName"), str):
            continue
        prefix = metadata["generateName"][:_GENERATED_PREFIX_MAX]
        key = _identity(document.manifest) + (prefix,)
        while True:
            ordinal = seen.get(key, 0)
            seen[key] = ordinal + 1
            digest = hashlib.sha1("\n".join(map(str, key + (ordinal,))).encode()).digest()
            name = prefix + "".join(_NAME_ALPHABET[b % len(_NAME_ALPHABET)] for b in digest[:5])
            if _identity(document.manifest) + (name,) not in taken:
                break
        taken.add(_identity(document.manifest) + (name,))
        metadata["name"] = name
        document.generated_name = True


def _identity(manifest: dict[str, Any]) -> tuple:
    metadata = map_at(manifest, "metadata")
    return (manifest.get("apiVersion"), manifest.get("kind"), metadata.get("namespace") or "")


def complete(documents: list[Document], namespace: str) -> list[str]:
    """For the objects this program judges: `default_namespace`, then `generate_names`, with one
    warning per object changed, naming it."""
    judged = [d for d in documents if category(d.manifest) is not Category.OTHER]
    moved = {id(d): m for d in judged if (m := default_namespace(d, namespace))}
    generate_names(judged)
    warnings = []
    for document in judged:
        done = []
        if document.generated_name:
            prefix = document.manifest["metadata"]["generateName"]
            done.append(f"named from generateName {prefix!r} (the API server adds 5 random characters; "
                        f"{document.name} stands in)")
        if id(document) in moved:
            done.append(moved[id(document)])
        if done:
            warnings.append(f"{document.where}: {document.kind} {document.name or '(no name)'}: " + "; ".join(done))
    return warnings


def read_documents(path: Path, also: tuple[tuple[str, str], ...] = ()) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (document index, object) pairs of a file that holds only Kueue objects; a
    `kind: List` yields its items under its index. `also` admits extra (apiVersion, kind) pairs."""
    for document in read_inputs([path]):
        yield document.index, _checked(document, also)


def _checked(document: Document, also: tuple = ()) -> dict[str, Any]:
    api_version, kind = document.api_version, document.kind
    if (api_version, kind) in also:
        return document.manifest
    if api_version not in (V1BETA1, V1BETA2):
        raise LoadError(document.file, document.index, f"apiVersion {api_version!r} is not Kueue's; "
                                                       f"use {V1BETA2} (or {V1BETA1})")
    if kind not in all_kinds():
        raise LoadError(document.file, document.index, f"kind {kind!r} is not a Kueue kind "
                                                       f"({', '.join(sorted(all_kinds()))})")
    return document.manifest
