"""Secrets stay secret end to end (issue 17): each top-level key made secret in turn.

The program runs under the mocks with the config handed over as Pulumi hands it after
decrypting (`pulumi config set --secret`: the plain values, and the key among the secret keys),
then the pack; every output format is searched for the plain text of the key's values: the
text rendering, the `--json` document, the Markdown summary, and what goes to stderr (errors,
refusals, warnings). Each key carries a planted value no other key has, so a leak cannot hide
behind a value that is everywhere anyway. A second run makes the planted value invalid, so the
error messages about it are searched too.

What may be shown (names, the program's vocabulary, booleans) is `aks_kueue/secrets.py`'s rule;
the values searched for here are the ones that rule hides, of at least 6 characters (shorter ones,
`8`, `10m`, occur in unrelated text and are covered by the unit tests of `secrets.py`).
"""

from __future__ import annotations

import contextlib
import copy
import io
import json

import pytest

from aks_kueue.cli.markdown import markdown_summary
from aks_kueue.cli.render import print_outcome
from aks_kueue.preview.outcome import document, preview
from aks_kueue.preview.stackfile import StackConfig
from aks_kueue.settings.vocabulary import config_secrets
from tests.conftest import ROOT, flat, stack_doc

GROUP = "5ec2e7a1-0c4f-4b8e-9d3a-7f1e2b3c4d5e"
WORKSPACE = ("/subscriptions/9b1f7a52-3c4d-4e5f-8a9b-0c1d2e3f4a5b/resourceGroups/rg-planted/providers/"
             "Microsoft.OperationalInsights/workspaces/planted-law")


def _cluster(c, valid):
    c["aks-kueue:cluster"]["security"]["apiServerAuthorizedIpRanges"].append(
        "198.51.100.77/32" if valid else "198.51.100.777/32")
    c["aks-kueue:cluster"]["security"]["entraAdminGroupObjectIds"] = [GROUP if valid else GROUP[:-1] + "x"]


def _pools(c, valid):
    pools = c["aks-kueue:nodePools"]
    pools[1]["taints"] = ["sku=plantedgpu42:NoSchedule"]
    if not valid:
        pools[0]["vmSize"] = "Standard_Planted_D9"


def _kueue(c, valid):
    c["aks-kueue:kueue"]["version"] = "0.19.6-aks.0.4.4" if valid else "0.19.6-planted.9"


def _queues(c, valid):
    classes = c["aks-kueue:queues"]["workloadPriorityClasses"]
    classes[0]["description"] = "planted description of batch-high"
    c["aks-kueue:queues"]["localQueues"][0]["submitterGroups"] = [GROUP if valid else GROUP[:-1] + "z"]
    if not valid:
        c["aks-kueue:queues"]["clusterQueues"][0]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0][
            "nominalQuota"] = "64 plantedcores"


def _manifests(c, valid, path):
    c["aks-kueue:queueManifests"] = [str(path if valid else path.with_name("planted-missing.yaml"))]


def _workloads(c, valid):
    tolerations = c["aks-kueue:expectedWorkloads"][0]["podSets"][0]["tolerations"]
    tolerations.append({"key": "planted", "operator": "Equal", "value": "plantedtoleration", "effect": "NoSchedule"})
    if not valid:
        c["aks-kueue:expectedWorkloads"][0]["podSets"][0]["requests"]["cpu"] = "20 plantedcpus"


def _monitoring(c, valid):
    c["aks-kueue:monitoring"].pop("logRetentionDays")  # an existing workspace keeps its own
    c["aks-kueue:monitoring"]["logAnalyticsWorkspaceId"] = WORKSPACE if valid else "planted-law-not-an-id"


def _group(c, valid):
    c["aks-kueue:resourceGroupName"] = "rg-planted-prod" if valid else "rg-planted-prod."


def _allow(c, valid):
    c["aks-kueue:allowReplacement"] = ["nodePools.cpu" if valid else "nodePools.plantedpool!"]


def _protect(c, valid):
    c["aks-kueue:protect"] = True if valid else "plantedbool"


def _environment(c, valid):
    c["aks-kueue:environment"] = "production" if valid else "plantedenvironment"


def _location(c, valid):
    c["azure-native:location"] = "eastus" if valid else "plantedregion"


KEYS = {
    "azure-native:location": (_location, ["eastus", "plantedregion"]),
    "aks-kueue:resourceGroupName": (_group, ["rg-planted-prod"]),
    "aks-kueue:environment": (_environment, ["plantedenvironment"]),
    "aks-kueue:cluster": (_cluster, ["198.51.100.77/32", "198.51.100.777/32", GROUP, GROUP[:-1] + "x"]),
    "aks-kueue:nodePools": (_pools, ["plantedgpu42", "Standard_Planted_D9", "Standard_NC24ads_A100_v4"]),
    "aks-kueue:kueue": (_kueue, ["0.19.6-aks.0.4.4", "0.19.6-planted.9"]),
    "aks-kueue:queues": (_queues, ["planted description", GROUP, GROUP[:-1] + "z", "plantedcores"]),
    "aks-kueue:queueManifests": (_manifests, ["planted-manifests.yaml", "planted-missing.yaml"]),
    "aks-kueue:expectedWorkloads": (_workloads, ["plantedtoleration", "plantedcpus"]),
    "aks-kueue:monitoring": (_monitoring, [WORKSPACE, "planted-law-not-an-id"]),
    "aks-kueue:protect": (_protect, ["plantedbool"]),
    # Entries are identifiers (`nodePools.cpu`: shown); the invalid one is not.
    "aks-kueue:allowReplacement": (_allow, ["nodePools.plantedpool!"]),
}
MANIFEST = """apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: planted-cohort}
spec: {}
"""


def every_output(config: dict, secret_key: str) -> tuple[str, object]:
    """Everything the preview prints, in each format, for this config with one key secret."""
    stack = StackConfig("aks-kueue", "prod", flat(config), [secret_key])
    outcome = preview(stack, ROOT)
    parts = [json.dumps(document(outcome), indent=2)]
    if outcome.run is not None:
        parts.append(markdown_summary(outcome))
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            print_outcome(outcome)
        parts.append(text.getvalue())
        parts += list(outcome.run.warnings)
    parts += [str(e) for e in outcome.errors] + [str(r) for r in outcome.refusals]
    return "\n".join(parts), outcome


def hidden_values(config: dict, secret_key: str) -> list[str]:
    secrets = config_secrets(flat(config), [secret_key])
    return [v for v in secrets.values if len(v) >= 6]


@pytest.fixture
def wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "2000")  # no value is wrapped or cut by the tables


@pytest.mark.parametrize("valid", [True, False], ids=["valid", "invalid"])
@pytest.mark.parametrize("secret_key", list(KEYS))
def test_no_output_format_shows_a_value_of_a_secret_key(secret_key, valid, tmp_path, wide):
    manifest = tmp_path / "planted-manifests.yaml"
    manifest.write_text(MANIFEST)
    edit, planted = KEYS[secret_key]
    config = copy.deepcopy(stack_doc("prod"))
    if edit is _manifests:
        edit(config, valid, manifest)
    else:
        edit(config, valid)
    searched = sorted(set(hidden_values(config, secret_key)) | {p for p in planted if p in json.dumps(config)})
    output, outcome = every_output(config, secret_key)
    shown = {value: output.count(value) for value in searched if value in output}
    assert shown == {}, f"{secret_key} leaks in {outcome.result} outcome: {shown}"
    # The same config with nothing secret shows them: the search would have found a leak.
    plain_output, plain = every_output(config, "aks-kueue:none")
    assert plain.result == outcome.result
    assert any(value in plain_output for value in searched) or not searched


def test_the_record_shows_a_flavor_built_from_a_secret_pool_as_a_secret(wide):
    config = copy.deepcopy(stack_doc("prod"))
    _pools(config, True)
    _, outcome = every_output(config, "aks-kueue:nodePools")
    flavors = [r for r in outcome.run.registrations if r.type.endswith(":ResourceFlavor")]
    a100 = next(r for r in flavors if r.name.endswith("a100"))
    assert a100.inputs["spec"] == "[secret]" and "spec" in a100.secret_paths
    assert "plantedgpu42" in json.dumps(a100.raw_inputs)  # the engine gets the value, as a secret
    # A flavor the pools do not shape is not a secret of the pools.
    _, plain = every_output(config, "aks-kueue:none")
    assert next(r for r in plain.run.registrations if r.name == a100.name).inputs["spec"]["nodeTaints"] == [
        {"key": "sku", "value": "plantedgpu42", "effect": "NoSchedule"}]


def test_the_pack_itself_leaves_secret_values_out_of_its_violations():
    """As `pulumi preview --policy-pack` runs it: the pack is handed the values decrypted, and the
    model ConfigMap tells it (by digests) which words not to show."""
    from aks_kueue.preview.pack import evaluate
    from aks_kueue.preview.run import run_program

    config = flat(stack_doc("prod"))
    secret = run_program(StackConfig("aks-kueue", "prod", config, ["aks-kueue:cluster"]), ROOT)
    plain = run_program(StackConfig("aks-kueue", "prod", config), ROOT)
    carrier = next(r for r in secret.registrations if r.type == "kubernetes:core/v1:ConfigMap")
    assert "203.0.113.0/24" not in json.dumps(carrier.raw_inputs)  # digests only
    documentation = [v.message for v in evaluate(secret) if "documentation range" in v.message]
    assert documentation and all("203.0.113.0/24" not in m and "[secret]" in m for m in documentation)
    assert any("203.0.113.0/24" in v.message for v in evaluate(plain) if "documentation range" in v.message)
