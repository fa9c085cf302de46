"""The pack run over an offline preview the way the Pulumi engine runs it, and its verdicts.

`evaluate` drives pulumi_policy's own analyzer servicer, the object a `PolicyPack` serves
over gRPC, with the messages the engine would send: `Configure` with the reconciled
config, `ConfigureStack`, `Analyze` for each resource (resource policies see inputs) and
`AnalyzeStack` once (stack policies see outputs, which during a preview are the inputs
propagated, unknowns left unknown). Properties travel as protobuf Structs with the
engine's unknown sentinels and secret markers; pulumi_policy decodes them as in a real run.
"""

from __future__ import annotations

import dataclasses
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Optional, Sequence

from google.protobuf import struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel

from aks_kueue.compat import SERVICER_READS, PolicyAnalyzerServicer as _PolicyAnalyzerServicer, resolve
from aks_kueue.k8s.field import FieldError
from aks_kueue.policies import PACK_NAME, PACK_VERSION, POLICIES
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


def load_policy_config(path: Path) -> dict[str, Any]:
    """The JSON of `pulumi preview --policy-pack-config`, checked as the engine checks it, and stricter:
    an unknown policy or property is an error too. A LoadError names the file and, where one is at
    fault, the policy and property (`kueue-quota-fits-capacity.vmOverheadPercent`)."""
    from aks_kueue.k8s.loader import LoadError, loads_json, read_text

    try:
        # Bounded like every file the program reads: size, nesting, duplicated keys.
        config = loads_json(read_text(path, what="the policy config (JSON)"), str(path))
    except LoadError as error:
        raise dataclasses.replace(error, reason=f"cannot read the policy config: {error.reason}") from None
    problem = policy_config_error(config)
    if problem:
        raise LoadError.at(str(path), problem)
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
    found, sent, decoding = run_pack(PACK_NAME, PACK_VERSION, POLICIES, run, config)
    _last_sent.update(run=_reference(run), resources=sent, decoding=decoding)
    return sorted(found, key=lambda v: v.enforcement_level != MANDATORY)


# The resources of the last AnalyzeStack request `evaluate` made, the run they were read from, and
# the decoding its stack policies read them through.
_last_sent: dict[str, Any] = {"run": None, "resources": None, "decoding": None}


def _reference(run: Any) -> Callable[[], Any]:
    try:
        return weakref.ref(run)
    except TypeError:  # an object that takes no weak reference: held until the next evaluate
        return lambda: run


def policy_view(run: Any) -> list[Any]:
    """The recorded resources exactly as the servicer hands them to a stack policy (decoded from the
    same protobuf, wrapped in the unknown-checking proxy), so that reading them here gives the same
    model as the policies had."""
    with decoded_once() as decoding:
        return stack_view(analyzer_resources(run), decoding.decode)


def judged_view(run: Any) -> list[Any]:
    """`policy_view` of a run `evaluate` has just judged, through the very decoding its stack policies
    read: the same values, so that `policies/base.read_and_judge` finds the judgement they remembered
    by identity rather than reading or fingerprinting them again."""
    if _last_sent["run"] is not None and _last_sent["run"]() is run:
        return stack_view(_last_sent["resources"], _last_sent["decoding"].decode)
    return policy_view(run)


def stack_view(resources: Iterable[analyzer_pb2.AnalyzerResource], decode: Callable[[Any], Any]) -> list[Any]:
    """These AnalyzerResources as the servicer hands them to a stack policy, their properties decoded by
    `decode` (a `decoded_once` decoding: shared as the servicer's run shares them)."""
    from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions

    built, dependencies = {}, {}
    for r in resources:
        opts = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0),
                                     list(r.options.additionalSecretOutputs), r.options.parent or None)
        built[r.urn] = PolicyResource(r.type, decode(r.properties), r.urn, r.name, opts, None, None, [], {})
        dependencies[r.urn] = list(r.dependencies)
    for urn, resource in built.items():
        resource.dependencies.extend(built[d] for d in dependencies[urn] if d in built)
    return list(built.values())


def run_pack(name: str, version: str, policies: list, run: Any,
             config: Optional[dict]) -> tuple[list[Violation], Sequence[Any], Decoding]:
    """The violations, in policy order, the resources of the AnalyzeStack request, and the decoding
    its stack policies read them through."""
    servicer = _PolicyAnalyzerServicer(name, version, policies, EnforcementLevel.ADVISORY)
    servicer.Configure(configure_request(policies, config), None)
    servicer.ConfigureStack(analyzer_pb2.AnalyzerStackConfigureRequest(
        stack=getattr(run, "stack", ""), project=getattr(run, "project", ""), dry_run=True), None)
    found: list[Violation] = []
    resources = analyzer_resources(run)
    with decoded_once() as decoding:
        # A resource's options and provider are built once, not once per stack policy: the servicer's
        # own methods, remembered per request, on this servicer alone.
        for method in SERVICER_READS:
            setattr(servicer, method, decoding.remembered(method, resolve(f"servicer.{method}").__get__(servicer)))
        found += _analyze_each(servicer, resources)
        response = servicer.AnalyzeStack(_StackRequest(resources), None)
    found += [violation(d, d.urn or None) for d in response.diagnostics]
    order = {p.name: i for i, p in enumerate(policies)}
    return sorted(found, key=lambda v: (order.get(v.policy, len(order)), v.urn or "", v.message)), resources, decoding


class _Resource:
    """An AnalyzerResource as the servicer's AnalyzeStack reads it: the same values, read from the
    message once rather than once per stack policy (each read of a protobuf field builds a new
    Python object); any other attribute is the message's own."""

    __slots__ = ("message", "type", "urn", "name", "properties", "parent", "dependencies", "propertyDependencies")

    def __init__(self, message: analyzer_pb2.AnalyzerResource):
        self.message = message
        self.type, self.urn, self.name, self.parent = message.type, message.urn, message.name, message.parent
        self.properties = message.properties
        self.dependencies = list(message.dependencies)
        self.propertyDependencies = dict(message.propertyDependencies)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.message, name)


class _StackRequest:
    """An AnalyzeStackRequest of `_Resource`s: its one field the servicer reads."""

    def __init__(self, resources: Sequence[analyzer_pb2.AnalyzerResource]):
        self.resources = [_Resource(r) for r in resources]


def _analyze_each(servicer: _PolicyAnalyzerServicer, resources: list) -> list[Violation]:
    """`Analyze` for each resource, as the engine calls it: resource policies see inputs."""
    found: list[Violation] = []
    for resource in resources:
        request = analyzer_pb2.AnalyzeRequest(type=resource.type, properties=resource.properties, urn=resource.urn,
                                              name=resource.name, options=resource.options)
        if resource.HasField("provider"):
            request.provider.CopyFrom(resource.provider)
        # A resource policy's diagnostic is about the resource analysed.
        found += [violation(d, resource.urn) for d in servicer.Analyze(request, None).diagnostics]
    return found


class Decoding(NamedTuple):
    """What `decoded_once` yields: `decode(struct)` decodes one Struct as the servicer does, sharing
    the values it decoded; `remembered(step, function)` is `function` computed once per argument."""

    decode: Callable[[struct_pb2.Struct], Any]
    remembered: Callable[[str, Callable[..., Any]], Callable[..., Any]]


@contextmanager
def decoded_once() -> Iterator[Decoding]:
    """While open, pulumi_policy's servicer decodes each distinct property Struct once.

    The servicer decodes every resource of an AnalyzeStack request again for each stack policy
    (protobuf to dict, secrets and unknowns, the read-only proxy), and each resource's provider
    again for each resource: with 29 stack policies that was two fifths of a large organisation's
    preview. Here the three steps it calls are remembered: a Struct by its deterministic bytes
    (equal bytes, equal content), the later steps by the very object the earlier step returned
    (kept alive, so an id is never reused). Every policy then reads the same read-only values it
    would have read decoded afresh; the pack as the Pulumi engine runs it is untouched and decodes
    as pulumi_policy does. One offline run at a time: the servicer module's names are swapped for
    the duration and put back. The decoding it yields stays usable afterwards, for views that must
    share values with the policies' resources."""
    import pulumi_policy.policy as policy_module

    servicer_module: Any = policy_module  # its three helpers are swapped for the remembering ones below
    from google.protobuf import json_format

    structs: dict[bytes, Any] = {}
    # The very Struct seen again (the servicer walks one request once per stack policy), held so
    # that its id is never reused: found without serializing it again.
    by_id: dict[int, tuple[Any, Any]] = {}
    later: dict[tuple, tuple[Any, Any]] = {}

    class _JsonFormat:
        def __getattr__(self, name: str) -> Any:
            return getattr(json_format, name)

        @staticmethod
        def MessageToDict(message: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 - protobuf's name
            if args or kwargs or not isinstance(message, struct_pb2.Struct):
                return json_format.MessageToDict(message, *args, **kwargs)
            seen = by_id.get(id(message))
            if seen is not None and seen[0] is message:
                return seen[1]
            key = message.SerializeToString(deterministic=True)
            if key not in structs:
                structs[key] = json_format.MessageToDict(message)
            by_id[id(message)] = (message, structs[key])
            return structs[key]

    def remembered(step: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def call(value: Any, *args: Any) -> Any:
            key = (step, id(value), args)
            if key not in later:
                later[key] = (value, function(value, *args))
            return later[key][1]
        return call

    saved = (servicer_module.json_format, servicer_module.deserialize_properties,
             servicer_module.unknown_checking_proxy)
    steps = (_JsonFormat(), remembered("deserialize", saved[1]), remembered("proxy", saved[2]))
    (servicer_module.json_format, servicer_module.deserialize_properties,
     servicer_module.unknown_checking_proxy) = steps
    try:
        yield Decoding(lambda struct: steps[2](steps[1](steps[0].MessageToDict(struct))), remembered)
    finally:
        (servicer_module.json_format, servicer_module.deserialize_properties,
         servicer_module.unknown_checking_proxy) = saved


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


def policy_config_error(config: Any) -> Optional[FieldError]:
    """What is wrong with a policy config, at its key (`str()` is the sentence), or None when it is valid."""
    return config_error(POLICIES, config)
