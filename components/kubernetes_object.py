"""Register a built-in Kubernetes object from a plain manifest.

The typed classes (`pulumi_kubernetes.apps.v1.DaemonSet`, `core.v1.Namespace`) send
the engine exactly this: their type token and `apiVersion`, `kind`, `metadata` and
`spec`. Importing them, though, loads the whole typed core/v1 SDK, for objects the
program writes as plain dicts anyway.

It also serves Kueue's WorkloadPriorityClass, whose `value` sits beside `metadata`
rather than in a `spec`, which the Python `apiextensions.CustomResource` cannot carry.
"""

from __future__ import annotations

from typing import Any, Optional

import pulumi

from aks_kueue.compat import kubernetes_utilities
from aks_kueue.model.conventions import MANAGED_BY
from aks_kueue.settings.base import snake

RBAC_API = "rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"


def manifest(api_version: str, kind: str, name: str, namespace: Optional[str] = None, **fields: Any) -> dict[str, Any]:
    """An object the program manages, labelled so, with its other top-level `fields` (`spec`, `rules`, ...)."""
    metadata = {"name": name, **({"namespace": namespace} if namespace else {}), "labels": dict(MANAGED_BY)}
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **fields}


def role_binding(kind: str, name: str, role_kind: str, role: str, subjects: list[dict[str, str]],
                 namespace: Optional[str] = None) -> dict[str, Any]:
    """A (Cluster)RoleBinding of `role` to `subjects`."""
    return manifest(RBAC_API, kind, name, namespace, roleRef={"apiGroup": RBAC_GROUP, "kind": role_kind, "name": role},
                    subjects=subjects)


def service_account(name: str, namespace: str) -> dict[str, str]:
    """A ServiceAccount as a binding's subject."""
    return {"kind": "ServiceAccount", "name": name, "namespace": namespace}


def type_token(api_version: str, kind: str) -> str:
    """`apps/v1` -> `kubernetes:apps/v1:Kind`; the core group is spelled `core/v1`."""
    group_version = api_version if "/" in api_version else f"core/{api_version}"
    return f"kubernetes:{group_version}:{kind}"


class KubernetesObject(pulumi.CustomResource):
    # Outputs the SDK sets from the object's fields (`data` only on objects that have it: a Secret's).
    metadata: pulumi.Output[Any]
    data: pulumi.Output[Any]

    def __init__(self, name: str, manifest: dict[str, Any], opts: pulumi.ResourceOptions, patch: bool = False):
        """`patch=True` registers the `<Kind>Patch` resource: a server-side apply patch of the
        fields given, on an object the stack does not own (deleting it only gives the fields up)."""
        props = {**manifest, "status": None}
        # As the SDK's classes do: bind the object to this pulumi-kubernetes plugin version.
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=kubernetes_utilities.get_version()))
        kind = manifest["kind"] + ("Patch" if patch else "")
        super().__init__(type_token(manifest["apiVersion"], kind), name, props, opts)


RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"


class HelmRelease(pulumi.CustomResource):
    """A Helm release (`kubernetes:helm.sh/v3:Release`) from the provider's own input names.

    The typed `pulumi_kubernetes.helm.v3.Release` sends the engine exactly this: its type
    token, the inputs given in camelCase, `compat: "true"` (which it always sets), the
    `status` output, and options bound to this pulumi-kubernetes plugin version; it adds
    no aliases. Importing it, though, loads the Helm and YAML modules and `requests`, for a
    resource the program describes in plain values anyway."""

    status: pulumi.Output[Any]

    def __init__(self, name: str, inputs: dict[str, Any], opts: pulumi.ResourceOptions):
        if not inputs.get("chart"):
            raise TypeError("Missing required property 'chart'")
        # In the typed class's order (alphabetical by its Python names, then its outputs), which
        # is the order of the wire object, and so of the recorded inputs.
        given = {**inputs, "compat": "true"}
        props = {key: given[key] for key in sorted(given, key=snake)}
        props["status"] = None
        # As the typed class does: its option defaults first, then the caller's.
        opts = pulumi.ResourceOptions.merge(kubernetes_utilities.get_resource_opts_defaults(), opts)
        super().__init__(RELEASE_TYPE, name, props, opts)