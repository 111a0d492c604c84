"""Failed attempts per client address: how guessing is slowed at every door (docs/architecture.md section 6).

The console's sign-in form and the API's bearer tokens both count the failures of each client
address as a leaky bucket on the injected clock: ``failures`` in a row are free, then the address
waits ``refill_s`` per further try. Tokens carry 256 random bits, so guessing one is hopeless
anyway; the count keeps a scanner from turning every guess into a store lookup, and makes a
flood of wrong tokens cheap to refuse (no lookup while the address waits).

**What counts as one client** (``client_key``, also the sign-up limiter's): an IPv4 address; an
IPv6 address by its /64, the network one subscriber is given and whose 2^64 addresses any host
on it may take in turn (counted per address, a guesser changed its address at every try and was
never held back); an IPv4 address that arrives mapped in IPv6 (``::ffff:a.b.c.d``, a dual-stack
listener's spelling) as that IPv4 address.
"""

from __future__ import annotations

import ipaddress

from shared.clock import Clock

__all__ = ["FailedAttempts", "client_key"]

#: the prefix of an IPv6 client: one subscriber's network (RFC 6177 assigns at least a /64 to a site)
_IPV6_CLIENT_PREFIX = 64


def client_key(address: str) -> str:
    """The client ``address`` (a TCP peer) counts as; anything that is no IP address, as given."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])  # a zone (fe80::1%eth0) is no other client
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, _IPV6_CLIENT_PREFIX), strict=False))
    return str(ip)


#: addresses remembered before the table is emptied: bounds memory under a flood of addresses
_ADDRESSES_MAX = 50_000


class FailedAttempts:
    """Failures per client address, as a leaky count on the injected clock."""

    def __init__(self, clock: Clock, *, failures: int, refill_s: float) -> None:
        self._clock = clock
        self._free = failures
        self._refill_s = refill_s
        self._failures: dict[str, tuple[float, float]] = {}  # address -> (count, at)

    def _level(self, client: str) -> float:
        count, at = self._failures.get(client, (0.0, 0.0))
        return max(0.0, count - (self._clock.monotonic() - at) / self._refill_s)

    def wait_s(self, address: str) -> float:
        """0 when ``address``'s client may try now, else seconds to wait."""
        over = self._level(client_key(address)) - (self._free - 1)
        return max(0.0, over * self._refill_s)

    def failed(self, address: str) -> None:
        client = client_key(address)
        if len(self._failures) >= _ADDRESSES_MAX:
            self._failures.clear()
        self._failures[client] = (self._level(client) + 1.0, self._clock.monotonic())
