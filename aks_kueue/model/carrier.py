"""What the policy pack needs that no other resource carries, in one harmless ConfigMap.

Stack policies see resources, never the stack config or the stack outputs. The program
therefore writes one ConfigMap, `default/aks-kueue-model`, holding:
- `workloads.yaml`: `aks-kueue:expectedWorkloads` as the Kueue v1beta2 Workloads those jobs
  would create, exactly as the model builds them from settings;
- `keys.json`: for each object, pool, installer and submitter group, the stack key that defines it
  (`"ClusterQueue team-a": "aks-kueue:queues.clusterQueues[0]"`), so a finding the pack
  reports names the key to edit, as the program's own does;
- `environment`: `aks-kueue:environment`, which decides whether the baseline is mandatory;
- `existingPools.json`: the pools the last deployment has and this update keeps (`systemPool`,
  `nodePools.<name>`, as `aks-kueue:allowReplacement` names them). What a pool is created with
  (ephemeral OS disk, host encryption) stays for its life, so the baseline asks it of new pools and
  only advises it for these. Known once the day-2 guard has read the last deployment.
- `fleet.json`: in a MultiKueue fleet, this stack's role and what it read of the others' `fleet`
  outputs (`fleet.py`); never a kubeconfig (the manager's Secrets hold those, and the pack reads them there).
- `secretWords.json`, only when some config key is secret: salted SHA-256 digests of the secret
  values' words (`aks_kueue/secrets.py: WordDigests`), never the values, so the pack's messages,
  written from the decrypted values it is handed, can leave them out.
Kueue ignores ConfigMaps and nothing in the cluster acts on this one; it also documents,
in the cluster itself, which job shapes the quotas were sized for and where each object
is defined.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping, Optional

import yaml

from aks_kueue.k8s.loader import LoadError, loads_json, parse_documents
from aks_kueue.secrets import WordDigests

CARRIER_NAME = "aks-kueue-model"
# Every cluster has `default`, so the ConfigMap needs no namespace of its own and no Kueue.
CARRIER_NAMESPACE = "default"
WORKLOADS_KEY = "workloads.yaml"
KEYS_KEY = "keys.json"
ENVIRONMENT_KEY = "environment"
EXISTING_POOLS_KEY = "existingPools.json"
FLEET_KEY = "fleet.json"
SECRET_WORDS_KEY = "secretWords.json"
CARRIER_LABELS = {"app.kubernetes.io/managed-by": "aks-kueue", "app.kubernetes.io/component": "model"}


def carrier_manifest(workloads: Iterable[Mapping[str, Any]], keys: Mapping[str, str],
                     environment: str, existing_pools: Any = None, fleet: Any = None,
                     secret_words: Optional[WordDigests] = None) -> dict[str, Any]:
    """The ConfigMap: workloads as one multi-document YAML, keys as JSON, the environment as text;
    `existing_pools` is the JSON text `existing_pools_text` makes (the program hands an Output of it),
    `fleet` the model's fleet (`fleet_text`)."""
    data = {ENVIRONMENT_KEY: environment, KEYS_KEY: json.dumps(dict(keys), indent=1, sort_keys=True)}
    if secret_words:
        data[SECRET_WORDS_KEY] = json.dumps({"salt": secret_words.salt, "sha256": sorted(secret_words.digests)},
                                            indent=1)
    if existing_pools is not None:
        data[EXISTING_POOLS_KEY] = existing_pools
    if fleet is not None:
        data[FLEET_KEY] = fleet_text(fleet)
    documents = [dict(w) for w in workloads]
    if documents:
        data[WORKLOADS_KEY] = yaml.safe_dump_all(documents, sort_keys=False)
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": CARRIER_NAME, "namespace": CARRIER_NAMESPACE, "labels": dict(CARRIER_LABELS)},
            "data": data}


def is_carrier(metadata: Any) -> bool:
    return (isinstance(metadata, Mapping) and metadata.get("name") == CARRIER_NAME
            and metadata.get("namespace", CARRIER_NAMESPACE) == CARRIER_NAMESPACE)


def read_workloads(text: Any) -> list[dict[str, Any]]:
    """The Workload manifests of a carrier's `workloads.yaml`; ValueError when unreadable."""
    if text is None:
        return []
    if not isinstance(text, str):
        raise ValueError(f"data.{WORKLOADS_KEY} is not text")
    try:
        documents = [d for d in parse_documents(text, f"data.{WORKLOADS_KEY}") if d is not None]
    except LoadError as error:
        raise ValueError(str(error)) from None
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            raise ValueError(f"data.{WORKLOADS_KEY} document {index} is not a mapping")
    return documents


def _read_json(text: Any, key: str, valid, shape: str) -> Any:
    """The JSON of a carrier's `key` (None without one) when `valid` says it has its shape; else ValueError."""
    if text is None:
        return None
    try:
        found = loads_json(text, f"data.{key}") if isinstance(text, str) else None
    except LoadError:
        found = None
    if not valid(found):
        raise ValueError(f"data.{key} is not {shape}")
    return found


def read_keys(text: Any) -> dict[str, str]:
    """The subject -> stack key map of a carrier's `keys.json`; ValueError when unreadable."""
    return _read_json(text, KEYS_KEY, lambda keys: isinstance(keys, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in keys.items()), "a JSON map of text to text") or {}


def read_secret_words(text: Any) -> WordDigests:
    """The digests of a carrier's `secretWords.json`; ValueError when unreadable."""
    found = _read_json(text, SECRET_WORDS_KEY, lambda found: isinstance(found, dict) and isinstance(
        found.get("salt"), str) and isinstance(found.get("sha256"), list) and all(
        isinstance(d, str) for d in found["sha256"]), "a JSON map of a salt and a list of digests")
    return WordDigests(found["salt"], frozenset(found["sha256"])) if found is not None else WordDigests()


def existing_pools_text(entries: Iterable[str]) -> str:
    return json.dumps(sorted(entries))


def read_existing_pools(text: Any) -> frozenset[str]:
    """The pool entries of a carrier's `existingPools.json`; ValueError when unreadable."""
    return frozenset(_read_json(text, EXISTING_POOLS_KEY, lambda entries: isinstance(entries, list) and all(
        isinstance(e, str) for e in entries), "a JSON list of pool entries") or ())


def fleet_text(fleet) -> str:
    """The model's fleet as `fleet.json`: everything but what the pack reads from other resources (the
    workers' kubeconfigs from the manager's Secrets, the CRDs from the resources that install them)."""
    return json.dumps({
        "role": str(fleet.role), "stack": fleet.stack, "key": fleet.key,
        "workers": [{"name": w.name, "stack": w.stack, "key": w.key, "outputs": w.outputs} for w in fleet.workers],
        "quotaManagement": fleet.quota_management,
        "egressIpRanges": list(fleet.egress_ip_ranges) if fleet.egress_ip_ranges is not None else None,
        "exportedTeams": list(fleet.exported_teams) if fleet.exported_teams is not None else None,
        "manager": fleet.manager, "managerOutputs": fleet.manager_outputs,
        "tokenGenerations": list(fleet.token_generations)}, sort_keys=True)


def read_fleet(text: Any) -> dict[str, Any] | None:
    """A carrier's `fleet.json` (None without one); ValueError when unreadable."""
    return _read_json(text, FLEET_KEY, lambda fleet: isinstance(fleet, dict) and isinstance(fleet.get("workers"), list),
                      "the JSON of a fleet")


def subject_keys(model) -> dict[str, str]:
    """What a finding can name -> the stack key that defines it, for every part of the model."""
    cluster = (model.cluster, *model.cluster.system_pools) if model.cluster is not None else ()
    return {**{part.subject: part.key for part in (*cluster, *model.pools, *model.installs)},
            **{part.label: part.key for part in (*model.objects, *model.workloads, *model.submitter_groups)}}
