"""A stack's part in a MultiKueue fleet (`aks-kueue:fleet`).

- `read_fleet`: the other stacks' outputs, read through StackReferences before the model is built
  (`components/stack_outputs.py` says why they are awaited).
- `MultiKueueWorker`, on a worker: the access its manager gets, exactly as Kueue's
  `create-multikueue-kubeconfig.sh` creates it (the service account `multikueue-sa` in kueue-system,
  its ClusterRole and binding), one long-lived `kubernetes.io/service-account-token` Secret per token
  generation, and the kubeconfig of the newest: its token, the cluster's CA as data, the API server
  the deployer reaches, no exec plugin. It is exported as a secret.
- `MultiKueueManager`, on the manager: one Secret per worker in kueue-system holding that worker's
  kubeconfig (read from the worker's secret output, and kept secret), and the CRDs of the job
  integrations the manager runs (MultiKueue creates the job on the manager first; no job controller
  runs there). The MultiKueueClusters, the MultiKueueConfig and the AdmissionCheck are queue objects
  of the model (`KueueQueues` creates them after Kueue, each after what it names).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s
import yaml

from aks_kueue.kueue import multikueue as mk
from aks_kueue.kueue.multikueue import Role
from aks_kueue.model.fleet import FLEET_OUTPUT, KUBECONFIG_OUTPUT
from aks_kueue.model.desired import Model
from aks_kueue.model.fleet_outputs import FleetInputs, manager_outputs, worker_outputs
from aks_kueue.settings.fleet import Fleet as FleetSettings
from aks_kueue.versions import KUEUE_NAMESPACE
from components import Component
from components.kubernetes_object import RBAC_API, KubernetesObject, manifest, role_binding, service_account
from components.kueue_queues import ObjectKey
from components.stack_outputs import read_stacks, stack_references

SECRET_OUTPUTS = ["data", "stringData"]   # as pulumi-kubernetes' own Secret class marks them


@dataclass
class FleetReading:
    """What this stack read of its fleet: the inputs the model is built from, and the references,
    whose outputs (the workers' kubeconfigs) are handed on as Outputs, secrecy kept."""

    inputs: FleetInputs
    references: Mapping[str, pulumi.StackReference]

    @property
    def secret(self) -> bool:
        """Another member's `fleet` output is a secret (it derives from a secret stack key there), so
        what this stack makes of it is secret too."""
        return any(FLEET_OUTPUT in outputs.secret for outputs in self.inputs.others.values())


def read_fleet(fleet: FleetSettings, stack: str) -> FleetReading:
    """`stack` is this stack's own fully qualified name."""
    if fleet.role is Role.MANAGER:
        # Its own last outputs too: the teams it exported then, which its workers have had the chance to mirror.
        stacks, names = [w.stack for w in fleet.workers or []] + [stack], [FLEET_OUTPUT, KUBECONFIG_OUTPUT]
    else:
        stacks, names = [m for m in (fleet.manager,) if m], [FLEET_OUTPUT]   # the settings require one
    references = stack_references("fleet", stacks)
    read = read_stacks(references, names)
    return FleetReading(FleetInputs(stack, {s: outputs for s, outputs in read.items() if outputs and outputs.values}),
                        references)


@dataclass(frozen=True)
class MultiKueueWorkerArgs:
    generations: Sequence[int]             # token generations to keep, the exported one first
    cluster: str                           # the AKS cluster's name, the kubeconfig's cluster name
    deployer_kubeconfig: pulumi.Input[str]  # the program's own kubeconfig: the API server the manager reaches too
    provider: k8s.Provider
    installer: pulumi.Resource             # kueue-system exists once Kueue is installed
    summary: Mapping[str, Any] = field(default_factory=dict)   # the `fleet` output (fleet_outputs.worker_outputs)


class MultiKueueWorker(Component, kind="MultiKueueWorker"):
    kubeconfig: pulumi.Output[Optional[str]]   # None until the token controller has filled the Secret

    def __init__(self, name: str, args: MultiKueueWorkerArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)

        def after(*resources: pulumi.Resource, **options) -> pulumi.ResourceOptions:
            return self.child(provider=args.provider, depends_on=list(resources) or None, **options)

        account = KubernetesObject(f"{name}-sa", manifest("v1", "ServiceAccount", mk.SERVICE_ACCOUNT, KUEUE_NAMESPACE),
                                   after(args.installer))
        role = KubernetesObject(f"{name}-role", manifest(RBAC_API, "ClusterRole", mk.CLUSTER_ROLE,
                                                         rules=[dict(r) for r in mk.WORKER_RULES]), after())
        binding = KubernetesObject(f"{name}-binding", role_binding(
            "ClusterRoleBinding", mk.CLUSTER_ROLE_BINDING, "ClusterRole", mk.CLUSTER_ROLE,
            [service_account(mk.SERVICE_ACCOUNT, KUEUE_NAMESPACE)]), after(account, role))
        # The token controller fills each Secret's token and ca.crt; the provider waits for them
        # (pulumi/pulumi-kubernetes#2048). A token lives as long as its Secret: rotation adds a generation.
        self.tokens = {}
        for generation in args.generations:
            secret = manifest("v1", "Secret", mk.token_secret_name(generation), KUEUE_NAMESPACE,
                              type="kubernetes.io/service-account-token", data=None)
            secret["metadata"]["annotations"] = {"kubernetes.io/service-account.name": mk.SERVICE_ACCOUNT}
            self.tokens[generation] = KubernetesObject(f"{name}-token-{generation}", secret, after(
                account, binding, additional_secret_outputs=SECRET_OUTPUTS))
        newest = self.tokens[args.generations[0]]
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(newest.data, args.deployer_kubeconfig).apply(
            lambda both: worker_kubeconfig(both[0], both[1], args.cluster)))
        self.needs: dict[ObjectKey, list[pulumi.Resource]] = {}   # a worker's queue objects need none of it
        # The stack outputs its manager reads: the cluster's `fleet` summary and the kubeconfig (secret).
        self.exports = {FLEET_OUTPUT: dict(args.summary), KUBECONFIG_OUTPUT: self.kubeconfig}
        self.register_outputs({"serviceAccount": f"{KUEUE_NAMESPACE}/{mk.SERVICE_ACCOUNT}",
                               "tokenSecrets": [mk.token_secret_name(g) for g in args.generations]})


def worker_kubeconfig(data: Any, deployer_kubeconfig: Any, cluster: str) -> Optional[str]:
    """The kubeconfig the manager uses, from a token Secret's data (base64, as the API returns it) and
    the API server of the deployer's kubeconfig; None until the token controller has filled the Secret."""
    if not isinstance(data, Mapping) or not data.get("token") or not data.get("ca.crt"):
        return None
    deployer = yaml.safe_load(deployer_kubeconfig) if isinstance(deployer_kubeconfig, str) else None
    clusters = (deployer or {}).get("clusters") or []
    server = ((clusters[0] or {}).get("cluster") or {}).get("server") if clusters else None
    if not server:
        return None
    token_text = base64.b64decode(data["token"]).decode()
    config = mk.static_kubeconfig(server, data["ca.crt"], token_text, cluster)
    return yaml.safe_dump(config, sort_keys=False)


@dataclass(frozen=True)
class MultiKueueManagerArgs:
    reading: FleetReading
    workers: Sequence[tuple[str, str]]     # (name, stack) of each worker that exports a kubeconfig
    crd_frameworks: Sequence[str]          # the integrations whose CRDs this manager installs
    provider: k8s.Provider
    installer: pulumi.Resource
    summary: Mapping[str, Any] = field(default_factory=dict)   # the `fleet` output (fleet_outputs.manager_outputs)


class MultiKueueManager(Component, kind="MultiKueueManager"):
    def __init__(self, name: str, args: MultiKueueManagerArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        after_kueue = self.child(provider=args.provider, depends_on=[args.installer],
                                 additional_secret_outputs=SECRET_OUTPUTS)
        self.secrets: dict[str, pulumi.Resource] = {}
        for worker, stack in args.workers:
            # Not get_output: its Output.all lifts every nested value of the worker's outputs, per call.
            kubeconfig = args.reading.references[stack].outputs.apply(lambda outputs: outputs.get(KUBECONFIG_OUTPUT))
            self.secrets[worker] = KubernetesObject(f"{name}-kubeconfig-{worker}", manifest(
                "v1", "Secret", mk.kubeconfig_secret_name(worker), KUEUE_NAMESPACE, type="Opaque",
                stringData={mk.SECRET_KEY: pulumi.Output.secret(kubeconfig)}), after_kueue)
        # Kueue waits for a job CRD that appears after it starts (jobframework.WaitForAPI), so these need
        # no order with Kueue; each file is fetched by the provider at apply time.
        from pulumi_kubernetes.yaml.v2 import ConfigFile

        urls = list(dict.fromkeys(url for framework in args.crd_frameworks for url in mk.crd_urls(framework)))
        self.crds = [ConfigFile(f"{name}-crd-{url.rsplit('/', 1)[-1].removesuffix('.yaml')}", file=url,
                                opts=self.child(providers=[args.provider]))
                     for url in urls]
        # Each MultiKueueCluster waits for its kubeconfig Secret (and goes before it).
        self.needs: dict[ObjectKey, list[pulumi.Resource]] = {
            ("MultiKueueCluster", None, worker): [secret] for worker, secret in self.secrets.items()}
        # The stack output every worker reads: the teams, and the token generation held of each worker.
        self.exports = {FLEET_OUTPUT: dict(args.summary)}
        self.register_outputs({"workers": [w for w, _ in args.workers], "crds": urls})


def fleet_member(name: str, model: Model, reading: FleetReading, provider: k8s.Provider, installer: pulumi.Resource,
                 deployer_kubeconfig: pulumi.Input[str]) -> "MultiKueueWorker | MultiKueueManager":
    """The component of this stack's role in its fleet."""
    fleet, cluster = model.fleet, model.cluster
    assert fleet is not None and cluster is not None, "a fleet member's model has both"
    if fleet.role is Role.WORKER:
        return MultiKueueWorker(name, MultiKueueWorkerArgs(
            generations=fleet.token_generations, cluster=cluster.name, deployer_kubeconfig=deployer_kubeconfig,
            provider=provider, installer=installer, summary=worker_outputs(model)))
    return MultiKueueManager(name, MultiKueueManagerArgs(
        reading=reading, workers=[(w.name, w.stack) for w in fleet.ready_workers], crd_frameworks=fleet.crds,
        provider=provider, installer=installer, summary=manager_outputs(model)))
