"""Pre-flight parity: what Azure or Kubernetes refuses at deploy is refused at preview.

One test per rule of issue 11's first section (the preflight part): each bad value is refused
with its key and the value that would be right, through `parse_settings`, and a few through
the whole program and the CLI (exit 2).
"""

from __future__ import annotations

from datetime import date

import pytest
import yaml
from typer.testing import CliRunner

from aks_kueue.aks import kubernetes_versions
from aks_kueue.cli import app
from aks_kueue.preview.run import ProgramError
from aks_kueue.settings import SettingsError, parse_settings
from tests.conftest import ROOT, SHARED, edited, flat, needs_shared, run_config, stack_doc

# A day inside the shipped calendar's freshness window, when 1.34 to 1.36 are supported and 1.37 is coming.
DAY = date(2026, 9, 1)


def problems(config: dict, today: date = DAY) -> list[str]:
    with pytest.raises(SettingsError) as caught:
        parse_settings(flat(config), today=today)
    return [str(p) for p in caught.value.problems]


def only_problem(config: dict, today: date = DAY) -> str:
    found = problems(config, today)
    assert len(found) == 1, found
    return found[0]


def warnings(config: dict, today: date = DAY) -> list[str]:
    """The judge's warnings on the model of this config, as `key: message; fix` lines, with the
    program's own notes about the provider's configuration."""
    from aks_kueue.judge import judge
    from aks_kueue.model.from_settings import from_settings

    settings = parse_settings(flat(config), today=today)
    found = judge(from_settings(settings, ROOT), today=today).findings
    return [*settings.warnings, *(str(f) for f in found if f.severity.value == "warning")]


def cluster(**values):
    def edit(c):
        c["aks-kueue:cluster"].update(values)
    return edit


def system_pool(**values):
    def edit(c):
        c["aks-kueue:cluster"]["systemPool"].update(values)
    return edit


def network(**values):
    def edit(c):
        c["aks-kueue:cluster"].setdefault("network", {}).update(values)
    return edit


def security(**values):
    def edit(c):
        c["aks-kueue:cluster"].setdefault("security", {}).update(values)
    return edit


def location(value):
    def edit(c):
        c["azure-native:location"] = value
    return edit


@pytest.fixture
def pinned_clock(monkeypatch):
    """Whole-program runs read the versions module's clock: hold it on DAY."""
    monkeypatch.setattr(kubernetes_versions, "today", lambda: DAY)


def cli_preview(tmp_path, config: dict):
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text(yaml.safe_dump({"config": config}))
    return CliRunner().invoke(app, ["preview", "--config", str(path)])


# --- Kubernetes versions -------------------------------------------------------------------

def test_a_version_outside_the_calendar_is_refused_with_the_supported_ones():
    message = only_problem(edited("dev", cluster(kubernetesVersion="1.40")))
    assert message.startswith("aks-kueue:cluster.kubernetesVersion: Kubernetes 1.40 is not in the AKS release "
                              "calendar of 2026-08-21")
    assert message.endswith("use one AKS supports on 2026-09-01: 1.34, 1.35 or 1.36")


def test_a_version_before_its_aks_preview_is_refused():
    message = only_problem(edited("dev", cluster(kubernetesVersion="1.37.1")), today=date(2026, 8, 25))
    assert "Kubernetes 1.37.1 is not offered by AKS yet: its preview is planned for Sep 2026" in message


def test_a_version_past_its_lts_end_is_refused_and_the_minimum_rule_stays():
    assert "reached the end of AKS support (Nov 2027)" in only_problem(
        edited("dev", cluster(kubernetesVersion="1.34")), today=date(2027, 12, 1))
    assert "too old; this program needs 1.34 or newer" in only_problem(
        edited("dev", cluster(kubernetesVersion="1.33")))


def test_versions_aks_takes_with_a_catch_warn():
    preview = warnings(edited("dev", cluster(kubernetesVersion="1.37")), today=date(2026, 9, 15))
    assert any(w.startswith("aks-kueue:cluster.kubernetesVersion: Kubernetes 1.37 is in preview") for w in preview)
    lts = warnings(edited("dev", cluster(kubernetesVersion="1.34")), today=date(2026, 12, 1))
    assert any("left AKS community support at the end of Nov 2026" in w and "AKSLongTermSupport" in w for w in lts)
    assert not any("kubernetesVersion" in w for w in warnings(edited("dev", cluster(kubernetesVersion="1.35"))))


def test_a_stale_calendar_asks_for_a_refresh_and_stops_refusing_newer_versions():
    late = date(2027, 1, 15)   # more than 120 days after the calendar's 2026-08-21
    found = warnings(edited("dev", cluster(kubernetesVersion="1.38")), today=late)
    assert any("newer than every version in the AKS release calendar" in w for w in found)
    assert any("more than 120 days ago; refresh it" in w for w in found)
    fresh = warnings(edited("dev", cluster(kubernetesVersion="1.35")), today=date(2026, 12, 1))
    assert not any("refresh it" in w for w in fresh)


# --- Locations -----------------------------------------------------------------------------

def test_a_location_that_is_not_an_azure_region_is_refused_with_a_suggestion():
    assert only_problem(edited("dev", location("eastu"))).startswith(
        "azure-native:location: 'eastu' is not an Azure region; did you mean 'eastus'?")


def test_display_names_and_sovereign_regions_are_regions():
    assert parse_settings(flat(edited("dev", location("West Europe"))), today=DAY).location == "westeurope"
    found = warnings(edited("dev", location("usgovvirginia")))
    assert any("set azure-native:environment: usgovernment" in w for w in found)


def test_a_region_of_another_cloud_than_the_provider_is_refused():
    def edit(c):
        c["azure-native:location"] = "chinanorth3"
        c["azure-native:environment"] = "usgovernment"
    assert only_problem(edited("dev", edit)).startswith(
        "azure-native:location: chinanorth3 is a region of Azure operated by 21Vianet, but azure-native:environment "
        "is usgovernment; set azure-native:environment: china")


def test_zonal_pools_in_a_region_without_zones_are_refused():
    found = problems(edited("prod", location("westus")))
    assert "aks-kueue:cluster.systemPool.zones: westus has no availability zones" in found[0]
    assert found[1].startswith("aks-kueue:nodePools[0].zones: westus has no availability zones")
    assert all("remove zones or choose a region with zones" in p for p in found)


def test_a_restricted_region_warns():
    assert any("access to francesouth is restricted" in w for w in warnings(edited("dev", location("francesouth"))))


# --- The system pool -----------------------------------------------------------------------

def test_the_system_pool_needs_4_vcpus():
    assert only_problem(edited("dev", system_pool(vmSize="Standard_D2s_v5"))) == (
        "aks-kueue:cluster.systemPool.vmSize: Standard_D2s_v5 has 2 vCPUs and 8 GiB; AKS system pools need at "
        "least 4 vCPUs and 4 GiB (use-system-pools), for example Standard_D4s_v5")


def test_the_system_pool_refuses_b_series_and_windows():
    assert "B-series size, which AKS does not support for system pools" in only_problem(
        edited("dev", system_pool(vmSize="Standard_B4ms")))
    assert only_problem(edited("dev", system_pool(osType="Windows"))).startswith(
        "aks-kueue:cluster.systemPool.osType: 'Windows': AKS system pools run Linux only; set osType: Linux")
    assert parse_settings(flat(edited("dev", system_pool(osType="Linux"))), today=DAY)


def test_the_system_pool_must_hold_30_pods():
    assert only_problem(edited("dev", system_pool(maxPods=10))) == (
        "aks-kueue:cluster.systemPool.maxPods: maxPods 10 x count 1 = 10 pods; AKS refuses a node pool without "
        "space for at least 30 pods (concepts-network-ip-address-planning), judged on the nodes it is created "
        "with; set maxPods to 30 or more, or count to 3 or more")
    # AKS's own rule is per pool: three nodes of 10 pods are enough.
    assert parse_settings(flat(edited("dev", system_pool(maxPods=10, count=3))), today=DAY)


def test_at_most_100_node_pools_counting_the_system_pool():
    def pools(n):
        def edit(c):
            c["aks-kueue:nodePools"] = [{"name": f"p{i}", "vmSize": "Standard_D8s_v5", "minCount": 0,
                                         "maxCount": 1} for i in range(n)]
            c.pop("aks-kueue:queues"), c.pop("aks-kueue:expectedWorkloads")
        return edit
    assert only_problem(edited("dev", pools(100))) == (
        "aks-kueue:nodePools: 100 user pools and the system pool make 101 node pools; AKS allows at most 100 per "
        "cluster, so remove 1 or merge pools of the same VM size")
    assert len(parse_settings(flat(edited("dev", pools(99))), today=DAY).node_pools) == 99


def test_at_most_5000_nodes_per_cluster():
    def edit(c):
        c["aks-kueue:nodePools"][0]["maxCount"] = 1000
        c["aks-kueue:nodePools"] += [dict(c["aks-kueue:nodePools"][0], name=f"more{i}") for i in range(4)]
        c["aks-kueue:cluster"]["network"] = {"podCidr": "10.128.0.0/10"}
    message = only_problem(edited("dev", edit))
    assert message.startswith("aks-kueue:nodePools: the system pool and the pools' maxCount add up to 5003 nodes; "
                              "AKS allows at most 5000 per cluster")


# --- Network arithmetic --------------------------------------------------------------------

def test_overlapping_pod_and_service_ranges_are_refused():
    assert only_problem(edited("prod", network(podCidr="10.0.0.0/8"))) == (
        "aks-kueue:cluster.network.serviceCidr: podCidr 10.0.0.0/8 and serviceCidr 10.0.0.0/16 overlap; AKS needs "
        "them apart, for example podCidr 10.244.0.0/16 and serviceCidr 10.0.0.0/16")
    # The AKS default service range counts when only podCidr is given.
    assert "(serviceCidr at the AKS default)" in only_problem(edited("dev", network(podCidr="10.0.0.0/12")))


def test_ranges_aks_reserves_are_refused():
    assert only_problem(edited("dev", network(podCidr="172.16.0.0/12"))).startswith(
        "aks-kueue:cluster.network.podCidr: 172.16.0.0/12 overlaps 172.30.0.0/16, which AKS reserves")
    assert "use another private range such as 10.0.0.0/16" in only_problem(
        edited("prod", network(serviceCidr="192.0.2.0/24", dnsServiceIp="192.0.2.10")))


def test_a_service_range_larger_than_a_slash_12_is_refused():
    assert only_problem(edited("prod", network(serviceCidr="10.0.0.0/8", podCidr="192.168.0.0/16"))) == (
        "aks-kueue:cluster.network.serviceCidr: 10.0.0.0/8 is larger than AKS allows for services (at most a /12); "
        "use a /16 such as 10.0.0.0/16")


@pytest.mark.parametrize("address,why", [
    ("10.1.0.10", "is outside the service range 10.0.0.0/16"),
    ("10.0.0.1", "is the first address of 10.0.0.0/16, which AKS gives the kubernetes.default Service"),
    ("10.0.0.0", "is the network address of 10.0.0.0/16, which Kubernetes never assigns"),
    ("10.0.255.255", "is the broadcast address of 10.0.0.0/16, which Kubernetes never assigns"),
])
def test_a_dns_service_ip_kubernetes_cannot_give_the_dns_service_is_refused(address, why):
    assert only_problem(edited("prod", network(dnsServiceIp=address))) == (
        f"aks-kueue:cluster.network.dnsServiceIp: {address} {why}; use an address inside serviceCidr other than "
        "its first, such as 10.0.0.10")


def test_a_service_range_without_its_dns_ip_is_refused():
    assert only_problem(edited("dev", network(serviceCidr="192.168.0.0/16"))) == (
        "aks-kueue:cluster.network.dnsServiceIp: is not set, so AKS uses 10.0.0.10, which is outside the service "
        "range 192.168.0.0/16; set dnsServiceIp to an address inside serviceCidr 192.168.0.0/16, such as "
        "192.168.0.10")


def test_ipv6_without_dual_stack_is_refused():
    message = only_problem(edited("dev", network(podCidr="fd00:10:244::/56")))
    assert message == ("aks-kueue:cluster.network.podCidr: fd00:10:244::/56 is an IPv6 range; AKS takes IPv6 only "
                       "in a dual-stack cluster (ipFamilies IPv4 and IPv6), which this program does not configure; "
                       "use an IPv4 range such as 10.244.0.0/16")


def test_a_pod_range_too_small_for_the_pools_is_refused():
    assert only_problem(edited("prod", network(podCidr="10.244.0.0/24"))) == (
        "aks-kueue:cluster.network.podCidr: 10.244.0.0/24 gives each node a /24, room for 1 node, but the system "
        "pool and the pools' maxCount add up to 19; use a /19 or larger (and leave room for upgrade surge nodes)")


def test_authorized_ranges_on_a_private_cluster_are_refused():
    assert only_problem(edited("prod", security(privateCluster=True, deployerInClusterNetwork=True))).startswith(
        "aks-kueue:cluster.security.apiServerAuthorizedIpRanges: AKS does not support authorized IP ranges on a "
        "private cluster")


def test_more_than_200_authorized_ranges_are_refused():
    ranges = [f"52.{i // 256}.{i % 256}.0/24" for i in range(201)]
    assert only_problem(edited("dev", security(apiServerAuthorizedIpRanges=ranges))).startswith(
        "aks-kueue:cluster.security.apiServerAuthorizedIpRanges: 201 ranges; AKS accepts at most 200")


def test_ipv6_authorized_ranges_no_longer_crash():
    # `::/0` used to raise TypeError while comparing it with the IPv4 documentation ranges. Issue 28: an IPv6
    # range lets no client in (the API server has an IPv4 address), which a warning says; 2001:db8::/32 is
    # RFC 3849's documentation range, a placeholder (an error in production, not a warning).
    config = edited("prod", security(apiServerAuthorizedIpRanges=["::/0", "2001:db8::/32", "52.1.2.0/24"]))
    about = [w for w in warnings(config) if "apiServerAuthorizedIpRanges" in w]
    assert [w.split(":")[1] for w in about] == ["cluster.security.apiServerAuthorizedIpRanges[0]"]
    assert "::/0 is an IPv6 range, and the API server has an IPv4 address only" in about[0]


# --- Reachability --------------------------------------------------------------------------

def test_a_private_api_server_needs_the_deployer_inside_its_network():
    config = edited("dev", security(privateCluster=True, apiServerAuthorizedIpRanges=[]))
    assert only_problem(config).startswith(
        "aks-kueue:cluster.security.privateCluster: a private API server answers only inside the cluster's virtual "
        "network")
    assert "deployerInClusterNetwork: true, or set privateCluster: false" in only_problem(config)
    stated = edited("dev", security(privateCluster=True, apiServerAuthorizedIpRanges=[],
                                    deployerInClusterNetwork=True))
    assert any("cannot be peered before the first pulumi up" in w for w in warnings(stated))
    assert only_problem(edited("dev", security(deployerInClusterNetwork=True))).startswith(
        "aks-kueue:cluster.security.deployerInClusterNetwork: applies only to privateCluster: true")


# --- Everything together, and through the whole program ------------------------------------

def test_several_bad_values_are_reported_together():
    def edit(c):
        c["azure-native:location"] = "westeurop"
        c["aks-kueue:cluster"]["kubernetesVersion"] = "1.40"
        c["aks-kueue:cluster"]["systemPool"]["vmSize"] = "Standard_D2s_v5"
        c["aks-kueue:cluster"]["network"] = {"podCidr": "10.0.0.0/8", "dnsServiceIp": "10.0.0.1"}
    found = problems(edited("dev", edit))
    keys = [p.split(": ", 1)[0] for p in found]
    assert keys == ["azure-native:location", "aks-kueue:cluster.kubernetesVersion",
                    "aks-kueue:cluster.systemPool.vmSize", "aks-kueue:cluster.network.podCidr",
                    "aks-kueue:cluster.network.dnsServiceIp"]


@pytest.mark.parametrize("edit,line", [
    (location("eastu"), "azure-native:location: 'eastu' is not an Azure region; did you mean 'eastus'?"),
    (cluster(kubernetesVersion="1.40"), "aks-kueue:cluster.kubernetesVersion: Kubernetes 1.40 is not in the AKS"),
    (system_pool(maxPods=10, count=1), "aks-kueue:cluster.systemPool.maxPods: maxPods 10 x count 1 = 10 pods"),
    (network(dnsServiceIp="10.0.0.1"), "aks-kueue:cluster.network.dnsServiceIp: 10.0.0.1 is the first address"),
    (security(privateCluster=True, apiServerAuthorizedIpRanges=[]), "aks-kueue:cluster.security.privateCluster:"),
])
def test_the_program_stops_before_registering_anything(pinned_clock, edit, line):
    with pytest.raises(ProgramError) as caught:
        run_config(edited("prod", edit))
    assert str(caught.value).startswith("invalid stack config:\n") and line in str(caught.value)


@pytest.mark.parametrize("edit,line", [
    (location("mars"), "azure-native:location: 'mars' is not an Azure region"),
    (network(podCidr="fd00::/64"), "aks-kueue:cluster.network.podCidr: fd00::/64 is an IPv6 range"),
    (system_pool(vmSize="Standard_D2s_v5"), "AKS system pools need at least 4 vCPUs and 4 GiB"),
])
def test_the_cli_exits_2_naming_the_key(pinned_clock, tmp_path, edit, line):
    result = cli_preview(tmp_path, edited("dev", edit))
    assert result.exit_code == 2 and line in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_the_shipped_stacks_pass(pinned_clock):
    for name in ("dev", "prod"):
        assert parse_settings(flat(stack_doc(name)), today=DAY).cluster.kubernetes_version == "1.35"
        assert run_config(stack_doc(name), stack=name).registrations


@needs_shared()
def test_the_contract_example_passes():
    example = yaml.safe_load((SHARED / "contract" / "Pulumi.example.yaml").read_text())["config"]
    assert parse_settings(flat(example), today=DAY).location == "eastus"
    found = warnings(example)
    # Issue 28: its all-zero admin group is a placeholder, an error in production (the example is one).
    assert not any(w.startswith("aks-kueue:cluster.security.entraAdminGroupObjectIds[0]") for w in found)
    assert not any(w.startswith("aks-kueue:cluster.kubernetesVersion") for w in found)  # 1.34 is fine on DAY
