"""The program's model ConfigMap (`aks_kueue/model/carrier.py` says what it carries and why)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pulumi
import pulumi_kubernetes as k8s

from aks_kueue.model import Model
from aks_kueue.model.carrier import CARRIER_NAME, FLEET_KEY, carrier_manifest, subject_keys
from aks_kueue.secrets import Secrets, WordDigests
from components import Component, token
from components.kubernetes_object import KubernetesObject
from components.secret import NO_SECRET_KEYS, SecretKeys, secret_value

# Before the model carried keys and the environment, this was the expected-workloads ConfigMap.
_OLD_TYPE, _OLD_NAME, _OLD_CHILD = token("ExpectedWorkloads"), "expected", "expected-aks-kueue-expected-workloads"


@dataclass(frozen=True)
class ModelCarrierArgs:
    model: Model
    provider: k8s.Provider
    # `existingPools.json`: the pools the last deployment has and this update keeps (Day2Guard.kept_pools).
    existing_pools: Optional[pulumi.Input[str]] = None
    # The secret keys: where aks-kueue:expectedWorkloads is one the workloads it carries are secret, and
    # `fleet.json` is where it derives from another stack's secret output.
    secret: SecretKeys = NO_SECRET_KEYS
    # The secret config values, whose words' digests the pack needs to keep them out of its messages.
    hidden: Secrets = field(default_factory=Secrets)


class ModelCarrier(Component, kind="ModelCarrier"):
    def __init__(self, name: str, args: ModelCarrierArgs, opts: Optional[pulumi.ResourceOptions] = None):
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
            aliases=[pulumi.Alias(type_=_OLD_TYPE, name=_OLD_NAME)]))
        super().__init__(name, opts)
        model = args.model
        salt = f"{pulumi.get_project()}/{pulumi.get_stack()}"
        words = WordDigests(salt, frozenset(args.hidden.digests(salt))) if args.hidden else None
        manifest = carrier_manifest([w.manifest for w in model.workloads], subject_keys(model), model.environment,
                                    args.existing_pools, model.fleet, words)
        if args.secret.fleet_outputs and FLEET_KEY in manifest["data"]:
            manifest["data"][FLEET_KEY] = pulumi.Output.secret(manifest["data"][FLEET_KEY])
        if args.secret.any("expectedWorkloads"):
            manifest = {**manifest, "data": secret_value(manifest["data"])}
        old_parent = pulumi.create_urn(_OLD_NAME, _OLD_TYPE)
        self.config_map = KubernetesObject(
            f"{name}-{CARRIER_NAME}", manifest,
            self.child(provider=args.provider, aliases=[pulumi.Alias(name=_OLD_CHILD, parent=old_parent)]))
        self.register_outputs({"workloads": [w.label for w in model.workloads]})
