"""Run `__main__.py` under the mock runtime, as `pulumi preview` (or `up`) would run it."""

from __future__ import annotations

import copy
import dataclasses
import logging
import runpy
import sys
from dataclasses import dataclass, field
from logging.handlers import BufferingHandler
from pathlib import Path
from typing import Any, Mapping, Optional

import pulumi
from google.protobuf import json_format
from pulumi.runtime import rpc, settings as runtime_settings

from aks_kueue.compat import sync_await, without_source_positions
from aks_kueue.day2.guard import Refusal
from aks_kueue.judge.finding import Finding, Severity
from aks_kueue.preview.mocks import OfflineMocks
from aks_kueue.preview.recorder import RecordingMonitor, Registration, api_version_alias, plain
from aks_kueue.preview.stackfile import StackConfig


# The organization the offline run reports (`pulumi.get_organization()`), as in fully qualified stack names.
ORGANIZATION = "organization"


class ProgramError(Exception):
    """The program stopped with a message meant for the user (a `pulumi.RunError`); when it refused
    the config, `findings` holds its reasons, structured."""

    def __init__(self, message: str, findings: Optional[list] = None):
        super().__init__(message)
        self.findings = list(findings or [])


class ProgramRefused(ProgramError):
    """The day-2 guard refused the update: the input is read, but rejected (exit 1)."""

    def __init__(self, findings: list, registered: Optional[list] = None):
        super().__init__("the day-2 guard refused this update:\n" + "\n".join(str(f) for f in findings), findings)
        self.registered = registered or []   # what the program registered before it stopped


def is_guard(urn: str) -> bool:
    """Whether the URN is the day-2 guard's component's."""
    return urn.endswith(f"$aksKueue:index:Day2Guard::{urn.rsplit('::', 1)[-1]}")


@dataclass
class ProgramRun:
    project: str
    stack: str
    registrations: list[Registration]
    outputs: dict[str, Any]
    secret_outputs: list[str]
    warnings: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    # What components registered as outputs, by URN (the day-2 guard's findings among them).
    component_outputs: dict[str, Any] = field(default_factory=dict)

    def of_type(self, type_token: str) -> list[Registration]:
        return [r for r in self.registrations if r.type == type_token]

    @property
    def day2_findings(self) -> list[Finding]:
        """What the day-2 guard reported (its component's registered outputs)."""
        found: list[Finding] = []
        for urn, outputs in self.component_outputs.items():
            if is_guard(urn) and isinstance(outputs, dict):
                found += [Finding(kind=f["kind"], severity=Severity(f["severity"]), object=f["object"], key=f["key"],
                                  message=f["message"],
                                  fix=f.get("fix", ""), numbers=f.get("numbers") or {})
                          for f in outputs.get("findings") or [] if isinstance(f, dict)]
        return found


# The keys of the `aks-kueue preview --json` document (../shared/contract/cli.md) that tell it from a stack's outputs.
PREVIEW_DOCUMENT_KEYS = frozenset({"project", "stack", "resources", "outputs", "result"})


def read_previous_outputs(path: Path, preview_document: bool = False) -> dict[str, Any]:
    """What `pulumi stack output --json` printed, read within the loader's bounds, or a
    LoadError naming the file. With `preview_document`, what `aks-kueue preview --json` printed is
    taken too, as its `outputs`: another stack never deployed has its outputs offline that way (a
    fleet's members); a stack's own last deployment (`--previous-outputs`) never is one."""
    from aks_kueue.k8s.loader import LoadError, loads_json, read_text

    try:
        outputs = loads_json(read_text(path, what="the JSON `pulumi stack output --json` prints"), str(path))
    except LoadError as error:
        reason = f"{error.reason}; give what `pulumi stack output --json` prints"
        raise dataclasses.replace(error, reason=reason) from None
    if not isinstance(outputs, dict):
        raise LoadError(str(path), None, "a JSON object of stack outputs was expected (what `pulumi stack output "
                                         f"--json` prints), not {type(outputs).__name__}")
    if preview_document and PREVIEW_DOCUMENT_KEYS <= outputs.keys():
        if not isinstance(outputs["outputs"], dict) or outputs["result"] == "invalid":
            raise LoadError(str(path), None, "this `aks-kueue preview --json` document has no outputs (the preview "
                                             f"could not run the program: its result is {outputs.get('result')!r})")
        return outputs["outputs"]
    return outputs


def run_program(config: StackConfig, root: Path, preview: bool = True, unknown_outputs: bool = False,
                previous_outputs: Optional[Mapping[str, Any]] = None,
                stack_outputs: Optional[Mapping[str, Mapping[str, Any]]] = None) -> ProgramRun:
    """`previous_outputs` is the stack's last deployment as `pulumi stack output --json` prints it;
    `stack_outputs` the same of other stacks (a fleet's), by their fully qualified names."""
    pulumi.runtime.set_all_config(config.config, config.secret_keys)
    # The root Stack resource is per program run; clearing it lets one process run many.
    runtime_settings.ROOT.set(None)
    logger = logging.getLogger(f"aks-kueue.preview.{id(config)}")
    logger.propagate = False
    collector = BufferingHandler(sys.maxsize)  # the program's warnings, all kept
    collector.setLevel(logging.WARNING)
    logger.addHandler(collector)
    mocks = OfflineMocks(preview=preview, unknown_outputs=unknown_outputs, previous_outputs=previous_outputs,
                         stack_outputs=stack_outputs, own_stack=f"{ORGANIZATION}/{config.project}/{config.stack}")
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project=config.project, stack=config.stack, preview=preview,
                             monitor=monitor, logger=logger, organization=ORGANIZATION)

    # The deprecated SDK-side transformation on purpose: it must run before the SDK resolves the aliases,
    # and a transform (register_resource_transform) runs in the engine, after the SDK serialized them.
    pulumi.runtime.register_stack_transformation(_without_api_version_aliases)

    def program():
        runpy.run_path(str(root / "__main__.py"), run_name="__main__")

    sys.path.insert(0, str(root))
    try:
        with without_source_positions():
            pulumi.runtime.test(program)()
    except Refusal as error:
        raise ProgramRefused(error.findings, list(monitor.registrations)) from None
    except pulumi.RunError as error:
        raise ProgramError(str(error), getattr(error, "findings", None)) from None
    finally:
        sys.path.remove(str(root))
    exported = dict(getattr(runtime_settings.get_root_resource(), "outputs", {}) or {})
    struct = sync_await(rpc.serialize_properties(exported, {}))
    secret_outputs: list[str] = []
    outputs = plain(json_format.MessageToDict(struct, preserving_proto_field_name=True), "", secret_outputs)
    return ProgramRun(config.project, config.stack, creation_order(monitor.registrations), outputs, secret_outputs,
                      [r.getMessage() for r in collector.buffer], mocks.calls, monitor.component_outputs)


def _without_api_version_aliases(args: pulumi.ResourceTransformationArgs):
    """The resource without the aliases its provider SDK adds for each API-version type token.

    The typed azure-native classes alias every versioned token a resource ever had (about a
    hundred for a ManagedCluster or an AgentPool); the SDK turns each into an alias URN, which
    was most of the offline program's time. They would only match a stack that once used a
    versioned token, and the offline preview has no earlier state to match: the record never
    shows them (`recorder.resource_options`) and the pack never sees aliases, so leaving them out
    changes nothing the preview reports. The program's own aliases are kept."""
    aliases = args.opts.aliases
    if not aliases:
        return None
    kept = [alias for alias in aliases if not api_version_alias(alias)]
    if len(kept) == len(aliases):
        return None
    opts = copy.copy(args.opts)
    opts.aliases = kept
    return pulumi.ResourceTransformationResult(args.props, opts)


def creation_order(registrations: list[Registration]) -> list[Registration]:
    """Parents and dependencies first, ties broken by URN.

    Python registers resources from concurrent tasks, so the raw order changes from
    run to run; this order is the same every time and still reads top-down.
    """
    by_urn = {r.urn: r for r in registrations}
    waiting = {r.urn: {u for u in (r.parent, r.provider, *r.depends_on) if u in by_urn} for r in registrations}
    done: list[Registration] = []
    emitted: set[str] = set()
    while waiting:
        ready = sorted(u for u, needs in waiting.items() if needs <= emitted) or sorted(waiting)[:1]
        for urn in ready:
            done.append(by_urn[urn])
            emitted.add(urn)
            del waiting[urn]
    return done
