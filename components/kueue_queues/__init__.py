"""Kueue's queue objects, and the namespaces their LocalQueues live in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from aks_kueue.day2.allow import Protection
from aks_kueue.day2.names import DELETE_TIMEOUT, immutable_paths, legacy_aliases, logical_name
from aks_kueue.model import KueueItem, Namespace
from aks_kueue.model.record import namespace_entry
from components import Component, token
from components.kubernetes_object import KubernetesObject, type_token
from components.secret import NO_SECRET_KEYS, SecretKeys


# An object of the model by (kind, namespace, name).
ObjectKey = tuple[str, Optional[str], str]


@dataclass(frozen=True)
class KueueQueuesArgs:
    # The model's objects, referenced kinds first, and the namespaces of their LocalQueues.
    objects: Sequence[KueueItem]
    namespaces: Sequence[Namespace]
    provider: k8s.Provider
    installer: pulumi.Resource
    protection: Protection
    # What an object needs besides Kueue and the objects it names, by (kind, namespace, name): a
    # MultiKueueCluster its kubeconfig Secret.
    needs: Mapping[ObjectKey, Sequence[pulumi.Resource]] = field(default_factory=dict)
    # The secret keys: every object is secret where aks-kueue:queues or queueManifests is one (or the
    # fleet's outputs this stack mirrors are), an object built from another (`KueueItem.derived_from`,
    # a flavor from `nodePools`) where that one is.
    secret: SecretKeys = NO_SECRET_KEYS


class KueueQueues(Component, kind="KueueQueues"):
    """Every object depends on the installer: it is created after Kueue's CRDs and
    webhooks exist, and deleted while Kueue's controller still runs its finalizers.

    Each object also depends on the objects it names, so Pulumi, which deletes dependents
    first (in the state's order for objects that left the program), deletes LocalQueues, then
    ClusterQueues, then Cohorts, ResourceFlavors and AdmissionChecks, then Topologies, then the
    Kueue install: each goes while nothing Kueue counts as a user of it is left. A delete that
    Kueue's resource-in-use finalizer still holds (a ClusterQueue with reserved workloads) fails
    after `DELETE_TIMEOUT` with pulumi-kubernetes's timeout error instead of waiting its default
    10 minutes; the object stays Terminating and the next `pulumi up` tries again.

    Team namespaces the program creates are kept in the cluster when they leave the stack
    (retainOnDelete), unless allowReplacement lists them; namespaces in existingNamespaces
    only get their labels patched (server-side apply), never created, owned or deleted."""

    def __init__(self, name: str, args: KueueQueuesArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(name, opts)
        self._prefix = name  # the names of its resources start with its own
        self._args = args
        self.namespaces = {}
        for namespace in args.namespaces:
            manifest = {"apiVersion": "v1", "kind": "Namespace",
                        "metadata": {"name": namespace.name, "labels": self._secret(dict(namespace.labels))}}
            self.namespaces[namespace.name] = KubernetesObject(
                f"{name}-namespace-{namespace.name}", manifest, patch=namespace.existing, opts=self.child(
                    provider=args.provider, retain_on_delete=None if namespace.existing else args.protection.retains(
                        namespace_entry(namespace.name))))
        # The old logical names of objects an earlier release named otherwise; each object hands its
        # old URN to the `aliases` option. (Not `self._aliases`: that is pulumi.Resource's own, which
        # the SDK reads to alias this component's children.)
        self._old_names = legacy_aliases(name, [(o.kind, o.namespace, o.name) for o in args.objects])
        self.objects: dict[ObjectKey, pulumi.Resource] = {}
        for obj in args.objects:  # referenced kinds come first
            self.objects[(obj.kind, obj.namespace, obj.name)] = self._register(obj)
        self.summary = {kind: [f"{ns}/{n}" if ns else n for (k, ns, n) in self.objects if k == kind]
                        for kind in dict.fromkeys(k for (k, _, _) in self.objects)}
        self.register_outputs({"objects": self.summary, "namespaces": list(self.namespaces)})

    def _secret(self, value, obj: Optional[KueueItem] = None):
        keys = self._args.secret
        secret = keys.any("queues", "queueManifests") or keys.fleet_outputs \
            or (obj is not None and keys.any(*obj.derived_from))
        return pulumi.Output.secret(value) if secret else value

    def _register(self, obj: KueueItem) -> pulumi.Resource:
        manifest = dict(obj.manifest)
        metadata = dict(manifest["metadata"])
        fields = {k: v for k, v in manifest.items() if k not in ("apiVersion", "kind", "metadata")}
        key = (obj.kind, obj.namespace, obj.name)
        name = logical_name(self._prefix, obj.kind, obj.namespace, obj.name)
        spec = manifest.get("spec")
        immutable = immutable_paths(obj.kind, spec if isinstance(spec, dict) else None)
        old = self._old_names.get(key)
        opts = self.child(
            provider=self._args.provider, depends_on=[self._args.installer, *self._references(obj)],
            # A field Kueue declares immutable replaces the object instead of failing the update;
            # the same name cannot exist twice, so the old one goes first.
            replace_on_changes=immutable or None, delete_before_replace=True if immutable else None,
            custom_timeouts=pulumi.CustomTimeouts(delete=DELETE_TIMEOUT),
            aliases=[self._old_urn(obj, old)] if old else None)
        if set(fields) - {"spec"}:
            body = {**manifest, "metadata": metadata}
            body = {k: (self._secret(v, obj) if k not in ("apiVersion", "kind", "metadata") else v)
                    for k, v in body.items()}
            return KubernetesObject(name, body, opts)
        return k8s.apiextensions.CustomResource(
            name, api_version=manifest["apiVersion"], kind=obj.kind, metadata=metadata,
            spec=self._secret(fields.get("spec"), obj), opts=opts)

    def _old_urn(self, obj: KueueItem, old_name: str) -> str:
        """The URN the object had under its old name (this component sits at the stack root).
        A URN is what the engine compares; handing it over whole spares the SDK resolving an
        alias spec for each of possibly thousands of LocalQueues."""
        kind = type_token(obj.manifest["apiVersion"], obj.kind)
        return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{token('KueueQueues')}${kind}::{old_name}"

    def _references(self, obj: KueueItem) -> list[pulumi.Resource]:
        spec = obj.manifest.get("spec")
        if not isinstance(spec, dict):
            spec = {}
        wanted: list[tuple[str, Optional[str], Any]] = []   # the name as written; a wrong one matches nothing
        if obj.kind == "ResourceFlavor" and spec.get("topologyName"):
            wanted.append(("Topology", None, spec["topologyName"]))
        if obj.kind == "Cohort" and spec.get("parentName"):
            wanted.append(("Cohort", None, spec["parentName"]))
        if obj.kind in ("ClusterQueue", "Cohort"):
            wanted += [("ResourceFlavor", None, f.get("name")) for g in spec.get("resourceGroups") or []
                       for f in g.get("flavors") or []]
        if obj.kind == "ClusterQueue":
            if spec.get("cohortName"):
                wanted.append(("Cohort", None, spec["cohortName"]))
            wanted += [("AdmissionCheck", None, c.get("name"))
                       for c in (spec.get("admissionChecksStrategy") or {}).get("admissionChecks") or []]
        if obj.kind == "AdmissionCheck":
            parameters = spec.get("parameters") or {}
            if parameters.get("kind") in ("ProvisioningRequestConfig", "MultiKueueConfig"):
                wanted.append((str(parameters["kind"]), None, parameters.get("name")))
        if obj.kind == "MultiKueueConfig":
            wanted += [("MultiKueueCluster", None, name) for name in spec.get("clusters") or []]
        if obj.kind == "LocalQueue":
            wanted.append(("ClusterQueue", None, spec.get("clusterQueue")))
        found = [self.objects[key] for key in dict.fromkeys(wanted) if key in self.objects]
        found += self._args.needs.get((obj.kind, obj.namespace, obj.name), [])
        if obj.kind == "LocalQueue" and obj.namespace in self.namespaces:
            found.append(self.namespaces[obj.namespace])
        return found
