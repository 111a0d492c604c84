"""The SSRF guard: address classes, schemes, allowlist, and checking inside the resolver."""

from __future__ import annotations

import ipaddress

import pytest

from shared.errors import BlockedAddressError, ConfigError
from shared.http.guard import AddressGuard, GuardedResolver, address_problem
from tests.partners.fixtures import PartnerResolver


@pytest.mark.parametrize(
    ("ip", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("100.64.0.1", "CGNAT"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("ff02::1", "multicast"),
        ("::ffff:127.0.0.1", "IPv6-embedded 127.0.0.1: loopback"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::127.0.0.1", "loopback"),  # IPv4-compatible
        ("64:ff9b::a00:1", "IPv6-embedded 10.0.0.1: private"),  # NAT64
        ("2002:7f00:1::", "IPv6-embedded 127.0.0.1"),  # 6to4
    ],
)
def test_blocked_addresses(ip: str, reason: str) -> None:
    problem = address_problem(ipaddress.ip_address(ip))
    assert problem is not None
    assert reason in problem


@pytest.mark.parametrize("ip", ["8.8.8.8", "93.184.216.34", "2001:4860:4860::8888", "::ffff:8.8.8.8"])
def test_public_addresses_pass(ip: str) -> None:
    assert address_problem(ipaddress.ip_address(ip)) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://10.0.0.1/feed.xml",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]:8080/",
        "http://[::ffff:127.0.0.1]/",
        "file:///etc/passwd",
        "gopher://example.com/",
        "ftp://example.com/x",
    ],
)
def test_check_url_refuses(url: str) -> None:
    with pytest.raises(BlockedAddressError):
        AddressGuard().check_url(url)


def test_check_url_bad_urls() -> None:
    guard = AddressGuard()
    with pytest.raises(ValueError, match="no host"):
        guard.check_url("http:///x")
    with pytest.raises(ValueError, match="credentials"):
        guard.check_url("http://user:pw@example.com/")


def test_allowlist_cidr_and_hosts() -> None:
    guard = AddressGuard(["127.0.0.1/32", "feeds.internal", "*.demo.test"])
    assert guard.check_url("http://127.0.0.1:8080/x").host == "127.0.0.1"
    guard.check_url("http://[::ffff:127.0.0.1]/")  # the mapped form of an allowed address is that address
    with pytest.raises(BlockedAddressError, match=r"127\.0\.0\.2"):
        guard.check_url("http://127.0.0.2/")
    assert guard.host_allowed("feeds.internal")
    assert guard.host_allowed("a.demo.test")
    assert not guard.host_allowed("demo.test.evil.com")


def test_allowlist_rejects_garbage() -> None:
    with pytest.raises(ConfigError, match=r"http\.allowlist"):
        AddressGuard(["10.0.0.0/99"])


async def test_resolver_refuses_names_pointing_inside() -> None:
    inner = PartnerResolver({"evil.test": "10.0.0.1", "meta.test": "169.254.169.254"})
    resolver = GuardedResolver(AddressGuard(), inner)
    with pytest.raises(BlockedAddressError, match=r"evil.test -> 10.0.0.1: private"):
        await resolver.resolve("evil.test", 80)
    with pytest.raises(BlockedAddressError, match="link-local"):
        await resolver.resolve("meta.test", 80)
    with pytest.raises(BlockedAddressError, match="loopback"):
        await resolver.resolve("a.partner.test", 80)  # 127.0.0.1 without an allowlist


async def test_resolver_passes_allowed_and_returns_checked_addresses() -> None:
    resolver = GuardedResolver(AddressGuard(["127.0.0.1/32"]), PartnerResolver())
    out = await resolver.resolve("a.partner.test", 80)
    assert [r["host"] for r in out] == ["127.0.0.1"]
