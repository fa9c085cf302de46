"""`aks-kueue:cluster`: the AKS cluster, its system pool, network and security."""

from __future__ import annotations

import ipaddress
import re
from datetime import date
from typing import Annotated, Literal, Optional

from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from aks_kueue.day2.upgrades import version_channel_problem
from aks_kueue.aks import kubernetes_versions, limits, network as aks_network
from aks_kueue.aks.allocatable import default_max_pods
from aks_kueue.aks.vm_sizes import lookup
from aks_kueue.settings.base import (GUID as _GUID, ConfigModel, as_field_error, check, checked, matching, problem,
                                    reported)
from aks_kueue.settings.monitoring import LogAnalyticsWorkspaceId
from aks_kueue.settings.pools import MaxPods, OsDiskSize, OsDiskType, os_disk_problems, size_hint
from aks_kueue.versions import MIN_KUBERNETES_MINOR

Zone = Literal["1", "2", "3"]
_DURATION = re.compile(r"^\d+(\.\d+)?[smh]$")
_HHMM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")
_UTC_OFFSET = re.compile(r"^[+-](0\d|1[0-4]):[0-5]\d$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# Network policy engines of their own, which AKS refuses next to the Cilium dataplane (`aks/limits.py`).
_NOT_WITH_CILIUM = ("calico", "azure")
WeekDay = Literal["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
_CLUSTER_NAME = re.compile(r"^[a-zA-Z0-9]([a-zA-Z0-9_-]{0,61}[a-zA-Z0-9])?$")


def parse_cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise problem(f"{value!r} is not a CIDR block ({exc})",
                      fix="write it like 10.244.0.0/16") from None
    return value


def _ip_address(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise problem(f"{value!r} is not an IP address",
                      fix="write it like 10.0.0.10") from None
    return value


def _duration(example: str) -> AfterValidator:
    return matching(_DURATION, "is not a duration", f"write a number with s, m or h, such as {example}")


_SECONDS = {"s": 1, "m": 60, "h": 3600}


def _whole(unit: str) -> AfterValidator:
    """A profile value the AKS API takes as a whole number of one unit (`limits.AUTOSCALER_PROFILE_UNITS`)."""
    name = {"m": "minutes", "s": "seconds"}[unit]

    def refused(value: str) -> Optional[PydanticCustomError]:
        if re.fullmatch(rf"\d+{unit}", value):
            return None
        given = re.fullmatch(r"(\d+(?:\.\d+)?)([smh])", value)
        seconds = float(given[1]) * _SECONDS[given[2]] if given else None
        same = (f": {value} is {seconds / _SECONDS[unit]:g}{unit}" if seconds is not None
                and (seconds / _SECONDS[unit]).is_integer() else "")
        return problem(f"{value!r} is refused by AKS, which takes this value in whole {name} only, written like "
                       f"15{unit} ({limits.AUTOSCALER_PROFILE_UNITS.name}){same}")
    return checked(refused)


Duration = Annotated[str, _duration("10m")]
Minutes = Annotated[str, _whole("m")]
Seconds = Annotated[str, _whole("s")]


def judging_day(info: ValidationInfo) -> date:
    """The day dated facts are judged on: `parse_settings(..., today=)` or the versions module's clock."""
    given = (info.context or {}).get("today") if info is not None else None
    return given or kubernetes_versions.today()


class SystemPool(ConfigModel):
    vm_size: str
    count: int = Field(3, ge=1, le=limits.MAX_NODES_PER_POOL)
    zones: list[Zone] = []
    max_pods: Optional[MaxPods] = None
    os_type: Optional[str] = None
    # As for nodePools[]: set when the pool is created, defaults from the AKS baseline.
    os_disk_type: Optional[OsDiskType] = None
    os_disk_size_gb: Optional[OsDiskSize] = None
    encryption_at_host: Optional[bool] = None

    @field_validator("vm_size")
    @classmethod
    def _known_size(cls, value: str) -> str:
        size = lookup(value)
        if size is None:
            raise problem(f"{value!r} is not a VM size this program knows{size_hint(value)}",
                          fix="pick one from the catalog aks_kueue/aks/data/vm-sizes.json, for example Standard_D4s_v5")
        if size.family.startswith("B"):
            raise problem(f"{size.name} is a burstable B-series size, which AKS does not support for system pools",
                          fix="use a general-purpose size such as Standard_D4s_v5")
        if size.vcpus < limits.SYSTEM_POOL_MIN_VCPUS or size.memory_gib < limits.SYSTEM_POOL_MIN_MEMORY_GIB:
            raise problem(f"{size.name} has {size.vcpus} vCPUs and {size.memory_gib:g} GiB; AKS system pools need at "
                          f"least {limits.SYSTEM_POOL_MIN_VCPUS} vCPUs and {limits.SYSTEM_POOL_MIN_MEMORY_GIB} GiB "
                          "(use-system-pools), for example Standard_D4s_v5")
        if size.has_gpu:
            raise problem(f"{size.name} is a GPU size; the system pool runs system pods only, so use a general-purpose "
                          "size such as Standard_D4s_v5")
        return size.name

    @field_validator("os_type")
    @classmethod
    def _linux(cls, value: Optional[str]) -> Optional[str]:
        if value is not None and value != limits.SYSTEM_POOL_OS_TYPE:
            raise problem(f"{value!r}: AKS system pools run Linux only",
                          fix="set osType: Linux or remove it (Windows nodes belong in a user pool, which this program "
                          "does not create)")
        return value

    @check
    def _os_disk(self):
        yield from os_disk_problems(self)


class AutoscalerProfile(ConfigModel):
    """The AKS cluster-autoscaler profile, with the AKS API's own camelCase names."""

    balance_similar_node_groups: Optional[bool] = None
    daemonset_eviction_for_empty_nodes: Optional[bool] = None
    daemonset_eviction_for_occupied_nodes: Optional[bool] = None
    expander: Optional[Literal["least-waste", "most-pods", "priority", "random"]] = None
    ignore_daemonsets_utilization: Optional[bool] = None
    max_empty_bulk_delete: Optional[int] = Field(None, ge=1)
    max_graceful_termination_sec: Optional[int] = Field(None, ge=0)
    max_node_provision_time: Optional[Minutes] = None
    max_total_unready_percentage: Optional[int] = Field(None, ge=0, le=100)
    new_pod_scale_up_delay: Optional[Duration] = None
    ok_total_unready_count: Optional[int] = Field(None, ge=0)
    scale_down_delay_after_add: Optional[Minutes] = None
    scale_down_delay_after_delete: Optional[Seconds] = None
    scale_down_delay_after_failure: Optional[Minutes] = None
    scale_down_unneeded_time: Optional[Minutes] = None
    scale_down_unready_time: Optional[Minutes] = None
    scale_down_utilization_threshold: Optional[float] = Field(None, gt=0, le=1)
    scan_interval: Optional[int] = Field(None, ge=1, description="seconds")
    skip_nodes_with_local_storage: Optional[bool] = None
    skip_nodes_with_system_pods: Optional[bool] = None

    def to_api(self) -> dict[str, object]:
        """AKS takes every profile value as a string (booleans as "true"/"false")."""
        out: dict[str, object] = {}
        for key, value in self.model_dump(by_alias=True, exclude_none=True).items():
            if key.startswith(("daemonset", "ignore")):
                out[key] = value
            elif isinstance(value, bool):
                out[key] = "true" if value else "false"
            else:
                out[key] = str(value)
        return out


class Network(ConfigModel):
    plugin: Literal["azure", "kubenet", "none"] = "azure"
    plugin_mode: Optional[Literal["overlay"]] = None
    policy: Optional[Literal["azure", "calico", "cilium", "none"]] = None
    dataplane: Optional[Literal["azure", "cilium"]] = None
    pod_cidr: Optional[Annotated[str, AfterValidator(parse_cidr)]] = None
    service_cidr: Optional[Annotated[str, AfterValidator(parse_cidr)]] = None
    dns_service_ip: Optional[Annotated[str, AfterValidator(_ip_address)]] = None
    outbound_type: Literal["loadBalancer", "managedNATGateway", "userAssignedNATGateway",
                           "userDefinedRouting", "none"] = "loadBalancer"

    @model_validator(mode="before")
    @classmethod
    def _secure_defaults(cls, data):
        """Azure CNI Overlay with Cilium, as AKS Automatic configures it, unless told otherwise."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        plugin = data.get("plugin", "azure")
        if plugin == "azure":
            data.setdefault("pluginMode", "overlay")
            # Another policy engine written without a dataplane gets the Azure one: AKS refuses it with Cilium.
            data.setdefault("dataplane", "azure" if data.get("policy") in _NOT_WITH_CILIUM else "cilium")
            data.setdefault("policy", "cilium" if data["dataplane"] == "cilium" else "azure")
        elif plugin == "kubenet":
            data.setdefault("policy", "calico")
        return data

    @property
    def uses_pod_cidr(self) -> bool:
        """Overlay and kubenet give each node a /24 of podCidr; with no CNI (BYO) AKS still routes it."""
        return self.plugin != "azure" or self.plugin_mode == "overlay"

    @property
    def effective_pod_cidr(self) -> str:
        return self.pod_cidr or aks_network.DEFAULT_POD_CIDR

    @check
    def _consistent(self):
        if self.plugin != "azure" and self.plugin_mode is not None:
            yield problem(f"pluginMode overlay needs plugin azure, not {self.plugin}",
                          fix="remove pluginMode or set plugin: azure", at="pluginMode")
        if self.dataplane == "cilium" and self.plugin != "azure":
            yield problem("the Cilium dataplane needs plugin azure",
                          fix="set plugin: azure or dataplane: azure", at="dataplane")
        if self.policy == "azure" and self.plugin != "azure":
            yield problem("Azure Network Policy Manager runs with the Azure CNI plugin only, and AKS refuses it with "
                          f"{self.plugin} ({limits.AZURE_NPM_NEEDS_AZURE_CNI.name}: \"To use Azure Network Policy "
                          "Manager, you must use the Azure CNI plug-in\")",
                          fix=f"set policy: calico to keep {self.plugin}, or plugin: azure", at="policy")
        if self.policy == "cilium" and self.dataplane != "cilium":
            yield problem("network policy cilium needs dataplane cilium",
                          fix="set dataplane: cilium or policy: azure", at="policy")
        if self.dataplane == "cilium" and self.policy in _NOT_WITH_CILIUM:
            yield problem(f"network policy {self.policy} cannot run with the Cilium dataplane, which enforces network "
                          f"policy itself: AKS refuses the pair ({limits.CILIUM_NEEDS_CILIUM_POLICY.name}: \"Cilium "
                          "dataplane requires network policy cilium\")",
                          fix=f"set policy: cilium (or remove it), or dataplane: azure to keep {self.policy}",
                          at="policy")
        if self.pod_cidr and self.plugin == "azure" and self.plugin_mode != "overlay":
            yield problem("podCidr applies only to Azure CNI Overlay or kubenet",
                          fix="remove it", at="podCidr")
        yield from self._address_problems()

    def _address_problems(self) -> list[PydanticCustomError]:
        """The network arithmetic AKS checks at create time (`aks_kueue/aks/network.py` has the sources)."""
        problems: list[PydanticCustomError] = []
        pods = ipaddress.ip_network(self.effective_pod_cidr)
        service = ipaddress.ip_network(self.service_cidr or aks_network.DEFAULT_SERVICE_CIDR)
        dns = ipaddress.ip_address(self.dns_service_ip or aks_network.DEFAULT_DNS_SERVICE_IP)
        single_stack = ("AKS takes IPv6 only in a dual-stack cluster (ipFamilies IPv4 and IPv6), which this "
                        "program does not configure")
        for key, value, example in (("podCidr", pods if self.pod_cidr else None, aks_network.DEFAULT_POD_CIDR),
                                    ("serviceCidr", service if self.service_cidr else None,
                                     aks_network.DEFAULT_SERVICE_CIDR)):
            if value is None:
                continue
            if value.version == 6:
                problems.append(problem(f"{value} is an IPv6 range; {single_stack}",
                                        fix=f"use an IPv4 range such as {example}", at=key))
                continue
            reserved = aks_network.reserved_overlap(value)
            if reserved is not None and (key != "podCidr" or self.uses_pod_cidr):
                problems.append(problem(f"{value} overlaps {reserved}, which AKS reserves and refuses for pod and "
                                        "service ranges (169.254.0.0/16, 172.30.0.0/16, 172.31.0.0/16, 192.0.2.0/24)",
                                        fix=f"use another private range such as {example}", at=key))
        if self.dns_service_ip and dns.version == 6:
            problems.append(problem(f"{dns} is an IPv6 address; {single_stack}",
                                    fix="use an IPv4 address inside serviceCidr", at="dnsServiceIp"))
        if any(as_field_error(found).field in ("serviceCidr", "dnsServiceIp") for found in problems) \
                or service.version == 6:
            return problems
        if service.prefixlen < aks_network.LARGEST_SERVICE_PREFIX:
            problems.append(problem(f"{service} is larger than AKS allows for services (at most a "
                                    f"/{aks_network.LARGEST_SERVICE_PREFIX})",
                                    fix=f"use a /16 such as {aks_network.DEFAULT_SERVICE_CIDR}", at="serviceCidr"))
        if self.uses_pod_cidr and pods.version == 4 and aks_network.overlap(pods, service):
            key = "serviceCidr" if self.service_cidr else "podCidr"
            problems.append(problem(f"podCidr {pods} and serviceCidr {service} overlap{self._defaults_note()}; AKS "
                                    "needs them apart, for example podCidr 10.244.0.0/16 and serviceCidr 10.0.0.0/16",
                                    at=key))
        why = aks_network.service_ip_problem(dns, service)
        if why is not None:
            suggestion = aks_network.suggested_dns_ip(service)
            right = f"such as {suggestion}" if suggestion else "or widen serviceCidr"
            if self.dns_service_ip:
                problems.append(problem(f"{dns} {why}",
                                        fix=f"use an address inside serviceCidr other than its first, {right}",
                                        at="dnsServiceIp"))
            else:
                problems.append(problem(f"is not set, so AKS uses {dns}, which {why}",
                                        fix=f"set dnsServiceIp to an address inside serviceCidr {service}, {right}",
                                        at="dnsServiceIp"))
        return problems

    def _defaults_note(self) -> str:
        defaults = [name for name, given in (("podCidr", self.pod_cidr), ("serviceCidr", self.service_cidr))
                    if not given]
        return f" ({' and '.join(defaults)} at the AKS default)" if defaults else ""


class ImageCleaner(ConfigModel):
    """AKS Image Cleaner (`securityProfile.imageCleaner`): removes unused, vulnerable images from the
    nodes. ARM needs the interval (image-cleaner: "required for ARM template or other clients"); the
    Azure CLI's default is one week, the least 24 hours, the most three months."""

    enabled: bool = True
    interval_hours: int = Field(168, ge=24, le=2160)


class Defender(ConfigModel):
    """Microsoft Defender for Containers' sensor (`securityProfile.defender`). It sends to a Log
    Analytics workspace, which the AKS API requires once it is on: `logAnalyticsWorkspaceId`, else
    the workspace of `aks-kueue:monitoring` (Container Insights). Unset `enabled` turns it on
    wherever one of those exists and leaves it alone otherwise; `true` without a workspace is an
    error, `false` turns it off."""

    enabled: Optional[bool] = None
    log_analytics_workspace_id: Optional[LogAnalyticsWorkspaceId] = None

    @check
    def _consistent(self):
        if self.enabled is False and self.log_analytics_workspace_id is not None:
            yield problem("is used only while Defender is on",
                          fix="remove it or remove enabled: false", at="logAnalyticsWorkspaceId")


class KeyVaultSecretsProvider(ConfigModel):
    """The Azure Key Vault provider for the Secrets Store CSI driver (add-on
    `azureKeyvaultSecretsProvider`). Writing the key turns it on; rotation is on by default, as the
    baseline asks (csi-secrets-store-configuration-options; checkov CKV_AZURE_172)."""

    enabled: bool = True
    secret_rotation: bool = True
    rotation_poll_interval: Optional[Annotated[str, _duration("2m (AKS's default)")]] = None

    @check
    def _consistent(self):
        if not self.secret_rotation and self.rotation_poll_interval is not None:
            yield problem("is used only with secretRotation: true",
                          fix="remove it", at="rotationPollInterval")


class Security(ConfigModel):
    """Defaults follow the AKS production security baseline."""

    local_accounts_disabled: bool = True
    entra_admin_group_object_ids: list[str] = []
    azure_rbac: bool = True
    workload_identity: bool = True
    api_server_authorized_ip_ranges: list[str] = []
    private_cluster: bool = False
    # pulumi-kubernetes talks to the API server; a private one answers only inside its network.
    deployer_in_cluster_network: bool = False
    upgrade_channel: Literal["patch", "stable", "rapid", "node-image", "none"] = "patch"
    node_os_upgrade_channel: Literal["NodeImage", "SecurityPatch", "Unmanaged", "None"] = "NodeImage"
    azure_policy: bool = True
    defender: Defender = Defender()
    image_cleaner: ImageCleaner = ImageCleaner()
    # Left alone unless written.
    key_vault_secrets_provider: Optional[KeyVaultSecretsProvider] = None

    @field_validator("entra_admin_group_object_ids")
    @classmethod
    def _guids(cls, values: list[str]) -> list[str]:
        for value in values:
            if not _GUID.fullmatch(value):
                raise problem(f"{value!r} is not an Entra object ID",
                              fix="use the group's GUID, like 00000000-0000-0000-0000-000000000000")
        return values

    @field_validator("api_server_authorized_ip_ranges")
    @classmethod
    def _cidrs(cls, values: list[str]) -> list[str]:
        return [parse_cidr(v if "/" in v else f"{v}/32") for v in values]

    @check
    def _consistent(self):
        ranges = self.api_server_authorized_ip_ranges
        if self.private_cluster and ranges:
            yield problem("AKS does not support authorized IP ranges on a private cluster (its API server has no "
                          "public endpoint to restrict)",
                          fix="remove them or set privateCluster: false", at="apiServerAuthorizedIpRanges")
        if self.upgrade_channel == "node-image" and self.node_os_upgrade_channel != "NodeImage":
            channel, source = self.node_os_upgrade_channel, limits.NODE_IMAGE_CHANNEL_SETS_NODE_OS.name
            yield problem("AKS fixes the node OS channel at NodeImage while upgradeChannel is node-image and refuses "
                          f"{channel} beside it ({source})",
                          fix="set nodeOsUpgradeChannel: NodeImage, or an upgradeChannel such as patch to keep "
                          f"{channel}", at="nodeOsUpgradeChannel")
        if len(ranges) > limits.MAX_AUTHORIZED_IP_RANGES:
            yield problem(f"{len(ranges)} ranges; AKS accepts at most {limits.MAX_AUTHORIZED_IP_RANGES} authorized IP "
                          "ranges, so merge some into wider CIDR blocks", at="apiServerAuthorizedIpRanges")
        if self.private_cluster and not self.deployer_in_cluster_network:
            yield problem("a private API server answers only inside the cluster's virtual network (or a network peered "
                          "or connected to it), and pulumi-kubernetes must reach it to install Kueue and the queues",
                          fix="run pulumi from there and say so with deployerInClusterNetwork: true, or set "
                          "privateCluster: false", at="privateCluster")
        if self.deployer_in_cluster_network and not self.private_cluster:
            yield problem("applies only to privateCluster: true (a public API server is reached from anywhere its "
                          "authorized ranges allow)",
                          fix="remove it", at="deployerInClusterNetwork")


def _date(value) -> str:
    import datetime

    from aks_kueue.k8s.yaml12 import is_go_timestamp_text

    if isinstance(value, datetime.date):
        value = value.isoformat()  # an unquoted date reaches the offline reader as a date; Pulumi hands over text
    if is_go_timestamp_text(value):
        day = value.split(" ", 1)[0]
        raise problem(f"is an unquoted date: the Pulumi CLI reads {day} as a timestamp and hands the program "
                      f"{value!r}, which AKS does not take",
                      fix=f"quote it: \"{day}\"")
    if not isinstance(value, str) or not _DATE.fullmatch(value):
        raise problem(f"{value!r} is not a date",
                      fix="write it like 2026-12-24")
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        raise problem(f"{value!r} is not a calendar date",
                      fix="write it like 2026-12-24") from None
    return value


Date = Annotated[str, BeforeValidator(_date)]


# The AKS API's ranges for a window (`aks/limits.py` keeps them with their citations).
class DailySchedule(ConfigModel):
    interval_days: Annotated[int, checked(limits.INTERVAL_DAYS.problem)]


class WeeklySchedule(ConfigModel):
    interval_weeks: Annotated[int, checked(limits.INTERVAL_WEEKS.problem)]
    day_of_week: WeekDay


class AbsoluteMonthlySchedule(ConfigModel):
    interval_months: Annotated[int, checked(limits.ABSOLUTE_INTERVAL_MONTHS.problem)]
    day_of_month: Annotated[int, checked(limits.DAY_OF_MONTH.problem)]


class RelativeMonthlySchedule(ConfigModel):
    interval_months: Annotated[int, checked(limits.RELATIVE_INTERVAL_MONTHS.problem)]
    week_index: Literal["First", "Second", "Third", "Fourth", "Last"]
    day_of_week: WeekDay


class Schedule(ConfigModel):
    """Exactly one recurrence, as in the AKS API."""

    daily: Optional[DailySchedule] = None
    weekly: Optional[WeeklySchedule] = None
    absolute_monthly: Optional[AbsoluteMonthlySchedule] = None
    relative_monthly: Optional[RelativeMonthlySchedule] = None

    @model_validator(mode="after")
    def _one(self):
        chosen = [k for k in ("daily", "weekly", "absolute_monthly", "relative_monthly") if getattr(self, k)]
        if len(chosen) != 1:
            raise problem("give exactly one of daily, weekly, absoluteMonthly or relativeMonthly, for example weekly: "
                          "{intervalWeeks: 1, dayOfWeek: Saturday}")
        return self


class DateSpan(ConfigModel):
    start: Date
    end: Date

    @check
    def _order(self):
        if self.start > self.end:
            yield problem(f"end {self.end} is before start {self.start}", at="end")


class MaintenanceWindow(ConfigModel):
    """An AKS `maintenanceWindow`, in the API's own names (2025-09-01)."""

    schedule: Schedule
    duration_hours: Annotated[int, checked(limits.DURATION_HOURS.problem)]
    start_time: str
    utc_offset: Optional[Annotated[str, matching(_UTC_OFFSET, "is not a UTC offset",
                                                              "write it like \"+02:00\" or \"-07:00\", quoted")]] = None
    start_date: Optional[Date] = None
    not_allowed_dates: list[DateSpan] = []

    @field_validator("start_time", mode="before")
    @classmethod
    def _start_time(cls, value) -> str:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 24 * 60:
            # YAML 1.1 (the offline reader) reads an unquoted 10:30 as the number 630; Pulumi reads text.
            value = f"{value // 60:02d}:{value % 60:02d}"
        if not isinstance(value, str) or not _HHMM.fullmatch(value):
            raise problem(f"{value!r} is not a time of day",
                          fix="write it like \"00:00\" (quoted, 00:00 to 23:59)")
        return value

    def to_api(self) -> dict[str, object]:
        return self.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True)


class Maintenance(ConfigModel):
    """When AKS may upgrade on its own: `autoUpgrade` (the cluster's channel, registered as
    aksManagedAutoUpgradeSchedule) and `nodeOsUpgrade` (node images, aksManagedNodeOSUpgradeSchedule)."""

    auto_upgrade: Optional[MaintenanceWindow] = None
    node_os_upgrade: Optional[MaintenanceWindow] = None


class Cluster(ConfigModel):
    name: Annotated[str, matching(_CLUSTER_NAME, "is not a valid AKS cluster name",
                                                 "use 1-63 letters, digits, '-' or '_', starting and ending with a "
                                                 "letter or digit")]
    kubernetes_version: str
    tier: Literal["Free", "Standard", "Premium"] = "Standard"
    system_pool: SystemPool
    autoscaler_profile: AutoscalerProfile = AutoscalerProfile()
    node_provisioning: Optional[Literal["Manual", "Auto"]] = None
    sku: Literal["Base", "Automatic"] = "Base"
    network: Network = Network()
    security: Security = Security()
    maintenance: Maintenance = Maintenance()

    @field_validator("kubernetes_version", mode="before")
    @classmethod
    def _version(cls, value, info: ValidationInfo):
        text = str(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else value
        match = re.fullmatch(r"1\.(\d+)(\.\d+)?", text) if isinstance(text, str) else None
        if not match:
            raise problem(f"{text!r} is not a Kubernetes version",
                          fix="write \"1.34\" or \"1.34.x\", quoted")
        if isinstance(value, float) and int(match.group(1)) < MIN_KUBERNETES_MINOR:
            # YAML (Pulumi's reader and ours) reads an unquoted 1.30 as the number 1.3: its trailing zero is lost.
            meant = f"{text}0" if len(match.group(1)) == 1 else text
            raise problem(f"YAML read the unquoted version as the number {text} (an unquoted {meant} is the same "
                          "number)",
                          fix=f"write it quoted: kubernetesVersion: \"{meant}\" (this program needs "
                          f"1.{MIN_KUBERNETES_MINOR} or newer)")
        if int(match.group(1)) < MIN_KUBERNETES_MINOR:
            raise problem(f"Kubernetes {text} is too old; this program needs 1.{MIN_KUBERNETES_MINOR} or newer (the "
                          "managed Kueue extension does too)")
        verdict = kubernetes_versions.judge_version(text, judging_day(info), at_least=MIN_KUBERNETES_MINOR)
        if verdict.error:
            raise problem(verdict.error)
        return text

    @property
    def effective_node_provisioning(self) -> str:
        """AKS Automatic always provisions nodes itself."""
        return self.node_provisioning or ("Auto" if self.sku == "Automatic" else "Manual")

    @property
    def system_pool_max_pods(self) -> int:
        return self.system_pool.max_pods or default_max_pods(self.network.plugin, self.network.plugin_mode)

    @check(first=True)
    def _consistent(self):
        if floor := limits.pod_floor_problem(self.system_pool_max_pods, self.system_pool.count, "count",
                                             "the nodes it is created with"):
            yield reported(floor, at="systemPool.maxPods")
        if drift := version_channel_problem(self.kubernetes_version, self.security.upgrade_channel):
            yield reported(drift, at="kubernetesVersion")
        if self.sku == "Automatic" and self.node_provisioning == "Manual":
            yield problem("AKS Automatic clusters always use node auto-provisioning",
                          fix="remove nodeProvisioning or set sku: Base", at="nodeProvisioning")
