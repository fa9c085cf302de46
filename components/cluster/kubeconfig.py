"""Make an AKS exec kubeconfig usable by a non-interactive `pulumi up`.

AKS hands out Entra ID (exec) kubeconfigs whose kubelogin call logs in with a device
code, which waits for a human. Pulumi's Kubernetes provider runs unattended, so the
login is switched to the Azure CLI's session, as `kubelogin convert-kubeconfig -l azurecli`
would do. Locally that is `az login`; in CI it is `azure/login`.
"""

from __future__ import annotations

import base64

import yaml


def use_azure_cli_login(kubeconfig: str) -> str:
    doc = yaml.safe_load(kubeconfig)
    for user in doc.get("users") or []:
        exec_ = (user.get("user") or {}).get("exec")
        if not exec_ or "kubelogin" not in str(exec_.get("command", "")):
            continue
        args = list(exec_.get("args") or [])
        if "--login" in args:
            index = args.index("--login")
            args[index + 1: index + 2] = ["azurecli"]
        else:
            args += ["--login", "azurecli"]
        exec_["args"] = args
    return yaml.safe_dump(doc, sort_keys=False)


def decode_first(kubeconfigs) -> str:
    """The credentials call returns base64 kubeconfigs; the cluster user's is the first."""
    if not kubeconfigs:
        raise ValueError("AKS returned no kubeconfig for the cluster")
    first = kubeconfigs[0]
    value = first["value"] if isinstance(first, dict) else first.value
    return base64.b64decode(value).decode()
