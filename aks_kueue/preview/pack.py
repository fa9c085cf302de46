"""The pack run over an offline preview the way the Pulumi engine runs it, and its verdicts.

`evaluate` drives pulumi_policy's own analyzer servicer, the object a `PolicyPack` serves
over gRPC, with the messages the engine would send: `Configure` with the reconciled
config, `ConfigureStack`, `Analyze` for each resource (resource policies see inputs) and
`AnalyzeStack` once (stack policies see outputs, which during a preview are the inputs
propagated, unknowns left unknown). Properties travel as protobuf Structs with the
engine's unknown sentinels and secret markers; pulumi_policy decodes them as in a real run.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

from google.protobuf import struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel
from pulumi_policy.policy import _PolicyAnalyzerServicer

from aks_kueue.policies import PACK_NAME, PACK_VERSION, POLICIES
from aks_kueue.policies.base import same_resources
from aks_kueue.policies.config import config_error, reconcile
from aks_kueue.preview.recorder import UNKNOWN, UNKNOWN_TEXT

_SIG = "4dabf18193072939515e22adb298388d"
_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
_LEVELS = {analyzer_pb2.ADVISORY: "advisory", analyzer_pb2.MANDATORY: "mandatory",
           analyzer_pb2.REMEDIATE: "mandatory", analyzer_pb2.DISABLED: "disabled"}
_PROTO_LEVEL = {"advisory": analyzer_pb2.ADVISORY, "mandatory": analyzer_pb2.MANDATORY,
                "remediate": analyzer_pb2.REMEDIATE, "disabled": analyzer_pb2.DISABLED}


MANDATORY = "mandatory"
ADVISORY = "advisory"


@dataclass(frozen=True)
class Violation:
    """One verdict of the pack: the policy, its enforcement level, the resource, the message."""

    policy: str
    enforcement_level: str
    urn: Optional[str]
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"policy": self.policy, "enforcementLevel": self.enforcement_level, "urn": self.urn,
                "message": self.message}


class PolicyConfigError(Exception):
    """The --policy-config file cannot be used; the message is a sentence for the user."""


def load_policy_config(path: Path) -> dict[str, Any]:
    """The JSON of `pulumi preview --policy-pack-config`, checked as the engine checks it, and stricter:
    an unknown policy or property is an error too."""
    from aks_kueue.k8s.loader import LoadError, loads_json, read_text

    try:
        # Bounded like every file the program reads: size, nesting, duplicated keys.
        config = loads_json(read_text(path, what="the policy config (JSON)"), str(path))
    except LoadError as error:
        raise PolicyConfigError(f"{error.source}: cannot read the policy config: {error.reason}") from None
    problem = policy_config_error(config)
    if problem:
        raise PolicyConfigError(f"{path}: {problem}")
    return config


def levels(config: Optional[dict]) -> dict[str, str]:
    """Each policy's enforcement level after the config: policy name -> mandatory, advisory, disabled."""
    return {name: level for name, (level, _) in reconcile(POLICIES, config).items()}


def properties(config: Optional[dict], policy: str) -> dict[str, Any]:
    return reconcile(POLICIES, config)[policy][1]


def evaluate(run: Any, config: Optional[dict] = None) -> list[Violation]:
    """Every policy of the pack over a recorded offline preview, with `config` in the JSON shape of
    `pulumi preview --policy-pack-config`, mandatory ones first. Disabled policies report nothing; a
    value unknown during preview gives the runtime's advisory "can't run policy ... during preview".
    ValueError on an invalid config."""
    found, sent = run_pack(PACK_NAME, PACK_VERSION, POLICIES, run, config)
    _last_sent.update(run=_reference(run), resources=sent)
    return sorted(found, key=lambda v: v.enforcement_level != MANDATORY)


# The resources of the last AnalyzeStack request `evaluate` made, and the run they were read from.
_last_sent: dict[str, Any] = {"run": None, "resources": None}


def _reference(run: Any) -> Callable[[], Any]:
    try:
        return weakref.ref(run)
    except TypeError:  # an object that takes no weak reference: held until the next evaluate
        return lambda: run


def rejected(violations: Iterable[Violation]) -> bool:
    """The contract's exit rule: any mandatory violation rejects the stack (exit 1)."""
    return any(v.enforcement_level == MANDATORY for v in violations)


def policy_view(run: Any) -> list[Any]:
    """The recorded resources exactly as the servicer hands them to a stack policy (decoded from the
    same protobuf, wrapped in the unknown-checking proxy), so that reading them here gives the same
    model as the policies had."""
    return stack_view(analyzer_resources(run))


def judged_view(run: Any) -> list[Any]:
    """`policy_view` of a run `evaluate` has just judged, decoded from the very messages its stack
    policies read: equal to their view to the order of every mapping, so that
    `policies/base.read_and_judge` finds the judgement they remembered rather than judging again."""
    if _last_sent["run"] is not None and _last_sent["run"]() is run:
        return stack_view(_last_sent["resources"])
    return policy_view(run)


def stack_view(resources: Iterable[analyzer_pb2.AnalyzerResource]) -> list[Any]:
    """These AnalyzerResources as the servicer hands them to a stack policy."""
    from google.protobuf import json_format
    from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions
    from pulumi_policy.deserialize import deserialize_properties
    from pulumi_policy.proxy import unknown_checking_proxy

    built, dependencies = {}, {}
    for r in resources:
        opts = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0),
                                     list(r.options.additionalSecretOutputs), r.options.parent or None)
        props = unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(r.properties)))
        built[r.urn] = PolicyResource(r.type, props, r.urn, r.name, opts, None, None, [], {})
        dependencies[r.urn] = list(r.dependencies)
    for urn, resource in built.items():
        resource.dependencies.extend(built[d] for d in dependencies[urn] if d in built)
    return list(built.values())


def run_pack(name: str, version: str, policies: list, run: Any,
             config: Optional[dict]) -> tuple[list[Violation], Sequence[Any]]:
    """The violations, in policy order, and the resources of the AnalyzeStack request."""
    servicer = _PolicyAnalyzerServicer(name, version, policies, EnforcementLevel.ADVISORY)
    servicer.Configure(configure_request(policies, config), None)
    servicer.ConfigureStack(analyzer_pb2.AnalyzerStackConfigureRequest(
        stack=getattr(run, "stack", ""), project=getattr(run, "project", ""), dry_run=True), None)
    found: list[Violation] = []
    resources = analyzer_resources(run)
    for resource in resources:
        request = analyzer_pb2.AnalyzeRequest(type=resource.type, properties=resource.properties, urn=resource.urn,
                                              name=resource.name, options=resource.options)
        if resource.HasField("provider"):
            request.provider.CopyFrom(resource.provider)
        # A resource policy's diagnostic is about the resource analysed.
        found += [violation(d, resource.urn) for d in servicer.Analyze(request, None).diagnostics]
    stack_request = analyzer_pb2.AnalyzeStackRequest(resources=resources)
    with same_resources():
        response = servicer.AnalyzeStack(stack_request, None)
    found += [violation(d, d.urn or None) for d in response.diagnostics]
    order = {p.name: i for i, p in enumerate(policies)}
    return sorted(found, key=lambda v: (order.get(v.policy, len(order)), v.urn or "", v.message)), \
        stack_request.resources


def configure_request(policies: list, config: Optional[dict]) -> analyzer_pb2.ConfigureAnalyzerRequest:
    """The reconciled config with every level sent explicitly: the proto enum's zero value is ADVISORY."""
    return analyzer_pb2.ConfigureAnalyzerRequest(policyConfig={
        policy: analyzer_pb2.PolicyConfig(enforcementLevel=_PROTO_LEVEL[level], properties=_struct(props))
        for policy, (level, props) in reconcile(policies, config).items()})


def analyzer_resources(run: Any) -> list[analyzer_pb2.AnalyzerResource]:
    """Every recorded registration as the engine hands it to AnalyzeStack, in the record's order."""
    registrations = list(getattr(run, "resources", None) or run.registrations)
    by_urn = {r.urn: r for r in registrations}
    return [_analyzer_resource(r, by_urn) for r in registrations]


def _analyzer_resource(registration: Any, by_urn: dict) -> analyzer_pb2.AnalyzerResource:
    resource = analyzer_pb2.AnalyzerResource(
        type=registration.type, urn=registration.urn, name=registration.name,
        properties=_struct(wire_inputs(registration)), parent=registration.parent or "",
        dependencies=list(registration.depends_on),
        options=analyzer_pb2.AnalyzerResourceOptions(
            parent=registration.parent or "",
            additionalSecretOutputs=list(getattr(registration, "additional_secret_outputs", []) or [])))
    provider = by_urn.get(registration.provider) if registration.provider else None
    if provider is not None:
        resource.provider.CopyFrom(analyzer_pb2.AnalyzerProviderResource(
            type=provider.type, urn=provider.urn, name=provider.name, properties=_struct(wire_inputs(provider))))
    return resource


def wire_inputs(registration: Any) -> dict:
    """The inputs as the engine marshals them for an analyzer: secrets kept as secret markers,
    unknowns as the unknown sentinel, resource references as their URN (no KeepResources)."""
    raw = getattr(registration, "raw_inputs", None)
    return _wire(raw if raw else registration.inputs)


def _wire(value: Any) -> Any:
    if isinstance(value, dict):
        if value.get(_SIG) == _RESOURCE_SIG:
            return value.get("id") or value.get("urn") or UNKNOWN
        return {str(k): _wire(v) for k, v in value.items()}  # a protobuf Struct has text keys only
    if isinstance(value, list):
        return [_wire(v) for v in value]
    if value == UNKNOWN_TEXT:  # a record that kept only the display form of an unknown
        return UNKNOWN
    return value


def _struct(values: dict) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(values)
    return struct


def violation(diagnostic, urn: Optional[str]) -> Violation:
    message = diagnostic.message
    # The servicer puts the policy's description before what the policy reported.
    if diagnostic.description and message.startswith(diagnostic.description + "\n"):
        message = message[len(diagnostic.description) + 1:]
    return Violation(diagnostic.policyName, _LEVELS[diagnostic.enforcementLevel], urn, message)


def policy_config_error(config: Any) -> Optional[str]:
    """A sentence saying what is wrong with a policy config, or None when it is valid."""
    return config_error(POLICIES, config)
