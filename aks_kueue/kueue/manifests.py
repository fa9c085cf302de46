"""Read Kueue YAML: several documents per file, or a `kind: List`, v1beta1 or v1beta2."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import yaml

from aks_kueue.kueue.convert import V1BETA1, V1BETA2
from aks_kueue.kueue.schemas import all_kinds


@dataclass(frozen=True)
class ManifestError(Exception):
    path: str
    index: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}" + (f" document {self.index}" if self.index is not None else "")
        return f"{where}: {self.reason}"


def read_documents(path: Path, also: tuple[tuple[str, str], ...] = ()) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (document index, object) pairs; a `kind: List` yields its items under its index.

    `also` admits extra (apiVersion, kind) pairs beside Kueue's own kinds.
    """
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ManifestError(str(path), None, "no such file") from None
    except UnicodeDecodeError:
        raise ManifestError(str(path), None, "not a text file (it is not UTF-8); give Kueue YAML") from None
    except OSError as error:
        raise ManifestError(str(path), None, f"cannot be read ({error.strerror})") from None
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ManifestError(str(path), None, f"not valid YAML{where}: "
                                             f"{getattr(error, 'problem', None) or error}") from None
    for index, document in enumerate(documents):
        if document is None:
            continue
        if not isinstance(document, dict):
            raise ManifestError(str(path), index, "a document must be a Kubernetes object (a map)")
        if document.get("kind") == "List" and document.get("apiVersion") == "v1":
            for item in document.get("items") or []:
                yield index, _checked(item, path, index, also)
        else:
            yield index, _checked(document, path, index, also)


def _checked(document: Any, path: Path, index: int, also: tuple = ()) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise ManifestError(str(path), index, "a list item must be a Kubernetes object (a map)")
    api_version, kind = document.get("apiVersion"), document.get("kind")
    if (api_version, kind) in also:
        return document
    if api_version not in (V1BETA1, V1BETA2):
        raise ManifestError(str(path), index, f"apiVersion {api_version!r} is not Kueue's; "
                                              f"use {V1BETA2} (or {V1BETA1})")
    if kind not in all_kinds():
        raise ManifestError(str(path), index, f"kind {kind!r} is not a Kueue kind "
                                              f"({', '.join(sorted(all_kinds()))})")
    return document
