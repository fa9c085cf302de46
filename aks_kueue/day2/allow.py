"""`aks-kueue:allowReplacement`: what this update may replace or delete.

Each entry names exactly one resource: `cluster`, `systemPool`, `nodePools.<name>`, `kueue`,
`resourceGroup`, `namespaces.<name>`, or a Kueue object the stack declares as
`queues.<Kind>/<name>` (`queues.LocalQueue/<namespace>/<name>` for a LocalQueue, the
`<namespace>/<name>` that `expectedWorkloads[].queue` uses too), and a fleet member's links:
`fleet.workers/<name>` on a manager (the worker's MultiKueueCluster and kubeconfig Secret, and its
place in the MultiKueueConfig), `fleet.manager` on a worker (the access its manager has: the
multikueue service account, its RBAC and token Secrets). Listing an Azure resource or the Kueue
installer unprotects it (and, for a team namespace, turns retainOnDelete off) for this update only;
listing a Kueue object or a fleet link acknowledges that this update deletes or replaces it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Optional

from aks_kueue.k8s.names import dns1123_label_problem, dns1123_subdomain_problem

# The stack config key this module reads: every message and lookup names it through this constant.
ALLOW_KEY = "aks-kueue:allowReplacement"


class Target(str, Enum):
    """A StrEnum (3.11) spelled for Python 3.10 too."""

    RESOURCE_GROUP = "resourceGroup"
    CLUSTER = "cluster"
    SYSTEM_POOL = "systemPool"
    NODE_POOL = "nodePools"
    KUEUE = "kueue"
    NAMESPACE = "namespaces"
    QUEUES = "queues"
    FLEET = "fleet"

    def __str__(self) -> str:
        return self.value


NAMED = {Target.NODE_POOL, Target.NAMESPACE, Target.QUEUES, Target.FLEET}
# Entries acknowledge a deletion or replacement; they unprotect nothing (Pulumi's protect is not on these).
ACKNOWLEDGED_ONLY = {Target.QUEUES, Target.FLEET}
_POOL_NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")
# The Kueue kinds whose removal or replacement the guard refuses unless listed: the queue objects
# workloads are admitted through and what Kueue's resource-in-use finalizers hold.
QUEUE_KINDS = ("ClusterQueue", "Cohort", "ResourceFlavor", "AdmissionCheck", "LocalQueue", "Topology")
NAMESPACED_KINDS = ("LocalQueue",)
# A fleet's links: on a manager, one per worker (named as in aks-kueue:fleet.workers[].name); on a worker, the one to
# its manager.
FLEET_WORKERS = "workers"
FLEET_MANAGER = "manager"
FORMS = ("cluster, systemPool, nodePools.<name>, kueue, resourceGroup, namespaces.<name>, "
         "queues.<Kind>/<name> (Kind: " + ", ".join(QUEUE_KINDS) + "), queues.LocalQueue/<namespace>/<name>, "
         f"fleet.{FLEET_WORKERS}/<name> (a fleet manager's worker) or fleet.{FLEET_MANAGER} (a fleet worker's "
         "link to its manager)")


@dataclass(frozen=True, order=True)
class Entry:
    target: Target
    name: Optional[str] = None

    def __str__(self) -> str:
        return f"{self.target}.{self.name}" if self.name is not None else str(self.target)

    @property
    def kind(self) -> Optional[str]:
        """The Kueue kind of a `queues.` entry."""
        return self.name.split("/", 1)[0] if self.target is Target.QUEUES and self.name else None


def worker_entry(name: str) -> Entry:
    """How allowReplacement and the day-2 record name a fleet manager's worker."""
    return Entry(Target.FLEET, f"{FLEET_WORKERS}/{name}")


MANAGER_ENTRY = Entry(Target.FLEET, FLEET_MANAGER)


def queue_entry(kind: str, namespace: Optional[str], name: str) -> Entry:
    """How allowReplacement and the day-2 record name a Kueue object."""
    return Entry(Target.QUEUES, f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}")


def parse_entry(text: object) -> Entry:
    """One entry, or a ValueError that says what the entry may be."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not an entry; write one of {FORMS}")
    head, dot, name = text.partition(".")
    try:
        target = Target(head)
    except ValueError:
        raise ValueError(f"{text!r} is not an entry; write one of {FORMS}") from None
    if target not in NAMED:
        if dot:
            raise ValueError(f"{text!r}: {head} takes no name; write {head}")
        return Entry(target)
    if target is Target.QUEUES:
        return _queue_entry(text, name)
    if target is Target.FLEET:
        return _fleet_entry(text, name)
    if not name:
        raise ValueError(f"{text!r} names no {'pool' if target is Target.NODE_POOL else 'namespace'}; "
                         f"write {head}.<name>")
    if (not _POOL_NAME.fullmatch(name)) if target is Target.NODE_POOL else dns1123_label_problem(name):
        kind = ("an AKS pool name (^[a-z][a-z0-9]{0,11}$)" if target is Target.NODE_POOL
                else "a namespace name (a DNS label)")
        raise ValueError(f"{text!r}: {name!r} is not {kind}")
    return Entry(target, name)


def _queue_entry(text: str, rest: str) -> Entry:
    """`queues.<Kind>/<name>`, or `queues.LocalQueue/<namespace>/<name>`. The kind is matched without
    regard to case (as kubectl does) and written back as Kueue spells it."""
    kind, slash, name = rest.partition("/")
    spelled = {k.lower(): k for k in QUEUE_KINDS}.get(kind.lower())
    if spelled is None:
        raise ValueError(f"{text!r}: {kind or '(nothing)'} is not a Kueue kind the guard watches; write "
                         f"queues.<Kind>/<name> with Kind one of {', '.join(QUEUE_KINDS)}")
    if spelled in NAMESPACED_KINDS:
        namespace, _, local = name.partition("/")
        if not namespace or not local:
            raise ValueError(f"{text!r}: a {spelled} is named with its namespace; write "
                             f"queues.{spelled}/<namespace>/<name>")
        if dns1123_label_problem(namespace):
            raise ValueError(f"{text!r}: {namespace!r} is not a namespace name (a DNS label)")
    else:
        namespace, local = None, name
        if not slash or not name:
            raise ValueError(f"{text!r} names no {spelled}; write queues.{spelled}/<name>")
        if "/" in name:
            raise ValueError(f"{text!r}: a {spelled} has no namespace; write queues.{spelled}/<name>")
    # A Kubernetes object name (a DNS subdomain, RFC 1123), as Kueue's objects are named.
    if dns1123_subdomain_problem(local):
        raise ValueError(f"{text!r}: {local!r} is not a Kubernetes object name (a DNS subdomain)")
    return queue_entry(spelled, namespace, local)


def _fleet_entry(text: str, rest: str) -> Entry:
    """`fleet.workers/<name>` (the name aks-kueue:fleet.workers[].name gives it) or `fleet.manager`."""
    head, slash, name = rest.partition("/")
    if head == FLEET_MANAGER and not slash:
        return MANAGER_ENTRY
    if head == FLEET_MANAGER:
        raise ValueError(f"{text!r}: fleet.{FLEET_MANAGER} takes no name (a worker has one manager); "
                         f"write fleet.{FLEET_MANAGER}")
    if head != FLEET_WORKERS:
        raise ValueError(f"{text!r} is not a fleet entry; write fleet.{FLEET_WORKERS}/<name> (on a manager: a "
                         f"worker, named as in aks-kueue:fleet.workers) or fleet.{FLEET_MANAGER} (on a worker)")
    if not name:
        raise ValueError(f"{text!r} names no worker; write fleet.{FLEET_WORKERS}/<name> with the name "
                         "aks-kueue:fleet.workers gives it")
    if dns1123_label_problem(name):
        raise ValueError(f"{text!r}: {name!r} is not a worker name (a DNS label, as aks-kueue:fleet.workers[].name)")
    return worker_entry(name)


class Allowances:
    """The parsed entries of one update."""

    def __init__(self, entries: Iterable[Entry] = ()):
        self.entries = frozenset(entries)

    @classmethod
    def parse(cls, texts: Iterable[object]) -> "Allowances":
        return cls(parse_entry(t) for t in texts)

    def __contains__(self, entry: Entry) -> bool:
        return entry in self.entries

    def __iter__(self):
        return iter(sorted(self.entries))

    def __bool__(self) -> bool:
        return bool(self.entries)


@dataclass(frozen=True)
class Protection:
    """Which resources this update protects, from aks-kueue:protect and allowReplacement."""

    protect: bool
    allowances: Allowances

    def protects(self, entry: Entry) -> bool:
        """Pulumi `protect` for the Azure resources and the Kueue installer; Kueue objects and fleet links
        are never protected (the guard refuses their removal instead, and a listed entry acknowledges it)."""
        return self.protect and entry.target not in ACKNOWLEDGED_ONLY and entry not in self.allowances

    def retains(self, entry: Entry) -> bool:
        """Team namespaces survive their removal from the stack unless listed."""
        return entry not in self.allowances
