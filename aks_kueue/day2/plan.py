"""`aks-kueue check-plan`: which steps of a `pulumi preview --json` plan destroy what users depend on.

The document is Pulumi's PreviewDigest (pulumi/pulumi `pkg/display/json.go`, `sdk/go/common/display`):
`steps[]` with `op`, `urn`, `oldState` and `newState` (apitype.ResourceV3: `type`, `inputs`,
`protect`, `retainOnDelete`, ...), `replaceReasons`, `diffReasons`, and `config` (secrets blinded).
A replacement shows as several steps (create-replacement, replace, delete-replaced, in the order
the replacement runs); each destructive one is judged, one line each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from aks_kueue.day2.allow import Allowances, Entry, Target

DESTRUCTIVE = ("replace", "delete", "create-replacement", "delete-replaced")
RETAINABLE = ("delete", "delete-replaced")   # retainOnDelete keeps the object: nothing is destroyed
ALLOW_CONFIG_KEY = "aks-kueue:allowReplacement"
SYSTEM_POOL_NAME = "system"


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


def watched(step: Step) -> Optional[Entry]:
    """The allowReplacement entry that covers this step's resource, if it is one users depend on."""
    inputs = step.inputs()
    if step.type == "azure-native:resources:ResourceGroup":
        return Entry(Target.RESOURCE_GROUP)
    if step.type == "azure-native:containerservice:ManagedCluster":
        return Entry(Target.CLUSTER)
    if step.type == "azure-native:containerservice:AgentPool":
        pool = inputs.get("agentPoolName") or step.name.split("-", 1)[-1]
        if pool == SYSTEM_POOL_NAME or inputs.get("mode") == "System":
            return Entry(Target.SYSTEM_POOL)
        return Entry(Target.NODE_POOL, str(pool))
    if step.type == "azure-native:kubernetesconfiguration:Extension":
        if str(inputs.get("extensionType", "microsoft.kueue")).lower() == "microsoft.kueue":
            return Entry(Target.KUEUE)
    if step.type == "kubernetes:helm.sh/v3:Release":
        if "kueue" in str(inputs.get("chart", "kueue")):
            return Entry(Target.KUEUE)
    if step.type == "kubernetes:core/v1:Namespace":
        metadata = inputs.get("metadata") or {}
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        return Entry(Target.NAMESPACE, str(name or step.name.rsplit("namespace-", 1)[-1]))
    return None


def judge_plan(steps: list[Step], allowances: Allowances) -> list[Judged]:
    """Every destructive step on a watched resource, offending unless allowed or retained."""
    judged = []
    for step in steps:
        if step.op not in DESTRUCTIVE:
            continue
        entry = watched(step)
        if entry is None:
            continue
        if step.op in RETAINABLE and step.old.get("retainOnDelete"):
            judged.append(Judged(step, entry, False, f"{entry} is retained (retainOnDelete): nothing is deleted"))
        elif entry in allowances:
            judged.append(Judged(step, entry, False, f"{entry} is listed in {ALLOW_CONFIG_KEY}"))
        else:
            verb = "deletes" if step.op in RETAINABLE else "replaces"
            judged.append(Judged(step, entry, True, f"{verb} {entry}, which {ALLOW_CONFIG_KEY} does not list"))
    return judged
