"""The items of the `errors` list every command's JSON document carries (`cli.md`): one shape,
`{"file"?, "document"?, "key"?, "message"}`, for every subcommand.

`message` is the whole sentence stderr shows (it names the file, document or key itself), so a
reader of the JSON alone loses nothing; `file`, `document` and `key` say the same thing in fields,
and are left out when they do not apply (a bad flag names no file).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class InputError:
    """An input that cannot be used (a file, a document of one, a stack key, a flag), or an object Kueue
    would reject; `str()` is the sentence for stderr."""

    message: str
    file: Optional[str] = None
    document: Optional[int] = None       # 0-based, within `file`
    key: Optional[str] = None            # the stack key to edit, e.g. aks-kueue:cluster.kubernetesVersion,
                                         # or a trace's field
    line: Optional[int] = None           # 1-based, within a line-oriented `file` (a trace's JSON Lines or CSV)

    def __str__(self) -> str:
        return self.message

    def to_json(self) -> dict[str, Any]:
        fields = (("file", self.file), ("line", self.line), ("document", self.document), ("key", self.key),
                  ("message", self.message))
        return {name: value for name, value in fields if value is not None}

    @classmethod
    def of(cls, error: Any) -> "InputError":
        """The item for a `k8s.loader.LoadError` (its source and document), or any other exception's sentence."""
        if isinstance(error, InputError):
            return error
        source = getattr(error, "source", None)
        if source is not None and hasattr(error, "document"):
            return cls(str(error), source or None, error.document, getattr(error, "key", None) or None,
                       getattr(error, "line", None))
        return cls(str(error))
