"""The words the program offers as choices, and the secret values of a config (`aks_kueue/secrets.py`).

A value that is one of the program's choices (an enumeration of the settings, an enum of Kueue's
CRDs, a Kubernetes resource name, a Kueue integration or feature gate) says only which choice was
made; taking it out of messages would take it out of every message that names the choice. The
vocabulary is read from the settings models and the CRDs themselves, so a new enumeration joins it
without anyone listing it.
"""

from __future__ import annotations

import json
import typing
from enum import Enum
from functools import lru_cache
from importlib import resources
from typing import Iterable, Mapping

from pydantic import BaseModel

from aks_kueue.aks.nodes import AGENTPOOL, ZONE
from aks_kueue.aks.pools import SYSTEM, USER
from aks_kueue.aks.topology import HOSTNAME
from aks_kueue.day2.allow import Target
from aks_kueue.k8s.scheduling import NAMESPACE_NAME_LABEL
from aks_kueue.kueue import catalog
from aks_kueue.secrets import Secrets

# Resource names queues and pods count (Kubernetes' and the GPU device plugins').
RESOURCE_NAMES = ("cpu", "memory", "pods", "ephemeral-storage", "storage", "nvidia.com/gpu", "amd.com/gpu",
                  "nvidia.com/mig-1g.5gb", "hugepages-2Mi", "hugepages-1Gi")
# Kubernetes' own words in pod specs and node labels: taint effects, toleration operators, well-known labels.
KUBERNETES_WORDS = ("NoSchedule", "PreferNoSchedule", "NoExecute", "Equal", "Exists", "In", "NotIn",
                    "DoesNotExist", "Gt", "Lt", AGENTPOOL, ZONE, HOSTNAME, NAMESPACE_NAME_LABEL,
                    "topology.kubernetes.io/region", "node.kubernetes.io/instance-type", "kubernetes.io/os",
                    "kubernetes.io/arch", SYSTEM, USER)


def config_secrets(config: Mapping[str, str], secret_keys: Iterable[str]) -> Secrets:
    """The secret values of a flat Pulumi config map, the vocabulary left out."""
    keys = list(secret_keys)
    return Secrets.of(config, keys, vocabulary()) if keys else Secrets()


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    from aks_kueue.settings.root import Settings

    words: set[str] = (set(RESOURCE_NAMES) | set(KUBERNETES_WORDS) | set(catalog.FEATURE_GATES)
                       | set(catalog.FRAMEWORKS) | {t.value for t in Target})
    _model_choices(Settings, words, set())
    crds = json.loads(resources.files("aks_kueue.kueue").joinpath("data/kueue-crds.json").read_text(encoding="utf-8"))
    stack = [crds]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            enum = item.get("enum")
            if isinstance(enum, list):
                words.update(v for v in enum if isinstance(v, str))
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return frozenset(w for w in words if w)


def _model_choices(annotation: typing.Any, words: set[str], seen: set) -> None:
    """Every `Literal[...]` text and Enum value reachable from a settings model."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return
        seen.add(annotation)
        for field in annotation.model_fields.values():
            _model_choices(field.annotation, words, seen)
        return
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        words.update(str(m.value) for m in annotation)
        return
    if typing.get_origin(annotation) is typing.Literal:
        words.update(a for a in typing.get_args(annotation) if isinstance(a, str))
        return
    for argument in typing.get_args(annotation):
        _model_choices(argument, words, seen)
