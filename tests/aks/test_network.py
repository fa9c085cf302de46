"""AKS network arithmetic."""

from __future__ import annotations

import ipaddress

from hypothesis import given, strategies as st

from aks_kueue.aks import network

net = ipaddress.ip_network
addr = ipaddress.ip_address


def test_reserved_ranges():
    assert network.reserved_overlap(net("172.16.0.0/12")) == net("172.30.0.0/16")
    assert network.reserved_overlap(net("192.0.0.0/16")) == net("192.0.2.0/24")
    assert network.reserved_overlap(net("10.0.0.0/8")) is None
    assert network.reserved_overlap(net("fd00::/8")) is None


def test_overlap_never_mixes_ip_versions():
    assert network.overlap(net("10.0.0.0/8"), net("10.1.0.0/16"))
    assert not network.overlap(net("0.0.0.0/0"), net("::/0"))


def test_the_defaults_are_consistent():
    service = net(network.DEFAULT_SERVICE_CIDR)
    assert network.service_ip_problem(addr(network.DEFAULT_DNS_SERVICE_IP), service) is None
    assert not network.overlap(service, net(network.DEFAULT_POD_CIDR))
    assert network.suggested_dns_ip(service) == addr(network.DEFAULT_DNS_SERVICE_IP)


@given(st.integers(min_value=8, max_value=30), st.integers(min_value=0, max_value=2**32 - 1),
       st.integers(min_value=0, max_value=2**32 - 1))
def test_an_accepted_dns_ip_is_one_kubernetes_can_assign(prefix, base, offset):
    service = ipaddress.IPv4Network((base, prefix), strict=False)
    candidate = ipaddress.IPv4Address(int(service.network_address) + offset % service.num_addresses)
    problem = network.service_ip_problem(candidate, service)
    assignable = service.network_address + 1 < candidate < service.broadcast_address
    assert (problem is None) == assignable


def test_an_address_outside_or_of_the_other_version():
    assert "outside" in network.service_ip_problem(addr("10.1.0.10"), net("10.0.0.0/16"))
    assert "outside" in network.service_ip_problem(addr("fd00::a"), net("10.0.0.0/16"))
    assert network.suggested_dns_ip(net("10.0.0.0/29")) is None   # .10 is past a /29


@given(st.integers(min_value=1, max_value=5000))
def test_the_pod_prefix_for_n_nodes_is_the_longest_that_fits(nodes):
    prefix = network.pod_prefix_for(nodes)
    assert network.nodes_for_pod_cidr(net(f"10.0.0.0/{prefix}", strict=False)) >= nodes
    assert prefix == 24 or network.nodes_for_pod_cidr(net(f"10.0.0.0/{prefix + 1}", strict=False)) < nodes


def test_a_pod_range_smaller_than_a_slash_24_serves_no_node():
    assert network.nodes_for_pod_cidr(net("10.244.0.0/25")) == 0
    assert network.nodes_for_pod_cidr(net("10.244.0.0/16")) == 256
