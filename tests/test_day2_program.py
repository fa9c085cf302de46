"""Day-2 safety of the whole program under mocks: options, the guard, the install switch,
upgrades, the system pool pattern, names and secrets (issue 10)."""

from __future__ import annotations

import json

import pytest

from aks_kueue.day2.replacement import AGENT_POOL, MANAGED_CLUSTER, RESOURCE_GROUP, extract
from aks_kueue.preview.run import ProgramError, ProgramRefused, run_program
from aks_kueue.preview.stackfile import StackConfig, load_stack, stack_path
from tests.conftest import REFERENCE, ROOT, edited, flat, needs_shared, stack_doc
from tests.messages import explained

RG = "azure-native:resources:ResourceGroup"
CLUSTER = "azure-native:containerservice:ManagedCluster"
POOL = "azure-native:containerservice:AgentPool"
EXTENSION = "azure-native:kubernetesconfiguration:Extension"
RELEASE = "kubernetes:helm.sh/v3:Release"
MAINTENANCE = "azure-native:containerservice:MaintenanceConfiguration"
NAMESPACE = "kubernetes:core/v1:Namespace"
LOCAL_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
STACK_REFERENCE = "pulumi:pulumi:StackReference"
PROTECTED_TYPES = {RG, CLUSTER, POOL}
INSTALLERS = {"kueue-extension", "kueue-helm"}  # other Helm releases (the DCGM exporter) are not protected


def protected_kind(r) -> bool:
    return r.type in PROTECTED_TYPES or r.name in INSTALLERS


def run(config: dict, stack: str = "prod", previous=None, preview: bool = True):
    return run_program(StackConfig("aks-kueue", stack, flat(config)), ROOT, preview, previous_outputs=previous)


def deployed(config: dict, stack: str = "prod", previous=None) -> dict:
    """What `pulumi stack output --json` would print after `pulumi up` of this config."""
    outputs = run(config, stack, previous, preview=False).outputs
    return json.loads(json.dumps(outputs))


def refusal(config: dict, previous, stack: str = "prod"):
    with pytest.raises(ProgramRefused) as error:
        run(config, stack, previous)
    return error.value.findings


def by_name(run_, name):
    return next(r for r in run_.registrations if r.name == name)


@pytest.fixture(scope="module")
def prod_config():
    return stack_doc("prod")


@pytest.fixture(scope="module")
def prod_deployed(prod_config):
    """prod after its first `pulumi up` (the system pool still inline)."""
    return deployed(prod_config)


@pytest.fixture(scope="module")
def prod_settled(prod_config, prod_deployed):
    """prod after a second `pulumi up` (the system pool adopted as an AgentPool)."""
    return deployed(prod_config, previous=prod_deployed)


# ---- protection by default ----

def test_production_protects_the_group_cluster_pools_and_installer(prod_config):
    found = run(prod_config)
    for r in found.registrations:
        assert r.options["protect"] is protected_kind(r), r.name
        if r.type == NAMESPACE:
            assert r.options["retainOnDelete"] is True
        if r.type == POOL:
            assert r.options["ignoreChanges"] == ["count"]
            assert set(r.options["replaceOnChanges"]) == {"availabilityZones", "enableEncryptionAtHost", "osDiskType",
                                                       "osDiskSizeGB", "maxPods", "scaleSetPriority",
                                                       "scaleSetEvictionPolicy"}
    assert {r.type for r in found.registrations if r.options["protect"]} == {RG, CLUSTER, POOL, EXTENSION}


def test_development_protects_nothing_but_still_retains_team_namespaces():
    found = run(stack_doc("dev"), "dev")
    assert not any(r.options["protect"] for r in found.registrations)
    assert all(r.options["retainOnDelete"] for r in found.of_type(NAMESPACE))

    def protect(c):
        c["aks-kueue:protect"] = True
    assert {r.type for r in run(edited("dev", protect), "dev").registrations if r.options["protect"]} == {
        RG, CLUSTER, POOL, RELEASE}


def test_an_allow_replacement_entry_unprotects_exactly_that_resource():
    def allow(c):
        c["aks-kueue:allowReplacement"] = ["nodePools.a100", "namespaces.team-a"]
    found = run(edited("prod", allow))
    assert [r.name for r in found.of_type(POOL) if not r.options["protect"]] == ["pools-a100"]
    assert by_name(found, "queues-namespace-team-a").options["retainOnDelete"] is False
    assert by_name(found, "queues-namespace-team-b").options["retainOnDelete"] is True


def test_every_protected_resource_waits_for_the_guard(prod_config):
    found = run(prod_config)
    (reference,) = found.of_type(STACK_REFERENCE)
    assert reference.inputs["name"] == "organization/aks-kueue/prod"  # the stack's own outputs
    for r in found.registrations:
        if r.options["protect"]:
            assert reference.urn in r.depends_on, r.name


def test_without_previous_outputs_the_preview_says_it_is_unguarded(prod_config):
    found = run(prod_config)
    assert any("day2: unguarded: no previous outputs" in w for w in found.warnings)
    assert [f.kind for f in found.day2_findings] == ["day2-unguarded"]


# ---- the guard ----

REPLACEMENTS = {
    "a pool's vmSize": (lambda c: c["aks-kueue:nodePools"][1].update(vmSize="Standard_NC48ads_A100_v4"),
                        "nodePools.a100", "aks-kueue:nodePools[1].vmSize"),
    "a pool's zones": (lambda c: c["aks-kueue:nodePools"][0].update(zones=["1", "2"]),
                       "nodePools.cpu", "aks-kueue:nodePools[0].zones"),
    "a pool's MIG profile": (lambda c: c["aks-kueue:nodePools"][1].update(gpuInstanceProfile="MIG1g"),
                             "nodePools.a100", "aks-kueue:nodePools[1].gpuInstanceProfile"),
    "the system pool's vmSize": (lambda c: c["aks-kueue:cluster"]["systemPool"].update(vmSize="Standard_D8s_v5"),
                                 "systemPool", "aks-kueue:cluster.systemPool.vmSize"),
    "the network plugin mode": (lambda c: c["aks-kueue:cluster"]["network"].update(dataplane="azure", policy="azure"),
                                "cluster", "aks-kueue:cluster.network.dataplane"),
}


@pytest.fixture(scope="module")
def prod_unprotected(prod_settled):
    """prod after an update that protected nothing (`aks-kueue:protect: false`)."""
    return deployed(edited("prod", lambda c: c.update({"aks-kueue:protect": False})), previous=prod_settled)


@pytest.mark.parametrize("what", list(REPLACEMENTS))
def test_each_replace_forcing_change_is_refused_until_an_earlier_update_unprotected_it(what, prod_settled):
    edit, entry, key = REPLACEMENTS[what]
    changed = edited("prod", edit)
    findings = refusal(changed, prod_settled)
    assert key in {f.key for f in findings}
    assert all(f.kind == "day2-replace-refused" and "->" in f.message and "destroy" in f.message for f in findings)

    def allow(c):
        edit(c)
        c["aks-kueue:allowReplacement"] = [entry]
    # Listed in the same update: still refused, the state protects it (the engine alone would let it through).
    assert {f.kind for f in refusal(edited("prod", allow), prod_settled)} == {"day2-replace-refused"}

    def unprotect(c):
        c["aks-kueue:allowReplacement"] = [entry]
    step1 = deployed(edited("prod", unprotect), previous=prod_settled)
    if entry == "cluster":  # its pools and installer go with it: they must be unprotected first
        (chain,) = {f.kind for f in refusal(edited("prod", allow), step1)}
        assert chain == "day2-replace-chain-refused"
        return
    accepted = run(edited("prod", allow), previous=step1)
    assert any("pulumi up replaces" in f.message for f in accepted.day2_findings)


@pytest.mark.parametrize("edit", [
    lambda c: c.update({"aks-kueue:protect": False}),
    lambda c: c.update({"aks-kueue:environment": "development"}),
], ids=["protect-false", "environment-development"])
@pytest.mark.parametrize("change,key", [
    (lambda c: c["aks-kueue:cluster"].update(name="aks-batch-prod2"), "aks-kueue:cluster.name"),
    (lambda c: c.update({"aks-kueue:resourceGroupName": "rg-batch-prod2"}), "aks-kueue:resourceGroupName"),
    (lambda c: c["aks-kueue:nodePools"][1].update(vmSize="Standard_NC48ads_A100_v4"), "aks-kueue:nodePools[1].vmSize"),
], ids=["cluster-rename", "resource-group", "pool-vm-size"])
def test_turning_protection_off_with_a_replacement_is_refused(edit, change, key, prod_settled):
    """Reported: protect: false (or environment: development) with a cluster rename, a resource-group
    change or a pool's vmSize was accepted with warnings only."""
    def both(c):
        edit(c)
        change(c)
    findings = refusal(edited("prod", both), prod_settled)
    assert key in {f.key for f in findings} and {f.kind for f in findings} == {"day2-replace-refused"}
    assert all("new.Protect && old.Protect" in explained(f) for f in findings)


def test_an_unprotected_state_still_needs_the_entry_to_replace(prod_unprotected):
    def change(c):
        c["aks-kueue:protect"] = False
        c["aks-kueue:nodePools"][1]["vmSize"] = "Standard_NC48ads_A100_v4"
    (finding,) = refusal(edited("prod", change), prod_unprotected)
    assert finding.kind == "day2-replace-unacknowledged" and finding.key == "aks-kueue:nodePools[1].vmSize"

    def listed(c):
        change(c)
        c["aks-kueue:allowReplacement"] = ["nodePools.a100"]
    assert any(f.kind == "day2-replace" for f in run(edited("prod", listed), previous=prod_unprotected).day2_findings)


def test_max_pods_on_a_kept_pool_is_refused_like_a_replacement(prod_settled):
    """Reported: a maxPods change on an existing pool (fixed at creation) was sent as an update."""
    def edit(c):
        c["aks-kueue:nodePools"][0]["maxPods"] = 60
    (finding,) = refusal(edited("prod", edit), prod_settled)
    assert finding.kind == "day2-replace-refused" and finding.key == "aks-kueue:nodePools[0].maxPods"
    assert "AKS cannot change maxPods in place" in finding.message and "110 -> 60" in finding.message
    assert "maxPods" in by_name(run(edited("prod", edit)), "pools-cpu").options["replaceOnChanges"]


def test_a_refusal_registers_nothing_protected(prod_settled):
    def edit(c):
        c["aks-kueue:nodePools"][1]["vmSize"] = "Standard_NC48ads_A100_v4"
    with pytest.raises(ProgramRefused) as error:
        run(edited("prod", edit), previous=prod_settled)
    registered = {r.type for r in error.value.registered}
    assert STACK_REFERENCE in registered and not registered & PROTECTED_TYPES


def test_replacing_the_cluster_on_purpose_takes_two_updates(prod_settled):
    every = ["cluster", "systemPool", "nodePools.cpu", "nodePools.a100", "nodePools.h100", "kueue"]

    def unprotect(c):
        c["aks-kueue:allowReplacement"] = every

    def move(c):
        unprotect(c)
        c["aks-kueue:cluster"]["name"] = "aks-batch-prod2"
    step1 = deployed(edited("prod", unprotect), previous=prod_settled)
    assert refusal(edited("prod", move), prod_settled)  # not in one update
    moved = run(edited("prod", move), previous=step1)
    assert any(f.kind == "day2-replace" and f.key == "aks-kueue:cluster.name" for f in moved.day2_findings)


H100_QUEUES = ["queues.ResourceFlavor/h100", "queues.ClusterQueue/training", "queues.LocalQueue/team-a/training",
               "queues.LocalQueue/team-b/training", "queues.AdmissionCheck/training-provisioning"]


def _remove_h100(c):
    c["aks-kueue:nodePools"] = [p for p in c["aks-kueue:nodePools"] if p["name"] != "h100"]
    c["aks-kueue:queues"]["resourceFlavors"] = [f for f in c["aks-kueue:queues"]["resourceFlavors"]
                                                if f["name"] != "h100"]
    queues = c["aks-kueue:queues"]
    for cq in queues["clusterQueues"]:
        for group in cq["spec"]["resourceGroups"]:
            group["flavors"] = [f for f in group["flavors"] if f["name"] != "h100"]
        cq["spec"]["resourceGroups"] = [g for g in cq["spec"]["resourceGroups"] if g["flavors"]]
    # A ClusterQueue that had only h100 goes too, with its LocalQueues and expected workloads.
    gone = {cq["name"] for cq in queues["clusterQueues"] if not cq["spec"]["resourceGroups"]}
    queues["clusterQueues"] = [cq for cq in queues["clusterQueues"] if cq["name"] not in gone]
    queues["localQueues"] = [lq for lq in queues["localQueues"] if lq["spec"]["clusterQueue"] not in gone]
    kept = {f"{lq['namespace']}/{lq['name']}" for lq in queues["localQueues"]}
    c["aks-kueue:expectedWorkloads"] = [w for w in c.get("aks-kueue:expectedWorkloads", [])
                                        if w.get("queue") in kept]


def test_removing_a_protected_pool_takes_two_updates(prod_settled):
    findings = refusal(edited("prod", _remove_h100), prod_settled)
    (pool,) = [f for f in findings if f.kind == "day2-delete-refused"]
    assert pool.object == "AgentPool h100"
    # Its flavor, the ClusterQueue that used only it, that queue's LocalQueues and check go too.
    assert {f.object for f in findings if f.kind == "day2-kueue-delete-refused"} == {
        "ResourceFlavor h100", "ClusterQueue training", "LocalQueue team-a/training", "LocalQueue team-b/training",
        "AdmissionCheck training-provisioning"}

    def unprotect(c):
        c["aks-kueue:allowReplacement"] = ["nodePools.h100"]
    step1 = deployed(edited("prod", unprotect), previous=prod_settled)
    # Unprotected but not listed in the update that removes it: still refused.
    assert "day2-delete-unacknowledged" in {f.kind for f in refusal(edited("prod", _remove_h100), step1)}

    def remove(c):
        _remove_h100(c)
        c["aks-kueue:allowReplacement"] = ["nodePools.h100", *H100_QUEUES]
    removed = run(edited("prod", remove), previous=step1)
    kinds = {f.kind for f in removed.day2_findings}
    assert "day2-delete" in kinds and "day2-kueue-delete" in kinds and not [
        f for f in removed.day2_findings if f.severity == "error"]


def test_kueue_moves_between_install_modes_in_three_updates(prod_settled):
    def to_helm(c):
        c["aks-kueue:kueue"] = {"install": "helm", "integrations": ["batch/job", "jobset.x-k8s.io/jobset"]}
    (direct,) = refusal(edited("prod", to_helm), prod_settled)
    assert direct.key == "aks-kueue:kueue.install" and "managed -> helm" in direct.message

    def step1(c):
        c["aks-kueue:allowReplacement"] = ["kueue"]

    def step2(c):
        step1(c)
        c["aks-kueue:kueue"] = {"install": "none"}
        for key in ("aks-kueue:queues", "aks-kueue:expectedWorkloads"):
            del c[key]
    assert refusal(edited("prod", step2), prod_settled)[0].kind == "day2-install-switch-refused"
    after1 = deployed(edited("prod", step1), previous=prod_settled)
    assert not by_name(run(edited("prod", step1), previous=prod_settled), "kueue-extension").options["protect"]
    removed = run(edited("prod", step2), previous=after1)
    assert not removed.of_type(EXTENSION) and not removed.of_type(LOCAL_QUEUE)
    assert removed.outputs["kueue"] == {"installMethod": "none"}
    after2 = deployed(edited("prod", step2), previous=after1)

    def step3(c):
        step2(c)
        c.pop("aks-kueue:allowReplacement")
        c["aks-kueue:kueue"] = {"install": "helm", "integrations": ["batch/job"]}
    helm = run(edited("prod", step3), previous=after2)
    assert [r.type for r in helm.registrations if r.name in INSTALLERS] == [RELEASE]


def test_install_none_refuses_what_needs_kueue():
    def none(c):
        c["aks-kueue:kueue"] = {"install": "none"}
    with pytest.raises(ProgramError) as error:
        run(edited("prod", none))
    assert "aks-kueue:queues: kueue.install is none" in str(error.value)


def test_install_none_registers_nothing_that_needs_kueue(prod_config):
    """No installer, no queue object or namespace, no expected workloads, no RBAC for Kueue's
    metrics (prod has monitoring with kueueMetrics on); the cluster and its pools stay."""
    config = edited("prod", _install_none)
    assert config["aks-kueue:monitoring"]["kueueMetrics"] is True
    found = run(config)
    types = {r.type for r in found.registrations}
    assert {RG, CLUSTER, POOL} <= types
    assert not [r.name for r in found.registrations
                if r.name in INSTALLERS or "kueue.x-k8s.io" in r.type or r.type == NAMESPACE
                or "rbac.authorization" in r.type]
    carrier = next(r for r in found.registrations if r.name == "model-aks-kueue-model")
    assert "Workload" not in json.dumps(carrier.inputs)
    assert found.outputs["kueue"] == {"installMethod": "none"} and "queues" not in found.outputs


def test_a_kubernetes_version_change_is_reported_before_it_happens(prod_config, prod_settled):
    assert prod_config["aks-kueue:cluster"]["kubernetesVersion"] == "1.35"
    # The last deployment ran 1.34 (its record says so); this update asks for prod's 1.35.
    older = json.loads(json.dumps(prod_settled))
    older["day2"]["kubernetesVersion"] = "1.34"
    found = run(prod_config, previous=older)
    (notice,) = [f for f in found.day2_findings if f.kind == "day2-kubernetes-upgrade"]
    assert notice.key == "aks-kueue:cluster.kubernetesVersion" and "1.34 -> 1.35" in notice.message


def test_the_exported_facts_are_the_inputs_the_providers_receive(prod_config, prod_deployed):
    found = run(prod_config, previous=prod_deployed)
    facts = found.outputs["day2"]["resources"]
    assert facts["resourceGroup"]["facts"] == extract(RESOURCE_GROUP, found.of_type(RG)[0].inputs)
    assert facts["cluster"]["facts"] == extract(MANAGED_CLUSTER, found.of_type(CLUSTER)[0].inputs)
    for pool in found.of_type(POOL):
        entry = "systemPool" if pool.name == "main-system" else f"nodePools.{pool.inputs['agentPoolName']}"
        assert facts[entry]["facts"] == extract(AGENT_POOL, pool.inputs), entry


def test_a_minor_version_skip_is_refused_before_it_reaches_aks(prod_config, prod_settled):
    """Reported: 1.35 to 1.37 was reported as an upgrade, but AKS refuses to skip a minor version."""
    older = json.loads(json.dumps(prod_settled))
    older["day2"]["kubernetesVersion"] = "1.33"
    (finding,) = refusal(prod_config, older)
    assert finding.kind == "day2-kubernetes-minor-skip-refused" and finding.key == "aks-kueue:cluster.kubernetesVersion"
    assert "1.33 -> 1.35" in finding.message and "set 1.34 in one update" in finding.fix
    newer = json.loads(json.dumps(prod_settled))
    newer["day2"]["kubernetesVersion"] = "1.36"
    (down,) = refusal(prod_config, newer)
    assert down.kind == "day2-kubernetes-downgrade-refused"


# ---- Kueue objects ----

KUEUE_TYPES = {f"kubernetes:kueue.x-k8s.io/v1beta2:{k}" for k in
               ("ClusterQueue", "Cohort", "ResourceFlavor", "AdmissionCheck", "LocalQueue", "Topology",
                "WorkloadPriorityClass", "ProvisioningRequestConfig")}


def test_the_record_holds_every_guarded_kueue_object(prod_settled):
    objects = prod_settled["day2"]["kueueObjects"]
    assert objects["LocalQueue/team-a/default"]["facts"] == {"spec.clusterQueue": "team-a"}
    assert objects["Topology/zone-host"]["facts"]["spec.levels"] == [
        {"nodeLabel": "topology.kubernetes.io/zone"}, {"nodeLabel": "kubernetes.io/hostname"}]
    assert objects["ResourceFlavor/h100"]["facts"]["spec.topologyName"] == "zone-host"
    assert {name.split("/")[0] for name in objects} == {"ClusterQueue", "Cohort", "ResourceFlavor", "AdmissionCheck",
                                                        "LocalQueue", "Topology"}


def test_removing_a_cluster_queue_and_its_local_queue_is_refused(prod_settled):
    """Reported: removing a ClusterQueue with its LocalQueues was accepted with no notice."""
    def remove(c):
        queues = c["aks-kueue:queues"]
        queues["clusterQueues"] = [q for q in queues["clusterQueues"] if q["name"] != "team-b"]
        queues["localQueues"] = [q for q in queues["localQueues"] if q["spec"]["clusterQueue"] != "team-b"]
        c["aks-kueue:expectedWorkloads"] = [w for w in c["aks-kueue:expectedWorkloads"]
                                            if not w["queue"].startswith("team-b/")]
    with pytest.raises(ProgramRefused) as error:
        run(edited("prod", remove), previous=prod_settled)
    findings = error.value.findings
    assert {f.object for f in findings} == {"ClusterQueue team-b", "LocalQueue team-b/default",
                                            "AdmissionCheck team-b-provisioning"}
    assert all(f.kind == "day2-kueue-delete-refused" for f in findings)
    # Nothing of Kueue is registered, so nothing is deleted or replaced halfway.
    assert not {r.type for r in error.value.registered} & KUEUE_TYPES

    def listed(c):
        remove(c)
        c["aks-kueue:allowReplacement"] = ["queues.ClusterQueue/team-b", "queues.LocalQueue/team-b/default",
                                           "queues.AdmissionCheck/team-b-provisioning"]
    accepted = run(edited("prod", listed), previous=prod_settled)
    assert {f.kind for f in accepted.day2_findings} == {"day2-kueue-delete"}


def test_renaming_a_cluster_queue_is_refused(prod_settled):
    def rename(c):
        c["aks-kueue:queues"]["clusterQueues"][2]["name"] = "training2"
        for lq in c["aks-kueue:queues"]["localQueues"]:
            if lq["spec"]["clusterQueue"] == "training":
                lq["spec"]["clusterQueue"] = "training2"
    objects = {f.object: f.kind for f in refusal(edited("prod", rename), prod_settled)}
    assert objects["ClusterQueue training"] == "day2-kueue-delete-refused"
    assert objects["LocalQueue team-a/training"] == "day2-kueue-replace-refused"


def test_a_local_queue_pointed_at_another_cluster_queue_is_refused(prod_settled):
    """Reported: changing a LocalQueue's spec.clusterQueue (delete-before-replace) was accepted."""
    def move(c):
        c["aks-kueue:queues"]["localQueues"][2]["spec"]["clusterQueue"] = "team-a"
    (finding,) = refusal(edited("prod", move), prod_settled)
    assert finding.kind == "day2-kueue-replace-refused" and finding.object == "LocalQueue team-a/training"
    assert finding.key == "aks-kueue:queues.localQueues[2].spec.clusterQueue"
    assert "stopPolicy: Hold" in finding.fix


def test_a_topology_whose_levels_change_is_refused(prod_settled):
    """Reported: changing a Topology's levels was accepted with no notice."""
    def levels(c):
        c["aks-kueue:queues"]["topologies"][0]["fromAks"] = ["hostname"]
    (finding,) = refusal(edited("prod", levels), prod_settled)
    assert finding.kind == "day2-kueue-replace-refused" and finding.object == "Topology zone-host"


def test_kueue_deletes_run_in_order_and_time_out_with_a_message(prod_config):
    """Pulumi deletes dependents first: LocalQueues, ClusterQueues, then Cohorts, flavors and checks,
    then Topologies, then the installer. Each object's delete is bounded."""
    found = run(prod_config)
    urns = {r.name: r.urn for r in found.registrations}
    depends = {r.name: set(r.depends_on) for r in found.registrations}
    installer = urns["kueue-extension"]
    for r in found.registrations:
        if r.type in KUEUE_TYPES:
            assert r.options["customTimeouts"] == {"delete": "5m"}, r.name
            assert installer in r.depends_on, r.name
    assert urns["queues-clusterqueue-team-a"] in depends["queues-localqueue-team-a/default"]
    assert {urns["queues-resourceflavor-cpu"], urns["queues-resourceflavor-a100"], urns["queues-cohort-research"],
            urns["queues-admissioncheck-team-a-provisioning"]} <= depends["queues-clusterqueue-team-a"]
    assert urns["queues-topology-zone-host"] in depends["queues-resourceflavor-h100"]


# ---- the system pool: inline at birth, AgentPool for life ----

def test_the_system_pool_is_inline_only_in_the_update_that_creates_the_cluster(prod_config, prod_deployed,
                                                                                 prod_settled):
    first = run(prod_config)
    assert first.of_type(CLUSTER)[0].inputs["agentPoolProfiles"][0]["mode"] == "System"
    assert [r.name for r in first.of_type(POOL)] == ["pools-a100", "pools-cpu", "pools-h100"]
    assert prod_deployed["day2"]["systemPool"] == "cluster"
    adopt = run(prod_config, previous=prod_deployed)
    assert "agentPoolProfiles" not in adopt.of_type(CLUSTER)[0].inputs
    system = by_name(adopt, "main-system")
    assert system.inputs["mode"] == "System" and system.options["protect"]
    assert system.options["import"] == prod_deployed["clusterId"] + "/agentPools/system"
    assert prod_settled["day2"]["systemPool"] == "agentPool"
    steady = by_name(run(prod_config, previous=prod_settled), "main-system")
    assert "import" not in steady.options


def test_a_pool_keeps_the_host_encryption_it_was_created_with(prod_config, prod_settled):
    before = json.loads(json.dumps(prod_settled))
    before["day2"]["resources"]["nodePools.cpu"]["facts"]["enableEncryptionAtHost"] = False
    found = run(prod_config, previous=before)
    assert by_name(found, "pools-cpu").inputs["enableEncryptionAtHost"] is False
    assert not [f for f in found.day2_findings if f.severity == "error"]


# ---- upgrades ----

def test_prod_registers_weekend_maintenance_windows(prod_config):
    found = {r.inputs["configName"]: r.inputs["maintenanceWindow"] for r in run(prod_config).of_type(MAINTENANCE)}
    assert set(found) == {"aksManagedAutoUpgradeSchedule", "aksManagedNodeOSUpgradeSchedule"}
    assert found["aksManagedAutoUpgradeSchedule"] == {
        "schedule": {"weekly": {"intervalWeeks": 1, "dayOfWeek": "Saturday"}}, "durationHours": 8,
        "startTime": "00:00", "utcOffset": "+00:00"}
    assert found["aksManagedNodeOSUpgradeSchedule"]["schedule"]["weekly"]["dayOfWeek"] == "Sunday"
    assert run(stack_doc("dev"), "dev").of_type(MAINTENANCE) == []


def test_gpu_pools_upgrade_one_node_at_a_time_by_default(prod_config):
    pools = {r.inputs["agentPoolName"]: r.inputs for r in run(prod_config).of_type(POOL)}
    assert pools["a100"]["upgradeSettings"] == pools["h100"]["upgradeSettings"] == {"maxSurge": "0",
                                                                                     "maxUnavailable": "1"}
    assert "upgradeSettings" not in pools["cpu"]

    def tune(c):
        c["aks-kueue:nodePools"][0]["upgradeSettings"] = {"maxSurge": "33%", "drainTimeoutInMinutes": 60,
                                                          "nodeSoakDurationInMinutes": 5,
                                                          "undrainableNodeBehavior": "Cordon"}
        c["aks-kueue:nodePools"][1]["upgradeSettings"] = {"drainTimeoutInMinutes": 120}
    tuned = {r.inputs["agentPoolName"]: r.inputs for r in run(edited("prod", tune)).of_type(POOL)}
    assert tuned["cpu"]["upgradeSettings"] == {"maxSurge": "33%", "drainTimeoutInMinutes": 60,
                                               "nodeSoakDurationInMinutes": 5, "undrainableNodeBehavior": "Cordon"}
    assert tuned["a100"]["upgradeSettings"] == {"maxSurge": "0", "maxUnavailable": "1", "drainTimeoutInMinutes": 120}


@pytest.mark.parametrize("channel,ignored", [("patch", []), ("stable", ["kubernetesVersion"]),
                                             ("rapid", ["kubernetesVersion"]), ("none", [])])
def test_a_channel_that_moves_the_minor_owns_the_version(channel, ignored):
    def edit(c):
        c["aks-kueue:cluster"]["security"]["upgradeChannel"] = channel
    assert run(edited("prod", edit)).of_type(CLUSTER)[0].options["ignoreChanges"] == ignored


# ---- names and aliases ----

def _alias_urns(registration) -> set[str]:
    """The URNs a registration's aliases stand for: an alias spec keeps the registration's stack,
    project, parent, type and name unless it says otherwise (URNs as the offline run writes them)."""
    stack_part, project, types, name = registration.urn.split("::", 3)
    chain = types.split("$")
    found = set()
    for alias in registration.options["aliases"]:
        if isinstance(alias, str):
            found.add(alias)
            continue
        parents = ([alias["parentUrn"].split("::")[2].split("$")[-1]] if "parentUrn" in alias else chain[:-1])
        found.add("::".join([stack_part, project, "$".join([*parents, alias.get("type", chain[-1])]),
                             alias.get("name", name)]))
    return found


def _stacks():
    stacks = [("dev", stack_path(ROOT, "dev")), ("prod", stack_path(ROOT, "prod"))]
    example = REFERENCE.parent / "contract" / "Pulumi.example.yaml"
    return stacks + [pytest.param("example", example, id="example", marks=needs_shared())]


@pytest.mark.parametrize("stack,path", _stacks())
def test_every_urn_before_issue_10_is_kept_or_aliased(stack, path):
    before = json.loads((ROOT / "tests/fixtures/day2/urns-before-issue-10.json").read_text())["stacks"][stack]
    found = run_program(load_stack(path, stack, ROOT), ROOT)
    now = {r.urn for r in found.registrations}
    aliased = set().union(*(_alias_urns(r) for r in found.registrations))
    missing = [urn for urn in before if urn not in now and urn not in aliased]
    assert missing == []
    assert aliased & now == set()  # an alias never names a resource that is still there


def test_localqueues_that_used_to_collide_get_distinct_urns():
    def edit(c):
        queues = c["aks-kueue:queues"]
        queues["localQueues"] = [{"name": "c", "namespace": "a-b", "spec": {"clusterQueue": "team-a"}},
                                 {"name": "b-c", "namespace": "a", "spec": {"clusterQueue": "team-a"}}]
        queues["clusterQueues"][0]["spec"]["namespaceSelector"] = {}
        c.pop("aks-kueue:expectedWorkloads")
    found = run(edited("prod", edit)).of_type(LOCAL_QUEUE)
    assert sorted(r.name for r in found) == ["queues-localqueue-a-b/c", "queues-localqueue-a/b-c"]
    assert all(r.options["aliases"] == [] for r in found)  # neither may claim the old shared name
    assert all(r.options["replaceOnChanges"] == ["spec.clusterQueue"] and r.options["deleteBeforeReplace"]
               for r in found)


def test_existing_namespaces_are_only_labelled():
    def edit(c):
        c["aks-kueue:queues"]["existingNamespaces"] = ["default"]
        c["aks-kueue:queues"]["localQueues"][0]["namespace"] = "default"
        c["aks-kueue:queues"]["clusterQueues"][0]["spec"]["namespaceSelector"] = {}
        c["aks-kueue:expectedWorkloads"][0]["queue"] = "default/default"
    found = run(edited("prod", edit))
    patch = by_name(found, "queues-namespace-default")
    assert patch.type == "kubernetes:core/v1:NamespacePatch" and patch.inputs["metadata"]["name"] == "default"
    assert patch.options["retainOnDelete"] is False and patch.options["protect"] is False
    assert "namespaces.default" not in found.outputs["day2"]["resources"]  # never owned, so never guarded

    def unlisted(c):
        edit(c)
        c["aks-kueue:queues"]["existingNamespaces"] = []
    with pytest.raises(ProgramError, match="existingNamespaces"):
        run(edited("prod", unlisted))


# ---- secrets ----

def test_a_secret_key_stays_secret_in_the_release_inputs_and_outputs():
    config = flat(edited("dev", lambda c: c["aks-kueue:kueue"]["values"]["controllerManager"].update(
        imagePullSecrets=[{"name": "registry-token"}])))
    found = run_program(StackConfig("aks-kueue", "dev", config, ["aks-kueue:kueue"]), ROOT)
    (release,) = found.of_type(RELEASE)
    assert release.inputs["values"] == "[secret]" and "values" in release.secret_paths
    assert found.outputs["kueue"] == "[secret]" and "kueue" in found.secret_outputs
    plain = run_program(StackConfig("aks-kueue", "dev", config), ROOT).of_type(RELEASE)[0]
    assert plain.inputs["values"]["controllerManager"]["imagePullSecrets"] == [{"name": "registry-token"}]


def test_offline_a_nested_secure_value_is_opaque_and_its_key_secret(tmp_path):
    text = stack_path(ROOT, "dev").read_text().replace(
        "      controllerManager:\n        replicas: 1",
        "      controllerManager:\n        replicas: 1\n        imagePullSecrets:\n"
        "          - name:\n              secure: v1:AAAA")
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text)
    config = load_stack(path, "dev", ROOT)
    assert config.secret_keys == ["aks-kueue:kueue"]
    found = run_program(config, ROOT)
    assert found.of_type(RELEASE)[0].inputs["values"] == "[secret]"
    unchecked = tmp_path / "Pulumi.bad.yaml"
    unchecked.write_text(stack_path(ROOT, "dev").read_text().replace(
        "      vmSize: Standard_D8s_v5", "      vmSize:\n        secure: v1:AAAA"))
    with pytest.raises(ProgramError) as error:
        run_program(load_stack(unchecked, "bad", ROOT), ROOT)
    assert "aks-kueue:nodePools[0].vmSize: is a secret (`secure:`)" in str(error.value)
    assert "was not checked here" in str(error.value)


# ---- the pack reads what the day-2 paths register ----

def _install_none(c):
    c["aks-kueue:kueue"] = {"install": "none"}
    for key in ("aks-kueue:queues", "aks-kueue:expectedWorkloads", "aks-kueue:queueManifests"):
        c.pop(key, None)


def _existing_namespace(c):
    c["aks-kueue:queues"]["existingNamespaces"] = [c["aks-kueue:queues"]["localQueues"][0]["namespace"]]


@pytest.mark.parametrize("edit,settled", [(None, False), (None, True), (_install_none, False),
                                          (_existing_namespace, False)],
                         ids=["first", "system-pool-as-agent-pool", "install-none", "existing-namespace"])
def test_the_pack_reads_the_model_the_program_built(edit, settled):
    """The system pool as an AgentPool, no installer, a patched namespace: the pack's reading of
    the resources is still the model the program built, so its findings are the program's."""
    from aks_kueue.day2.state import from_outputs
    from aks_kueue.judge import judge
    from aks_kueue.model.from_resources import from_resources
    from aks_kueue.model.record import settled as settled_model
    from aks_kueue.preview.pack import policy_view
    from tests.conftest import model_of

    config = edited("dev", edit) if edit else stack_doc("dev")
    previous = deployed(config, "dev") if settled else None
    found = run(config, "dev", previous)
    # The model after the last deployment: the pools it has are kept (and marked so).
    built = settled_model(model_of(config, "dev"), from_outputs(previous).record if previous else None)
    if settled:
        assert any(r.type == POOL and r.inputs.get("mode") == "System" for r in found.registrations)
        assert all(p.existing for p in (*built.pools, *built.cluster.system_pools))
    model = from_resources(policy_view(found)).model
    assert model == built
    assert judge(model).findings == judge(built).findings
