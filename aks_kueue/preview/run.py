"""Run `__main__.py` under the mock runtime, as `pulumi preview` (or `up`) would run it."""

from __future__ import annotations

import logging
import runpy
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pulumi
from google.protobuf import json_format
from pulumi.runtime import rpc, settings as runtime_settings
from pulumi.runtime.sync_await import _sync_await

from aks_kueue.preview.mocks import OfflineMocks
from aks_kueue.preview.recorder import RecordingMonitor, Registration, plain
from aks_kueue.preview.stackfile import StackConfig


class ProgramError(Exception):
    """The program stopped with a message meant for the user (a `pulumi.RunError`); when it refused
    the config, `findings` holds its reasons, structured."""

    def __init__(self, message: str, findings: Optional[list] = None):
        super().__init__(message)
        self.findings = list(findings or [])


@dataclass
class ProgramRun:
    project: str
    stack: str
    registrations: list[Registration]
    outputs: dict[str, Any]
    secret_outputs: list[str]
    warnings: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)

    def of_type(self, type_token: str) -> list[Registration]:
        return [r for r in self.registrations if r.type == type_token]


class _Collector(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def run_program(config: StackConfig, root: Path, preview: bool = True, unknown_outputs: bool = False) -> ProgramRun:
    pulumi.runtime.set_all_config(config.config, config.secret_keys)
    # The root Stack resource is per program run; clearing it lets one process run many.
    runtime_settings.ROOT.set(None)
    logger = logging.getLogger(f"aks-kueue.preview.{id(config)}")
    logger.propagate = False
    collector = _Collector()
    logger.addHandler(collector)
    mocks = OfflineMocks(preview=preview, unknown_outputs=unknown_outputs)
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project=config.project, stack=config.stack, preview=preview,
                             monitor=monitor, logger=logger)

    def program():
        runpy.run_path(str(root / "__main__.py"), run_name="__main__")

    sys.path.insert(0, str(root))
    try:
        pulumi.runtime.test(program)()
    except pulumi.RunError as error:
        raise ProgramError(str(error), getattr(error, "findings", None)) from None
    finally:
        sys.path.remove(str(root))
    outputs, secret_outputs = _stack_outputs()
    return ProgramRun(config.project, config.stack, creation_order(monitor.registrations), outputs,
                      secret_outputs, collector.messages, mocks.calls)


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


def _stack_outputs() -> tuple[dict[str, Any], list[str]]:
    root = runtime_settings.get_root_resource()
    exported = dict(getattr(root, "outputs", {}) or {})
    struct = _sync_await(rpc.serialize_properties(exported, {}))
    secret_paths: list[str] = []
    outputs = plain(json_format.MessageToDict(struct, preserving_proto_field_name=True), "", secret_paths)
    return outputs, secret_paths
