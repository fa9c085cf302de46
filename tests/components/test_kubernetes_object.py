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
