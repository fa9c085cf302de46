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
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Mapping, Optional

from aks_kueue.day2.allow import QUEUE_KINDS, Allowances, Entry, Target, queue_entry


class Effect(str, Enum):
    """What a step does to the resource it names."""

    NONE = "none"          # nothing in the cloud or the cluster changes
    CREATE = "create"
    UPDATE = "update"
    REPLACE = "replace"    # a replacement: the resource as it is now is destroyed
    DELETE = "delete"      # the resource is gone after this update

    def __str__(self) -> str:
        return self.value


# pkg/resource/deploy/step.go StepOps, in its order, with what each does (the functions named are
# where the engine makes the step).
OPERATIONS: dict[str, tuple[Effect, str]] = {
    "same": (Effect.NONE, "unchanged"),
    "create": (Effect.CREATE, "created"),
    "update": (Effect.UPDATE, "updated in place"),
    "delete": (Effect.DELETE, "deleted (DeleteStep)"),
    "replace": (Effect.REPLACE, "replaced (ReplaceStep, the logical step of a replacement)"),
    "create-replacement": (Effect.REPLACE, "replaced: its replacement is created (CreateStep of a replacement)"),
    "delete-replaced": (Effect.DELETE, "the replaced resource is deleted (DeleteStep of a replacement)"),
    "read": (Effect.NONE, "read, as a data source"),
    "read-replacement": (Effect.REPLACE, "replaced by a read of another id: the managed resource is marked for "
                                         "deletion (GenerateReadSteps)"),
    "refresh": (Effect.NONE, "refreshed in the state"),
    "discard": (Effect.NONE, "a read resource dropped from the state; nothing is deleted (DeleteStep of an "
                             "external resource)"),
    "discard-replaced": (Effect.NONE, "a replaced read resource dropped from the state; nothing is deleted"),
    "remove-pending-replace": (Effect.DELETE, "deleted: an earlier delete-before-replace deleted it and its "
                                              "replacement was never created; this step drops it from the state "
                                              "(RemovePendingReplaceStep)"),
    "import": (Effect.NONE, "imported as it is"),
    "import-replacement": (Effect.REPLACE, "replaced by an imported resource: the one in the state is deleted "
                                           "(ImportStep of a replacement)"),
    "diff": (Effect.NONE, "compared with an imported resource"),
    "extend-parameterize": (Effect.NONE, "a provider's parameterization applied"),
}
DESTRUCTIVE = tuple(op for op, (effect, _) in OPERATIONS.items() if effect in (Effect.REPLACE, Effect.DELETE))
# retainOnDelete makes the delete a no-op in DeleteStep.Apply (and the earlier delete of a pending
# replacement was one): nothing is destroyed.
RETAINABLE = ("delete", "delete-replaced", "remove-pending-replace")
ALLOW_CONFIG_KEY = "aks-kueue:allowReplacement"
SYSTEM_POOL_NAME = "system"
_AZURE_VERSIONED = re.compile(r"^(azure-native:[^:/]+)/v\d{8}[a-z]*(:[^:]+)$")
_KUEUE_TYPE = re.compile(r"^kubernetes:kueue\.x-k8s\.io/[^:]+:(\w+)$")


class PlanError(Exception):
    """The file is not what `pulumi preview --json` prints; the message says why."""


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


def split_urn(urn: str) -> tuple[str, str]:
    """`urn:pulumi:stack::project::parentType$type::name` -> (type, name)."""
    parts = urn.split("::")
    if len(parts) < 4 or not parts[0].startswith("urn:pulumi:"):
        raise PlanError(f"{urn!r} is not a Pulumi URN")
    return parts[2].rsplit("$", 1)[-1], "::".join(parts[3:])


def parse_plan(doc: Any) -> tuple[list[Step], Mapping[str, Any]]:
    """The steps and the config of a preview document."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("steps", []), list):
        raise PlanError("not a `pulumi preview --json` document (a JSON object with `steps`)")
    if "steps" not in doc and "changeSummary" not in doc:
        raise PlanError("not a `pulumi preview --json` document: it has neither `steps` nor `changeSummary`")
    steps = []
    for index, raw in enumerate(doc.get("steps") or []):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("op"), str) or not isinstance(raw.get("urn"), str):
            raise PlanError(f"steps[{index}] has no `op` and `urn`")
        kind, name = split_urn(raw["urn"])
        old, new = raw.get("oldState") or {}, raw.get("newState") or {}
        steps.append(Step(raw["op"], raw["urn"], kind, name, old if isinstance(old, Mapping) else {},
                          new if isinstance(new, Mapping) else {},
                          tuple(str(r) for r in raw.get("replaceReasons") or ()),
                          tuple(str(r) for r in raw.get("diffReasons") or ())))
    config = doc.get("config") or {}
    return steps, config if isinstance(config, Mapping) else {}


def allowances_from_config(config: Mapping[str, Any]) -> Allowances:
    """allowReplacement as a flat Pulumi config map holds it: JSON text, or already a list."""
    value = config.get(ALLOW_CONFIG_KEY)
    if value is None:
        return Allowances()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise PlanError(f"{ALLOW_CONFIG_KEY} is not a list: {value[:60]!r}") from None
    if not isinstance(value, list):
        raise PlanError(f"{ALLOW_CONFIG_KEY} must be a list of entries")
    try:
        return Allowances.parse(value)
    except ValueError as error:
        raise PlanError(f"{ALLOW_CONFIG_KEY}: {error}") from None


def canonical_type(token: str) -> str:
    """The type token without an azure-native API version: `azure-native:m/v20250901:T` -> `azure-native:m:T`."""
    match = _AZURE_VERSIONED.fullmatch(token)
    return f"{match.group(1)}{match.group(2)}" if match else token


def watched(step: Step) -> Optional[Entry]:
    """The allowReplacement entry that covers this step's resource, if it is one users depend on."""
    inputs = step.inputs()
    kind = canonical_type(step.type)
    if kind == "azure-native:resources:ResourceGroup":
        return Entry(Target.RESOURCE_GROUP)
    if kind == "azure-native:containerservice:ManagedCluster":
        return Entry(Target.CLUSTER)
    if kind == "azure-native:containerservice:AgentPool":
        pool = inputs.get("agentPoolName") or step.name.split("-", 1)[-1]
        if pool == SYSTEM_POOL_NAME or inputs.get("mode") == "System":
            return Entry(Target.SYSTEM_POOL)
        return Entry(Target.NODE_POOL, str(pool))
    if kind == "azure-native:kubernetesconfiguration:Extension":
        if str(inputs.get("extensionType", "microsoft.kueue")).lower() == "microsoft.kueue":
            return Entry(Target.KUEUE)
    if kind == "kubernetes:helm.sh/v3:Release":
        if "kueue" in str(inputs.get("chart", "kueue")):
            return Entry(Target.KUEUE)
    metadata = inputs.get("metadata") if isinstance(inputs.get("metadata"), Mapping) else {}
    if kind == "kubernetes:core/v1:Namespace":
        return Entry(Target.NAMESPACE, str(metadata.get("name") or step.name.rsplit("namespace-", 1)[-1]))
    kueue = _KUEUE_TYPE.fullmatch(kind)
    if kueue and kueue.group(1) in QUEUE_KINDS:
        name, namespace = metadata.get("name"), metadata.get("namespace")
        if not isinstance(name, str):
            # queues-<kind>-<name> or queues-localqueue-<namespace>/<name> (names.logical_name)
            where = step.name.split(f"-{kueue.group(1).lower()}-", 1)[-1]
            namespace, _, name = where.rpartition("/") if "/" in where else (None, "", where)
        return queue_entry(kueue.group(1), namespace if isinstance(namespace, str) and namespace else None, name)
    return None


def judge_plan(steps: list[Step], allowances: Allowances) -> list[Judged]:
    """Every destructive step on a watched resource, offending unless allowed or retained; a step
    whose operation this gate does not know is offending on a watched resource."""
    judged = []
    for step in steps:
        known = OPERATIONS.get(step.op)
        if known is not None and step.op not in DESTRUCTIVE:
            continue
        entry = watched(step)
        if entry is None:
            continue
        if known is None:
            judged.append(Judged(step, entry, True, f"{step.op!r} is not a step operation this check-plan knows "
                                                    f"(the {len(OPERATIONS)} of Pulumi's step.go), so it cannot "
                                                    f"tell what it does to {entry}"))
            continue
        effect, what = known
        if step.op in RETAINABLE and step.old.get("retainOnDelete"):
            judged.append(Judged(step, entry, False, f"{entry} is retained (retainOnDelete): nothing is deleted"))
        elif entry in allowances:
            judged.append(Judged(step, entry, False, f"{entry} is listed in {ALLOW_CONFIG_KEY}"))
        else:
            verb = "deletes" if effect is Effect.DELETE else "replaces"
            judged.append(Judged(step, entry, True, f"{verb} {entry} ({what}), which {ALLOW_CONFIG_KEY} does "
                                                    "not list"))
    return judged
