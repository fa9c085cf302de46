"""Queue object names that cannot collide, aliases to the old ones, immutable Kueue fields."""

from __future__ import annotations

from aks_kueue.day2.names import FLAVOR_WITH_TOPOLOGY, IMMUTABLE, immutable_paths, legacy_aliases, logical_name


def test_localqueue_names_no_longer_collide():
    assert logical_name("queues", "LocalQueue", "a-b", "c") != logical_name("queues", "LocalQueue", "a", "b-c")
    assert logical_name("queues", "ClusterQueue", None, "team-a") == "queues-clusterqueue-team-a"


def test_old_names_are_aliased_unless_two_objects_would_claim_one():
    aliases = legacy_aliases("queues", [("LocalQueue", "team-a", "default"), ("ClusterQueue", None, "team-a")])
    assert aliases == {("LocalQueue", "team-a", "default"): "queues-localqueue-team-a-default"}
    both = legacy_aliases("queues", [("LocalQueue", "a-b", "c"), ("LocalQueue", "a", "b-c")])
    assert both == {}


def test_immutable_fields_are_those_the_kueue_crds_declare():
    import json
    from pathlib import Path

    crds = json.loads((Path(__file__).resolve().parents[2] / "aks_kueue/kueue/data/kueue-crds.json").read_text())

    def immutable(node, path, out):
        if isinstance(node, dict):
            if any(r.get("rule") == "self == oldSelf" for r in node.get("x-kubernetes-validations") or []):
                out.append(".".join(path))
            for key, child in (node.get("properties") or {}).items():
                immutable(child, path + [key], out)
        return out

    found = {kind: tuple(immutable(doc["schema"], [], [])) for kind, doc in crds.items()
             if kind in ("LocalQueue", "AdmissionCheck", "Topology", "ClusterQueue", "Cohort", "ResourceFlavor",
                         "WorkloadPriorityClass", "ProvisioningRequestConfig")}
    assert {k: v for k, v in found.items() if v} == IMMUTABLE
    flavor_rules = [r["message"] for r in crds["ResourceFlavor"]["schema"]["properties"]["spec"]
                    ["x-kubernetes-validations"] if "immutable" in r.get("message", "")]
    assert len(flavor_rules) == len(FLAVOR_WITH_TOPOLOGY)
    assert immutable_paths("ResourceFlavor", {"topologyName": "t"}) == list(FLAVOR_WITH_TOPOLOGY)
    assert immutable_paths("ResourceFlavor", {}) == []
