"""The whole stack config, read in one place and checked before anything is registered."""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any, Literal, Mapping, Optional

from pydantic import Field, ValidationError, field_validator, model_validator

from aks_kueue.day2.allow import Allowances, parse_entry
from aks_kueue.kueue import catalog as cat
from aks_kueue.settings.base import Model, field_error
from aks_kueue.settings.cluster import Cluster
from aks_kueue.settings.errors import NAMESPACE, Problem, SettingsError, format_path, problems_from
from aks_kueue.settings.kueue import Kueue
from aks_kueue.settings.pools import NodePool
from aks_kueue.settings.queues import ExpectedWorkload, Queues

SYSTEM_POOL_NAME = "system"
_DOCUMENTATION_NETWORKS = [ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")]
_STRING_KEYS = {"resourceGroupName"}


class Settings(Model):
    location: str = Field(min_length=1)
    resource_group_name: str
    environment: Literal["production", "development"] = "production"
    cluster: Cluster
    node_pools: list[NodePool]
    kueue: Kueue
    queues: Optional[Queues] = None
    queue_manifests: list[str] = []
    expected_workloads: list[ExpectedWorkload] = []
    # Day-2 keys: protection of what users depend on, and what this update may destroy.
    protect: Optional[bool] = None
    allow_replacement: list[Any] = []

    @field_validator("location")
    @classmethod
    def _region(cls, value: str) -> str:
        """ARM accepts "East US" but reports "eastus"; normalise so comparisons hold."""
        return value.replace(" ", "").lower()

    @field_validator("resource_group_name")
    @classmethod
    def _group_name(cls, value: str) -> str:
        if not re.fullmatch(r"[-\w._()]{0,89}[-\w_()]", value):
            raise ValueError(f"{value!r} is not a valid resource group name; use 1-90 letters, digits, "
                             "'-', '_', '.', '(' or ')', not ending in '.'")
        return value

    @field_validator("node_pools")
    @classmethod
    def _unique_names(cls, pools: list[NodePool]) -> list[NodePool]:
        seen: dict[str, int] = {}
        for i, pool in enumerate(pools):
            if pool.name == SYSTEM_POOL_NAME:
                raise field_error(f"[{i}].name", f"{SYSTEM_POOL_NAME!r} is the system pool's name; "
                                                 "choose another name for this user pool")
            if pool.name in seen:
                raise ValueError(f"pool name {pool.name!r} is used by nodePools[{seen[pool.name]}] and "
                                 f"nodePools[{i}]; pool names must be unique")
            seen[pool.name] = i
        return pools

    @field_validator("allow_replacement")
    @classmethod
    def _allowances(cls, entries: list[Any]) -> list[str]:
        seen: set[str] = set()
        for i, text in enumerate(entries):
            try:
                entry = parse_entry(text)
            except ValueError as error:
                raise field_error(f"[{i}]", str(error)) from None
            if str(entry) in seen:
                raise field_error(f"[{i}]", f"{entry} is listed twice; list each resource once")
            seen.add(str(entry))
        return list(entries)

    @property
    def effective_protect(self) -> bool:
        """Protection is on unless the stack says otherwise, or declares itself development."""
        return self.protect if self.protect is not None else self.environment == "production"

    @property
    def allowances(self) -> Allowances:
        return Allowances.parse(self.allow_replacement)

    @model_validator(mode="after")
    def _without_kueue(self):
        """With `kueue.install: none` nothing may need Kueue's CRDs or webhooks."""
        if self.kueue.install != "none":
            return self
        needs = [("queues", self.queues is not None and self.queues.has_objects),
                 ("queueManifests", bool(self.queue_manifests)), ("expectedWorkloads", bool(self.expected_workloads))]
        for key, present in needs:
            if present:
                raise field_error(key, "kueue.install is none, so there is no Kueue to hold it; remove it for the "
                                       "update that uninstalls Kueue and add it back with the new install mode")
        return self

    @model_validator(mode="after")
    def _provisioning(self):
        if self.cluster.effective_node_provisioning == "Auto":
            if self.node_pools:
                raise field_error("nodePools", "node auto-provisioning (cluster.nodeProvisioning Auto or "
                                  "sku Automatic) cannot be combined with autoscaled node pools; set "
                                  "cluster.nodeProvisioning: Manual or remove nodePools")
            if self.kueue.install == "managed":
                raise field_error("kueue", "the managed Kueue extension supports the cluster autoscaler "
                                  "only, not node auto-provisioning; use nodeProvisioning: Manual or "
                                  "install: helm")
        return self

    @property
    def warnings(self) -> list[str]:
        """Things that validate but will not work as deployed; the program logs them."""
        notes = []
        security = self.cluster.security
        for i, cidr in enumerate(security.api_server_authorized_ip_ranges):
            if any(ipaddress.ip_network(cidr).subnet_of(net) for net in _DOCUMENTATION_NETWORKS):
                notes.append(f"aks-kueue:cluster.security.apiServerAuthorizedIpRanges[{i}]: {cidr} is a "
                             "documentation range (RFC 5737) that no real client is in, so pulumi up could "
                             "not reach the API server; put your own egress ranges here")
        for i, group in enumerate(security.entra_admin_group_object_ids):
            if set(group.replace("-", "")) == {"0"}:
                notes.append(f"aks-kueue:cluster.security.entraAdminGroupObjectIds[{i}]: the all-zero ID is "
                             "a placeholder; put your admin group's object ID here")
        if self.kueue.install == "managed" and self.location not in cat.MANAGED_REGIONS:
            notes.append(f"azure-native:location: the managed Kueue extension is documented only in "
                         f"{', '.join(cat.MANAGED_REGIONS)}, not {self.location}; the install may fail")
        return notes


def parse_settings(config: Mapping[str, str]) -> Settings:
    """Build Settings from Pulumi's flat config map (`namespace:key` -> string)."""
    raw: dict[str, Any] = {}
    if "azure-native:location" in config:
        raw["location"] = config["azure-native:location"]
    for full_key, value in config.items():
        namespace, _, key = full_key.partition(":")
        if namespace != NAMESPACE:
            continue
        raw[key] = value if key in _STRING_KEYS else _decode(value)
    try:
        return Settings.model_validate(raw)
    except ValidationError as exc:
        problems = _not_checked(problems_from(exc, Settings), raw)
    if "location" not in raw:
        problems = [p for p in problems if p.path != "azure-native:location"]
        problems.insert(0, Problem("azure-native:location", "the Azure region is required; set it, "
                                   "for example `azure-native:location: eastus`"))
    raise SettingsError(problems)


SECRET_PLACEHOLDER = "[secret]"   # what the offline reader puts where a `secure:` value was


def _not_checked(problems: list[Problem], raw: dict[str, Any]) -> list[Problem]:
    """Offline, a `secure:` value is opaque: a problem with it says it was not checked."""
    secret = [format_path(loc) for loc in _placeholder_locations(raw, ())]
    if not secret:
        return problems
    out = []
    for problem in problems:
        if any(problem.path == p or problem.path.startswith((p + ".", p + "[")) for p in secret):
            problem = Problem(problem.path, "is a secret (`secure:`) the offline preview cannot decrypt, so it "
                                            "was not checked here; `pulumi preview` decrypts and checks it")
        out.append(problem)
    return out


def _placeholder_locations(value: Any, loc: tuple) -> list[tuple]:
    if value == SECRET_PLACEHOLDER:
        return [loc]
    if isinstance(value, dict):
        return [found for k, v in value.items() for found in _placeholder_locations(v, loc + (k,))]
    if isinstance(value, list):
        return [found for i, v in enumerate(value) for found in _placeholder_locations(v, loc + (i,))]
    return []


def _decode(value: Any) -> Any:
    """Pulumi hands structured values over as JSON text; plain strings stay strings."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value
