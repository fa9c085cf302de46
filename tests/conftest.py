"""Shared helpers: stack files, whole-program runs under mocks, and the shared reference."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
import yaml

from aks_kueue.preview.run import run_program
from aks_kueue.preview.stackfile import StackConfig, load_stack, project_root, stack_path

# The stand-in policy pack, a fixture every test may ask for.
pytest_plugins = ["tests.policies.fakes"]

ROOT = project_root()
# ../shared beside the repository; AKS_KUEUE_SHARED points elsewhere (a test uses it to run without one).
SHARED = Path(os.environ.get("AKS_KUEUE_SHARED") or ROOT.parent / "shared")
REFERENCE = SHARED / "reference"


def stack_doc(name: str) -> dict:
    return yaml.safe_load(stack_path(ROOT, name).read_text())["config"]


def flat(config: dict) -> dict[str, str]:
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def edited(name: str, edit) -> dict:
    """A copy of a stack's config after `edit(config)` changed it in place."""
    config = copy.deepcopy(stack_doc(name))
    edit(config)
    return config


def run_config(config: dict, stack: str = "test", preview: bool = True, unknown_outputs: bool = False):
    return run_program(StackConfig(project="aks-kueue", stack=stack, config=flat(config)), ROOT, preview,
                       unknown_outputs)


def run_stack(name: str, preview: bool = True):
    return run_program(load_stack(stack_path(ROOT, name), name, ROOT), ROOT, preview)


SHARED_MISSING = (f"{SHARED} is not beside the repository (the contract and the reference notes these tests "
                  "read); .ci/run refuses to run without it")


def needs_shared():
    """The one mark of a test that reads ../shared. Without it the test skips, and the run's summary
    lists every such test and why (`pytest_terminal_summary`)."""
    return pytest.mark.shared


def pytest_configure(config):
    config.addinivalue_line("markers", "shared: reads ../shared (the contract and the reference notes)")


def pytest_collection_modifyitems(config, items):
    if REFERENCE.is_dir():
        return
    skip = pytest.mark.skip(reason=SHARED_MISSING)
    for item in items:
        if item.get_closest_marker("shared"):
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    if REFERENCE.is_dir():
        return
    skipped = [report.nodeid for report in terminalreporter.stats.get("skipped", [])
               if "shared" in report.keywords]
    if skipped:
        terminalreporter.section("tests skipped without ../shared")
        terminalreporter.line(f"{len(skipped)} tests did not run: {SHARED_MISSING}.")
        for nodeid in sorted(skipped):
            terminalreporter.line(f"  {nodeid}")


def model_of(config: dict, stack: str = "test"):
    """The model the program builds from a stack's config (SettingsError when it cannot)."""
    from aks_kueue.model.from_settings import from_settings
    from aks_kueue.settings import parse_settings

    return from_settings(parse_settings(flat(config)), ROOT, stack)


def refusals(config: dict) -> list[str]:
    """Why the program refuses a config, one `key: what; fix` line each, as `pulumi up` prints them;
    empty when it accepts it."""
    from aks_kueue.judge import blocking_findings
    from aks_kueue.settings import SettingsError

    try:
        model = model_of(config)
    except SettingsError as error:
        return [str(p) for p in error.problems]
    return [str(f) for f in blocking_findings(model)]
