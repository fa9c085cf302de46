"""The values of secret config keys, and text with them taken out.

A key set with `pulumi config set --secret` (or `--path --secret` anywhere inside it) is secret as
a whole: Pulumi marks secrecy per top-level key and the program cannot tell which leaf it was. So
every scalar of such a key is a secret value, and no message, finding or table the program or the
preview prints may show one. `Secrets.text` is the one place that takes them out: the settings
error formatter, the program's refusal of a config and its warnings, and the offline preview's
findings, verdicts and tables all pass their text through it, so a message written later is covered
without anyone remembering to.

What is hidden: every string and number of a secret key, also with other letter case and without
the surrounding spaces (the settings strip and normalise some values), a taint's value
(`key=value:Effect`), and a value a message cut short (`'Standard_NC24a...`): a message that shows
the start of a secret value that way is replaced whole. A value is hidden where it stands as a whole
word: a secret `gpu` is taken out of `value gpu` and `sku=gpu:NoSchedule` but not out of
`nvidia.com/gpu`, a secret `1` out of `minCount 1` but not out of `nodePools[1]` or `1.35`.

What is shown: names, vocabulary, booleans. Values under `name` and `namespace` keys, and the same
text wherever else it stands (a flavor's `nodePool`, a LocalQueue's `clusterQueue`), are identifiers:
they become Pulumi resource names and URNs, which Pulumi never encrypts; so are names and words
joined by `.` or `/` (a workload's queue `team-a/default`, an allowReplacement entry
`nodePools.cpu`). The program's vocabulary, the words it offers as choices (`Install`,
`BestEffortFIFO`, `NoSchedule`, `cpu`, `batch/job`), says only which choice was made and would
otherwise be taken out of every message that names the choice. Booleans and nulls are shown (a secret `protect: true` says nothing a preview does not show
anyway). Figures computed from secret values (a sum of quotas, a node count) are not the values and
are shown.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields, is_dataclass, replace
from enum import Enum
from typing import Any, Iterable, Iterator, Mapping, Optional

SECRET_TEXT = "[secret]"
# A secret value this long is found inside longer words too (`Secrets.holds`).
SUBSTRING = 4
# A value cut short, as messages shorten long values: the part shown, then an ellipsis.
_SHORTENED = re.compile(r"([^\s'\"{}\[\](),:=]{6,})(?:\.\.\.|\u2026)")
NAME_KEYS = ("name", "namespace")

_TAINT = re.compile(r"^([^=:\s]+)=([^=:\s]+):(NoSchedule|PreferNoSchedule|NoExecute)$")
_WORD = "A-Za-z0-9_"
# Not inside a longer word: no word character next to it, nor `.`, `/` or `-` joining it to one.
_BEFORE = rf"(?<![{_WORD}])(?<![{_WORD}][./-])"
_AFTER = rf"(?![{_WORD}])(?![./-][{_WORD}])"
# A whole word: word characters, joined by `.`, `/` or `-` (`nvidia.com/gpu`, `1.35`, `team-a`).
_ONE_WORD = re.compile(rf"[{_WORD}]+(?:[./-][{_WORD}]+)*")
_WORDS = re.compile(rf"{_BEFORE}{_ONE_WORD.pattern}")


def _indexed(match: re.Match) -> bool:
    """A number in brackets is an index of a path (`nodePools[1]`), not a value."""
    text, start, end = match.string, match.start(), match.end()
    return start > 0 and text[start - 1] == "[" and text[end:end + 1] == "]"


@dataclass(frozen=True)
class Secrets:
    """`keys`: the secret top-level keys, namespaced (`aks-kueue:nodePools`, `azure-native:location`)."""

    keys: frozenset[str] = frozenset()
    values: tuple[str, ...] = ()
    # Values that are one word (most are) are looked up per word of a message; the rest are searched.
    _words: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    _pattern: Optional[re.Pattern] = field(default=None, compare=False, repr=False)

    @classmethod
    def of(cls, config: Mapping[str, str], secret_keys: Iterable[str],
           shown: frozenset[str] = frozenset()) -> "Secrets":
        """From Pulumi's flat config map (`namespace:key` -> text, objects as JSON) and the keys
        Pulumi says are secret (with or without the `aks-kueue:` namespace). `shown`: the program's
        vocabulary (`settings/vocabulary.py`), words it offers as choices, which hide nothing."""
        keys = frozenset(k if ":" in k else f"aks-kueue:{k}" for k in secret_keys)
        if not keys:
            return cls()
        names = {leaf.strip() for value in config.values() for at, leaf, own in _leaves(_decoded(value))
                 if own and at in NAME_KEYS and isinstance(leaf, str)}
        leaves = [(at, leaf) for key in keys if key in config for at, leaf, _ in _leaves(_decoded(config[key]))]
        numbers = {str(n) for _, v in leaves if isinstance(v, (int, float)) and not isinstance(v, bool)
                   for n in ((v, int(v)) if isinstance(v, float) and v.is_integer() else (v,))}
        texts = {v.strip() for at, v in leaves if isinstance(v, str) and at not in NAME_KEYS}
        texts |= {taint.group(2) for text in texts if (taint := _TAINT.match(text))}
        known = names | shown
        # A number is a figure of its own, never a name or a choice, even where the same digits are (`zones: ["1"]`).
        hidden = {v for v in texts if v and v != SECRET_TEXT and not _identifier(v, known)} | numbers
        values = tuple(sorted(hidden, key=lambda v: (-len(v), v)))
        words = frozenset(v.lower() for v in values if _ONE_WORD.fullmatch(v))
        return cls(keys, values, words, _compile(tuple(v for v in values if not _ONE_WORD.fullmatch(v))))

    def __bool__(self) -> bool:
        return bool(self.values)

    def covers(self, path: str) -> bool:
        """Whether a config path (`aks-kueue:nodePools[1].vmSize`) is inside a secret key."""
        return any(path == k or path.startswith((k + ".", k + "[")) for k in self.keys)

    def text(self, message: str) -> str:
        """The message with every secret value taken out; replaced whole if it shows the start of one cut short."""
        if not self.values or not isinstance(message, str) or not message:
            return message
        scrubbed = self._pattern.sub(SECRET_TEXT, message) if self._pattern is not None else message
        if self._words:
            scrubbed = _WORDS.sub(lambda m: SECRET_TEXT if m[0].lower() in self._words and not _indexed(m)
                                  else m[0], scrubbed)
        if self._shows_part(scrubbed):
            return (f"(this message would show part of a secret value, so it is not shown; the value comes from "
                    f"{', '.join(sorted(self.keys))})")
        return scrubbed

    def holds(self, text: str) -> bool:
        """Whether `text` holds a secret value anywhere: as a word, or (one of 4 characters or more) inside
        a longer word (`MSProm-eastus-aks-prod`). For inputs, where hiding too much costs little."""
        if not self.values or not isinstance(text, str) or not text:
            return False
        lowered = text.lower()
        if any(len(v) >= SUBSTRING and v.lower() in lowered for v in self.values):
            return True
        return self.text(text) != text

    def _shows_part(self, message: str) -> bool:
        """Whether a shortened value (`'abcdefgh...`) is the start of a secret one."""
        for match in _SHORTENED.finditer(message):
            start = match[1].lower()
            if any(len(v) > len(start) and v.lower().startswith(start) for v in self.values):
                return True
        return False

    def digests(self, salt: str) -> list[str]:
        """Salted SHA-256 digests of the one-word secret values (lower case), for the policy pack,
        which sees the values decrypted but not which keys they came from (`WordDigests`)."""
        return sorted(word_digest(salt, word) for word in self._words)

    def value(self, value: Any) -> Any:
        """Strings taken out anywhere in a value: dicts, lists, tuples and frozen dataclasses (a
        finding, a table row) come back as copies; enums, numbers and the rest as they are."""
        return _scrub(value, self) if self.values else value


def _scrub(value: Any, secrets: Secrets) -> Any:
    if isinstance(value, Enum):
        return value
    if isinstance(value, str):
        return secrets.text(value)
    if isinstance(value, Mapping):
        return {k: _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    if isinstance(value, tuple):
        return tuple(_scrub(v, secrets) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        scrubbed = {f.name: (getattr(value, f.name), _scrub(getattr(value, f.name), secrets))
                    for f in fields(value) if f.init}
        changes = {name: new for name, (old, new) in scrubbed.items() if new is not old and new != old}
        return replace(value, **changes) if changes else value
    return value


def _identifier(value: str, known: set[str] | frozenset[str]) -> bool:
    """A name or a word of the vocabulary, or such parts joined by `.` or `/`: `team-a/default` (a
    LocalQueue), `nodePools.cpu` (an allowReplacement entry)."""
    if value in known:
        return True
    parts = re.split(r"[./]", value)
    return len(parts) > 1 and all(part in known for part in parts)


def _decoded(value: Any) -> Any:
    """A config value as the settings read it: JSON text decoded (`true`, `3`, a map), anything else text."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _leaves(value: Any, at: Optional[str] = None, own: bool = False) -> Iterator[tuple[Optional[str], Any, bool]]:
    """Every leaf of a decoded config value, with the map key it stands under (a list passes its key on)
    and whether it is that key's own value rather than an item of a list under it."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaves(child, key, True)
    elif isinstance(value, list):
        for child in value:
            yield from _leaves(child, at)
    else:
        yield at, value, own


def _compile(values: tuple[str, ...]) -> Optional[re.Pattern]:
    if not values:
        return None
    # Longest first, so that a value is taken out whole before a shorter one inside it.
    alternatives = "|".join(re.escape(v) for v in values)
    return re.compile(f"{_BEFORE}(?:{alternatives}){_AFTER}", re.IGNORECASE)


def word_digest(salt: str, word: str) -> str:
    import hashlib

    return hashlib.sha256(f"{salt}\0{word.lower()}".encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class WordDigests:
    """The policy pack's side of `Secrets`: it is handed resources with secrets decrypted and cannot
    tell which value came from a secret key, so the program's model ConfigMap carries salted digests
    of the one-word secret values (never the values), and the pack takes out of its messages every
    word whose digest is among them. Values of several words (a description, `+00:00`) are not
    carried; the offline preview takes those out of its verdicts itself."""

    salt: str = ""
    digests: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.digests)

    def text(self, message: str) -> str:
        if not self.digests or not isinstance(message, str):
            return message
        return _WORDS.sub(lambda m: SECRET_TEXT if word_digest(self.salt, m[0]) in self.digests and not _indexed(m)
                          else m[0], message)
