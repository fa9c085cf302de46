"""AKS network arithmetic: the address ranges a cluster's network profile may use.

Sources (MicrosoftDocs/azure-aks-docs, read 2026-08-21, under learn.microsoft.com/azure/aks/):
- [cni] concepts-network-cni-overview, "AKS CNI networking prerequisites" (ms.date 2026-07-10):
  169.254.0.0/16, 192.0.2.0/24, 172.30.0.0/16 and 172.31.0.0/16 are reserved for "Kubernetes
  service, pod, and cluster virtual network address ranges" on all clusters, and "AKS rejects
  pod CIDRs that overlap a reserved range".
- [overlay] concepts-network-azure-cni-overlay (ms.date 2026-07-31): the service range "must be
  smaller than /12" and "shouldn't overlap with the pod CIDR range"; the DNS service IP is "within
  the Kubernetes service address range"; "Don't use the first IP address in your address range,
  because this address is used for the kubernetes.default.svc.cluster.local address"; each node
  takes a fixed /24 of the pod CIDR.
- [kubenet] configure-kubenet: "The pod IP address range is used to assign a /24 address space to
  each node in the cluster".
- [dual-stack] azure-cni-overlay, "Key parameters for dual-stack networking": `--ip-families`
  takes "Only ipv4 and ipv4,ipv6"; single-stack IPv6 is not supported.
- Kubernetes' service IP allocator (kubernetes/kubernetes pkg/registry/core/service/ipallocator)
  never hands out a range's network address or, for IPv4, its broadcast address, so neither
  can be a Service's clusterIP.
- The defaults are the ones pulumi-azure-native 3.29 sends when a field is left out
  (`ContainerServiceNetworkProfileArgs`), the same as the AKS API's.
"""

from __future__ import annotations

import ipaddress
from typing import Optional, Union

Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]
Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

RESERVED_RANGES = tuple(ipaddress.ip_network(n) for n in
                        ("169.254.0.0/16", "172.30.0.0/16", "172.31.0.0/16", "192.0.2.0/24"))
DEFAULT_POD_CIDR = "10.244.0.0/16"
DEFAULT_SERVICE_CIDR = "10.0.0.0/16"
DEFAULT_DNS_SERVICE_IP = "10.0.0.10"
# The largest service range AKS accepts ("smaller than /12"; Kubernetes itself refuses more than /12).
LARGEST_SERVICE_PREFIX = 12
# Overlay and kubenet give every node one /24 of the pod CIDR.
NODE_POD_PREFIX = 24


def reserved_overlap(network: Network) -> Optional[Network]:
    """The first AKS-reserved range `network` overlaps, if any."""
    return next((r for r in RESERVED_RANGES if r.version == network.version and network.overlaps(r)), None)


def overlap(a: Network, b: Network) -> bool:
    """Whether two ranges share an address; ranges of different IP versions never do."""
    return a.version == b.version and a.overlaps(b)


def service_ip_problem(address: Address, service: Network) -> Optional[str]:
    """Why `address` cannot be the cluster DNS Service's IP in `service`, or None when it can."""
    if address.version != service.version or address not in service:
        return f"is outside the service range {service}"
    if address == service.network_address:
        return f"is the network address of {service}, which Kubernetes never assigns"
    if address == service.network_address + 1:
        return f"is the first address of {service}, which AKS gives the kubernetes.default Service"
    if service.version == 4 and address == service.broadcast_address:
        return f"is the broadcast address of {service}, which Kubernetes never assigns"
    return None


def suggested_dns_ip(service: Network) -> Optional[Address]:
    """The .10 of the range, as AKS's own default (10.0.0.10 in 10.0.0.0/16), when the range has one."""
    candidate = service.network_address + 10
    return candidate if service_ip_problem(candidate, service) is None else None


def nodes_for_pod_cidr(pods: Network) -> int:
    """How many nodes a pod CIDR can serve when each node takes a /24 (0 if it is smaller)."""
    if pods.version != 4 or pods.prefixlen > NODE_POD_PREFIX:
        return 0
    return 2 ** (NODE_POD_PREFIX - pods.prefixlen)


def pod_prefix_for(nodes: int) -> int:
    """The longest prefix whose /24 blocks cover `nodes` nodes (e.g. 300 nodes -> /15)."""
    prefix = NODE_POD_PREFIX
    while 2 ** (NODE_POD_PREFIX - prefix) < nodes and prefix > 0:
        prefix -= 1
    return prefix
