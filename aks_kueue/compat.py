"""Every private name this project takes from another package, behind one door.

A private name (`_sync_await`, `_PolicyAnalyzerServicer`, a provider's `_utilities`) can move or
change on any patch release. Each one used here is listed once in `PRIVATE`: where it lives, why
no public API does the job, and the range of the package it was read against, which is the range
pyproject.toml pins. tests/test_compat.py resolves every entry against the installed packages and
fails naming the entry when one has moved, checks that each range still matches the pin, and
greps the tree so that no other module imports a private name of these packages.

Names load on first use (`from aks_kueue.compat import sync_await`), so the pure core can take
the CEL core from here without loading Pulumi.
"""

from __future__ import annotations

import functools
import importlib
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

if TYPE_CHECKING:  # the real types, for type checkers only
    from pulumi import _types as pulumi_types  # noqa: F401
    from pulumi.runtime.sync_await import _sync_await as sync_await  # noqa: F401
    from pulumi_azure_native import _utilities as azure_native_utilities  # noqa: F401
    from pulumi_kubernetes import _utilities as kubernetes_utilities  # noqa: F401
    from pulumi_policy.policy import _NotApplicableError as NotApplicableError  # noqa: F401
    from pulumi_policy.policy import _PolicyAnalyzerServicer as PolicyAnalyzerServicer  # noqa: F401
    from pulumi_policy.proxy import _DictProxy as DictProxy, _ListProxy as ListProxy  # noqa: F401
    from typer._click.exceptions import ClickException  # noqa: F401


@dataclass(frozen=True)
class Private:
    target: str  # "module:attribute", or "module" for a whole private module
    distribution: str  # the package as pip names it (and pyproject.toml pins it)
    checked: str  # the version range the name was read against: the pin in pyproject.toml
    why: str
    load: Optional[Callable[[], Any]] = None  # when a plain import is not how to reach it


class MovedError(ImportError):
    """A private name is no longer where `PRIVATE` says; the message says what to re-check."""


def _cel_core() -> Any:
    """The CEL bindings' compiled core `cel.cel`, loaded without the package's `__init__`.

    `import cel` also loads its command line (`cel.cli`: typer, rich, prompt_toolkit), which no rule
    here uses; `compile` and `execute` live in the core. The core is registered
    under its own name, so a later `import cel` reuses it (the extension initialises once a process)."""
    core = sys.modules.get("cel.cel")
    if core is None:
        from importlib.machinery import PathFinder
        from importlib.util import find_spec, module_from_spec

        package = find_spec("cel")  # finds the package without running its __init__
        spec = PathFinder.find_spec("cel.cel", package.submodule_search_locations) if package else None
        if spec is None or spec.loader is None:
            return importlib.import_module("cel.cel")  # an unusual install: let the package load it
        core = module_from_spec(spec)
        sys.modules["cel.cel"] = core
        try:
            spec.loader.exec_module(core)
        except BaseException:
            del sys.modules["cel.cel"]
            raise
    core.compile  # what kueue/structural.py calls: fail here, by name, when it moves
    return core


def _click_exception() -> type:
    """Typer 0.2x vendors Click as `typer._click` and does not re-export its exceptions; older
    Typers use the click package itself."""
    try:
        return importlib.import_module("typer._click.exceptions").ClickException
    except ImportError:
        return importlib.import_module("click.exceptions").ClickException


def _servicer_method(name: str) -> Any:
    return getattr(importlib.import_module("pulumi_policy.policy")._PolicyAnalyzerServicer, name)


# The servicer's methods `preview/pack.run_pack` remembers (their PRIVATE entries: `servicer.<name>`).
SERVICER_READS = ("_get_resource_options", "_get_provider_resource")

PRIVATE: dict[str, Private] = {
    "sync_await": Private(
        "pulumi.runtime.sync_await:_sync_await", "pulumi", ">=3.260,<4",
        "Waits for a future inside a running program, as the SDK's synchronous `invoke` does. A program's top "
        "level cannot await: the offline preview serializes stack outputs with it (preview/run.py), and the day-2 "
        "guard and a fleet member read stacks' outputs with it, once, before what depends on them is registered "
        "(components/stack_outputs.py; the alternative registers resources inside `Output.apply`)."),
    "get_stack_trace": Private(
        "pulumi.runtime.resource:_get_stack_trace", "pulumi", ">=3.260,<4",
        "Walks the whole Python stack at every registration for the resource's source position, which the "
        "offline preview's mocks never read (a sixth of a large organisation's preview): the offline run "
        "swaps in the empty trace the SDK itself sends when it finds no caller (`without_source_positions`)."),
    "PolicyAnalyzerServicer": Private(
        "pulumi_policy.policy:_PolicyAnalyzerServicer", "pulumi-policy", ">=1.20,<2",
        "The analyzer the Pulumi engine talks to over gRPC. The offline preview calls its `Analyze` and "
        "`AnalyzeStack` in process (preview/pack.py), so policies run exactly as under `pulumi preview --policy-pack`."),
    **{f"servicer.{name}": Private(
        f"pulumi_policy.policy:_PolicyAnalyzerServicer.{name}", "pulumi-policy", ">=1.20,<2",
        "What the servicer builds of each resource for every policy it runs. The offline preview builds it once "
        "per resource (preview/pack.py remembers the servicer's own method on its one servicer), with 29 stack "
        "policies a tenth of a large organisation's pack.",
        functools.partial(_servicer_method, name))
       for name in SERVICER_READS},
    "NotApplicableError": Private(
        "pulumi_policy.policy:_NotApplicableError", "pulumi-policy", ">=1.20,<2",
        "Raised by the SDK's `StackValidationArgs` helpers when a policy does not apply; a stack policy treats "
        "it like an unknown value (policies/base.py)."),
    "DictProxy": Private(
        "pulumi_policy.proxy:_DictProxy", "pulumi-policy", ">=1.20,<2",
        "The unknown-checking wrapper around resource properties; policies/base.py reads the wrapped value "
        "(the proxy's private `__target` key) without tripping the unknown check, to fingerprint a stack."),
    "ListProxy": Private(
        "pulumi_policy.proxy:_ListProxy", "pulumi-policy", ">=1.20,<2",
        "The list counterpart of `DictProxy`, for the same reason."),
    "azure_native_utilities": Private(
        "pulumi_azure_native._utilities", "pulumi-azure-native", ">=3.29.0,<3.30",
        "`get_resource_opts_defaults()` binds a resource to this plugin version, as the typed classes do; "
        "components/azure_object.py registers by type token to skip the typed classes' hundred aliases."),
    "kubernetes_utilities": Private(
        "pulumi_kubernetes._utilities", "pulumi-kubernetes", ">=4.18,<5",
        "`get_version()` and `get_resource_opts_defaults()` bind an object to this plugin version, as the typed "
        "classes do; components/kubernetes_object.py registers plain manifests without loading the typed SDK."),
    "pulumi_types": Private(
        "pulumi._types", "pulumi", ">=3.260,<4",
        "`is_input_type` and `input_type_types` list an SDK Args class's properties; a test checks every "
        "property name the program sends Azure against them (tests/components/monitoring/test_azure.py)."),
    "cel_core": Private(
        "cel.cel", "common-expression-language", ">=0.10,<1",
        "The compiled core of the CEL bindings, imported alone: the CRDs' x-kubernetes-validations rules "
        "(kueue/structural.py) need only `compile`, and the package's `__init__` loads its command line.",
        _cel_core),
    "ClickException": Private(
        "typer._click.exceptions:ClickException", "typer", ">=0.12,<1",
        "The base of the errors Click raises for a bad command line; cli/app.py turns them into its JSON "
        "document. Typer does not re-export it.", _click_exception),
}


@contextmanager
def without_source_positions() -> Iterator[None]:
    """While open, resources register without a source position (see `PRIVATE["get_stack_trace"]`)."""
    from pulumi.runtime.proto import source_pb2

    resolve("get_stack_trace")  # a moved name fails here, with the sentence
    module: Any = importlib.import_module("pulumi.runtime.resource")
    saved, module._get_stack_trace = module._get_stack_trace, source_pb2.StackTrace
    try:
        yield
    finally:
        module._get_stack_trace = saved


def resolve(name: str) -> Any:
    """The object `PRIVATE[name]` names, or a `MovedError` that says which entry to re-check."""
    entry = PRIVATE[name]
    module, _, attribute = entry.target.partition(":")
    try:
        value = entry.load() if entry.load else importlib.import_module(module)
        return getattr(value, attribute) if attribute and not entry.load else value
    except (ImportError, AttributeError) as error:
        raise MovedError(
            f"aks_kueue.compat.{name}: {entry.target} is not there in {entry.distribution} {installed(entry)} "
            f"({error}). It was checked against {entry.distribution}{entry.checked}; find where the name went in "
            f"that release, update PRIVATE[{name!r}] (and its pin in pyproject.toml), or pin the older release."
        ) from error


def installed(entry: Private) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(entry.distribution)
    except PackageNotFoundError:
        return "(not installed)"


def __getattr__(name: str) -> Any:
    if name not in PRIVATE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = resolve(name)
    return value
