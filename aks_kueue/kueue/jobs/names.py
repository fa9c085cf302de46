"""Workload names, as pkg/controller/jobframework/workload_names.go (Kueue v0.19.2) makes them.

`<kind in lower case>-<job name>`, cut to leave room for the suffix, then `-` and the
first 5 hex digits of SHA-1 over kind, API group, job name and UID (and, for elastic
jobs, the generation), each separated by a newline. The UID is assigned by the API
server, so a manifest without `metadata.uid` gets a suffix computed with an empty UID:
the prefix matches the cluster's, the suffix will not.
"""

from __future__ import annotations

import hashlib

HASH_LENGTH = 5
LONG_MAX = 253
# ShortWorkloadNames (alpha, off in v0.19.2) keeps names within a label value's 63 characters.
SHORT_MAX = 63


def workload_name(kind: str, group: str, name: str, uid: str = "", extra: str = "", short: bool = False) -> str:
    max_prefix = (SHORT_MAX if short else LONG_MAX) - 1 - HASH_LENGTH
    prefix = f"{kind.lower()}-{name}"[:max_prefix]
    digest = hashlib.sha1()
    for part in (kind, "\n", group, "\n", name, "\n", uid):
        digest.update(part.encode())
    if extra:
        digest.update(b"\n")
        digest.update(extra.encode())
    return f"{prefix}-{digest.hexdigest()[:HASH_LENGTH]}"
