"""The whole stack config, read in one place and checked before anything is registered."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import replace
from datetime import date
from typing import Annotated, Any, Literal, Mapping, Optional

from pydantic import Field, PrivateAttr, ValidationError, field_validator, model_validator

from aks_kueue.day2.allow import Allowances, parse_entry
from aks_kueue.k8s.field import FieldError, Path
from aks_kueue.k8s.loader import Limits, LoadError, loads_json
from aks_kueue.kueue.validate import load_object, stack_key, validate_object
from aks_kueue.secrets import Secrets
from aks_kueue.aks import kubernetes_versions, limits, network as aks_network, regions
from aks_kueue.aks.allocatable import default_max_pods
from aks_kueue.settings.base import ConfigModel, check, matching, problem, reported, suggest
from aks_kueue.settings.cluster import Cluster
from aks_kueue.settings.errors import NAMESPACE, SettingsError, format_path, problems_from
from aks_kueue.settings.fleet import Fleet, cross_key_problems
from aks_kueue.settings.kueue import Kueue
from aks_kueue.settings.monitoring import PRODUCTION_MONITORING, Monitoring
from aks_kueue.settings.pools import NodePool
from aks_kueue.settings.queues import ExpectedWorkloadEntry, Queues

SYSTEM_POOL_NAME = "system"
_STRING_KEYS = {"resourceGroupName"}
# Keys of the azure-native provider the program reads, besides the location.
AZURE_ENVIRONMENT_KEY = "azure-native:environment"
_CLOUD_NAMES = {regions.Cloud.PUBLIC: "the public Azure cloud", regions.Cloud.US_GOVERNMENT: "Azure Government",
                regions.Cloud.CHINA: "Azure operated by 21Vianet"}


class Settings(ConfigModel):
    location: str = Field(min_length=1)
    azure_environment: Optional[Literal["public", "usgovernment", "china"]] = Field(
        None, alias=AZURE_ENVIRONMENT_KEY)
    resource_group_name: Annotated[str, matching(re.compile(r"[-\w._()]{0,89}[-\w_()]"),
                                                 "is not a valid resource group name",
                                                 "use 1-90 letters, digits, '-', '_', '.', '(' or ')', not ending in "
                                                 "'.'")]
    environment: Literal["production", "development"] = "production"
    cluster: Cluster
    node_pools: list[NodePool]
    kueue: Kueue
    queues: Optional[Queues] = None
    queue_manifests: list[str] = []
    expected_workloads: list[ExpectedWorkloadEntry] = []
    monitoring: Optional[Monitoring] = None
    fleet: Optional[Fleet] = None
    # Day-2 keys: protection of what users depend on, and what this update may destroy.
    protect: Optional[bool] = None
    allow_replacement: list[Any] = []

    _today: Optional[date] = PrivateAttr(default=None)

    @field_validator("location")
    @classmethod
    def _region(cls, value: str) -> str:
        """ARM accepts "East US" but reports "eastus"; normalise so comparisons hold."""
        name = regions.normalise(value)
        if regions.lookup(name) is None:
            known = regions.load()
            hint = suggest(name, regions.names()) or ("; use a programmatic name such as eastus or westeurope "
                                                      "(`az account list-locations -o table` lists them)")
            raise problem(f"{value!r} is not an Azure region{hint} (regions as listed on {known.as_of.isoformat()} in "
                          f"aks_kueue/aks/{regions.DATA_FILE}; add a newer one there)")
        return name

    @field_validator("node_pools")
    @classmethod
    def _pool_count_and_names(cls, pools: list[NodePool]) -> list[NodePool]:
        if len(pools) + 1 > limits.MAX_NODE_POOLS:
            raise problem(f"{len(pools)} user pools and the system pool make {len(pools) + 1} node pools; AKS allows "
                          f"at most {limits.MAX_NODE_POOLS} per cluster, so remove "
                          f"{len(pools) + 1 - limits.MAX_NODE_POOLS} or merge pools of the same VM size")
        seen: dict[str, int] = {}
        for i, pool in enumerate(pools):
            if pool.name == SYSTEM_POOL_NAME:
                raise problem(f"{SYSTEM_POOL_NAME!r} is the system pool's name",
                              fix="choose another name for this user pool", at=Path().index(i).child("name"))
            if pool.name in seen:
                raise problem(f"pool name {pool.name!r} is used by nodePools[{seen[pool.name]}] and nodePools[{i}]; "
                              "pool names must be unique")
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
                raise problem(str(error), at=Path().index(i)) from None
            if str(entry) in seen:
                raise problem(f"{entry} is listed twice",
                              fix="list each resource once", at=Path().index(i))
            seen.add(str(entry))
        return list(entries)

    @property
    def effective_protect(self) -> bool:
        """Protection is on unless the stack says otherwise, or declares itself development."""
        return self.protect if self.protect is not None else self.environment == "production"

    @property
    def allowances(self) -> Allowances:
        return Allowances.parse(self.allow_replacement)

    @property
    def defender_workspace(self) -> Optional[str]:
        """Where Defender for Containers sends: its own workspace id, "monitoring" for the Log Analytics
        workspace of Container Insights, or None when there is none (Defender is then left off)."""
        defender = self.cluster.security.defender
        if defender.enabled is False:
            return None
        if defender.log_analytics_workspace_id is not None:
            return defender.log_analytics_workspace_id
        return "monitoring" if self.monitoring is not None and self.monitoring.container_insights else None

    @model_validator(mode="before")
    @classmethod
    def _production_monitoring(cls, data: Any) -> Any:
        """Production requires managed Prometheus and Container Insights, so there the defaults turn
        them on: leaving `aks-kueue:monitoring` out is `PRODUCTION_MONITORING`. In development it
        leaves monitoring alone."""
        production = data.get("environment", "production") == "production" if isinstance(data, dict) else False
        if production and "monitoring" not in data:
            return {**data, "monitoring": dict(PRODUCTION_MONITORING)}
        return data

    @check
    def _defender_workspace(self):
        if self.cluster.security.defender.enabled and self.defender_workspace is None:
            yield problem("Defender for Containers needs a Log Analytics workspace and this stack has none: turn on "
                          "aks-kueue:monitoring with containerInsights (Defender then uses its workspace), give "
                          "cluster.security.defender.logAnalyticsWorkspaceId, or remove enabled: true",
                          at="cluster.security.defender.enabled")

    @check(first=True)
    def _without_kueue(self):
        """With `kueue.install: none` nothing may need Kueue's CRDs or webhooks."""
        if self.kueue.install != "none":
            return
        needs = [("queues", self.queues is not None and self.queues.has_objects),
                 ("queueManifests", self.queue_manifests), ("expectedWorkloads", self.expected_workloads)]
        for key, present in needs:
            if present:
                yield problem("kueue.install is none, so there is no Kueue to hold it",
                              fix="remove it for the update that uninstalls Kueue and add it back with the new install "
                              "mode", at=key)

    @check
    def _fits_the_region_and_the_network(self):
        """What AKS checks against the region and the cluster's size at create time."""
        region = regions.lookup(self.location)
        if region is not None and self.azure_environment and self.azure_environment != region.cloud.value:
            yield problem(f"{self.location} is a region of {_CLOUD_NAMES[region.cloud]}, but {AZURE_ENVIRONMENT_KEY} "
                          f"is {self.azure_environment}",
                          fix=f"set {AZURE_ENVIRONMENT_KEY}: {region.cloud.value} or choose a region of that cloud",
                          at="location")
        if region is not None and region.availability_zones is False:
            no_zones = (f"{self.location} has no availability zones (Azure regions list of "
                        f"{regions.load().as_of.isoformat()}), so AKS refuses zonal pools there")
            choose = "remove zones or choose a region with zones"
            if self.cluster.system_pool.zones:
                yield problem(no_zones, choose, at="cluster.systemPool.zones")
            yield from (problem(no_zones, choose, at=Path("nodePools").index(i).child("zones"))
                        for i, p in enumerate(self.node_pools) if p.zones)
        node_group = f"MC_{self.resource_group_name}_{self.cluster.name}_{self.location}"
        if len(node_group) > limits.NODE_RESOURCE_GROUP_MAX_LENGTH:
            over = len(node_group) - limits.NODE_RESOURCE_GROUP_MAX_LENGTH
            yield problem(f"AKS names the cluster's node resource group {node_group} ({len(node_group)} characters) "
                          f"and refuses a name over {limits.NODE_RESOURCE_GROUP_MAX_LENGTH} "
                          f"({limits.NODE_RESOURCE_GROUP_MAX_LENGTH.citation.name})",
                          fix=f"shorten resourceGroupName or cluster.name by {over} characters together",
                          at="resourceGroupName")
        nodes = self.cluster.system_pool.count + sum(p.max_count for p in self.node_pools)
        if nodes > limits.MAX_NODES_PER_CLUSTER:
            yield problem(f"the system pool and the pools' maxCount add up to {nodes} nodes; AKS allows at most "
                          f"{limits.MAX_NODES_PER_CLUSTER} per cluster, so lower maxCount", at="nodePools")
        network = self.cluster.network
        if network.uses_pod_cidr:
            pods = ipaddress.ip_network(network.effective_pod_cidr)
            room = aks_network.nodes_for_pod_cidr(pods)
            if pods.version == 4 and room < nodes:
                given = "" if network.pod_cidr else f"is not set, so AKS uses {pods}: "
                yield problem(f"{given}{pods} gives each node a /{aks_network.NODE_POD_PREFIX}, room for {room} "
                              f"node{'s' * (room != 1)}, but the system pool and the pools' maxCount add up to {nodes}",
                              fix=f"use a /{aks_network.pod_prefix_for(nodes)} or larger (and leave room for upgrade "
                              "surge nodes)", at="cluster.network.podCidr")

    @check
    def _pods_per_pool(self):
        """AKS's pod floor holds for every pool, user pools as the system pool (`aks/limits.py`)."""
        network = self.cluster.network
        for i, pool in enumerate(self.node_pools):
            max_pods = pool.max_pods or default_max_pods(network.plugin, network.plugin_mode)
            if floor := limits.pod_floor_problem(max_pods, pool.min_count, "minCount", "the nodes it is created with "
                                                 "(this program creates an autoscaled pool with minCount nodes)"):
                yield reported(floor, at=Path("nodePools").index(i).child("maxPods"))

    @check
    def _fleet(self):
        if self.fleet is not None:
            yield from cross_key_problems(self)

    @check(first=True)
    def _provisioning(self):
        if self.cluster.effective_node_provisioning == "Auto":
            if self.node_pools:
                yield problem("node auto-provisioning (cluster.nodeProvisioning Auto or sku Automatic) cannot be "
                              "combined with autoscaled node pools",
                              fix="set cluster.nodeProvisioning: Manual or remove nodePools", at="nodePools")
            if self.kueue.install == "managed":
                yield problem("the managed Kueue extension supports the cluster autoscaler only, not node "
                              "auto-provisioning",
                              fix="use nodeProvisioning: Manual or install: helm", at="kueue")

    @property
    def warnings(self) -> list[str]:
        """What only the program can say: Kueue's own warnings about its configuration, and notes about
        the provider's configuration (the judge's warnings cover what the program registers). The
        program logs them."""
        notes = list(self.kueue.warnings)
        region = regions.lookup(self.location)
        if region is not None and region.cloud is not regions.Cloud.PUBLIC and self.azure_environment is None:
            notes.append(f"azure-native:location: {region.name} is a region of {_CLOUD_NAMES[region.cloud]}; unless "
                         f"the provider is already pointed there, set {AZURE_ENVIRONMENT_KEY}: {region.cloud.value}")
        return notes


def parse_settings(config: Mapping[str, str], today: Optional[date] = None,
                   secrets: Optional[Secrets] = None) -> Settings:
    """Build Settings from Pulumi's flat config map (`namespace:key` -> string).

    `today` is the day dated facts (the AKS release calendar) are judged on; by default the
    clock of `aks_kueue.aks.kubernetes_versions`. `secrets`: the values of secret keys, which no
    problem shows (`settings/vocabulary.config_secrets`).
    """
    try:
        return _parse(config, today, secrets)
    except SettingsError as error:
        if not secrets:
            raise
        raise SettingsError([replace(p, message=secrets.text(p.message), fix=secrets.text(p.fix))
                             for p in error.problems]) from None


def _parse(config: Mapping[str, str], today: Optional[date], secrets: Optional[Secrets]) -> Settings:
    raw: dict[str, Any] = {}
    if "azure-native:location" in config:
        raw["location"] = config["azure-native:location"]
    if AZURE_ENVIRONMENT_KEY in config:
        raw[AZURE_ENVIRONMENT_KEY] = config[AZURE_ENVIRONMENT_KEY]
    for full_key, value in config.items():
        namespace, _, key = full_key.partition(":")
        if namespace != NAMESPACE:
            continue
        try:
            raw[key] = value if key in _STRING_KEYS else _decode(value, f"{NAMESPACE}:{key}")
        except LoadError as error:
            reason = ("is nested too deeply to read (hundreds of levels); no stack key needs more than a few"
                      if error.reason.startswith("nested deeper") else error.reason)
            raise SettingsError([FieldError(f"{NAMESPACE}:{key}", reason)]) from None
    day = today or kubernetes_versions.today()
    try:
        settings = Settings.model_validate(raw, context={"today": day})
        settings._today = day
        return settings
    except ValidationError as exc:
        problems = _not_checked(problems_from(exc, Settings, secrets.covers if secrets else None), raw)
    problems += queue_object_problems(raw.get("queues"), problems)
    if "location" not in raw:
        problems = [p for p in problems if p.path != "azure-native:location"]
        problems.insert(0, FieldError("azure-native:location", "the Azure region is required",
                                      "set it, for example `azure-native:location: eastus`"))
    raise SettingsError(problems)


def queue_object_problems(queues: Any, problems: list[FieldError]) -> list[FieldError]:
    """Where the rest of the stack fails its settings, the Kueue objects of `aks-kueue:queues` are judged on their
    own anyway (Kueue's schema, CEL rules and webhooks, as the judge judges them once the settings hold), so that
    every error is reported in one run: a typo in a nodePool and one in a ClusterQueue spec together. Left out:
    what needs the rest of the stack (a flavor's taints from its pool, the references between objects). The
    objects are those of one stack file, which the reader bounds (`preview/stackfile.py`, 1 MiB)."""
    if queues is None or any(p.path.startswith(f"{NAMESPACE}:queues") for p in problems):
        return []
    try:
        parsed = Queues.model_validate(queues)
    except ValidationError:
        return []  # reported by the settings
    found = []
    for key, manifest in parsed.manifests():
        found += [replace(error, field=stack_key(key, error.field))
                  for error in validate_object(load_object(manifest, key))]
    return found


SECRET_PLACEHOLDER = "[secret]"   # what the offline reader puts where a `secure:` value was


def _not_checked(problems: list[FieldError], raw: dict[str, Any]) -> list[FieldError]:
    """Offline, a `secure:` value is opaque: a problem with it says it was not checked."""
    secret = [format_path(loc) for loc in _placeholder_locations(raw, ())]
    if not secret:
        return problems
    out = []
    for each in problems:
        if any(each.path == p or each.path.startswith((p + ".", p + "[")) for p in secret):
            each = FieldError(each.path, "is a secret (`secure:`) the offline preview cannot decrypt, so it was not "
                                         "checked here; `pulumi preview` decrypts and checks it")
        out.append(each)
    return out


def _placeholder_locations(value: Any, loc: tuple) -> list[tuple]:
    """Where the offline reader's secret placeholders are; a walk without recursion, since values
    may be nested far deeper than Python's stack (they are refused for that, and reported here).
    Each step keeps only its parent's index, so a deep value costs no copies of its path."""
    steps: list[tuple[int, Any]] = [(-1, None)]   # (parent step, key)
    found, todo = [], [(value, 0)]
    while todo:
        value, step = todo.pop()
        if value == SECRET_PLACEHOLDER:
            path, at = [], step
            while at > 0:
                at, key = steps[at]
                path.append(key)
            found.append(loc + tuple(reversed(path)))
            continue
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in items:
            steps.append((step, key))
            todo.append((child, len(steps) - 1))
    return found


def _decode(value: Any, key: str) -> Any:
    """Pulumi hands structured values over as JSON text, read with the loader's bounds (nesting, duplicated
    keys); plain strings stay strings."""
    if not isinstance(value, str):
        return value
    try:
        # Bounded only by what can be read at all: the settings models bound what they read and name
        # the key path that is too deep.
        return loads_json(value, key, Limits(max_depth=10_000))
    except LoadError as error:
        if error.reason.startswith("not valid JSON"):
            return value
        raise
