"""What the Azure and Kubernetes providers would answer, without a cloud.

In preview (the default) a resource's outputs are its inputs and everything the cloud
computes is unknown, as in a first `pulumi preview` of a new stack. In update mode
the mocks also fill in ids, names and the kubeconfig, so apply-time code runs too.
"""

from __future__ import annotations

import base64
from typing import Any, Mapping, Optional

import pulumi

# The Azure name input of each resource type, which azure-native also reports as `name`.
_AZURE_NAME_INPUT = {
    "azure-native:resources:ResourceGroup": "resourceGroupName",
    "azure-native:containerservice:ManagedCluster": "resourceName",
    "azure-native:containerservice:AgentPool": "agentPoolName",
    "azure-native:kubernetesconfiguration:Extension": "extensionName",
}

FAKE_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
FAKE_OBJECT_ID = "11111111-1111-1111-1111-111111111111"
FAKE_TENANT = "22222222-2222-2222-2222-222222222222"


def fake_kubeconfig(exec_login: bool) -> str:
    user = ("    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: kubelogin\n"
            "      args: [get-token, --environment, AzurePublicCloud, --server-id, 6dae42f8-4368-4678-94ff-"
            "3960e28e3630, --client-id, 80faf920-1908-4b52-b5ef-a8e7bedfc67a, --tenant-id, "
            f"{FAKE_TENANT}, --login, devicecode]\n"
            if exec_login else "    client-certificate-data: Y2VydA==\n    client-key-data: a2V5\n")
    return ("apiVersion: v1\nkind: Config\nclusters:\n- name: aks\n  cluster:\n"
            "    server: https://aks.example.invalid:443\n    certificate-authority-data: Y2E=\n"
            "contexts:\n- name: aks\n  context: {cluster: aks, user: aks-user}\ncurrent-context: aks\n"
            f"users:\n- name: aks-user\n  user:\n{user}")


STACK_REFERENCE = "pulumi:pulumi:StackReference"
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"


class OfflineMocks(pulumi.runtime.Mocks):
    """`unknown_outputs`: as in a first real `pulumi preview`, report back only the inputs, so that
    every output the cloud computes (an Azure resource's `name` too) stays unknown, and so does
    every input of another resource built from it. `previous_outputs` is what `pulumi stack output
    --json` printed for the stack: the StackReference the program holds to its own stack reads it
    (an empty map: a new stack). `stack_outputs` holds the same for other stacks, by their fully
    qualified name (a fleet's members read each other); a stack not given has no outputs."""

    def __init__(self, preview: bool = True, unknown_outputs: bool = False,
                 previous_outputs: Optional[Mapping[str, Any]] = None,
                 stack_outputs: Optional[Mapping[str, Mapping[str, Any]]] = None, own_stack: Optional[str] = None):
        self.preview = preview
        self.unknown_outputs = unknown_outputs
        self.previous_outputs = dict(previous_outputs or {})
        self.stack_outputs = {name: dict(outputs) for name, outputs in (stack_outputs or {}).items()}
        self.own_stack = own_stack
        self.calls: list[str] = []

    def echo(self, type_token: str) -> Optional[tuple[str, ...]]:
        """In a preview a resource's outputs are its inputs, plus `name` copied from an Azure
        name input: the fields to copy, so the recorder can answer without decoding the inputs
        (None where `new_resource` must answer)."""
        if not self.preview or type_token == STACK_REFERENCE:
            return None
        name_input = _AZURE_NAME_INPUT.get(type_token)
        return (name_input,) if name_input and not self.unknown_outputs else ()

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        if args.typ == STACK_REFERENCE:
            # A read, known in a preview too, as the engine reads stack references at preview.
            name = args.inputs["name"]   # a StackReference always names its stack
            outputs = self.stack_outputs.get(name, self.previous_outputs if self.own_stack in (None, name) else {})
            return args.resource_id or name, {
                "name": name, "outputs": outputs,
                "secretOutputNames": sorted(k for k, v in outputs.items() if v == "[secret]")}
        outputs = dict(args.inputs)
        name_input = _AZURE_NAME_INPUT.get(args.typ)
        if name_input and name_input in outputs and not self.unknown_outputs:
            outputs["name"] = outputs[name_input]
        if self.preview:
            return "", outputs
        if args.typ == "azure-native:containerservice:ManagedCluster":
            outputs["oidcIssuerProfile"] = {**(outputs.get("oidcIssuerProfile") or {}),
                                            "issuerUrl": "https://oidc.example.invalid/"}
        if args.typ == "azure-native:kubernetesconfiguration:Extension":
            outputs.setdefault("currentVersion", outputs.get("version") or "0.0.0-offline")
        if args.typ == "kubernetes:core/v1:Secret" and outputs.get("type") == SERVICE_ACCOUNT_TOKEN:
            # What the token controller fills in (base64, as the API returns it).
            outputs["data"] = {"token": base64.b64encode(f"offline-token-{args.name}".encode()).decode(),
                               "ca.crt": base64.b64encode(b"offline-ca").decode()}
        return f"/offline/{args.typ}/{args.name}", outputs

    def call(self, args: pulumi.runtime.MockCallArgs):
        self.calls.append(args.token)
        if args.token in ("azure-native:containerservice:listManagedClusterUserCredentials",
                          "azure-native:containerservice:listManagedClusterAdminCredentials"):
            exec_login = args.token.endswith("UserCredentials")
            value = base64.b64encode(fake_kubeconfig(exec_login).encode()).decode()
            return {"kubeconfigs": [{"name": "clusterUser", "value": value}]}
        if args.token == "azure-native:authorization:getClientConfig":
            return {"clientId": "offline", "objectId": FAKE_OBJECT_ID, "subscriptionId": FAKE_SUBSCRIPTION,
                    "tenantId": FAKE_TENANT}
        return {}
