"""MultiKueue as Kueue v0.19.2 defines it: the objects a manager needs, the access a worker grants,
and the kubeconfigs the manager's controller accepts.

Sources (kubernetes-sigs/kueue at v0.19.2):
- `apis/kueue/v1beta2/multikueue_types.go`: `MultiKueueConfigSecretKey` ("kubeconfig"), the
  controller name, `MultiKueueConfig.spec.clusters` (1 to 20, unique, in the order the Incremental
  dispatcher nominates them) and `quotaManagement` (Manual, Automated).
- `site/static/examples/multikueue/create-multikueue-kubeconfig.sh`: the worker's service account
  `multikueue-sa` in `kueue-system`, its ClusterRole and binding (`WORKER_RULES`, rule for rule in
  `data/multikueue.yaml`, with the integrations MultiKueue dispatches and their CRD files), and a
  long-lived `kubernetes.io/service-account-token` Secret whose token and `ca.crt` make a
  static-token kubeconfig.
- `pkg/controller/admissionchecks/multikueue/multikueuecluster.go` `validateKubeconfig` and
  `validateRestConfig`: the refusals of `kubeconfig_problems` (the cluster reports them as
  `InsecureKubeConfig`; the deprecated gate that allowed them is locked off).
- `pkg/cache/scheduler/clusterqueue.go` `inactiveReason`: a ClusterQueue with two MultiKueue checks,
  one per flavor, or one beside a ProvisioningRequest check stays inactive.
- `keps/9988-multikueue-manager-quota-automation`: `Automated` sums the worker quotas into a manager
  ClusterQueue of exactly one ResourceFlavor, behind the alpha gate MultiKueueManagerQuotaAutomation.
"""

from __future__ import annotations

import ipaddress
import re
from enum import Enum
from typing import Any, Mapping, Optional
from pathlib import Path
from urllib.parse import urlsplit

from aks_kueue.k8s.objects import map_at
from aks_kueue.k8s import names
from aks_kueue.k8s.loader import data_file
from aks_kueue.kueue.convert import GROUP, V1BETA2
from aks_kueue.versions import JOB_CRD_RELEASES

CONTROLLER = "kueue.x-k8s.io/multikueue"


class Role(str, Enum):
    """A cluster's role in MultiKueue (concepts/multikueue.md, "Cluster Roles")."""

    MANAGER = "manager"
    WORKER = "worker"

    def __str__(self) -> str:
        return self.value


SECRET_KEY = "kubeconfig"
# The label MultiKueue puts on what it creates in a worker (`MultiKueueOriginLabel`), and its value unless the
# manager's Configuration sets `multiKueue.origin` (`DefaultMultiKueueOrigin`, apis/config/v1beta2/defaults.go).
ORIGIN_LABEL = "kueue.x-k8s.io/multikueue-origin"
DEFAULT_ORIGIN = "multikueue"
MAX_CLUSTERS = 20
MANUAL, AUTOMATED = "Manual", "Automated"
QUOTA_GATE = "MultiKueueManagerQuotaAutomation"
# The names this program gives the manager's objects (one check and one config per manager).
CHECK_NAME = "multikueue"
CONFIG_NAME = "multikueue"

# The worker's side, exactly as the upstream script creates it.
SERVICE_ACCOUNT = "multikueue-sa"
CLUSTER_ROLE = f"{SERVICE_ACCOUNT}-role"
CLUSTER_ROLE_BINDING = f"{SERVICE_ACCOUNT}-crb"
_DATA = data_file(Path(__file__).resolve().parent / "data" / "multikueue.yaml")

# The worker ClusterRole's rules, in the script's order.
WORKER_RULES: tuple[dict[str, Any], ...] = tuple(_DATA["worker_rules"])
# The integrations MultiKueue can dispatch (each has a MultiKueueAdapter under pkg/controller/jobs).
DISPATCHABLE = frozenset(_DATA["dispatchable"])
# The CRD files of each integration whose jobs are not built in: the project (`JOB_CRD_RELEASES`) and paths.
JOB_CRDS: dict[str, tuple[str, tuple[str, ...]]] = {
    framework: (project, tuple(paths)) for framework, (project, paths) in _DATA["job_crds"].items()}


def crd_urls(framework: str) -> tuple[str, ...]:
    """Where the CRDs of an integration's jobs are published; none for jobs the API server has built in."""
    project, paths = JOB_CRDS.get(framework, ("", ()))
    if not project:
        return ()
    repository, tag = JOB_CRD_RELEASES[project]
    return tuple(f"https://raw.githubusercontent.com/{repository}/{tag}/{path}" for path in paths)


def token_secret_name(generation: int) -> str:
    """The service-account-token Secret of one token generation (rotation adds the next one)."""
    return f"{SERVICE_ACCOUNT}-token-{generation}"


def kubeconfig_secret_name(worker: str) -> str:
    """The manager's Secret holding one worker's kubeconfig, in kueue-system."""
    return f"multikueue-{worker}"


def cluster_manifest(worker: str) -> dict[str, Any]:
    return {"apiVersion": V1BETA2, "kind": "MultiKueueCluster", "metadata": {"name": worker},
            "spec": {"clusterSource": {"kubeConfig": {"location": kubeconfig_secret_name(worker),
                                                      "locationType": "Secret"}}}}


def config_manifest(workers: list[str], quota_management: Optional[str] = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"clusters": list(workers)}
    if quota_management is not None:
        spec["quotaManagement"] = quota_management
    return {"apiVersion": V1BETA2, "kind": "MultiKueueConfig", "metadata": {"name": CONFIG_NAME}, "spec": spec}


def check_manifest() -> dict[str, Any]:
    return {"apiVersion": V1BETA2, "kind": "AdmissionCheck", "metadata": {"name": CHECK_NAME},
            "spec": {"controllerName": CONTROLLER,
                     "parameters": {"apiGroup": GROUP, "kind": "MultiKueueConfig", "name": CONFIG_NAME}}}


def is_multikueue(check: Mapping[str, Any]) -> bool:
    spec = map_at(check, "spec")
    return spec.get("controllerName") == CONTROLLER


def config_of(check: Mapping[str, Any]) -> Optional[str]:
    """The MultiKueueConfig a MultiKueue AdmissionCheck names."""
    spec = map_at(check, "spec")
    parameters = map_at(spec, "parameters")
    name = parameters.get("name")
    return name if parameters.get("kind") == "MultiKueueConfig" and isinstance(name, str) else None


def static_kubeconfig(server: str, ca_data: str, token: str, cluster: str) -> dict[str, Any]:
    """The kubeconfig the upstream script writes: the cluster CA as data, the token inline, no exec."""
    user = f"{cluster}-{SERVICE_ACCOUNT}"
    return {"apiVersion": "v1", "kind": "Config", "preferences": {},
            "clusters": [{"name": cluster, "cluster": {"server": server, "certificate-authority-data": ca_data}}],
            "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": user}}],
            "current-context": cluster,
            "users": [{"name": user, "user": {"token": token}}]}


def kubeconfig_problems(config: Any) -> list[str]:
    """Why Kueue's MultiKueue controller would refuse this kubeconfig (parsed), in its words; empty
    when it accepts it. Never quotes a value of the kubeconfig: it holds a credential."""
    if not isinstance(config, Mapping):
        return ["failed to parse kubeconfig: not a kubeconfig map"]
    problems = _client_problems(config)
    for entry in _named(config.get("users")):
        user = found if isinstance(found := entry.get("user"), Mapping) else {}
        name = entry.get("name")
        if user.get("tokenFile"):
            problems.append(f"user {name}: tokenFile is not allowed")
        if user.get("exec") is not None:
            problems.append(f"user {name}: exec plugins are not allowed (an Entra ID kubeconfig logs in through "
                            "kubelogin, an exec plugin)")
        if user.get("auth-provider") is not None:
            problems.append(f"user {name}: auth providers are not allowed")
        if user.get("username") or user.get("password"):
            problems.append(f"user {name}: basic auth is not allowed")
    for entry in _named(config.get("clusters")):
        cluster = found if isinstance(found := entry.get("cluster"), Mapping) else {}
        name = entry.get("name")
        if cluster.get("insecure-skip-tls-verify") is True:
            problems.append(f"cluster {name}: insecure TLS verification is not allowed")
        if cluster.get("certificate-authority"):
            problems.append(f"cluster {name}: certificate-authority file paths are not allowed, use "
                            "certificate-authority-data")
        server = cluster.get("server")
        if not server:
            problems.append(f"cluster {name}: server URL is required")
        elif not _trusted_host(str(server)):
            problems.append(f"cluster {name}: untrusted server endpoint (its host is neither an IP address nor a "
                            "DNS-1123 name)")
    return problems


def _client_problems(config: Mapping[str, Any]) -> list[str]:
    """Whether client-go can build a client from it at all (Kueue loads it with clientcmd.RESTConfigFromKubeConfig):
    a context to use, naming a cluster and a user the file has; in client-go's words."""
    clusters = {e.get("name") for e in _named(config.get("clusters"))}
    users = {e.get("name") for e in _named(config.get("users"))}
    contexts: dict[Any, Mapping[str, Any]] = {e.get("name"): context if isinstance(context := e.get("context"), Mapping)
                                              else {} for e in _named(config.get("contexts"))}
    if not clusters or not contexts:
        missing = " and ".join(part for part, empty in (("clusters", not clusters), ("contexts", not contexts))
                               if empty)
        return [f"it has no {missing}, so no client can be built from it (client-go: \"invalid configuration: no "
                "configuration has been provided\")"]
    current = config.get("current-context")
    if not current:
        return ["it names no current-context, so no client can be built from it (client-go: \"invalid configuration: "
                "no configuration has been provided\")"]
    if current not in contexts:
        return [f"current-context {current} names no context of the file (client-go: \"context was not found for "
                "specified context\")"]
    context = contexts[current]
    found = []
    if context.get("cluster") not in clusters:
        found.append(f"context {current} names cluster {context.get('cluster')}, which the file does not have "
                     "(client-go: \"cluster has no server defined\")")
    if context.get("user") not in users:
        found.append(f"context {current} names user {context.get('user')}, which the file does not have")
    return found


def _named(value: Any) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _trusted_host(server: str) -> bool:
    """`isValidHostname`: the URL's host, lower-cased, is an IP address or a DNS-1123 subdomain."""
    try:
        host = urlsplit(server.lower()).hostname or ""
    except ValueError:
        return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return not names.dns1123_subdomain_problem(host)


def kueue_minor(mode: str, version: Optional[str]) -> Optional[str]:
    """The Kueue minor release an install runs ("0.19"): the chart version, or the managed extension's
    (0.19.6-aks.0.4.4 runs Kueue 0.19.6); None when a release train decides it."""
    if not version:
        return None
    match = re.match(r"^v?(\d+)\.(\d+)", version)
    return f"{match[1]}.{match[2]}" if match else None
