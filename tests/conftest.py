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


# A shipped production stack is rejected until its placeholders are filled in (issue 28). Tests that need a
# passing one fill them in with `filled`: each placeholder Entra ID becomes a GUID derived from it, and each
# documentation range (RFC 5737) the same host part in a public range. tests/fixtures/stacks/prod-filled.yaml
# is `filled(stack_doc("prod"))`, written out for the README's tour (tests/settings/test_shipped_stacks.py).
FILLED_PROD = ROOT / "tests" / "fixtures" / "stacks" / "prod-filled.yaml"
_DOCUMENTATION_PREFIXES = {"192.0.2.": "52.160.12.", "198.51.100.": "52.160.11.", "203.0.113.": "52.160.10."}


def filled(config: dict) -> dict:
    """A copy of `config` with every placeholder value replaced by a real-looking one."""
    import uuid

    from aks_kueue.judge.stack import is_placeholder_id

    def fill(value):
        if isinstance(value, dict):
            return {k: fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fill(v) for v in value]
        if isinstance(value, str) and is_placeholder_id(value):
            return str(uuid.uuid5(uuid.NAMESPACE_URL, f"aks-kueue-example/{value}"))
        if isinstance(value, str):
            for documentation, public in _DOCUMENTATION_PREFIXES.items():
                if value.startswith(documentation):
                    return public + value[len(documentation):]
        return value
    return fill(copy.deepcopy(config))


def filled_doc(name: str) -> dict:
    """A shipped stack's config with its placeholders filled in."""
    return filled(stack_doc(name))


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


def run_filled(name: str, preview: bool = True):
    """`run_stack` of the stack with its placeholders filled in (`filled`)."""
    return run_config(filled_doc(name), stack=name, preview=preview)


SHARED_MISSING = (f"{SHARED} is not beside the repository (the contract and the reference notes these tests "
                  "read); .ci/run refuses to run without it")


def needs_shared():
    """The one mark of a test that reads ../shared. Without it the test skips, and the run's summary
    lists every such test and why (`pytest_terminal_summary`)."""
    return pytest.mark.shared


def pytest_configure(config):
    config.addinivalue_line("markers", "shared: reads ../shared (the contract and the reference notes)")


@pytest.fixture(autouse=True, scope="session")
def one_sentence_messages():
    """Every finding a rule builds in any test states its fact in one sentence (issue 29; what that means:
    tests/messages.py): a rule's finding that does not fails the test that made it, naming the rule."""
    from aks_kueue.day2.guard import Report
    from aks_kueue.judge.rules import Rule
    from tests.messages import check

    built, refuse, notice = Rule.finding, Report.refuse, Report.notice

    def checked(self, *, message: str, **rest):
        check(self.id, message)
        return built(self, message=message, **rest)

    def guarded(say):  # the day-2 guard's findings, which are no rules of the judge
        def said(self, kind: str, *args, message: str, **rest):
            check(kind, message)
            return say(self, kind, *args, message=message, **rest)
        return said

    Rule.finding, Report.refuse, Report.notice = checked, guarded(refuse), guarded(notice)  # type: ignore
    yield
    Rule.finding, Report.refuse, Report.notice = built, refuse, notice  # type: ignore


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
