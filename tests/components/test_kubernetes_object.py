"""The plain-manifest registration sends the engine what the typed SDK class sends."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from aks_kueue.preview.mocks import OfflineMocks
from aks_kueue.preview.recorder import RecordingMonitor
from components.kubernetes_object import KubernetesObject, type_token

MANIFEST = {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "x", "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": {"a": "b"}},
                     "template": {"metadata": {"labels": {"a": "b"}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}}}}


def test_same_token_and_inputs_as_the_typed_class():
    monitor = RecordingMonitor(OfflineMocks())
    pulumi.runtime.set_mocks(monitor.mocks, project="p", stack="s", preview=True, monitor=monitor)

    def program():
        KubernetesObject("plain", MANIFEST, pulumi.ResourceOptions())
        k8s.apps.v1.DaemonSet("typed", metadata=MANIFEST["metadata"], spec=MANIFEST["spec"])

    pulumi.runtime.test(program)()
    plain, typed = sorted(monitor.registrations, key=lambda r: r.name)
    assert plain.type == typed.type == "kubernetes:apps/v1:DaemonSet"
    assert plain.inputs == typed.inputs


def test_core_group_tokens():
    assert type_token("v1", "Namespace") == "kubernetes:core/v1:Namespace"
    assert type_token("apps/v1", "DaemonSet") == "kubernetes:apps/v1:DaemonSet"


def test_helm_release_sends_what_the_typed_release_sends():
    """Every field of the RegisterResourceRequest but the name (and the source position): the
    object with its key order, the options, the plugin version binding, no aliases."""
    from google.protobuf import json_format
    from pulumi.runtime.mocks import MockMonitor

    from components.kubernetes_object import HelmRelease

    class Capture(MockMonitor):
        def __init__(self, mocks):
            super().__init__(mocks)
            self.requests = {}

        def RegisterResource(self, request):
            self.requests[request.name] = request
            return super().RegisterResource(request)

    monitor = Capture(OfflineMocks())
    pulumi.runtime.set_mocks(monitor.mocks, project="p", stack="s", preview=True, monitor=monitor)

    def program():
        from pulumi_kubernetes.helm.v3 import Release

        provider = k8s.Provider("k8s", kubeconfig="config")
        before = KubernetesObject("before", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}},
                                  pulumi.ResourceOptions(provider=provider))
        values = {"controllerManager": {"replicas": 1}, "snake_key": {"a_b": [1, "two"]}}
        for secret in (False, True):
            given = pulumi.Output.secret(values) if secret else values

            def opts():
                return pulumi.ResourceOptions(provider=provider, protect=True, depends_on=[before])
            Release(f"typed-{secret}", name="kueue", chart="oci://example/kueue", version="0.19.2",
                    namespace="kueue-system", create_namespace=True, values=given, timeout=600, opts=opts())
            HelmRelease(f"plain-{secret}", {"name": "kueue", "chart": "oci://example/kueue", "version": "0.19.2",
                                            "namespace": "kueue-system", "createNamespace": True, "values": given,
                                            "timeout": 600}, opts())

    pulumi.runtime.test(program)()
    for secret in (False, True):
        typed, plain = monitor.requests[f"typed-{secret}"], monitor.requests[f"plain-{secret}"]
        assert plain.type == typed.type == "kubernetes:helm.sh/v3:Release"
        assert list(json_format.MessageToDict(plain.object)) == list(json_format.MessageToDict(typed.object))
        for field in typed.DESCRIPTOR.fields:
            if field.name not in ("name", "sourcePosition", "stackTrace", "parentStackTraceHandle"):
                assert getattr(plain, field.name) == getattr(typed, field.name), field.name
        assert plain.version and not plain.aliases and plain.protect
