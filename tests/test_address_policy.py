"""The private-address guard over the IANA special-purpose registries and the IPv6 forms that carry an IPv4
address (no connection is made: the policy is a pure function of the address)."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citeaudit.sources.security import address_refusal

# The IANA IPv4 and IPv6 Special-Purpose Address Registries (plus multicast and RFC 3879 site-local), typed in
# from the registries: every block here is refused at its first and last address. 192.0.0.0/24 and 2001::/23
# are refused whole (their few globally reachable anycast addresses are not web servers).
NOT_PUBLIC = [
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.0.0.0/29",
    "192.0.0.8/32",
    "192.0.0.9/32",
    "192.0.0.10/32",
    "192.0.0.170/32",
    "192.0.0.171/32",
    "192.0.2.0/24",
    "192.88.99.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "198.51.100.0/24",
    "203.0.113.0/24",
    "224.0.0.0/4",
    "240.0.0.0/4",
    "255.255.255.255/32",
    "::1/128",
    "::/128",
    "::ffff:0:0/96",
    "64:ff9b:1::/48",
    "100::/64",
    "100:0:0:1::/64",
    "2001::/23",
    "2001::/32",
    "2001:1::1/128",
    "2001:2::/48",
    "2001:3::/32",
    "2001:4:112::/48",
    "2001:10::/28",
    "2001:20::/28",
    "2001:30::/28",
    "2001:db8::/32",
    "3fff::/20",
    "5f00::/16",
    "fc00::/7",
    "fe80::/10",
    "fec0::/10",
    "ff00::/8",
]


@pytest.mark.parametrize("block", NOT_PUBLIC)
def test_every_special_purpose_block_is_refused_at_both_ends(block: str) -> None:
    network = ipaddress.ip_network(block)
    for address in (network.network_address, network.broadcast_address):
        assert address_refusal(str(address)) is not None, f"{address} of {block}"


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        # 6to4 2002:AABB:CCDD:: carries the IPv4 address AA.BB.CC.DD: 0a00:0001 = 10.0.0.1, 7f00:0001 = 127.0.0.1,
        # a9fe:a9fe = 169.254.169.254 (the cloud metadata address)
        ("2002:a00:1::", "private"),
        ("2002:7f00:1::", "loopback"),
        ("2002:a9fe:a9fe::", "link-local"),
        ("2002:c0a8:101::1", "private"),  # c0a8:0101 = 192.168.1.1
        ("fec0::1", "site-local"),
        ("192.0.0.1", "private"),  # 192.0.0.0/29, which ipaddress files as private
        ("192.0.0.100", "reserved"),
        ("64:ff9b::a00:1", "private"),  # NAT64 well-known prefix around 10.0.0.1
        ("64:ff9b::7f00:1", "loopback"),
        ("::ffff:a9fe:a9fe", "link-local"),  # IPv4-mapped 169.254.169.254
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "private"),  # Teredo: inside 2001::/23
    ],
)
def test_addresses_that_carry_or_hide_a_private_address(address: str, kind: str) -> None:
    assert address_refusal(address) == kind


@pytest.mark.parametrize(
    "address",
    [
        "93.184.215.14",
        "8.8.8.8",
        "2606:4700::1111",
        "2002:808:808::1",  # 6to4 of 8.8.8.8: public
        "64:ff9b::808:808",  # NAT64 of 8.8.8.8: public
        "::ffff:808:808",
        "192.0.1.1",  # just past 192.0.0.0/24
        "198.20.0.1",  # just past 198.18.0.0/15
        "100.128.0.1",  # just past 100.64.0.0/10
    ],
)
def test_public_addresses_pass(address: str) -> None:
    assert address_refusal(address) is None


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_an_ipv4_address_is_judged_the_same_in_every_ipv6_wrapping(value: int) -> None:
    ipv4 = ipaddress.IPv4Address(value)
    expected = address_refusal(str(ipv4))
    mapped = ipaddress.IPv6Address((0xFFFF << 32) | value)
    nat64 = ipaddress.IPv6Address((0x64FF9B << 96) | value)
    sixtofour = ipaddress.IPv6Address((0x2002 << 112) | (value << 80) | 1)
    assert address_refusal(str(mapped)) == expected
    assert address_refusal(str(nat64)) == expected
    assert address_refusal(str(sixtofour)) == expected
