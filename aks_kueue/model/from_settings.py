"""The model read from the stack's settings: what the program will register.

Only what cannot be put in the model at all is refused here (a queue manifest that cannot
be read, a flavor bound to a pool that does not exist, a namespace two ClusterQueues
would label differently): those raise SettingsError. Everything else, valid or not, goes
into the model, and the judge says what is wrong with it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Collection, Optional, Union

from aks_kueue.aks.allocatable import default_max_pods
from aks_kueue.aks.nodes import AGENTPOOL
from aks_kueue.aks.pools import (SYSTEM, SYSTEM_POOL_TAINT, DaemonSetLoad, ExplicitNode, Pool, default_os_disk,
                                 effective_gpu_driver, gpu_vendor, host_encryption_default, mig_strategy,
                                 needs_device_plugin)
from aks_kueue.aks import dcgm_exporter, network as aks_network
from aks_kueue.aks.device_plugin import REQUESTS, daemonset_name
from aks_kueue.aks.topology import levels_from_aks
from aks_kueue.k8s import field
from aks_kueue.k8s.field import FieldError
from aks_kueue.k8s.merge import deep_merge
from aks_kueue.k8s.quantity import parse_quantity
from aks_kueue.kueue.admission_checks import PROVISIONING_CONTROLLER, is_provisioning
from aks_kueue.kueue.convert import GROUP as API_GROUP, V1BETA2, cluster_queue_spec_to_v1beta2, to_v1beta2
from aks_kueue.k8s.loader import LoadError
from aks_kueue.kueue.manifests import ManifestError, read_documents
from aks_kueue.kueue import multikueue
from aks_kueue.kueue.multikueue import Role
from aks_kueue.model import fleet_outputs
from aks_kueue.model.fleet import Fleet, Worker
from aks_kueue.model.fleet_outputs import FleetInputs
from aks_kueue.model.props import UnreadableValue
from aks_kueue.model.desired import (Cluster, ExpectedWorkload, Install, KueueItem, MaintenanceWindow, Model,
                                     Monitoring, Namespace, Network, SecretsProvider, Security, SubmitterGroup)
from aks_kueue.k8s.scheduling import NAMESPACE_NAME_LABEL
from aks_kueue.model.conventions import CLUSTER_SCOPED, DEPLOY_ORDER, MANAGED_BY, labels_selected
from aks_kueue.settings.errors import SettingsError
from aks_kueue.settings.cluster import SystemPool
from aks_kueue.settings.pools import NodePool, Taint
from aks_kueue.settings.queues import (ClusterQueueEntry, ExpectedWorkload as ExpectedWorkloadEntry, ManifestWorkload,
                                       Provisioning)
from aks_kueue.settings.root import SYSTEM_POOL_NAME, Settings
from aks_kueue.day2.upgrades import AUTO_UPGRADE_CONFIG, NODE_OS_UPGRADE_CONFIG


def from_settings(settings: Settings, root: Path, stack: str = "", fleet_inputs: Optional[FleetInputs] = None
                  ) -> Model:
    """The model of what the program registers for these settings; SettingsError when a part
    of them cannot be put in a model at all. `fleet_inputs`: what a fleet member read of the
    other stacks of its fleet (aks-kueue:fleet)."""
    problems: list[FieldError] = []
    built = cluster(settings)
    pools = tuple(user_pool(p, i, settings, built.network) for i, p in enumerate(settings.node_pools))
    objects = _from_stack(settings, problems) + _from_manifests(settings, root, problems)
    existing = set(settings.queues.existing_namespaces if settings.queues else ())
    fleet = None
    if settings.fleet is not None:
        fleet, objects, shared = _fleet(settings, fleet_inputs or FleetInputs(), objects, problems)
        existing |= shared
    namespaces = _namespaces(objects, problems, existing)
    workloads = _workloads(settings, root, objects, problems)
    problems += _feature_problems(settings, objects, workloads)
    if problems:
        raise SettingsError(problems)
    return Model(
        stack=stack, environment=settings.environment, cluster=built, pools=pools,
        installs=(install(settings),) if settings.kueue.install != "none" else (), objects=tuple(objects),
        namespaces=tuple(namespaces), workloads=tuple(workloads), submitter_groups=submitter_groups(settings),
        fleet=fleet)


def _fleet(settings: Settings, inputs: FleetInputs, objects: list[KueueItem], problems: list[FieldError]
           ) -> tuple[Fleet, list[KueueItem], set[str]]:
    """This stack's place in its fleet, its objects with what the fleet adds, and the namespaces it
    shares with the manager: a worker gets the manager's teams; a manager, its MultiKueue objects and
    the MultiKueue check on every ClusterQueue (its capacity is the workers')."""
    spec = settings.fleet
    assert spec is not None, "called for a fleet member"
    if spec.role is Role.WORKER:
        assert spec.manager is not None, "the settings require a worker's manager"
        manager = fleet_outputs.fleet_outputs_of(inputs.others.get(spec.manager))
        for item in objects:
            if item.kind in fleet_outputs.TEAM_KINDS:
                problems.append(FieldError(item.key, f"{item.label}: a fleet worker mirrors its LocalQueues and "
                                                     f"priority classes from the manager ({spec.manager})",
                                           "define it there"))
        mirrored: list[KueueItem] = []
        if manager is not None:
            try:
                mirrored = fleet_outputs.mirrored_objects(manager, spec.manager)
            except UnreadableValue as error:
                problems.append(FieldError("aks-kueue:fleet.manager", str(error)))
        fleet = Fleet(Role.WORKER, inputs.stack, manager=spec.manager, manager_outputs=manager,
                      token_generations=tuple(spec.generations))
        return fleet, objects + mirrored, fleet_outputs.manager_existing_namespaces(manager)
    workers = tuple(
        Worker(w.name, w.stack, f"aks-kueue:fleet.workers[{i}]",
               fleet_outputs.fleet_outputs_of(inputs.others.get(w.stack)),
               fleet_outputs.kubeconfig_check(fleet_outputs.worker_kubeconfig(inputs.others.get(w.stack))))
        for i, w in enumerate(spec.workers or []))
    frameworks = settings.kueue.frameworks_in_force
    exported = fleet_outputs.fleet_outputs_of(inputs.others.get(inputs.stack))
    fleet = Fleet(Role.MANAGER, inputs.stack, workers=workers, quota_management=spec.quota_management,
                  egress_ip_ranges=tuple(spec.egress_ip_ranges) if spec.egress_ip_ranges is not None else None,
                  crds=tuple(f for f in multikueue.JOB_CRDS if f in frameworks),
                  exported_teams=fleet_outputs.team_names(exported) if exported is not None else None)
    # A ClusterQueue that already names a MultiKueue check of the stack's own keeps it, alone.
    own = {o.name for o in objects if o.kind == "AdmissionCheck" and multikueue.is_multikueue(o.manifest)}
    checked = []
    for o in objects:
        if o.kind == "ClusterQueue" and not own & _check_names(o):
            spec_with_check = _with_check(o.manifest.get("spec") or {}, multikueue.CHECK_NAME, None)
            o = KueueItem({**o.manifest, "spec": spec_with_check}, o.key)
        checked.append(o)
    return fleet, checked + fleet_outputs.multikueue_objects(fleet), set()


def _check_names(cluster_queue: KueueItem) -> set[str]:
    strategy = _spec(cluster_queue).get("admissionChecksStrategy")
    checks = strategy.get("admissionChecks") if isinstance(strategy, dict) else None
    return {c["name"] for c in checks if isinstance(c, dict) and isinstance(c.get("name"), str)} \
        if isinstance(checks, list) else set()


def _workloads(settings: Settings, root: Path, objects: list[KueueItem], problems: list[FieldError]
               ) -> list[ExpectedWorkload]:
    found = []
    for i, entry in enumerate(settings.expected_workloads):
        key = f"aks-kueue:expectedWorkloads[{i}]"
        manifests = (_from_job_file(entry.manifest, key, settings, root, objects, problems)
                     if isinstance(entry, ManifestWorkload) else [workload_manifest(entry)])
        found += [ExpectedWorkload(w, key) for w in manifests]
    return found


def _from_job_file(name: str, key: str, settings: Settings, root: Path, objects: list[KueueItem],
                   problems: list[FieldError]) -> list[dict[str, Any]]:
    """The Workloads Kueue would create for the jobs of a file, with the stack's integrations,
    feature gates and queue objects in force (a `default` LocalQueue, priority classes)."""
    from aks_kueue.kueue.jobs import JobOptions, JobOutcome, derive_workloads
    from aks_kueue.kueue.manifests import Category, category, generate_names, read_inputs

    where = f"{key}.manifest"
    path = root / name  # an absolute name stays itself
    try:
        documents = read_inputs([path])
    except LoadError as error:
        problems.append(FieldError(where, f"{name}{str(error)[len(str(path)):]}"))
        return []
    jobs = [d for d in documents if category(d.manifest) is Category.JOB]
    generate_names(jobs)  # Kueue's own sample jobs have only generateName
    if not jobs:
        problems.append(FieldError(where, f"{name} holds no job Kueue manages (Job, JobSet, RayJob, MPIJob, ...)",
                                   "point it at a job file, or write the workload's shape instead"))
        return []
    kueue = settings.kueue
    options = JobOptions.from_config(frameworks=kueue.frameworks if kueue.install == "helm" else None,
                                     feature_gates=kueue.feature_gates)
    context = [dict(o.manifest) for o in objects] + [d.manifest for d in documents]
    workloads = []
    for result in derive_workloads(context, options):
        if result.source.kind not in {d.kind for d in jobs}:
            continue
        label = f"{result.source.kind} {result.source.name}"
        if result.errors:
            problems += [FieldError(where, f"{name}: {label}: {e.field + ': ' if e.field else ''}{e.message}", e.fix)
                         for e in result.errors]
        elif result.outcome is JobOutcome.WORKLOAD:
            workloads += [dict(w) for w in result.workloads]
        elif result.outcome is not JobOutcome.MEMBER:
            problems.append(FieldError(where, f"{name}: {label}: {result.reason}"))
    return workloads


def cluster(settings: Settings) -> Cluster:
    spec = settings.cluster
    net, sec, system = spec.network, spec.security, spec.system_pool
    # The SDK sends AKS's defaults for the ranges the stack leaves out (pulumi-azure-native 3.29's
    # ContainerServiceNetworkProfileArgs), so the model holds them too.
    network = Network(plugin=net.plugin, plugin_mode=net.plugin_mode, policy=net.policy, dataplane=net.dataplane,
                      pod_cidr=net.effective_pod_cidr,
                      service_cidr=net.service_cidr or aks_network.DEFAULT_SERVICE_CIDR,
                      dns_service_ip=net.dns_service_ip or aks_network.DEFAULT_DNS_SERVICE_IP,
                      outbound_type=net.outbound_type)
    system_pool = Pool(name=SYSTEM_POOL_NAME, mode=SYSTEM, min_count=system.count, max_count=system.count,
                       taints=(dict(SYSTEM_POOL_TAINT),), key="aks-kueue:cluster.systemPool",
                       **_create_only(system, network))
    provider = sec.key_vault_secrets_provider
    monitoring = settings.monitoring
    windows = ((AUTO_UPGRADE_CONFIG, spec.maintenance.auto_upgrade),
               (NODE_OS_UPGRADE_CONFIG, spec.maintenance.node_os_upgrade))
    return Cluster(
        name=spec.name, region=settings.location, kubernetes_version=spec.kubernetes_version, sku=spec.sku,
        tier=spec.tier, node_provisioning=spec.effective_node_provisioning, network=network,
        security=Security(
            local_accounts_disabled=sec.local_accounts_disabled, rbac=True, entra_managed=True,
            azure_rbac=sec.azure_rbac, admin_groups=tuple(sec.entra_admin_group_object_ids),
            authorized_ip_ranges=tuple(sec.api_server_authorized_ip_ranges),
            private_cluster=sec.private_cluster, upgrade_channel=sec.upgrade_channel,
            node_os_upgrade_channel=sec.node_os_upgrade_channel, workload_identity=sec.workload_identity,
            azure_policy=sec.azure_policy, defender=_defender(settings),
            image_cleaner=sec.image_cleaner.enabled, image_cleaner_interval_hours=sec.image_cleaner.interval_hours,
            key_vault_secrets_provider=SecretsProvider(
                provider.enabled, provider.enabled and provider.secret_rotation,
                provider.rotation_poll_interval if provider.enabled else None) if provider is not None else None),
        system_pools=(system_pool,), resource_group=settings.resource_group_name,
        autoscaler_profile=spec.autoscaler_profile.to_api(),
        monitoring=(Monitoring(monitoring.managed_prometheus, monitoring.container_insights) if monitoring
                    else Monitoring()),
        maintenance=tuple(MaintenanceWindow(name, window.to_api()) for name, window in windows if window is not None))


def _defender(settings: Settings) -> Optional[bool]:
    """On where it has a workspace, off when written off, else left alone (`settings.cluster.Defender`)."""
    if settings.defender_workspace is not None:
        return True
    return False if settings.cluster.security.defender.enabled is False else None


def _create_only(pool: NodePool | SystemPool, network: Network) -> dict[str, Any]:
    """The create-only inputs of the system pool and of a user pool alike: as written, else AKS's default
    pod count and the baseline's OS disk and host encryption for the size (`chosen`: those the program
    chooses because the stack writes none)."""
    os_disk_type: Optional[str]
    if pool.os_disk_type is not None:
        os_disk_type, os_disk_size = pool.os_disk_type, pool.os_disk_size_gb
    else:
        os_disk_type, os_disk_size = default_os_disk(pool.vm_size, pool.os_disk_size_gb)
    chosen = {"osDiskType"} if pool.os_disk_type is None else set()
    if pool.os_disk_type is None and pool.os_disk_size_gb is None:
        chosen.add("osDiskSizeGB")
    if pool.encryption_at_host is None:
        chosen.add("enableEncryptionAtHost")
    return dict(vm_size=pool.vm_size, zones=tuple(pool.zones), os_disk_type=os_disk_type, os_disk_size_gb=os_disk_size,
                max_pods=pool.max_pods or default_max_pods(network.plugin, network.plugin_mode),
                encryption_at_host=pool.encryption_at_host if pool.encryption_at_host is not None
                else host_encryption_default(pool.vm_size), chosen=frozenset(chosen))


def user_pool(pool: NodePool, index: int, settings: Settings, network: Optional[Network] = None) -> Pool:
    explicit = None
    if pool.capacity is not None:
        explicit = ExplicitNode(cpu=pool.capacity.cpu, memory_bytes=int(parse_quantity(pool.capacity.memory)),
                                gpus=pool.capacity.gpus, gpu_resource=pool.capacity.gpu_resource)
    vendor = gpu_vendor(pool.vm_size, explicit)
    driver = effective_gpu_driver(vendor, pool.gpu_driver)
    # The program runs the NVIDIA device plugin on these pools (`components/gpu_device_plugin`).
    plugin = DaemonSetLoad.of_quantities(daemonset_name(mig_strategy(pool.gpu_instance_profile)), REQUESTS)
    daemonsets: tuple[DaemonSetLoad, ...] = (plugin,) if needs_device_plugin(vendor, driver, pool.declared_device_plugin) else ()
    if daemonsets and settings.monitoring is not None and settings.monitoring.gpu_metrics:
        # The DCGM exporter runs on the same pools (`components/monitoring`).
        daemonsets += (DaemonSetLoad.of_quantities(dcgm_exporter.RELEASE, dcgm_exporter.REQUESTS),)
    return Pool(
        name=pool.name, min_count=pool.min_count, max_count=pool.max_count, labels=dict(pool.labels),
        taints=tuple(_taint(t) for t in pool.node_taints), gpu_driver=driver,
        gpu_device_plugin=pool.declared_device_plugin, gpu_instance_profile=pool.gpu_instance_profile,
        spot=pool.spot, explicit=explicit, daemonsets=daemonsets, key=f"aks-kueue:nodePools[{index}]",
        os_sku=pool.os_sku, upgrade_settings=pool.effective_upgrade_settings or {},
        **_create_only(pool, network or cluster(settings).network))


def _taint(text: str) -> dict[str, str]:
    return Taint.parse(text).model_dump()


def install(settings: Settings) -> Install:
    kueue = settings.kueue
    if kueue.install == "managed":
        return Install(mode="managed", version=kueue.version,
                       release_train=None if kueue.version else kueue.effective_release_train,
                       auto_upgrade=kueue.version is None)
    return Install(mode="helm", version=kueue.chart_version, frameworks=tuple(kueue.frameworks),
                   resources=kueue.resource_rules)


def _from_stack(settings: Settings, problems: list[FieldError]) -> list[KueueItem]:
    queues = settings.queues
    if queues is None:
        return []
    pools = {p.name: p for p in settings.node_pools}
    objects = []
    for i, entry in enumerate(queues.resource_flavors):
        key = f"aks-kueue:queues.resourceFlavors[{i}]"
        spec = entry.spec if entry.spec is not None else {}
        if entry.node_pool is not None:
            pool = pools.get(entry.node_pool)
            if pool is None:
                reason = ("the system pool runs system pods only and never holds Kueue quota"
                          if entry.node_pool == SYSTEM_POOL_NAME else "no such pool")
                problems.append(FieldError(f"{key}.nodePool", f"flavor {entry.name!r} names pool "
                                                              f"{entry.node_pool!r}: {reason}; pools: "
                                                              f"{', '.join(pools) or 'none'}"))
                continue
            derived: dict[str, Any] = {"nodeLabels": {AGENTPOOL: pool.name}}
            if pool.node_taints:
                derived["nodeTaints"] = [_taint(t) for t in pool.node_taints]
            spec = deep_merge(derived, spec) if isinstance(spec, dict) else spec
            objects.append(replace(_item("ResourceFlavor", entry.name, key, spec=spec),
                                   derived_from=frozenset({"nodePools"})))
            continue
        objects.append(_item("ResourceFlavor", entry.name, key, spec=spec))
    for i, cohort in enumerate(queues.cohorts):
        objects.append(_item("Cohort", cohort.name, f"aks-kueue:queues.cohorts[{i}]", spec=cohort.spec or {}))
    for i, queue in enumerate(queues.cluster_queues):
        key = f"aks-kueue:queues.clusterQueues[{i}]"
        spec = cluster_queue_spec_to_v1beta2(queue.spec if queue.spec is not None else {})
        if queue.provisioning is not None:
            objects += _provisioning(queue, queue.provisioning, f"{key}.provisioning")
            spec = _with_check(spec, queue.check_name, queue.provisioning.on_flavors)
        objects.append(_item("ClusterQueue", queue.name, key, spec=spec))
    for i, local in enumerate(queues.local_queues):
        objects.append(_item("LocalQueue", local.name, f"aks-kueue:queues.localQueues[{i}]",
                             namespace=local.namespace, spec=local.spec if local.spec is not None else {}))
    for i, priority in enumerate(queues.workload_priority_classes):
        extra: dict[str, Any] = {"value": priority.value}
        if priority.description is not None:
            extra["description"] = priority.description
        objects.append(_item("WorkloadPriorityClass", priority.name,
                             f"aks-kueue:queues.workloadPriorityClasses[{i}]", **extra))
    for i, topology in enumerate(queues.topologies):
        spec = {"levels": levels_from_aks(topology.from_aks)} if topology.from_aks is not None else topology.spec
        objects.append(_item("Topology", topology.name, f"aks-kueue:queues.topologies[{i}]", spec=spec))
    return objects


def _provisioning(entry: ClusterQueueEntry, provisioning: Provisioning, key: str) -> list[KueueItem]:
    """The ProvisioningRequestConfig and the AdmissionCheck that uses it, both named after the ClusterQueue."""
    config: dict[str, Any] = {"provisioningClassName": provisioning.class_}
    if provisioning.parameters:
        config["parameters"] = dict(provisioning.parameters)
    check = {"controllerName": PROVISIONING_CONTROLLER,
             "parameters": {"apiGroup": API_GROUP, "kind": "ProvisioningRequestConfig", "name": entry.check_name}}
    return [_item("ProvisioningRequestConfig", entry.check_name, key, spec=config),
            _item("AdmissionCheck", entry.check_name, key, spec=check)]


def _with_check(spec: Any, name: str, on_flavors: Optional[list[str]]) -> Any:
    """The ClusterQueue spec with the check in its admissionChecksStrategy, after any it lists."""
    if not isinstance(spec, dict):
        return spec  # the Kueue validator reports the spec
    strategy = spec.get("admissionChecksStrategy")
    if strategy is None:
        strategy = {"admissionChecks": []}
    if not isinstance(strategy, dict) or not isinstance(strategy.get("admissionChecks", []), list):
        return spec  # of the wrong shape: reported as written
    checks = list(strategy.get("admissionChecks", []))
    if any(isinstance(c, dict) and c.get("name") == name for c in checks):
        return spec
    check: dict[str, Any] = {"name": name}
    if on_flavors:
        check["onFlavors"] = list(on_flavors)
    return {**spec, "admissionChecksStrategy": {**strategy, "admissionChecks": [*checks, check]}}


def _feature_problems(settings: Settings, objects: list[KueueItem], workloads: list[ExpectedWorkload]
                      ) -> list[FieldError]:
    """What the queue objects need of the cluster and of Kueue: the cluster autoscaler for
    ProvisioningRequest checks, Topology Aware Scheduling on for topologies."""
    auto = settings.cluster.effective_node_provisioning == "Auto"
    problems = [FieldError(item.key, "ProvisioningRequests are answered by the cluster autoscaler, and this cluster "
                                     "uses node auto-provisioning (cluster.nodeProvisioning Auto or sku Automatic), "
                                     "which does not answer them; the check would never pass. Remove the "
                                     "ProvisioningRequest check, or use nodeProvisioning: Manual with autoscaled "
                                     "nodePools")
                for item in objects if auto and item.kind == "AdmissionCheck" and is_provisioning(item.manifest)]
    kueue = settings.kueue
    if kueue.install == "helm" and kueue.feature_gates_in_force.get("TopologyAwareScheduling") is False:
        users: list[Union[KueueItem, ExpectedWorkload]] = [o for o in objects if o.kind == "Topology" or (
            o.kind == "ResourceFlavor" and isinstance(o.manifest.get("spec"), dict)
            and o.manifest["spec"].get("topologyName"))]
        users += [w for w in workloads if any(isinstance(p, dict) and p.get("topologyRequest")
                                              for p in (w.manifest.get("spec") or {}).get("podSets") or [])]
        if users:
            where = ("aks-kueue:kueue.featureGates.TopologyAwareScheduling" if "TopologyAwareScheduling"
                     in kueue.feature_gates else "aks-kueue:kueue.values")
            names = ", ".join(u.label for u in users[:3]) + (f" and {len(users) - 3} more" if len(users) > 3 else "")
            problems.append(FieldError(where, f"TopologyAwareScheduling is off, and {names} use(s) Topology Aware "
                                              "Scheduling; Kueue would not place them by topology. Turn the gate on "
                                              "(it is on by default in Kueue 0.19), or remove the topologies"))
    return problems


def submitter_groups(settings: Settings) -> tuple[SubmitterGroup, ...]:
    """Each group of `queues.localQueues[].submitterGroups` once, keyed where it is first named; none
    without Kueue (`kueue.install: none`), where the program grants no team access."""
    if settings.queues is None or settings.kueue.install == "none":
        return ()
    found: dict[str, SubmitterGroup] = {}
    for i, entry in enumerate(settings.queues.local_queues):
        for j, group in enumerate(entry.submitter_groups):
            found.setdefault(group.lower(), SubmitterGroup(
                group.lower(), f"aks-kueue:queues.localQueues[{i}].submitterGroups[{j}]"))
    return tuple(found.values())


def _item(kind: str, name: str, key: str, namespace: Optional[str] = None, **fields: Any) -> KueueItem:
    metadata: dict[str, Any] = {"name": name, "labels": dict(MANAGED_BY)}
    if namespace is not None:
        metadata["namespace"] = namespace
    body = {k: v for k, v in fields.items() if not (k == "spec" and v is None)}
    return KueueItem({"apiVersion": V1BETA2, "kind": kind, "metadata": metadata, **body}, key)


def _from_manifests(settings: Settings, root: Path, problems: list[FieldError]) -> list[KueueItem]:
    objects = []
    for i, name in enumerate(settings.queue_manifests):
        key = f"aks-kueue:queueManifests[{i}]"
        path = root / name  # an absolute name stays itself
        try:
            for index, document in read_documents(path):
                objects.append(_manifest_item(document, f"{key}: {name} document {index}", problems))
        except ManifestError as error:
            problems.append(FieldError(key, f"{name}{str(error)[len(str(path)):]}"))
    return [o for o in objects if o is not None]


def _manifest_item(document: Any, where: str, problems: list[FieldError]) -> Optional[KueueItem]:
    """An object of a queue manifest as the program registers it: v1beta2, labelled as managed."""
    if not isinstance(document, dict):
        problems.append(FieldError(where, "is not a mapping; each document must be one Kueue object"))
        return None
    converted = to_v1beta2(document)
    manifest = dict(converted)
    metadata = manifest.get("metadata")
    kind = manifest.get("kind")
    if isinstance(metadata, dict):
        metadata = dict(metadata)
        if kind in CLUSTER_SCOPED:
            metadata.pop("namespace", None)  # the API server clears it too
        labels = metadata.get("labels")
        metadata["labels"] = {**MANAGED_BY, **(labels if isinstance(labels, dict) else {})}
        manifest["metadata"] = metadata
    if kind not in DEPLOY_ORDER:
        problems.append(FieldError(where, f"kind {kind} is not deployed by aks-kueue; it deploys "
                                          f"{', '.join(DEPLOY_ORDER)}"))
        return None
    label = f"{kind} {(metadata or {}).get('name', '')}" if isinstance(metadata, dict) else str(kind)
    return KueueItem(manifest, f"{where} ({label})", original=document if converted is not document else None)


def _namespaces(objects: list[KueueItem], problems: list[FieldError],
                existing: Collection[str] = ()) -> list[Namespace]:
    """Each LocalQueue namespace, with the labels its ClusterQueues' namespaceSelectors need;
    those listed in queues.existingNamespaces are only labelled."""
    queues = {o.name: o for o in objects if o.kind == "ClusterQueue"}
    labels_of: dict[str, dict[str, str]] = {}
    for lq in (o for o in objects if o.kind == "LocalQueue"):
        namespace = lq.namespace or ""
        labels = labels_of.setdefault(namespace, dict(MANAGED_BY))
        target = _spec(lq).get("clusterQueue")
        cq = queues.get(target) if isinstance(target, str) else None
        selector = _spec(cq).get("namespaceSelector") if cq is not None else None
        if not isinstance(selector, dict):
            continue  # the judge reports a selector of the wrong shape
        for key, value in labels_selected(selector).items():
            if key == NAMESPACE_NAME_LABEL:
                continue
            if labels.get(key, value) != value:
                problems.append(field.invalid(f"{lq.key}.namespace", field.OMIT, f"namespace {namespace!r} would "
                                              f"need label {key}={labels[key]} and {key}={value} for the "
                                              "ClusterQueues of its LocalQueues; align their namespaceSelectors"))
            labels.setdefault(key, value)
    return [Namespace(name, labels, existing=name in existing) for name, labels in labels_of.items()]


def _spec(item: KueueItem) -> dict[str, Any]:
    spec = item.manifest.get("spec")
    return spec if isinstance(spec, dict) else {}


def workload_manifest(expected: ExpectedWorkloadEntry) -> dict[str, Any]:
    """An expected job shape as the Kueue v1beta2 Workload its job would create."""
    pod_sets = []
    for shape in expected.pod_sets:
        pod_spec: dict[str, Any] = {"containers": [{"name": "main", "resources": {"requests": dict(shape.requests)}}]}
        if shape.node_selector:
            pod_spec["nodeSelector"] = dict(shape.node_selector)
        if shape.tolerations:
            pod_spec["tolerations"] = [t.model_dump(by_alias=True, exclude_none=True) for t in shape.tolerations]
        pod_set: dict[str, Any] = {"name": shape.name, "count": shape.count, "template": {"spec": pod_spec}}
        if shape.min_count is not None:
            pod_set["minCount"] = shape.min_count
        if shape.topology_request is not None:
            pod_set["topologyRequest"] = shape.topology_request.model_dump(by_alias=True, exclude_none=True)
        pod_sets.append(pod_set)
    spec: dict[str, Any] = {"queueName": expected.queue_name, "podSets": pod_sets}
    if expected.priority_class is not None:
        spec["priorityClassRef"] = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass",
                                    "name": expected.priority_class}
    return {"apiVersion": V1BETA2, "kind": "Workload",
            "metadata": {"name": expected.name, "namespace": expected.queue_namespace}, "spec": spec}
