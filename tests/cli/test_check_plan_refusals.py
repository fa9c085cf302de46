"""check-plan refuses what it used to pass (issue 28): a retainOnDelete that is not the boolean Pulumi writes, a
plan with a key written twice, and the delete of a CustomResourceDefinition (it deletes every object of its kind)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from aks_kueue.cli import app
from tests.day2 import plans

CRD = plans.STACK + "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition::clusterqueues"


def check(tmp_path, text: str):
    path = tmp_path / "plan.json"
    path.write_text(text)
    result = CliRunner().invoke(app, ["check-plan", str(path), "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_a_retain_on_delete_that_is_text_is_not_retained(tmp_path):
    old = plans.state(plans.A100, plans.pool_inputs("a100", "Standard_NC24ads_A100_v4"), retainOnDelete="false")
    code, doc = check(tmp_path, json.dumps(plans.document([plans.step("delete", plans.A100, old=old)])))
    (step,) = doc["steps"]
    assert code == 1 and step["offending"]
    assert step["message"].endswith("(its old state's retainOnDelete is \"false\", not the boolean true Pulumi writes, "
                                    "so it is not read as retained)")
    retained = plans.state(plans.A100, plans.pool_inputs("a100", "Standard_NC24ads_A100_v4"), retainOnDelete=True)
    code, _ = check(tmp_path, json.dumps(plans.document([plans.step("delete", plans.A100, old=retained)])))
    assert code == 0


def test_a_key_written_twice_is_refused_not_read_as_its_last_value(tmp_path):
    code, doc = check(tmp_path, '{"steps": [{"op": "delete", "op": "same", "urn": "%s"}]}' % plans.A100)
    assert code == 2 and doc["result"] == "invalid"
    assert "the key 'op' appears twice in one object" in doc["errors"][0]["message"]


def test_deleting_a_crd_is_refused_and_a_retained_one_passes(tmp_path):
    old = plans.state(CRD, {"metadata": {"name": "clusterqueues.kueue.x-k8s.io"}})
    code, doc = check(tmp_path, json.dumps(plans.document([plans.step("delete", CRD, old=old)])))
    (step,) = doc["steps"]
    assert code == 1 and step["offending"]
    assert step["message"].startswith("deletes CustomResourceDefinition clusterqueues.kueue.x-k8s.io, and with it "
                                      "every object of that kind in the cluster")
    kept = plans.state(CRD, {"metadata": {"name": "clusterqueues.kueue.x-k8s.io"}}, retainOnDelete=True)
    code, doc = check(tmp_path, json.dumps(plans.document([plans.step("delete", CRD, old=kept)])))
    assert code == 0 and not doc["steps"][0]["offending"]
