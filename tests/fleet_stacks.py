"""The example fleet (stacks/Pulumi.fleet-*.yaml) for tests: its members' models, the outputs each
exports, and the offline runs that read them, as a real fleet's stacks read each other."""

from __future__ import annotations

from typing import Any, Optional

from aks_kueue.model import fleet_outputs
from aks_kueue.model.fleet import FLEET_OUTPUT, KUBECONFIG_OUTPUT
from aks_kueue.model.fleet_outputs import FleetInputs, StackOutputs
from aks_kueue.preview.mocks import fake_kubeconfig
from aks_kueue.preview.run import run_program
from aks_kueue.preview.stackfile import StackConfig
from tests.conftest import ROOT, filled_doc, flat

ORG = "acme/aks-kueue"
MANAGER, WEST, SWEDEN = "fleet-manager", "fleet-westus3", "fleet-swedencentral"
WORKERS = (WEST, SWEDEN)
WORKER_NAMES = {WEST: "westus3-a100", SWEDEN: "swedencentral-h100"}


def qualified(stack: str) -> str:
    return f"{ORG}/{stack}"


def config(stack: str, edit=None) -> dict:
    found = filled_doc(stack)
    if edit is not None:
        edit(found)
    return found


def model(stack: str, cfg: Optional[dict] = None, others: Optional[dict[str, StackOutputs]] = None,
          own: Optional[str] = None):
    """A member's model as its program builds it, having read `others` (by short stack name); `own`
    is its own full name (by default in ORG)."""
    from aks_kueue.model.from_settings import from_settings
    from aks_kueue.settings import parse_settings

    inputs = FleetInputs(own or qualified(stack), {qualified(s): o for s, o in (others or {}).items()})
    return from_settings(parse_settings(flat(cfg if cfg is not None else filled_doc(stack))), ROOT, stack, inputs)


def service_account_kubeconfig(cluster: str = "aks") -> str:
    """What a worker exports: the static-token kubeconfig built from a filled token Secret."""
    import base64

    from components.multikueue import worker_kubeconfig

    data = {"token": base64.b64encode(b"a-token").decode(), "ca.crt": base64.b64encode(b"a-ca").decode()}
    return worker_kubeconfig(data, fake_kubeconfig(exec_login=True), cluster)


def manager_outputs(cfg: Optional[dict] = None) -> dict[str, Any]:
    return fleet_outputs.manager_outputs(model(MANAGER, cfg))


def worker_outputs(stack: str, cfg: Optional[dict] = None, manager: Optional[dict] = None) -> dict[str, Any]:
    manager = manager if manager is not None else manager_outputs()
    return fleet_outputs.worker_outputs(model(stack, cfg, {MANAGER: StackOutputs({FLEET_OUTPUT: manager})}))


def worker_stack_outputs(stack: str, cfg: Optional[dict] = None, kubeconfig: Any = "[secret]",
                         manager: Optional[dict] = None) -> StackOutputs:
    values = {FLEET_OUTPUT: worker_outputs(stack, cfg, manager)}
    if kubeconfig is not None:
        values[KUBECONFIG_OUTPUT] = kubeconfig
    return StackOutputs(values, frozenset({KUBECONFIG_OUTPUT}))


def manager_model(cfg: Optional[dict] = None, workers: Optional[dict[str, StackOutputs]] = None):
    """The manager having read its workers (both example workers, kubeconfigs secret, by default)."""
    if workers is None:
        workers = {stack: worker_stack_outputs(stack) for stack in WORKERS}
    return model(MANAGER, cfg, workers)


def run(stack: str, cfg: Optional[dict] = None, others: Optional[dict[str, StackOutputs]] = None,
        preview: bool = True):
    """The member's program under the mocks, the other stacks' outputs as `pulumi stack output --json` has them."""
    outputs = {qualified(s): dict(o.values) for s, o in (others or {}).items()}
    stack_config = StackConfig(project="aks-kueue", stack=stack, config=flat(cfg if cfg is not None else
                                                                              filled_doc(stack)))
    return run_program(stack_config, ROOT, preview, stack_outputs=outputs)
