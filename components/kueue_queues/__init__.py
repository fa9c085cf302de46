"""Kueue's queue objects, and the namespaces their LocalQueues live in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from aks_kueue.model import KueueItem, Namespace
from components import token
from components.kubernetes_object import KubernetesObject


@dataclass(frozen=True)
class KueueQueuesArgs:
    # The model's objects, referenced kinds first, and the namespaces of their LocalQueues.
    objects: Sequence[KueueItem]
    namespaces: Sequence[Namespace]
    provider: k8s.Provider
    installer: pulumi.Resource


class KueueQueues(pulumi.ComponentResource):
    """Every object depends on the installer: it is created after Kueue's CRDs and
    webhooks exist, and deleted while Kueue's controller still runs its finalizers."""

    def __init__(self, name: str, args: KueueQueuesArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(token("KueueQueues"), name, None, opts)
        self._name = name
        self._args = args
        self.namespaces = {
            namespace.name: KubernetesObject(
                f"{name}-namespace-{namespace.name}",
                {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": namespace.name, "labels": dict(namespace.labels)}},
                pulumi.ResourceOptions(parent=self, provider=args.provider))
            for namespace in args.namespaces if not namespace.existing
        }
        self.objects: dict[tuple[str, Optional[str], str], pulumi.Resource] = {}
        for obj in args.objects:  # referenced kinds come first
            self.objects[(obj.kind, obj.namespace, obj.name)] = self._register(obj)
        self.summary = {kind: [f"{ns}/{n}" if ns else n for (k, ns, n) in self.objects if k == kind]
                        for kind in dict.fromkeys(k for (k, _, _) in self.objects)}
        self.register_outputs({"objects": self.summary, "namespaces": list(self.namespaces)})

    def _register(self, obj: KueueItem) -> pulumi.Resource:
        manifest = dict(obj.manifest)
        metadata = dict(manifest["metadata"])
        fields = {k: v for k, v in manifest.items() if k not in ("apiVersion", "kind", "metadata")}
        where = f"{obj.namespace}-{obj.name}" if obj.namespace else obj.name
        name = f"{self._name}-{obj.kind.lower()}-{where}"
        opts = pulumi.ResourceOptions(parent=self, provider=self._args.provider,
                                      depends_on=[self._args.installer, *self._references(obj)])
        if set(fields) - {"spec"}:
            return KubernetesObject(name, {**manifest, "metadata": metadata}, opts)
        return k8s.apiextensions.CustomResource(
            name, api_version=manifest["apiVersion"], kind=obj.kind, metadata=metadata,
            spec=fields.get("spec"), opts=opts)

    def _references(self, obj: KueueItem) -> list[pulumi.Resource]:
        spec = obj.manifest.get("spec") if isinstance(obj.manifest.get("spec"), dict) else {}
        wanted: list[tuple[str, Optional[str], str]] = []
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
            if parameters.get("kind") == "ProvisioningRequestConfig":
                wanted.append(("ProvisioningRequestConfig", None, parameters.get("name")))
        if obj.kind == "LocalQueue":
            wanted.append(("ClusterQueue", None, spec.get("clusterQueue")))
        found = [self.objects[key] for key in dict.fromkeys(wanted) if key in self.objects]
        if obj.kind == "LocalQueue" and obj.namespace in self.namespaces:
            found.append(self.namespaces[obj.namespace])
        return found
