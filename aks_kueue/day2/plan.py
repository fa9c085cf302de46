"""`aks-kueue check-plan`: which steps of a `pulumi preview --json` plan destroy what users depend on.

The document is Pulumi's PreviewDigest (pulumi/pulumi `pkg/display/json.go`, `sdk/go/common/display`):
`steps[]` with `op`, `urn`, `oldState` and `newState` (apitype.ResourceV3: `type`, `inputs`,
`protect`, `retainOnDelete`, ...), `replaceReasons`, `diffReasons`, and `config` (secrets blinded).
A replacement shows as several steps (create-replacement, replace, delete-replaced, in the order
the replacement runs); each destructive one is judged, one line each.

`OPERATIONS` is every step operation of the engine (`StepOps` in pkg/resource/deploy/step.go, read
at pulumi/pulumi v3.259.0 and main 1b59498 of 2026-08-21, the newest the mirror holds; the SDK
installed is 3.272.0), each with what it does to the resource, as `step.go` and `step_generator.go`
generate it. An operation not in it (a newer engine) on a watched resource is refused: the gate
judges what it knows. Type tokens are read with or without an azure-native API version
(`azure-native:containerservice/v20250901:AgentPool` is an AgentPool), and Kueue objects at any
`kueue.x-k8s.io` version.

A fleet's links are watched too. On a manager: each worker's MultiKueueCluster and kubeconfig Secret
(`fleet.workers/<name>`), and the MultiKueueConfig, which goes with the workers it lists (it passes
when each of them is listed). On a worker: what its manager connects with, the service account, its
ClusterRole and binding and the token Secrets (`fleet.manager`), found by the component that owns
them in the URN. A token Secret's delete passes without an entry when the plan's config no longer
keeps its generation (`aks-kueue:fleet.tokenGenerations`): that is a rotation's last step, which the
program itself refuses while the manager still connects with that token.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Mapping, Optional

from aks_kueue.day2.allow import (ALLOW_KEY, FLEET_WORKERS, MANAGER_ENTRY, QUEUE_KINDS, Allowances, Entry, Target,
                                  parse_entry, queue_entry, worker_entry)
from aks_kueue.day2.replacement import (AGENT_POOL, HELM_RELEASE, KUBERNETES_EXTENSION, MANAGED_CLUSTER, NAMESPACE,
                                        RESOURCE_GROUP)
from aks_kueue.k8s.field import Path as FieldPath
from aks_kueue.k8s.loader import LoadError, data_file


class Effect(str, Enum):
    """What a step does to the resource it names."""

    NONE = "none"          # nothing in the cloud or the cluster changes
    CREATE = "create"
    UPDATE = "update"
    REPLACE = "replace"    # a replacement: the resource as it is now is destroyed
    DELETE = "delete"      # the resource is gone after this update

    def __str__(self) -> str:
        return self.value


# pkg/resource/deploy/step.go StepOps, in its order, with what each does (`data/step-operations.yaml`).
OPERATIONS: dict[str, tuple[Effect, str]] = {op: (Effect(effect), what) for op, (effect, what) in data_file(
    Path(__file__).resolve().parent / "data" / "step-operations.yaml").items()}
DESTRUCTIVE = tuple(op for op, (effect, _) in OPERATIONS.items() if effect in (Effect.REPLACE, Effect.DELETE))
# retainOnDelete makes the delete a no-op in DeleteStep.Apply (and the earlier delete of a pending
# replacement was one): nothing is destroyed.
RETAINABLE = ("delete", "delete-replaced", "remove-pending-replace")
FLEET_CONFIG_KEY = "aks-kueue:fleet"
# The components that own a fleet's links (components/multikueue), as the URN's type chain names them.
MANAGER_COMPONENT, WORKER_COMPONENT = ":MultiKueueManager", ":MultiKueueWorker"
WORKER_ACCESS_TYPES = ("kubernetes:core/v1:ServiceAccount", "kubernetes:core/v1:Secret",
                       "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
                       "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")
_TOKEN_SECRET = re.compile(r"-token-(\d+)$")
# Deleting a CRD deletes every object of its kind with it (the API server garbage-collects the custom resources of a
# removed CustomResourceDefinition): on a cluster with Kueue, every ClusterQueue, LocalQueue or Workload of the kind.
CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition"
SYSTEM_POOL_NAME = "system"
_AZURE_VERSIONED = re.compile(r"^(azure-native:[^:/]+)/v\d{8}[a-z]*(:[^:]+)$")
_KUEUE_TYPE = re.compile(r"^kubernetes:kueue\.x-k8s\.io/[^:]+:(\w+)$")
_STEPS = FieldPath("steps")


@dataclass(frozen=True)
class Step:
    op: str
    urn: str
    type: str
    name: str
    old: Mapping[str, Any] = field(default_factory=dict)
    new: Mapping[str, Any] = field(default_factory=dict)
    replace_reasons: tuple[str, ...] = ()
    diff_reasons: tuple[str, ...] = ()

    def inputs(self) -> Mapping[str, Any]:
        return (self.old.get("inputs") or self.new.get("inputs") or {}) if isinstance(self.old, Mapping) else {}


@dataclass(frozen=True)
class Judged:
    step: Step
    entry: Optional[Entry]
    offending: bool
    why: str

    def line(self) -> str:
        reasons = list(self.step.replace_reasons) or list(self.step.diff_reasons)
        because = f"; Pulumi's reasons: {', '.join(reasons)}" if reasons else ""
        return f"{self.step.urn}: {self.step.op}: {self.why}{because}"

    def to_json(self) -> dict[str, Any]:
        return {"urn": self.step.urn, "op": self.step.op, "type": self.step.type,
                "entry": str(self.entry) if self.entry else None, "offending": self.offending,
                "replaceReasons": list(self.step.replace_reasons), "diffReasons": list(self.step.diff_reasons),
                "message": self.why}


def parent_types(urn: str) -> tuple[str, ...]:
    """The types of the resource's parents, outermost first, as its URN names them."""
    parts = urn.split("::")
    return tuple(parts[2].split("$")[:-1]) if len(parts) >= 4 else ()


def split_urn(urn: str) -> Optional[tuple[str, str]]:
    """`urn:pulumi:stack::project::parentType$type::name` -> (type, name); None for what is not a URN."""
    parts = urn.split("::")
    if len(parts) < 4 or not parts[0].startswith("urn:pulumi:"):
        return None
    return parts[2].rsplit("$", 1)[-1], "::".join(parts[3:])


def parse_plan(doc: Any, source: str = "") -> tuple[list[Step], Mapping[str, Any]]:
    """The steps and the config of a preview document read from file `source`; a LoadError naming the
    file and the step when it is not what `pulumi preview --json` prints."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("steps", []), list):
        raise LoadError(source, None, "not a `pulumi preview --json` document (a JSON object with `steps`)")
    if "steps" not in doc and "changeSummary" not in doc:
        raise LoadError(source, None,
                        "not a `pulumi preview --json` document: it has neither `steps` nor `changeSummary`")
    steps = []
    for index, raw in enumerate(doc.get("steps") or []):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("op"), str) or not isinstance(raw.get("urn"), str):
            raise LoadError(source, None, "has no `op` and `urn`", key=str(_STEPS.index(index)))
        split = split_urn(raw["urn"])
        if split is None:
            raise LoadError(source, None, f"{raw['urn']!r} is not a Pulumi URN",
                            key=str(_STEPS.index(index).child("urn")))
        kind, name = split
        old, new = raw.get("oldState") or {}, raw.get("newState") or {}
        steps.append(Step(raw["op"], raw["urn"], kind, name, old if isinstance(old, Mapping) else {},
                          new if isinstance(new, Mapping) else {},
                          tuple(str(r) for r in raw.get("replaceReasons") or ()),
                          tuple(str(r) for r in raw.get("diffReasons") or ())))
    config = doc.get("config") or {}
    return steps, config if isinstance(config, Mapping) else {}


def allowances_from_config(config: Mapping[str, Any], source: str = "") -> Allowances:
    """allowReplacement as a flat Pulumi config map holds it: JSON text, or already a list; a LoadError
    naming the file the config was read from (`source`) and the key when it cannot be read."""
    value = config.get(ALLOW_KEY)
    if value is None:
        return Allowances()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise LoadError(source, None, f"is not a list: {value[:60]!r}", key=ALLOW_KEY) from None
    if not isinstance(value, list):
        raise LoadError(source, None, "must be a list of entries", key=ALLOW_KEY)
    entries = []
    for index, text in enumerate(value):
        try:
            entries.append(parse_entry(text))
        except ValueError as error:
            raise LoadError(source, None, str(error), key=str(FieldPath(ALLOW_KEY).index(index))) from None
    return Allowances(entries)


def _metadata(inputs: Mapping[str, Any]) -> Mapping[str, Any]:
    """A step's `metadata` input, or none where it has none (a plan is what `pulumi preview --json` printed)."""
    found = inputs.get("metadata")
    return found if isinstance(found, Mapping) else {}


def canonical_type(token: str) -> str:
    """The type token without an azure-native API version: `azure-native:m/v20250901:T` -> `azure-native:m:T`."""
    match = _AZURE_VERSIONED.fullmatch(token)
    return f"{match.group(1)}{match.group(2)}" if match else token


def watched(step: Step) -> Optional[Entry]:
    """The allowReplacement entry that covers this step's resource, if it is one users depend on."""
    inputs = step.inputs()
    kind = canonical_type(step.type)
    if kind in (RESOURCE_GROUP, MANAGED_CLUSTER):
        return Entry(Target.RESOURCE_GROUP if kind == RESOURCE_GROUP else Target.CLUSTER)
    if kind == AGENT_POOL:
        pool = inputs.get("agentPoolName") or step.name.split("-", 1)[-1]
        if pool == SYSTEM_POOL_NAME or inputs.get("mode") == "System":
            return Entry(Target.SYSTEM_POOL)
        return Entry(Target.NODE_POOL, str(pool))
    extension = str(inputs.get("extensionType", "microsoft.kueue")).lower()
    if (kind == KUBERNETES_EXTENSION and extension == "microsoft.kueue"
            or kind == HELM_RELEASE and "kueue" in str(inputs.get("chart", "kueue"))):
        return Entry(Target.KUEUE)
    metadata = _metadata(inputs)
    if kind == NAMESPACE:
        return Entry(Target.NAMESPACE, str(metadata.get("name") or step.name.rsplit("namespace-", 1)[-1]))
    fleet = _fleet_link(step, kind, metadata)
    if fleet is not None:
        return fleet
    kueue = _KUEUE_TYPE.fullmatch(kind)
    if kueue and kueue.group(1) in QUEUE_KINDS:
        name, namespace = metadata.get("name"), metadata.get("namespace")
        if not isinstance(name, str):
            # queues-<kind>-<name> or queues-localqueue-<namespace>/<name> (names.logical_name)
            where = step.name.split(f"-{kueue.group(1).lower()}-", 1)[-1]
            namespace, _, name = where.rpartition("/") if "/" in where else (None, "", where)
        return queue_entry(kueue.group(1), namespace if isinstance(namespace, str) and namespace else None, name)
    return None


def _fleet_link(step: Step, kind: str, metadata: Mapping[str, Any]) -> Optional[Entry]:
    """A manager's worker (its MultiKueueCluster and kubeconfig Secret), or a worker's manager access."""
    name = metadata.get("name") if isinstance(metadata.get("name"), str) else None
    kueue = _KUEUE_TYPE.fullmatch(kind)
    if kueue and kueue.group(1) == "MultiKueueCluster":
        return worker_entry(name or step.name.split("-multikueuecluster-", 1)[-1])
    parents = parent_types(step.urn)
    if kind == "kubernetes:core/v1:Secret" and any(t.endswith(MANAGER_COMPONENT) for t in parents):
        # multikueue-<worker> in kueue-system, registered as <component>-kubeconfig-<worker>
        return worker_entry(name.removeprefix("multikueue-") if name else step.name.split("-kubeconfig-", 1)[-1])
    if kind in WORKER_ACCESS_TYPES and any(t.endswith(WORKER_COMPONENT) for t in parents):
        return MANAGER_ENTRY
    return None


def token_generation(step: Step) -> Optional[int]:
    """The generation of a worker's token Secret (multikueue-sa-token-<n>), else None."""
    if canonical_type(step.type) != "kubernetes:core/v1:Secret" or watched(step) != MANAGER_ENTRY:
        return None
    metadata = _metadata(step.inputs())
    match = _TOKEN_SECRET.search(str(metadata.get("name") or step.name))
    return int(match.group(1)) if match else None


def kept_generations(config: Mapping[str, Any]) -> Optional[frozenset[int]]:
    """The token generations a worker's config keeps (`aks-kueue:fleet.tokenGenerations`, [1] unless
    written); None when the config is not a readable worker's (absent, a secret, another role)."""
    value = config.get(FLEET_CONFIG_KEY)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, Mapping) or value.get("role") != "worker":
        return None
    generations = value.get("tokenGenerations", [1])
    if not isinstance(generations, list) or not all(isinstance(g, int) for g in generations):
        return None
    return frozenset(generations)


def _config_workers(step: Step, steps: list[Step]) -> tuple[list[str], bool]:
    """The workers a MultiKueueConfig lists, from its old inputs, else those whose MultiKueueCluster this
    plan destroys; and whether they were read from the config itself."""
    spec = step.inputs().get("spec")
    clusters = spec.get("clusters") if isinstance(spec, Mapping) else None
    if isinstance(clusters, list) and clusters and all(isinstance(c, str) for c in clusters):
        return list(clusters), True
    found = [str(e.name).split("/", 1)[1] for s in steps if s.op in DESTRUCTIVE
             and _KUEUE_TYPE.fullmatch(canonical_type(s.type)) and (e := watched(s)) is not None
             and e.target is Target.FLEET and e != MANAGER_ENTRY]
    return list(dict.fromkeys(found)), False


def _judge_config(step: Step, steps: list[Step], allowances: Allowances, effect: Effect, what: str) -> Judged:
    """A MultiKueueConfig goes with the workers it lists: it passes when each is listed."""
    name = step.name.split("-multikueueconfig-", 1)[-1]
    verb = "deletes" if effect is Effect.DELETE else "replaces"
    workers, read = _config_workers(step, steps)
    listed = [w for w in workers if worker_entry(w) in allowances]
    missing = [w for w in workers if worker_entry(w) not in allowances]
    entries = [e for e in allowances if e.target is Target.FLEET and e != MANAGER_ENTRY]
    if workers and not missing:
        return Judged(step, worker_entry(workers[0]), False,
                      f"MultiKueueConfig {name} goes with the workers it lists, each listed in {ALLOW_KEY} "
                      f"({', '.join(f'fleet.{FLEET_WORKERS}/{w}' for w in listed)})")
    if not read and not workers and entries:
        return Judged(step, entries[0], False,
                      f"MultiKueueConfig {name}'s clusters are not readable in this plan (a secret); passed on the "
                      f"fleet entries {ALLOW_KEY} lists ({', '.join(str(e) for e in entries)})")
    consequence = ("the manager's MultiKueue check goes inactive, and its ClusterQueues admit nothing until a "
                   "MultiKueueConfig is back")
    if not workers:
        return Judged(step, None, True,
                      f"{verb} MultiKueueConfig {name} ({what}), whose clusters this plan does not show (a secret): "
                      f"{consequence}; list the workers it held as fleet.{FLEET_WORKERS}/<name> in "
                      f"{ALLOW_KEY}")
    return Judged(step, worker_entry(missing[0]), True,
                  f"{verb} MultiKueueConfig {name} ({what}), which lists {', '.join(workers)}: {consequence}; "
                  f"{ALLOW_KEY} does not list {', '.join(f'fleet.{FLEET_WORKERS}/{w}' for w in missing)}")


def judge_plan(steps: list[Step], allowances: Allowances, kept_tokens: Optional[frozenset[int]] = None
               ) -> list[Judged]:
    """Every destructive step on a watched resource, offending unless allowed or retained; a step
    whose operation this gate does not know is offending on a watched resource. `kept_tokens`: the
    token generations the worker's config keeps (`kept_generations`), None when unknown."""
    judged = []
    for step in steps:
        known = OPERATIONS.get(step.op)
        if known is not None and step.op not in DESTRUCTIVE:
            continue
        kueue = _KUEUE_TYPE.fullmatch(canonical_type(step.type))
        config = kueue is not None and kueue.group(1) == "MultiKueueConfig"
        if canonical_type(step.type) == CRD_TYPE:
            judged.append(_judge_crd(step, known))
            continue
        entry = None if config else watched(step)
        if known is None:
            if config or entry is not None:
                judged.append(Judged(step, entry, True,
                                     f"{step.op!r} is not a step operation this check-plan knows (the "
                                     f"{len(OPERATIONS)} of Pulumi's step.go), so it cannot tell what it does to "
                                     f"{'the MultiKueueConfig' if config else entry}"))
            continue
        if config:
            judged.append(_judge_config(step, steps, allowances, *known))
            continue
        if entry is None:
            continue
        effect, what = known
        generation = token_generation(step) if step.op == "delete" else None
        if step.op in RETAINABLE and retained(step):
            judged.append(Judged(step, entry, False, f"{entry} is retained (retainOnDelete): nothing is deleted"))
        elif generation is not None and kept_tokens is not None and generation not in kept_tokens:
            judged.append(Judged(step, entry, False, f"token generation {generation} is no longer in "
                                                     f"{FLEET_CONFIG_KEY}.tokenGenerations: a rotation's last step "
                                                     "(the program refuses it while the manager still connects "
                                                     "with that token)"))
        elif entry in allowances:
            judged.append(Judged(step, entry, False, f"{entry} is listed in {ALLOW_KEY}"))
        else:
            verb = "deletes" if effect is Effect.DELETE else "replaces"
            judged.append(Judged(step, entry, True, f"{verb} {entry} ({what}), which {ALLOW_KEY} does "
                                                    f"not list{_not_retained(step)}"))
    return judged


def retained(step: Step) -> bool:
    """The old state marks the resource retainOnDelete: Pulumi's state holds a JSON boolean there, and only `true`
    is read as one (a text such as "false" is not: it would make a delete pass unjudged)."""
    return step.old.get("retainOnDelete") is True


def _not_retained(step: Step) -> str:
    value = step.old.get("retainOnDelete")
    if step.op not in RETAINABLE or value is None or isinstance(value, bool):
        return ""
    return (f" (its old state's retainOnDelete is {json.dumps(value)}, not the boolean true Pulumi writes, so it is "
            "not read as retained)")


def _judge_crd(step: Step, known: Optional[tuple[Effect, str]]) -> Judged:
    """A destructive step (or one of an operation this gate does not know) on a CustomResourceDefinition: it
    deletes every object of its kind; no allowReplacement entry covers that, so only a retained one passes."""
    metadata = _metadata(step.inputs())
    name = metadata.get("name") or step.name
    if step.op in RETAINABLE and retained(step):
        return Judged(step, None, False, f"CustomResourceDefinition {name} is retained (retainOnDelete): nothing is "
                                         "deleted")
    verb = ("replaces" if known[0] is Effect.REPLACE else "deletes") if known is not None else f"{step.op!r} on"
    return Judged(step, None, True,
                  f"{verb} CustomResourceDefinition {name}, and with it every object of that kind in the cluster "
                  f"(for a Kueue CRD, every ClusterQueue, LocalQueue or Workload of the kind){_not_retained(step)}; "
                  f"no {ALLOW_KEY} entry covers a CRD: keep it in the program, or set retainOnDelete on it and "
                  "remove it in a later update")
