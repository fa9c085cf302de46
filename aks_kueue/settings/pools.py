"""`aks-kueue:nodePools[]`: the autoscaled user pools that hold Kueue quota."""

from __future__ import annotations

import re
from typing import Annotated, Literal, Optional

from pydantic import Field, field_validator

from aks_kueue.k8s import names
from aks_kueue.aks import limits
from aks_kueue.day2.upgrades import GPU_UPGRADE_DEFAULTS
from aks_kueue.settings.base import ConfigModel, check, checked, matching, problem, suggest
from aks_kueue.aks import pools
from aks_kueue.aks.pools import taint_text
from aks_kueue.aks.vm_sizes import VmSize, catalog, lookup

_POOL_NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")
_TAINT = re.compile(r"^(?P<key>[^=:\s]+)=(?P<value>[^=:\s]*):(?P<effect>NoSchedule|PreferNoSchedule|NoExecute)$")


def check_label_key(key: str) -> None:
    if names.qualified_name_problem(key):
        raise problem(f"{key!r} is not a Kubernetes label key",
                      fix="use an optional DNS prefix and a name of up to 63 letters, digits, '-', '_' or '.'")


def check_label_value(value: str) -> None:
    if names.label_value_problem(value):
        raise problem(f"{value!r} is not a Kubernetes label value",
                      fix="use up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")


class Taint(ConfigModel):
    key: str
    value: str
    effect: str

    @classmethod
    def parse(cls, text: str) -> "Taint":
        match = _TAINT.fullmatch(text)
        if not match:
            raise problem(f"{text!r} is not a taint",
                          fix="write key=value:Effect with Effect NoSchedule, PreferNoSchedule or NoExecute, for "
                          "example sku=gpu:NoSchedule")
        check_label_key(match["key"])
        if match["value"]:
            check_label_value(match["value"])
        return cls(key=match["key"], value=match["value"], effect=match["effect"])

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}"


class ExplicitCapacity(ConfigModel):
    """Per-node capacity for a VM size the catalog does not know."""

    cpu: int = Field(ge=1, description="vCPUs per node")
    memory: str = Field(description="memory per node, a Kubernetes quantity such as 64Gi")
    gpus: int = Field(0, ge=0)
    gpu_resource: Optional[str] = None

    @field_validator("memory", mode="before")
    @classmethod
    def _memory(cls, value):
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            raise problem(f"{value!r} is not a memory quantity",
                          fix="write it like 64Gi")
        text = str(value)
        if not re.fullmatch(r"\d+(\.\d+)?(Ki|Mi|Gi|Ti|k|M|G|T)?", text):
            raise problem(f"{text!r} is not a memory quantity",
                          fix="write it like 64Gi")
        return text

    @check
    def _gpu_resource(self):
        if self.gpus and not self.gpu_resource:
            yield problem("gpus is set, so name the resource the device plugin advertises, for example nvidia.com/gpu",
                          at="gpuResource")


_SURGE = re.compile(r"^(\d+)%?$")
OsDiskType = Literal["Ephemeral", "Managed"]
# AKS's bounds for osDiskSizeGB (the AgentPool API: minimum 0, maximum 2048; AKS needs at least 30 GiB).
OsDiskSize = Annotated[int, Field(ge=30, le=2048)]
MaxPods = Annotated[int, Field(ge=limits.MIN_MAX_PODS, le=limits.MAX_MAX_PODS)]


def os_disk_problems(pool):
    """The system pool's and each node pool's OS disk: AKS refuses an ephemeral disk the size does not
    support or cannot hold (concepts-storage: "If you do request an ephemeral OS, you receive a
    validation error"). A size the catalog does not know is not checked."""
    if pool.os_disk_type != pools.EPHEMERAL or pools.ephemeral_os_fits(pool.vm_size, pool.os_disk_size_gb) is not False:
        return
    size = lookup(pool.vm_size)
    local = pools.local_disk_gib(size) if size is not None else None
    if not size.ephemeral_os_disk or not local:
        yield problem(f"{size.name} does not support ephemeral OS disks (its size page: Ephemeral OS Disk not "
                      "supported, or no local disk)",
                      fix="remove osDiskType or set it to Managed", at="osDiskType")
        return
    wanted = pool.os_disk_size_gb or pools.DEFAULT_OS_DISK_GIB
    key = "osDiskSizeGb" if pool.os_disk_size_gb else "osDiskType"
    yield problem(f"an ephemeral OS disk of {wanted} GiB does not fit {size.name}, whose cache or temp disk holds "
                  f"{local:g} GiB",
                  fix=f"set osDiskSizeGb to {int(local)} or less, or osDiskType: Managed", at=key)


def size_hint(name: str) -> str:
    """A did-you-mean for a VM size the catalog does not know ("" when none is close)."""
    return suggest(name, [size.name for size in catalog().values()])


class UpgradeSettings(ConfigModel):
    """An AKS pool's `upgradeSettings`, in the API's names. maxSurge and maxUnavailable are a
    node count or a percentage of the pool (AKS defaults: 10% and 0)."""

    max_surge: Optional[str] = None
    max_unavailable: Optional[str] = None
    # The AKS API's ranges (`aks/limits.py` keeps them with their citations).
    drain_timeout_in_minutes: Optional[Annotated[int, checked(limits.DRAIN_TIMEOUT_MINUTES.problem)]] = None
    node_soak_duration_in_minutes: Optional[Annotated[int, checked(limits.NODE_SOAK_MINUTES.problem)]] = None
    undrainable_node_behavior: Optional[Literal["Cordon", "Schedule"]] = None

    @field_validator("max_surge", "max_unavailable", mode="before")
    @classmethod
    def _count_or_percent(cls, value):
        if value is None:
            return value
        text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
        match = _SURGE.fullmatch(text) if isinstance(text, str) else None
        if match is None or (text.endswith("%") and int(match.group(1)) > 100):
            raise problem(f"{value!r} is not a node count or a percentage",
                          fix="write it like 1 or \"33%\"")
        return text

    @check
    def _room_to_upgrade(self):
        if self.max_surge is not None and self.max_unavailable is not None and \
                int(self.max_surge.rstrip("%")) == 0 and int(self.max_unavailable.rstrip("%")) == 0:
            yield problem("with maxSurge 0 and maxUnavailable 0 no node can be upgraded",
                          fix="set maxUnavailable: 1 (no extra quota) or a maxSurge above 0", at="maxUnavailable")

    def to_api(self) -> dict[str, object]:
        return self.model_dump(by_alias=True, exclude_none=True)


class NodePool(ConfigModel):
    name: Annotated[str, matching(_POOL_NAME, "is not a valid AKS pool name",
                                              "use 1-12 lowercase letters and digits, starting with a letter "
                                              "(^[a-z][a-z0-9]{0,11}$)")]
    vm_size: str
    min_count: int = Field(ge=0, le=limits.MAX_NODES_PER_POOL)
    max_count: int = Field(ge=0, le=limits.MAX_NODES_PER_POOL)
    max_pods: Optional[MaxPods] = None
    labels: dict[str, str] = {}
    taints: list[str] = []
    zones: list[Literal["1", "2", "3"]] = []
    os_sku: Optional[Literal["Ubuntu", "Ubuntu2204", "AzureLinux", "AzureLinux3"]] = None
    gpu_driver: Optional[Literal["Install", "None"]] = None
    # Who runs the device plugin that advertises the GPUs (`aks/pools.py`): unset, the program where
    # AKS installs the NVIDIA driver and nobody elsewhere; `external` declares one the stack does not install.
    gpu_device_plugin: Optional[Literal["program", "external"]] = None
    gpu_instance_profile: Optional[Literal["MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g"]] = None
    spot: bool = False
    capacity: Optional[ExplicitCapacity] = None
    upgrade_settings: Optional[UpgradeSettings] = None
    # Set when the pool is created and kept for its life; the defaults follow the AKS baseline.
    os_disk_type: Optional[OsDiskType] = None
    os_disk_size_gb: Optional[OsDiskSize] = None
    encryption_at_host: Optional[bool] = None

    @field_validator("labels")
    @classmethod
    def _labels(cls, labels: dict[str, str]) -> dict[str, str]:
        for key, value in labels.items():
            if key.startswith("kubernetes.azure.com/") or "kubernetes.io/" in key:
                raise problem(f"label {key!r} uses a prefix AKS reserves (kubernetes.azure.com/, kubernetes.io/)",
                              fix="choose another prefix")
            check_label_key(key)
            check_label_value(value)
        return labels

    @field_validator("taints")
    @classmethod
    def _taints(cls, taints: list[str]) -> list[str]:
        return [str(Taint.parse(t)) for t in taints]

    @check(first=True)
    def _counts_and_size(self):
        if self.min_count > self.max_count:
            yield problem(f"minCount {self.min_count} is above maxCount {self.max_count}; the autoscaler needs "
                          "minCount <= maxCount", at="minCount")
        size = self.size
        if size is None and self.capacity is None:
            yield problem(f"{self.vm_size!r} is not in the VM size catalog{size_hint(self.vm_size)}",
                          fix="fix the name, or state the node's capacity: {cpu, memory, gpus, gpuResource}",
                          at="vmSize")
        elif size is not None and (size.vcpus < limits.USER_POOL_MIN_VCPUS
                                   or size.memory_gib < limits.USER_POOL_MIN_MEMORY_GIB):
            yield problem(f"{size.name} is below the AKS user-pool floor of {limits.USER_POOL_MIN_VCPUS} vCPU and "
                          f"{limits.USER_POOL_MIN_MEMORY_GIB} GiB",
                          fix="pick a larger size", at="vmSize")

    @check
    def _os_disk(self):
        yield from os_disk_problems(self)

    @check(first=True)
    def _gpu_options(self):
        vendor = self.gpu_vendor
        gpu_keys = [key for key, value in (("gpuDriver", self.gpu_driver), ("gpuDevicePlugin", self.gpu_device_plugin),
                                           ("gpuInstanceProfile", self.gpu_instance_profile)) if value is not None]
        if gpu_keys and vendor is None and self.capacity is None:
            # The size is the likelier mistake: a pool written as a GPU pool with a CPU size.
            keys = " and ".join(gpu_keys)
            yield problem(f"{self.vm_size} has no GPU, but the pool sets {keys} as a GPU pool does",
                          fix="pick a GPU size (an NC, ND or NV size such as Standard_NC24ads_A100_v4), or remove "
                          f"{keys} for a CPU pool", at="vmSize")
            return
        if self.gpu_driver is not None and vendor is None:
            yield problem(f"{self.vm_size} has no GPU",
                          fix="remove gpuDriver", at="gpuDriver")
        if vendor == "amd" and self.gpu_driver == "Install":
            yield problem("AKS installs no AMD driver and requires gpuDriver None for AMD GPU pools",
                          fix="install the AMD GPU Operator instead", at="gpuDriver")
        if vendor == "amd" and self.os_sku not in (None, "Ubuntu", "Ubuntu2204"):
            yield problem("AMD GPU pools run on Ubuntu only",
                          fix="set osSku: Ubuntu", at="osSku")
        if self.gpu_device_plugin is not None and vendor is None:
            yield problem(f"{self.vm_size} has no GPU",
                          fix="remove gpuDevicePlugin", at="gpuDevicePlugin")
        if self.gpu_device_plugin == pools.PROGRAM_PLUGIN and vendor == "amd":
            yield problem("the program runs NVIDIA's device plugin only; AMD GPU pools need the AMD GPU Operator: "
                          "install it and set gpuDevicePlugin: external", at="gpuDevicePlugin")
        if self.gpu_device_plugin == pools.PROGRAM_PLUGIN and self.gpu_driver == "None":
            yield problem("the program's device plugin needs the NVIDIA driver, which AKS does not install with "
                          "gpuDriver None",
                          fix="set gpuDriver: Install, or gpuDevicePlugin: external where the GPU Operator brings the "
                          "driver and its own device plugin", at="gpuDevicePlugin")
        if self.gpu_instance_profile is not None and (self.size is None or not self.size.mig_capable):
            yield problem(f"{self.vm_size} does not support MIG; MIG needs an NVIDIA A100, H100 or H200 size",
                          at="gpuInstanceProfile")

    @property
    def effective_upgrade_settings(self) -> Optional[dict[str, object]]:
        """What the pool sends as upgradeSettings: GPU pools default to maxSurge 0 and
        maxUnavailable 1 (no surge node needs spare GPU quota); others keep AKS's defaults."""
        given = self.upgrade_settings.to_api() if self.upgrade_settings is not None else {}
        if self.gpu_vendor is not None:
            merged = {**GPU_UPGRADE_DEFAULTS, **given}
            if "maxSurge" in given and "maxUnavailable" not in given:
                merged.pop("maxUnavailable")  # a surge the user chose needs no unavailable node
            return merged
        return given or None

    @property
    def size(self) -> Optional[VmSize]:
        return lookup(self.vm_size)

    @property
    def gpu_vendor(self) -> Optional[str]:
        return pools.gpu_vendor(self.vm_size, self._explicit)

    @property
    def _explicit(self) -> Optional[pools.ExplicitNode]:
        if self.capacity is None or not self.capacity.gpus:
            return None
        return pools.ExplicitNode(cpu=self.capacity.cpu, memory_bytes=1, gpus=self.capacity.gpus,
                                  gpu_resource=self.capacity.gpu_resource)

    @property
    def declared_device_plugin(self) -> Optional[str]:
        """EXTERNAL_PLUGIN when the pool declares one the stack does not install, else None (the
        program's own is where `needs_device_plugin`)."""
        return pools.EXTERNAL_PLUGIN if self.gpu_device_plugin == pools.EXTERNAL_PLUGIN else None

    @property
    def needs_device_plugin(self) -> bool:
        return pools.needs_device_plugin(self.gpu_vendor, self.gpu_driver, self.declared_device_plugin)

    @property
    def node_taints(self) -> list[str]:
        """The taints AKS really puts on this pool's nodes, spot's included."""
        return [taint_text(t) for t in pools.node_taints(tuple(Taint.parse(t).model_dump() for t in self.taints),
                                                        self.spot)]
