"""A mock monitor that keeps every registration as the engine would receive it."""

from __future__ import annotations

import asyncio
import inspect
import re
from dataclasses import dataclass, field
from typing import Any

import pulumi
from google.protobuf import json_format, struct_pb2
from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.proto import resource_pb2

_API_VERSION_TYPE = re.compile(r"^[a-z0-9-]+:[A-Za-z0-9]+/v\d{8}[a-z]*:")
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
_SIG = "4dabf18193072939515e22adb298388d"
_SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
UNKNOWN_TEXT = "[unknown]"
SECRET_TEXT = "[secret]"


@dataclass
class Registration:
    urn: str
    type: str
    name: str
    custom: bool
    parent: str | None
    depends_on: list[str]
    provider: str | None
    inputs: dict[str, Any]
    secret_paths: list[str] = field(default_factory=list)
    # The inputs as they went over the wire (secret markers and unknown sentinels intact),
    # and the outputs the program asked to keep secret: what the policy pack is handed.
    raw_inputs: dict[str, Any] = field(default_factory=dict)
    additional_secret_outputs: list[str] = field(default_factory=list)
    # The resource options the engine receives (protect, retainOnDelete, aliases, ...).
    options: dict[str, Any] = field(default_factory=dict)


def api_version_alias(alias: Any) -> bool:
    """One of the aliases a provider SDK's typed class adds for every API-version type token its
    resource ever had (`pulumi.Alias(type_="azure-native:containerservice/v20190201:AgentPool")`):
    a type alone, nothing of this program's names. `resource_options` leaves them out."""
    return (isinstance(alias, pulumi.Alias) and alias.name is ... and alias.parent is ... and alias.stack is ...
            and alias.project is ... and isinstance(alias.type_, str) and bool(_API_VERSION_TYPE.match(alias.type_)))


def resource_options(request) -> dict[str, Any]:
    """The options of one RegisterResourceRequest, in the contract's names."""
    timeouts = request.customTimeouts if request.HasField("customTimeouts") else None
    aliases: list[Any] = list(request.aliasURNs)
    for alias in request.aliases:
        if alias.urn:
            aliases.append(alias.urn)
            continue
        spec = alias.spec
        # The provider SDKs alias every API-version type token of a resource; those say
        # nothing about this program's names, so only the program's own aliases are shown.
        if not spec.name and spec.type and _API_VERSION_TYPE.match(spec.type):
            continue
        found = json_format.MessageToDict(spec, preserving_proto_field_name=True)
        aliases.append({k: v for k, v in found.items() if v != ""})
    return {
        "protect": bool(request.protect) if request.HasField("protect") else False,
        "retainOnDelete": bool(request.retainOnDelete) if request.HasField("retainOnDelete") else False,
        "ignoreChanges": list(request.ignoreChanges),
        "replaceOnChanges": list(request.replaceOnChanges),
        "deleteBeforeReplace": bool(request.deleteBeforeReplace),
        "additionalSecretOutputs": list(request.additionalSecretOutputs),
        "customTimeouts": {k: v for k, v in (("create", timeouts.create), ("update", timeouts.update),
                                             ("delete", timeouts.delete)) if v} if timeouts else {},
        "aliases": aliases,
        **({"import": request.importId} if request.importId else {}),
    }


_NO_OPTIONS = resource_options(resource_pb2.RegisterResourceRequest())  # a read's: every option unset
# Components whose registered outputs the offline preview reads (the day-2 guard's findings).
REPORTING_COMPONENTS = ("aksKueue:index:Day2Guard",)


class RecordingMonitor(MockMonitor):
    def __init__(self, mocks):
        super().__init__(mocks)
        self.registrations: list[Registration] = []
        # What the reporting components registered as their outputs (register_outputs), by URN.
        self.component_outputs: dict[str, Any] = {}

    def _echo(self, request):
        """A preview's outputs are its inputs (OfflineMocks), so for such resources the wire
        object goes back as it came, without the mock monitor's decode and re-encode."""
        echo = getattr(self.mocks, "echo", None)
        copied = echo(request.type) if echo is not None and request.type != "pulumi:pulumi:Stack" else None
        if copied is None:
            return None
        urn = self.make_urn(request.parent, request.type, request.name)
        self.resources[urn] = MockMonitor.ResourceRegistration(urn, "", {})
        outputs = request.object
        if copied and copied[0] in request.object.fields:
            outputs = struct_pb2.Struct()
            outputs.CopyFrom(request.object)
            outputs.fields["name"].CopyFrom(request.object.fields[copied[0]])
        return resource_pb2.RegisterResourceResponse(urn=urn, id="", object=outputs)

    def ReadResource(self, request):
        """A read (the day-2 guard's StackReference) is part of the program too: `pulumi
        preview` shows it as a `read` step, and resources that wait for it name it."""
        response = super().ReadResource(request)
        self._record(request, response.urn, request.properties, True, options={**_NO_OPTIONS, "read": request.id})
        return response

    def RegisterResourceOutputs(self, request):
        if any(request.urn.endswith(f"{token}::{request.urn.rsplit('::', 1)[-1]}") for token in REPORTING_COMPONENTS):
            raw = json_format.MessageToDict(request.outputs, preserving_proto_field_name=True)
            self.component_outputs[request.urn] = plain(raw)
        return super().RegisterResourceOutputs(request)

    def _transformed(self, request):
        """The request after the program's stack transforms, as the engine runs them on every resource
        registered after them (`pkg/resource/deploy/source_eval.go` `RegisterResource`: this resource's
        own transforms, its parents', then the stack's, in order; this program registers only stack
        transforms). As the SDK's callback server hands them over (`runtime/_callbacks.py`): the inputs
        deserialized from the wire, the result serialized back. The mock monitor records transforms
        and leaves running them to its user (pulumi 3.260 on). Only the inputs are taken from a
        transform; one that changes the options is refused, since only the engine knows them."""
        transforms = self.get_registered_transforms()
        if not transforms or request.type == "pulumi:pulumi:Stack":
            return request
        from aks_kueue.compat import sync_await

        try:  # the SDK calls the monitor from an executor thread, which has no event loop of its own
            asyncio.get_event_loop()
        except RuntimeError:
            asyncio.set_event_loop(asyncio.new_event_loop())
        props, changed = rpc.deserialize_properties(request.object, keep_unknowns=True), False
        for transform in transforms:
            opts = pulumi.ResourceOptions()
            result = transform(pulumi.ResourceTransformArgs(
                custom=bool(request.custom), type_=request.type, name=request.name, props=props, opts=opts))
            if inspect.isawaitable(result):
                result = sync_await(result)
            if result is None:
                continue
            if result.opts is not opts:
                raise NotImplementedError(f"a stack transform changed the options of {request.name}; the offline "
                                          "preview runs only the inputs a transform returns")
            props, changed = result.props, True
        if not changed:
            return request
        transformed = resource_pb2.RegisterResourceRequest()
        transformed.CopyFrom(request)
        transformed.object.CopyFrom(sync_await(rpc.serialize_properties(props, {})))
        return transformed

    def RegisterResource(self, request):
        request = self._transformed(request)
        response = self._echo(request) or super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self._record(request, response.urn, request.object, bool(request.custom),
                         additional_secret_outputs=list(request.additionalSecretOutputs),
                         options=resource_options(request))
        return response

    def _record(self, request, urn: str, properties, custom: bool, **more: Any) -> None:
        raw = json_format.MessageToDict(properties, preserving_proto_field_name=True)
        secret_paths: list[str] = []
        self.registrations.append(Registration(
            urn=urn, type=request.type, name=request.name, custom=custom, parent=request.parent or None,
            depends_on=sorted(set(request.dependencies)),
            provider=request.provider.rsplit("::", 1)[0] if request.provider else None,
            inputs=plain(raw, "", secret_paths), secret_paths=secret_paths, raw_inputs=raw, **more))


def plain(value: Any, path: str = "", secret_paths: list[str] | None = None) -> Any:
    """Engine wire values as JSON: secrets and unknowns become markers, whole numbers ints."""
    if isinstance(value, dict):
        if value.get(_SIG) == _SECRET_SIG:
            if secret_paths is not None:
                secret_paths.append(path)
            return SECRET_TEXT
        if value.get(_SIG) == _RESOURCE_SIG:
            return value.get("urn")
        return {k: plain(v, f"{path}.{k}" if path else k, secret_paths) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v, f"{path}[{i}]", secret_paths) for i, v in enumerate(value)]
    if value == UNKNOWN:
        return UNKNOWN_TEXT
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
