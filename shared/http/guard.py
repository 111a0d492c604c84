"""The SSRF guard (docs/architecture.md section 6, "SSRF").

Every URL a partner controls is fetched only after (1) its scheme is http(s)
and (2) *every* address its host resolves to is a public unicast address:
loopback, private, link-local (169.254.0.0/16: cloud metadata), multicast,
reserved, unspecified, shared (CGNAT 100.64.0.0/10) and the IPv6 forms that
embed such an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``, IPv4-compatible,
NAT64, 6to4) are refused, unless ``settings.http.allowlist`` (CIDRs or host
names, ``*.suffix`` allowed) lets them through. Production has no allowlist;
tests and the demo allowlist 127.0.0.1/32.

DNS rebinding: the check is done *inside the resolver aiohttp connects with*
(``GuardedResolver``), so the addresses that were checked are the very ones
the socket connects to; nothing resolves the name a second time between the
check and the connect. Literal IP hosts never reach a resolver, so
``check_url`` checks them before the request.

A host that resolves to several addresses is refused if *any* of them is
blocked: a public name has no business pointing inside, and this keeps an
attacker from mixing one good address into a poisoned answer.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver
from yarl import URL

from shared.errors import BlockedAddressError, ConfigError

__all__ = ["ALLOWED_SCHEMES", "AddressGuard", "GuardedResolver", "address_problem"]

ALLOWED_SCHEMES = frozenset({"http", "https"})
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_COMPAT = ipaddress.ip_network("::/96")


#: what a refusal says to whoever must decide: public feeds need public addresses; local ones an allowlist
ALLOWLIST_HINT = "to fetch it anyway (a local test feed), add it to http.allowlist (TURBOCUBES_HTTP_ALLOWLIST)"


def address_problem(ip: IPAddress) -> str | None:
    """Why ``ip`` must not be fetched (``"loopback"``, ``"private"``, ...), or None if it is public."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            inner = address_problem(embedded)
            return f"IPv6-embedded {embedded}: {inner}" if inner else None
    checks = (
        (ip.is_unspecified, "unspecified"),
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local"),
        (ip.is_multicast, "multicast"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT, "shared address space (CGNAT)"),
        (ip.is_reserved, "reserved"),
        (ip.is_private, "private"),
        (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local, "site-local"),
        # the catch-all: anything the IANA registries do not call globally reachable
        (not ip.is_global, "not globally routable"),
    )
    for hit, reason in checks:
        if hit:
            return reason
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or (ip in _COMPAT and int(ip) > 1):  # ::1 and :: are themselves, not compat forms
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _parse_ip(host: str) -> IPAddress | None:
    if ":" not in host and host[-1:].isalpha():
        return None  # a name (IPv4 never ends in a letter, IPv6 has colons): skip the costly attempt
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


class AddressGuard:
    """Decides whether a URL / an address may be fetched. Built from ``settings.http.allowlist``."""

    def __init__(self, allowlist: Iterable[str] = ()) -> None:
        self._networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self._hosts: set[str] = set()
        self._suffixes: list[str] = []
        for entry in allowlist:
            entry = entry.strip().lower()
            if not entry:
                continue
            if entry.startswith("*."):
                self._suffixes.append(entry[1:])
                continue
            try:
                self._networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                if "/" in entry or " " in entry:
                    raise ConfigError("http.allowlist", entry, "a CIDR, a host name or *.suffix") from None
                self._hosts.add(entry.rstrip("."))

    def host_allowed(self, host: str) -> bool:
        """The host name itself is allowlisted (its addresses are then not checked)."""
        host = host.lower().rstrip(".")
        return host in self._hosts or any(host.endswith(s) for s in self._suffixes)

    def check_ip(self, ip: IPAddress, host: str = "") -> None:
        """Raise ``BlockedAddressError`` unless ``ip`` is public or allowlisted."""
        plain = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip
        if any(plain in net for net in self._networks):
            return
        problem = address_problem(ip)
        if problem is not None:
            name = f"{host} -> {ip}" if host and host != str(ip) else str(ip)
            # the one setting that lets it through, named: a local test feed is the usual case
            raise BlockedAddressError(f"blocked address {name}: {problem}; {ALLOWLIST_HINT}")

    def check_url(self, url: str | URL) -> URL:
        """Scheme and literal-IP check; returns the parsed URL. Names are checked when resolved."""
        if isinstance(url, str):
            try:
                url = URL(url)
            except (ValueError, TypeError) as exc:
                raise ValueError(f"bad URL {url!r}: {exc}") from None
        scheme = (url.scheme or "").lower()
        if scheme not in ALLOWED_SCHEMES:
            raise BlockedAddressError(f"scheme {scheme or '(none)'!r} is not allowed (only http, https)")
        if not url.host:
            raise ValueError(f"bad URL {str(url)!r}: no host")
        if url.user or url.password:
            # credentials in partner URLs would be sent to whoever the URL points at
            raise ValueError(f"bad URL {url.with_user(None)!s}: credentials in URL")
        ip = _parse_ip(url.host)
        if ip is not None and not self.host_allowed(url.host):
            self.check_ip(ip)
        return url

    def check_resolved(self, host: str, results: list[ResolveResult]) -> list[ResolveResult]:
        if self.host_allowed(host):
            return results
        if not results:
            raise OSError(socket.EAI_NONAME, f"{host} has no address")
        for r in results:
            ip = _parse_ip(r["host"])
            if ip is None:
                raise BlockedAddressError(f"blocked address {host} -> {r['host']!r}: not an IP address")
            self.check_ip(ip, host)
        return results


class GuardedResolver(AbstractResolver):
    """The resolver aiohttp connects with: resolve once, check every address, hand back only those.

    ``inner`` is the real resolver (tests inject one mapping ``*.partner.test``
    to 127.0.0.1). The checked results are what the connector dials, which is
    what defeats DNS rebinding.
    """

    def __init__(self, guard: AddressGuard, inner: AbstractResolver | None = None) -> None:
        self.guard = guard
        self._inner = inner
        self._owns_inner = inner is None

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if self._inner is None:
            self._inner = DefaultResolver()
        ip = _parse_ip(host)
        if ip is not None:  # a literal (aiohttp normally skips the resolver for these)
            if not self.guard.host_allowed(host):
                self.guard.check_ip(ip)
            fam = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
            return [ResolveResult(hostname=host, host=str(ip), port=port, family=fam, proto=0, flags=0)]
        results = await self._inner.resolve(host, port, family)
        return self.guard.check_resolved(host, results)

    async def close(self) -> None:
        if self._owns_inner and self._inner is not None:
            await self._inner.close()
